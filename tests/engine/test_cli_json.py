"""Every command's `--json` output is one JSON object, and `null` appears in it only where
docs/json.md says the value does not exist (its table "Where `null` appears" is read here, so the
documentation and the test cannot disagree). Each command runs through `workbench.cli.main` in the
test's process (the command's own code path; the limits test below runs real subprocesses), on the
shipped kernels and on a small corpus of its own (an ad-hoc kernel with a probe, a broken one, one
without an entry point), so the places where a value can be missing are reached."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

import pytest

from workbench.fixtures import SHIPPED_FIXTURES
from workbench.gpu.adapters import choose_adapter

from .conftest import REPO, run_cli, run_main, write_corpus

DOC = REPO / "docs" / "json.md"

TWICE = """
@group(0) @binding(0) var<storage, read_write> y: array<f32>;
@compute @workgroup_size(64)
fn twice(@builtin(global_invocation_id) g: vec3<u32>) {
    if g.x < arrayLength(&y) { y[g.x] = 2.0 * f32(g.x); wb_probe(1u, y[g.x]); }
}
"""
BROKEN = """
@group(0) @binding(0) var<storage, read_write> out: array<u32>;
@compute @workgroup_size(64)
fn broken(@builtin(global_invocation_id) gid: vec3<u32>) { out[gid.x] = 1u +; }
"""
SIZED = """
override WG: u32 = 64;
@group(0) @binding(0) var<storage, read_write> y: array<f32>;
@compute @workgroup_size(WG)
fn sized(@builtin(global_invocation_id) g: vec3<u32>) { if g.x < arrayLength(&y) { y[g.x] = 3.0; } }
"""
AD_HOC = ["twice", "--corpus", "{corpus}", "--dim", "n=100"]
SWEEP = ["sized", "--corpus", "{corpus}", "--dim", "n=1000", "--sweep", "WG=32,64"]

# (id, the command as docs/json.md names it, arguments before --json, exit code)
SCENARIOS = [
    ("adapters", "adapters", ["adapters"], 0),
    ("list", "list", ["list", "--corpus", "{corpus}"], 0),
    ("list-pipelines", "list", ["list", "--pipelines"], 0),
    ("run", "run", ["run", "rope_q", "--dim", "seq=8", "--reps", "2"], 0),
    ("run-ad-hoc", "run", ["run", *AD_HOC, "--reps", "0"], 0),
    ("check", "check", ["check", "rope_q", "--dim", "seq=8"], 0),
    # Ad hoc: nothing compared with a reference, so not a pass.
    ("check-ad-hoc", "check", ["check", *AD_HOC], 1),
    # The broken kernels are errors of the collection: exit 1.
    ("check-all", "check", ["check", "--all", "--quick", "--corpus", "{corpus}"], 1),
    ("step", "step", ["step", "attention", "--to", "1"], 0),
    ("step-divergence", "step", ["step", "gelu", "--divergence"], 0),
    ("bench-ad-hoc", "bench", ["bench", *AD_HOC, "--ms", "5", "--warmup-ms", "1"], 0),
    ("bench-sweep", "bench", ["bench", *SWEEP, "--ms", "5", "--warmup-ms", "1"], 0),
    ("describe", "describe", ["describe", "rope_q"], 0),
    ("record-ad-hoc", "record", ["record", *AD_HOC, "--out", "{tmp}/twice"], 0),
    (
        "replay",
        "replay",
        [
            "replay",
            str(SHIPPED_FIXTURES / "rope_q_gpt2.toml"),
            str(SHIPPED_FIXTURES / "rope_q_backward_gpt2.toml"),
        ],
        0,
    ),
    ("footprint", "footprint", ["footprint", *AD_HOC], 0),
    ("probe", "probe", ["probe", *AD_HOC], 0),
    ("config", "config", ["config"], 0),
    ("error", "error", ["run", "no_such_kernel"], 2),
]


def documented_nulls() -> dict[str, set[str]]:
    """Command -> the key paths where docs/json.md says `null` may appear."""
    text = DOC.read_text(encoding="utf-8")
    table = text[text.index("## Where `null` appears") :]
    out: dict[str, set[str]] = {}
    for row in re.finditer(r"^\| `([a-z]+)` \| (.+?) \|", table, re.MULTILINE):
        out.setdefault(row[1], set()).update(re.findall(r"`([^`]+)`", row[2]))
    return out


def null_paths(value: Any, path: str = "") -> Iterator[str]:
    """Where `value` holds None, as `a.b[].c` (a list's items share one path)."""
    if value is None:
        yield path
    elif isinstance(value, dict):
        for k, v in value.items():
            yield from null_paths(v, f"{path}.{k}" if path else k)
    elif isinstance(value, list):
        for v in value:
            yield from null_paths(v, f"{path}[]")


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    root = tmp_path_factory.mktemp("json")
    return write_corpus(
        root,
        {
            "twice.wgsl": TWICE,
            "sized.wgsl": SIZED,
            "broken.wgsl": BROKEN,
            "noentry.wgsl": "@group(0) @binding(0) var<storage> x: array<f32>;\n",
        },
    )


@pytest.mark.parametrize(
    ("command", "args", "code"), [s[1:] for s in SCENARIOS], ids=[s[0] for s in SCENARIOS]
)
def test_json_output_is_one_object_with_null_only_where_documented(
    command, args, code, corpus, tmp_path
):
    argv = [a.format(corpus=corpus, tmp=tmp_path) for a in args]
    proc = run_main(*argv, "--json")
    assert proc.returncode == code, proc.stderr
    data = json.loads(proc.stdout)
    assert isinstance(data, dict)
    documented = documented_nulls()
    allowed = documented.get(command, set())
    # A comparison of one output may lack its rel/ULP figures wherever it appears.
    unexplained = sorted(
        p
        for p in set(null_paths(data)) - allowed
        if p.rpartition(".")[2] not in documented["compare"]
    )
    assert not unexplained, f"null not documented in docs/json.md for {command}: {unexplained}"


def test_the_documented_places_are_read():
    """The table is found and parsed: a test that read nothing would allow nothing, but say so."""
    nulls = documented_nulls()
    assert "kernels[].entry_point" in nulls["list"]
    assert {"results[].timing", "ab.a.timing"} <= nulls["bench"]
    assert "limits" not in nulls.get("run", set()) and "adapter.limits" not in nulls["run"]


def test_null_paths_finds_nested_nulls():
    value = {"a": None, "b": [{"c": None}, {"c": 1}], "d": {"e": [None]}}
    assert sorted(null_paths(value)) == ["a", "b[].c", "d.e[]"]


def test_run_shows_the_limits_the_case_was_checked_against():
    limits = choose_adapter().limits
    run = json.loads(run_cli("run", "rope_q", "--dim", "seq=8", "--reps", "0", "--json").stdout)
    assert run["adapter"]["limits"] == dict(sorted(limits.items()))
    assert run["adapter"]["limits"]["max-storage-buffer-binding-size"] > 0
    adapters = json.loads(run_cli("adapters", "--json").stdout)
    default = next(a for a in adapters["adapters"] if a["index"] == adapters["default"])
    assert default["limits"] == run["adapter"]["limits"]
