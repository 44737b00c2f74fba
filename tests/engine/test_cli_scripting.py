"""The command line as a scripting surface: `--version`; with `--json` an error is a JSON object on
stdout (as well as the one line on stderr), so a script reading stdout always gets an object;
`adapters --json` is an object like every other command's; one seed default, shown and used; one
`--corpus` option, with one default and one environment variable, for every command that loads
kernels. (Every command's JSON: test_cli_json.py; the help pages' examples: test_cli_help.py.)
What only a process shows (exit codes, stdout against stderr, a closed pipe) runs the command as a
subprocess; the seed and corpus rules run it through `main` in-process (`run_main`)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import numpy as np

from workbench import __version__
from workbench.cli import build_parser, main, subcommands
from workbench.cli.common import CORPUS_ENV, CORPUS_HELP
from workbench.gpu.adapters import choose_adapter, list_adapters
from workbench.recipes import DEFAULT_SEED
from workbench.wgsl.corpus import SHIPPED

from .conftest import REPO, run_cli, run_main


def test_version():
    proc = run_cli("--version")
    assert proc.returncode == 0
    assert proc.stdout.strip() == f"workbench {__version__}"


def test_a_json_command_that_fails_prints_an_error_object():
    proc = run_cli("run", "no_such_kernel", "--json")
    assert proc.returncode == 2
    err = json.loads(proc.stdout)
    assert err["exit"] == 2 and "no kernel named 'no_such_kernel'" in err["error"]
    assert proc.stderr.splitlines()[-1].startswith("workbench: no kernel named")


def test_without_json_an_error_is_only_the_line_on_stderr():
    proc = run_cli("run", "no_such_kernel")
    assert proc.returncode == 2 and proc.stdout == ""


def test_a_reader_that_stops_early_ends_the_command_quietly():
    """`workbench ... | head`: no traceback, and the exit code a shell gives a program SIGPIPE ends."""
    read, write = os.pipe()
    os.close(read)
    try:
        proc = subprocess.run(
            [sys.executable, "-m", "workbench", "list", "--pipelines", "--json"],
            stdout=write,
            stderr=subprocess.PIPE,
            text=True,
            cwd=REPO,
            timeout=120,
        )
    finally:
        os.close(write)
    assert proc.returncode == 141 and proc.stderr == ""


def test_run_shows_uniform_values_not_the_kind_twice():
    proc = run_cli("run", "rope_q", "--dim", "seq=8", "--reps", "0")
    assert proc.returncode == 0, proc.stderr
    assert "uniform uniform" not in proc.stdout
    # dims = (seq, n_heads, head_dim, pos_offset) as the kernel reads it.
    assert "dims           uniform (8, 12, 64, 0)" in proc.stdout


def test_adapters_json_is_an_object_naming_the_default():
    proc = run_cli("adapters", "--json")
    assert proc.returncode == 0
    data = json.loads(proc.stdout)
    assert set(data) == {"adapters", "default"}
    assert [a["index"] for a in data["adapters"]] == [a.index for a in list_adapters()]
    assert data["default"] == choose_adapter().index
    assert [a["index"] for a in data["adapters"] if a["default"]] == [data["default"]]


# -- the seed --------------------------------------------------------------------------------------


def test_every_seed_option_shows_and_has_the_one_default():
    parser = build_parser()
    seeded = {
        name: next(a for a in p._actions if a.dest == "seed")
        for name, p in subcommands(parser).items()
        if any(a.dest == "seed" for a in p._actions)
    }
    assert {"run", "check", "bench", "record", "footprint", "probe"} <= set(seeded)
    for action in seeded.values():
        assert action.default == DEFAULT_SEED
        assert action.help.endswith(f"(default {DEFAULT_SEED})")


def test_running_without_seed_is_running_with_the_default_shown(tmp_path):
    page = " ".join(run_cli("run", "--help").stdout.split())
    shown = re.search(r"--seed SEED [^()]*\(default (\d+)\)", page)
    assert shown is not None and int(shown[1]) == DEFAULT_SEED
    base = ["run", "swiglu_combine", "--dim", "seq=2", "--reps", "0", "--save-outputs"]
    for name, seed in (("none", []), ("shown", ["--seed", shown[1]]), ("other", ["--seed", "5"])):
        assert run_main(*base, str(tmp_path / name), *seed).returncode == 0
    hidden = {n: np.load(tmp_path / n / "hidden.npy") for n in ("none", "shown", "other")}
    assert hidden["none"].tobytes() == hidden["shown"].tobytes()
    # Another seed gives other inputs, so equal outputs above are not a kernel ignoring its seed.
    assert hidden["none"].tobytes() != hidden["other"].tobytes()


def test_the_seed_a_random_recipe_drew_from_is_shown_and_reproduces_it(tmp_path):
    base = ["run", "swiglu_combine", "--dim", "seq=2", "--reps", "0", "--seed", "4"]
    proc = run_main(*base, "--input", "gate=randn", "--input", "up=uniform:0:1", "--json",
                   "--save-outputs", str(tmp_path / "shown"))  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    bindings = json.loads(proc.stdout)["bindings"]
    # gate is binding 0 and up binding 1: SEED + the binding's index.
    assert (bindings["gate"]["source"], bindings["up"]["source"]) == (
        "randn (seed 4)", "uniform:0:1 (seed 5)",
    )  # fmt: skip
    again = ["--input", "gate=randn:4", "--input", "up=uniform:0:1:5"]
    assert run_main(*base, *again, "--save-outputs", str(tmp_path / "typed")).returncode == 0
    shown, typed = (np.load(tmp_path / n / "hidden.npy") for n in ("shown", "typed"))
    assert shown.tobytes() == typed.tobytes()


# -- the corpus ------------------------------------------------------------------------------------

LOADS_KERNELS = {
    "debug",
    "ui",
    "list",
    "run",
    "step",
    "check",
    "describe",
    "bench",
    "record",
    "replay",
    "footprint",
    "probe",
}
DOUBLE = """
@group(0) @binding(0) var<storage, read_write> y: array<f32>;
@compute @workgroup_size(64)
fn double_it(@builtin(global_invocation_id) g: vec3<u32>) {
    if g.x < arrayLength(&y) { y[g.x] = 2.0 * f32(g.x); }
}
"""


def test_every_command_that_loads_kernels_takes_the_corpus_the_same_way(monkeypatch):
    monkeypatch.delenv(CORPUS_ENV, raising=False)
    commands = subcommands(build_parser())
    with_corpus = {
        name: next(a for a in p._actions if "--corpus" in a.option_strings)
        for name, p in commands.items()
        if any("--corpus" in a.option_strings for a in p._actions)
    }
    assert set(with_corpus) == LOADS_KERNELS
    for action in with_corpus.values():
        assert (action.option_strings, action.metavar, action.default) == (
            ["--corpus"],
            "PATH",
            None,
        )
        assert action.help == CORPUS_HELP


def test_workbench_corpus_is_every_commands_default_and_corpus_wins(tmp_path):
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "double.wgsl").write_text(DOUBLE, encoding="utf-8")
    env = {CORPUS_ENV: str(mine)}
    listed = json.loads(run_main("list", "--json", env=env).stdout)
    assert listed["corpus"] == str(mine)
    assert [k["name"] for k in listed["kernels"]] == ["double_it"]
    ran = run_main("run", "double_it", "--dim", "n=8", "--reps", "0", "--json", env=env)
    assert ran.returncode == 0 and json.loads(ran.stdout)["corpus"] == str(mine)
    assert run_main("describe", "double_it", env=env).returncode == 0
    assert run_main("footprint", "double_it", "--dim", "n=64", env=env).returncode == 0
    # --corpus given wins over the environment.
    shipped = run_main("list", "--corpus", str(SHIPPED), "--json", env=env)
    assert json.loads(shipped.stdout)["corpus"] == str(SHIPPED)


def test_list_takes_the_corpus_as_a_path_too_but_not_twice(tmp_path):
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "double.wgsl").write_text(DOUBLE, encoding="utf-8")
    by_path = json.loads(run_main("list", str(mine), "--json").stdout)
    by_option = json.loads(run_main("list", "--corpus", str(mine), "--json").stdout)
    assert by_path == by_option
    proc = run_main("list", str(mine), "--corpus", str(SHIPPED))
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.strip() == (
        f"workbench: the corpus is given twice ({mine} and --corpus {SHIPPED}); give one"
    )


def test_the_ui_takes_the_corpus_the_same_way(tmp_path, monkeypatch, capsys):
    """Checked before the terminal is taken over: a missing corpus is refused the same way whether
    it comes as PATH, --corpus or $WORKBENCH_CORPUS."""
    missing = tmp_path / "missing"
    monkeypatch.delenv(CORPUS_ENV, raising=False)
    for argv in ([str(missing)], ["ui", "--corpus", str(missing)], ["--corpus", str(missing)]):
        assert main(argv) == 2
        assert capsys.readouterr().err.strip() == f"workbench: corpus {missing} does not exist"
    monkeypatch.setenv(CORPUS_ENV, str(missing))
    assert main([]) == 2
    assert capsys.readouterr().err.strip() == f"workbench: corpus {missing} does not exist"


def test_every_json_option_says_the_same():
    commands = subcommands(build_parser())
    helps = {
        name: next(a.help for a in p._actions if "--json" in a.option_strings)
        for name, p in commands.items()
        if any("--json" in a.option_strings for a in p._actions)
    }
    assert set(commands) - set(helps) == {"ui"}
    assert all(h.startswith("print one JSON object") for h in helps.values()), helps
