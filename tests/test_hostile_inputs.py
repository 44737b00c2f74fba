"""Hostile inputs (issue 18): whatever a user types or loads, the command line ends with its own
one-line error and the exit code the README promises (2 user error, 3 GPU failure, 130 interrupt),
never a traceback, a crash, a hang or a quietly changed result; collections (list, check --all,
replay with --junit) go on with the other items.

Every case runs the real command in a subprocess on the real adapter, so a crash of the native
compiler or a hang fails a test (through the exit code or the subprocess timeout) instead of
killing pytest. The numbers in the test names are the items of the issue.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest

from workbench.fixtures.manifest import FixtureError, load_fixture
from workbench.session import Session
from workbench.wgsl.corpus import load_corpus
from workbench.wgsl.parser import MAX_NESTING, MAX_OPERATORS

REPO = Path(__file__).resolve().parents[1]
SHIPPED_FIXTURES = REPO / "workbench" / "fixtures"
# Lines that are information, not errors: the CPU-adapter note and Mesa's runtime-dir complaint.
NOISE = ("workbench: no GPU found", "error: XDG_RUNTIME_DIR")
# Generous: a hang or a crash is what these catch, not slowness on a loaded machine.
LIMIT_S = 240

MIX = """
@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read> k: array<u32>;
@group(0) @binding(2) var<storage, read_write> y: array<f32>;
@group(0) @binding(3) var<uniform> n: u32;
@compute @workgroup_size(64)
fn mix(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.x;
    if (i < n) { y[i] = x[i] * 2.0 + f32(k[i] % 2u); }
}
"""

# Far too much work for the CPU adapter to finish while a test waits (about 450 s at n=4M).
SPIN = """
@group(0) @binding(0) var<storage, read_write> out: array<u32>;
@group(0) @binding(1) var<uniform> loops: u32;
@compute @workgroup_size(64)
fn spin(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let k = gid.x + gid.y * nwg.x * 64u;
    var acc = k;
    for (var i = 0u; i < loops; i++) {
        acc = (acc ^ (acc >> 7u)) * 1664525u + i;
    }
    if (k < arrayLength(&out)) { out[k] = acc; }
}
"""
SPIN_CASE = ("--dim", "n=4000000", "--set", "loops=100000")
# The spin kernel is sized to outlast a test on the CPU adapter; a real GPU could finish it.
ON_CPU = Session.choose_adapter().is_cpu
needs_cpu_adapter = pytest.mark.skipif(
    not ON_CPU or not Path("/proc/self/task").exists(),
    reason="the long dispatch is sized for the CPU adapter (and watched through /proc)",
)
SPIN_ARGS = ("--reps", "0", *SPIN_CASE)

WG_ZERO = """
@group(0) @binding(0) var<storage, read_write> out: array<f32>;
@compute @workgroup_size(0)
fn broken_wg() { }
@compute @workgroup_size(64)
fn fine_wg(@builtin(global_invocation_id) gid: vec3<u32>) {
    if (gid.x < arrayLength(&out)) { out[gid.x] = 3.0; }
}
"""


def nested_kernel(name: str, depth: int) -> str:
    """A kernel whose one expression is `depth` parentheses deep (plus the function's braces)."""
    return (
        "@group(0) @binding(0) var<storage, read_write> out: array<f32>;\n"
        f"@compute @workgroup_size(1)\nfn {name}() {{\n"
        f"    out[0] = {'(' * depth}1.0{')' * depth};\n}}\n"
    )


def chained_kernel(name: str, operators: int) -> str:
    return (
        "@group(0) @binding(0) var<storage, read_write> out: array<f32>;\n"
        f"@compute @workgroup_size(1)\nfn {name}() {{\n"
        f"    out[0] = 1.0{' + 1.0' * operators};\n}}\n"
    )


def write(root: Path, files: dict[str, str | bytes]) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    for rel, text in files.items():
        path = root / rel
        if isinstance(text, bytes):
            path.write_bytes(text)
        else:
            path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
    return root


def env(extra: dict[str, str] | None = None) -> dict[str, str]:
    out = dict(os.environ)
    out.setdefault("XDG_RUNTIME_DIR", "/tmp/workbench-xdg-tests")
    out.update(extra or {})
    return out


def cli(*args: str, extra_env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """`python -m workbench ARGS` with stdin closed; a traceback fails the test at once."""
    proc = subprocess.run(
        [sys.executable, "-m", "workbench", *args],
        capture_output=True,
        text=True,
        env=env(extra_env),
        cwd=REPO,
        timeout=LIMIT_S,
        stdin=subprocess.DEVNULL,
    )
    assert "Traceback" not in proc.stderr, proc.stderr
    return proc


def error_lines(proc: subprocess.CompletedProcess[str]) -> list[str]:
    return [ln for ln in proc.stderr.splitlines() if ln.strip() and not ln.startswith(NOISE)]


def refused(proc: subprocess.CompletedProcess[str], code: int = 2, *words: str) -> str:
    """The one stderr line of a command that ended with `code`; it must contain `words`."""
    assert proc.returncode == code, (proc.returncode, proc.stdout[-2000:], proc.stderr)
    lines = error_lines(proc)
    assert len(lines) == 1, proc.stderr
    for word in words:
        assert word in lines[0], lines[0]
    return lines[0]


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write(
        tmp_path_factory.mktemp("hostile"),
        {"mix.wgsl": MIX, "spin.wgsl": SPIN, "wg_zero.wgsl": WG_ZERO},
    )


def copy_fixture(name: str, folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for suffix in (".toml", ".npz"):
        shutil.copy(SHIPPED_FIXTURES / f"{name}{suffix}", folder / f"{name}{suffix}")
    return folder / f"{name}.toml"


def save_npy(path: Path, arr: np.ndarray) -> str:
    np.save(path, arr, allow_pickle=False)
    return f"npy:{path}"


# -- 1: nesting the native compiler cannot survive -----------------------------------------------


def test_1_deep_nesting_is_marked_and_the_rest_of_the_corpus_loads_and_runs(tmp_path):
    root = write(
        tmp_path / "nest",
        {
            "mix.wgsl": MIX,
            # About 3,000 levels killed the process (exit 139) in list, run and check --all.
            "deep.wgsl": nested_kernel("deep", 3000),
            "chain.wgsl": chained_kernel("chain", 15000),
            # At the bound (the function's braces count as one level): compiled for real.
            "edge.wgsl": nested_kernel("edge", MAX_NESTING - 1),
            "long.wgsl": chained_kernel("long", MAX_OPERATORS),
        },
    )
    listed = cli("list", str(root))
    assert listed.returncode == 0, listed.stderr
    rows = {ln.split()[0]: ln for ln in listed.stdout.splitlines()[1:] if ln.startswith("  ")}
    assert "deep.wgsl:4: nested too deeply" in rows["deep"]
    assert "chain.wgsl:4: one statement with more than" in rows["chain"]
    assert rows["mix"].rstrip().endswith("ok") and rows["edge"].rstrip().endswith("ok")
    assert rows["long"].rstrip().endswith("ok")
    refused(cli("run", "deep", "--corpus", str(root)), 2, "deep.wgsl:4", "nested too deeply")
    ran = cli("run", "edge", "--corpus", str(root), "--reps", "0", "--dim", "n=1")
    assert ran.returncode == 0, ran.stderr
    checked = cli("check", "--all", "--quick", "--corpus", str(root), "--what", "compare")
    assert checked.returncode == 1, checked.stderr  # deep and chain are errors of the collection
    assert "deep.wgsl" in checked.stdout and "chain.wgsl" in checked.stdout
    assert "mix" in checked.stdout and "edge" in checked.stdout


def test_1_the_compile_path_and_the_live_reload_never_hand_deep_source_to_the_compiler(tmp_path):
    root = write(tmp_path / "watched", {"mix.wgsl": MIX})
    script = textwrap.dedent(
        f"""
        from pathlib import Path
        from workbench.errors import CompileError
        from workbench.session import Session
        from workbench.wgsl.sourcemap import SourceMap

        root = Path({str(root)!r})
        session = Session.open(corpus=root)
        mix = session.kernel("mix")
        print("before", session.status(mix).text)
        deep = {nested_kernel("deep", 3000)!r}
        (root / "deep.wgsl").write_text(deep)
        session.reload()  # what the UI's file watcher does on a save
        for k in session.corpus.kernels:
            print(k.name, session.status(k).text.splitlines()[0][:80])
        try:
            session.gpu.compile(deep, SourceMap(), "deep", (), "deep.wgsl")
        except CompileError as exc:
            print("compile refused:", str(exc)[:60])
        """
    )
    proc = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, env=env(), cwd=REPO,
        timeout=LIMIT_S,
    )  # fmt: skip
    assert proc.returncode == 0, (proc.returncode, proc.stderr)
    out = proc.stdout
    assert "before ok" in out and "mix ok" in out
    assert "deep error: deep.wgsl:4: nested too deeply" in out
    assert "compile refused: deep.wgsl:4: nested too deeply" in out


# -- 2: any failure of a reader is that file's one-line error; collections go on ----------------


NESTED_TOML = "x = " + "[" * 500 + "]" * 500 + "\n"


def test_2_a_manifest_nested_500_deep_is_one_error_and_replay_goes_on_with_junit(tmp_path):
    folder = tmp_path / "fx"
    copy_fixture("gelu_inplace_gpt2", folder)
    copy_fixture("embed_lookup_out_of_range", folder)
    bad = copy_fixture("gelu_inplace_gpt2", tmp_path / "tmp")
    (folder / "nested.toml").write_text(
        bad.read_text(encoding="utf-8").replace('note = "', NESTED_TOML + 'note = "', 1)
    )
    shutil.copy(bad.with_suffix(".npz"), folder / "nested.npz")
    junit = tmp_path / "junit.xml"
    proc = cli("replay", str(folder), "--junit", str(junit))
    assert proc.returncode == 2, proc.stderr
    assert "nested.toml: not usable TOML (nested too deeply)" in proc.stdout
    assert "2 passed" in proc.stdout
    xml = junit.read_text(encoding="utf-8")
    assert xml.count("<testcase") == 3 and "nested too deeply" in xml


def test_2_a_wgslconfig_nested_500_deep_is_one_line(tmp_path):
    root = write(tmp_path / "cfg", {"mix.wgsl": MIX, "wgslconfig.toml": NESTED_TOML})
    refused(cli("list", str(root)), 2, "wgslconfig.toml: not usable TOML (nested too deeply)")


def test_2_list_and_check_all_go_on_past_files_that_cannot_be_read(tmp_path):
    root = write(tmp_path / "mixed", {"mix.wgsl": MIX, "latin1.wgsl": b"// caf\xe9\n"})
    listed = cli("list", str(root))
    assert listed.returncode == 0, listed.stderr
    assert (
        "mix" in listed.stdout
        and "skipped latin1.wgsl: is not UTF-8 text (byte 6)" in listed.stdout
    )
    checked = cli("check", "--all", "--quick", "--corpus", str(root), "--what", "compare")
    assert "latin1.wgsl" in checked.stdout and "not UTF-8" in checked.stdout
    assert "mix" in checked.stdout and "Traceback" not in checked.stderr


# -- 3: Ctrl-C and the watchdog -------------------------------------------------------------------


# Starts the command as a terminal's shell would, with Ctrl-C delivered: a disposition of SIG_IGN
# and a blocked mask are inherited across exec, and the test process may carry either from a
# library it loaded. (A launcher, not preexec_fn, which is unsafe in a process with threads.)
AS_FROM_A_SHELL = (
    "import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_DFL); "
    "signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT}); "
    "os.execv(sys.executable, [sys.executable, '-m', 'workbench', *sys.argv[1:]])"
)


def _signal_state(pid: int) -> str:
    """The SigBlk/SigIgn/SigCgt masks of process `pid`, for a failure message."""
    try:
        lines = Path(f"/proc/{pid}/status").read_text().splitlines()
    except OSError:
        return "unknown"
    return " ".join(
        ln.replace("\t", "") for ln in lines if ln.startswith(("SigBlk", "SigIgn", "SigCgt"))
    )


def start(*args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", AS_FROM_A_SHELL, *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        text=True,
        env=env(),
        cwd=REPO,
    )


def interrupt_once_dispatching(proc: subprocess.Popen[str]) -> tuple[str, str]:
    """Wait until the CPU adapter's worker threads exist and have had time to start the long
    dispatch, send SIGINT, and return the output; the process must end long before the
    dispatch could (minutes)."""
    tasks = Path(f"/proc/{proc.pid}/task")
    deadline = time.monotonic() + LIMIT_S
    while time.monotonic() < deadline and proc.poll() is None:
        names = []
        for task in tasks.glob("*/comm"):
            try:
                names.append(task.read_text())
            except OSError:
                continue
        if any(n.startswith("llvmpipe") for n in names):
            break
        time.sleep(0.2)
    time.sleep(3)  # compile and submit; the dispatch itself takes minutes
    assert proc.poll() is None, "the long dispatch ended by itself"
    state = _signal_state(proc.pid)
    proc.send_signal(signal.SIGINT)
    try:
        return proc.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        pytest.fail(f"still running 30 s after Ctrl-C (its signal masks then: {state})")


@needs_cpu_adapter
def test_3_ctrl_c_during_a_long_dispatch_exits_130(corpus):
    proc = start("run", "spin", "--corpus", str(corpus), *SPIN_ARGS)
    _, err = interrupt_once_dispatching(proc)
    assert proc.returncode == 130, err
    lines = [ln for ln in err.splitlines() if ln.strip() and not ln.startswith(NOISE)]
    assert lines == ["workbench: interrupted"], err
    assert "Traceback" not in err


@needs_cpu_adapter
def test_3_ctrl_c_during_record_leaves_nothing_half_written(corpus, tmp_path):
    out_dir = tmp_path / "recorded"
    proc = start("record", "spin", "--corpus", str(corpus), *SPIN_CASE, "--out", f"{out_dir}/fx")
    interrupt_once_dispatching(proc)
    assert proc.returncode == 130
    assert not out_dir.exists() or list(out_dir.iterdir()) == []


@needs_cpu_adapter
def test_3_the_watchdog_ends_a_dispatch_that_does_not_finish_with_exit_3(corpus):
    proc = cli("run", "spin", "--corpus", str(corpus), *SPIN_ARGS, "--timeout", "2")
    refused(proc, 3, "did not finish within 2 s", "--timeout")


def test_3_a_bad_timeout_is_a_user_error(corpus):
    refused(cli("run", "mix", "--corpus", str(corpus), "--timeout", "0"), 2, "--timeout")


# -- 4: special files are refused by name, never waited on ---------------------------------------


def test_4_named_pipes_are_refused_by_name(corpus, tmp_path):
    pipe = tmp_path / "pipe.npy"
    os.mkfifo(pipe)
    refused(cli("run", "mix", "--corpus", str(corpus), "--input", f"x=npy:{pipe}"), 2, "named pipe")

    folder = tmp_path / "fx"
    copy_fixture("gelu_inplace_gpt2", folder)
    copy_fixture("embed_lookup_out_of_range", folder).with_suffix(".npz").unlink()
    os.mkfifo(folder / "embed_lookup_out_of_range.npz")
    junit = tmp_path / "junit.xml"
    replayed = cli("replay", str(folder), "--junit", str(junit))
    assert replayed.returncode == 2 and "named pipe" in replayed.stdout
    assert junit.read_text(encoding="utf-8").count("<testcase") == 2

    root = write(tmp_path / "cfg", {"mix.wgsl": MIX})
    os.mkfifo(root / "wgslconfig.toml")
    refused(cli("list", str(root)), 2, "wgslconfig.toml", "named pipe")
    (root / "wgslconfig.toml").unlink()
    os.mkfifo(root / "fifo.wgsl")
    listed = cli("list", str(root))
    assert listed.returncode == 0 and "skipped fifo.wgsl: cannot read a named pipe" in listed.stdout


# -- 5: tracebacks that were user errors ---------------------------------------------------------


@pytest.mark.parametrize(
    "recipe, words",
    [
        ("uniform:0:inf", ("uniform:0:inf", "needs finite numbers")),
        ("uniform:nan:1", ("finite numbers",)),
        ("npy:/dev/stdin", ("/dev/stdin", "character device")),
    ],
)
def test_5_recipes_that_raised_are_one_line(corpus, recipe, words):
    refused(cli("run", "mix", "--corpus", str(corpus), "--input", f"x={recipe}"), 2, *words)


def test_5_an_empty_npy_and_an_absurd_header_are_refused_before_reading_data(corpus, tmp_path):
    empty = tmp_path / "empty.npy"
    empty.write_bytes(b"")
    refused(cli("run", "mix", "--corpus", str(corpus), "--input", f"x=npy:{empty}"), 2, "empty.npy")
    # 128 bytes whose header claims 10^11 float32 elements (373 GiB): refused by the header.
    huge = tmp_path / "huge.npy"
    header = "{'descr': '<f4', 'fortran_order': False, 'shape': (100000000000,), }"
    with huge.open("wb") as fh:
        np.lib.format.write_array_header_1_0(
            fh, {"descr": "<f4", "fortran_order": False, "shape": (10**11,)}
        )
    assert huge.stat().st_size == 128, header
    line = refused(cli("run", "mix", "--corpus", str(corpus), "--input", f"x=npy:{huge}"), 2)
    assert "100,000,000,000 elements" in line and "needs 1,024" in line


def test_5_output_degrades_to_ascii(corpus):
    proc = cli("list", str(corpus), extra_env={"PYTHONIOENCODING": "ascii"})
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.isascii() and "corpus " in proc.stdout and "  -  adapter " in proc.stdout


# -- 6: tolerances are validated wherever they enter --------------------------------------------


@pytest.mark.parametrize(
    "command, given, words",
    [
        ("check", ("--rtol", "nan"), ("--rtol", "finite", "nan")),
        ("check", ("--rtol", "inf"), ("--rtol", "finite", "inf")),
        ("check", ("--rtol", "-1", "--atol", "-1"), ("--rtol", ">= 0")),
        ("check", ("--rtol", "2"), ("over 1", "--force-tolerance")),
        ("run", ("--atol", "nan"), ("--atol", "finite")),
        ("record", ("--rtol", "inf", "--out", "/nonexistent/never/fx"), ("--rtol", "finite")),
    ],
)
def test_6_bad_tolerances_are_user_errors(command, given, words):
    extra = ("--quick", "--what", "compare") if command == "check" else ()
    refused(cli(command, "gelu_inplace", *extra, *given), 2, *words)


def test_6_a_hand_edited_fixture_tolerance_is_an_error_and_replay_goes_on(tmp_path):
    folder = tmp_path / "fx"
    edited = copy_fixture("gelu_inplace_gpt2", folder)
    copy_fixture("embed_lookup_out_of_range", folder)
    text = edited.read_text(encoding="utf-8")
    assert "\nrtol = 1.3e-06\n" in text
    edited.write_text(text.replace("\nrtol = 1.3e-06\n", "\nrtol = 1e300\n"), encoding="utf-8")
    junit = tmp_path / "junit.xml"
    proc = cli("replay", str(folder), "--junit", str(junit))
    assert proc.returncode == 2, proc.stderr
    assert "rtol = 1e+300 is over 1" in proc.stdout and "1 passed" in proc.stdout
    assert junit.read_text(encoding="utf-8").count("<testcase") == 2


# -- 7: nothing is coerced quietly ------------------------------------------------------------------


@pytest.mark.parametrize(
    "given, words",
    [
        ("x=const:1e300", ("value 1e+300", "float32", "inf")),
        ("k=const:-1", ("-1", "uint32")),
        ("k=randint:-5:5", ("-5", "uint32", "wrap")),
        ("k=const:1.5", ("1.5", "not a whole number")),
    ],
)
def test_7_lossy_recipes_are_errors_naming_value_and_binding(corpus, given, words):
    line = refused(cli("run", "mix", "--corpus", str(corpus), "--input", given), 2, *words)
    assert line.startswith(f"workbench: {given.split('=')[0]}: ")


def test_7_lossy_npy_files_are_errors_and_float64_gets_one_note(corpus, tmp_path):
    run = ("run", "mix", "--corpus", str(corpus), "--dim", "n=16", "--reps", "0")
    square = save_npy(tmp_path / "square.npy", np.ones((4, 4), np.float32))
    refused(cli(*run, "--input", f"x={square}"), 2, "(4, 4)", "(16,)")
    big = save_npy(tmp_path / "big.npy", np.full(16, 2**40, np.int64))
    refused(cli(*run, "--input", f"k={big}"), 2, str(2**40), "uint32")
    f64 = save_npy(tmp_path / "f64.npy", np.linspace(0, 1, 16))
    ok = cli(*run, "--input", f"x={f64}")
    assert ok.returncode == 0, ok.stderr
    assert (
        ok.stdout.count("note:") == 1
        and "float64 values, rounded to the binding's float32" in ok.stdout
    )
    ints = save_npy(tmp_path / "ints.npy", np.arange(16, dtype=np.int64))
    exact = cli(*run, "--input", f"k={ints}")
    assert exact.returncode == 0 and "note:" not in exact.stdout


# -- 8: degenerate outputs are described ----------------------------------------------------------


def test_8_empty_and_all_infinite_outputs_say_what_they_are(corpus, tmp_path):
    empty = cli("run", "mix", "--corpus", str(corpus), "--dim", "n=0", "--reps", "0")
    assert empty.returncode == 0, empty.stderr
    assert "y: empty (0 elements)" in empty.stdout and "nan" not in empty.stdout.split("y:")[1]
    inf = cli("run", "mix", "--corpus", str(corpus), "--input", "x=const:inf", "--reps", "0")
    assert inf.returncode == 0 and "y: all +inf (1,024 elements)" in inf.stdout
    nothing = cli("list", str(tmp_path))
    assert (
        nothing.returncode == 0 and f"no kernels: no .wgsl file under {tmp_path}" in nothing.stdout
    )


def test_8_a_fixture_expecting_nan_says_the_positions_differ(corpus, tmp_path):
    out = tmp_path / "nan" / "fx"
    rec = cli("record", "mix", "--corpus", str(corpus), "--dim", "n=256", "--input", "x=const:nan",
              "--out", str(out))  # fmt: skip
    assert rec.returncode == 0, rec.stderr
    manifest = out.with_suffix(".toml")
    text = manifest.read_text(encoding="utf-8")
    manifest.write_text(
        text.replace('recipe = "const:nan"', 'recipe = "const:1"'), encoding="utf-8"
    )
    proc = cli("replay", str(manifest), "--corpus", str(corpus))
    assert proc.returncode == 1, proc.stderr
    assert "y: no element is finite on both sides" in proc.stdout
    assert "FAIL 256/256 outside tolerance; NaN/Inf positions differ: 256" in proc.stdout
    assert "max|Δ| 0" not in proc.stdout


# -- 9 and 11: record's temporaries, its final step, and its wording -------------------------------


def test_9_record_cleans_stale_temporaries_and_11_the_loser_is_told_about_force(corpus, tmp_path):
    out = tmp_path / "fx"
    out.mkdir()
    dead = out / ".mix.npz.999999999.abcdefgh.tmp"  # no process has this id
    old = out / ".mix.toml.k3j4h5g6.tmp"  # from a version without process ids, hours old
    alive = out / f".other.npz.{os.getpid()}.abcdefgh.tmp"  # a record still writing
    for p in (dead, old, alive):
        p.write_bytes(b"x" * 1000)
    os.utime(old, (time.time() - 7200, time.time() - 7200))
    rec = ("record", "mix", "--corpus", str(corpus), "--dim", "n=64", "--out", str(out / "mix"))
    first = cli(*rec)
    assert first.returncode == 0, first.stderr
    assert not dead.exists() and not old.exists() and alive.exists()
    assert sorted(p.name for p in out.iterdir()) == [alive.name, "mix.npz", "mix.toml"]
    before = (out / "mix.toml").read_bytes()
    line = refused(cli(*rec), 2, "already exists; overwrite it with --force")
    assert "force=True" not in line and (out / "mix.toml").read_bytes() == before


def test_9_the_final_step_never_overwrites_a_fixture_that_appeared_meanwhile(
    session, tmp_path, monkeypatch
):
    """Another record lands the same name between the first check and the final step."""
    from workbench.fixtures import record as record_module

    root = write(tmp_path / "k", {"mix.wgsl": MIX})
    mine = Session(load_corpus(root), session.gpu)
    result = mine.run(mine.case("mix", dims={"n": 64}))
    target = tmp_path / "out" / "fx"
    real = record_module.build_manifest

    def racing(*args, **kwargs):
        built = real(*args, **kwargs)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.with_suffix(".toml").write_text("the other record's manifest")
        return built

    monkeypatch.setattr(record_module, "build_manifest", racing)
    with pytest.raises(FileExistsError) as info:
        record_module.record_fixture(result, target)
    assert f"{target.with_suffix('.toml')} already exists" in str(info.value)
    assert target.with_suffix(".toml").read_text() == "the other record's manifest"
    assert sorted(p.name for p in target.parent.iterdir()) == ["fx.toml"]


# -- 10: one bad kernel is one error row ----------------------------------------------------------


def test_10_workgroup_size_zero_is_one_row_and_the_files_other_kernel_runs(corpus):
    listed = cli("list", str(corpus))
    assert listed.returncode == 0, listed.stderr
    rows = {ln.split()[0]: ln for ln in listed.stdout.splitlines()[1:] if ln.startswith("  ")}
    assert "wg_zero.wgsl:3: @workgroup_size of 'broken_wg' has 0 = 0" in rows["broken_wg"]
    assert "every size must be at least 1" in rows["broken_wg"]
    assert "cannot evaluate" not in rows["broken_wg"]
    assert rows["fine_wg"].rstrip().endswith("ok")
    ran = cli("run", "fine_wg", "--corpus", str(corpus), "--reps", "0", "--dim", "n=64")
    assert ran.returncode == 0 and "out: min 3  max 3" in ran.stdout, ran.stdout
    refused(cli("run", "broken_wg", "--corpus", str(corpus)), 2, "at least 1")


# -- 11: a user error is the only line ------------------------------------------------------------


def test_11_check_says_nothing_before_a_user_error(corpus):
    line = refused(cli("check", "mix", "--corpus", str(corpus), "--input", "x=const:abc"), 2)
    assert "0%" not in line and "bad number" in line


def test_fixture_loading_raises_only_fixture_errors_for_special_files(tmp_path):
    """docs/fixtures.md: loading either succeeds or raises FixtureError."""
    os.mkfifo(tmp_path / "pipe.toml")
    with pytest.raises(FixtureError, match="named pipe"):
        load_fixture(tmp_path / "pipe.toml")
