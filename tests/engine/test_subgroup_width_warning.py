"""A kernel that uses subgroup builtins and hard-codes a subgroup width other than the adapter's
measured one is flagged beside the kernel (list, case notes, check), as a warning and not an error."""

from __future__ import annotations

import json

import pytest

from .conftest import run_main

BODY = """
@group(0) @binding(0) var<storage, read_write> out: array<f32>;
{const}
@compute @workgroup_size(64)
fn {name}(@builtin(global_invocation_id) gid: vec3<u32>,
          @builtin(subgroup_invocation_id) lane: u32,
          @builtin(subgroup_size) width: u32) {{
    let total = subgroupAdd(1.0);
    if (gid.x < arrayLength(&out)) {{ out[gid.x] = total / f32({divisor}); }}
}}
"""


@pytest.fixture
def subgroup_corpus(make_corpus, session):
    if session.gpu.subgroup_size is None:
        pytest.skip(f"{session.adapter.label} has no subgroups")
    hard = 32 if session.gpu.subgroup_size != 32 else 16
    return make_corpus(
        {
            "hard.wgsl": BODY.format(
                const=f"const SUBGROUP_SIZE: u32 = {hard}u;", name="hard", divisor="SUBGROUP_SIZE"
            ),
            "measured.wgsl": BODY.format(const="", name="measured", divisor="width"),
        }
    ), hard


def test_the_hard_coded_width_is_a_warning_in_list_and_check(subgroup_corpus, session):
    root, hard = subgroup_corpus
    width = session.gpu.subgroup_size
    listed = run_main("list", str(root), "--json")
    assert listed.returncode == 0, listed.stderr
    rows = {r["name"]: r for r in json.loads(listed.stdout)["kernels"]}
    assert rows["hard"]["status"] == rows["measured"]["status"] == "ok"
    (warning,) = rows["hard"]["warnings"]
    assert f"SUBGROUP_SIZE = {hard}" in warning and f"subgroups are {width} wide" in warning
    assert rows["measured"]["warnings"] == []

    text = run_main("list", str(root))
    assert f"warning: SUBGROUP_SIZE = {hard}" in text.stdout

    checked = run_main("check", "hard", "--corpus", str(root), "--what", "determinism")
    assert f"warning: SUBGROUP_SIZE = {hard}" in checked.stdout
    # A kernel without a reference verifies nothing (RAN, exit 1): a warning is not an error.
    assert checked.returncode == 1 and "verdict: RAN" in checked.stdout, checked.stderr
    clean = run_main("check", "measured", "--corpus", str(root), "--what", "determinism")
    assert "SUBGROUP_SIZE" not in clean.stdout and "warning" not in clean.stdout


def test_the_case_carries_the_warning_and_still_runs(subgroup_corpus, on_corpus):
    root, hard = subgroup_corpus
    sess = on_corpus(root)
    case = sess.case("hard", dims={"n": 64})
    assert any(n.startswith(f"warning: SUBGROUP_SIZE = {hard}") for n in case.notes)
    assert not any("warning" in n for n in sess.case("measured", dims={"n": 64}).notes)
    # It runs (with the wrong divisor, which is the point of the warning).
    assert sess.run(case).outputs["out"].shape == (64,)
