"""Pipelines of a user's own corpus: the corpus's pipeline files are found, their steps name the
corpus's kernels (`FILE:main`), a shipped pipeline still plans while a user's folder is open, and
a step opens as a case of its own with the buffers it was given, which runs to the same outputs
and verdict as the step did. Checked on the real adapter against float64 computed here."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from tests.described.corpora import write
from tests.described.llama_style import DEQUANT, DEQUANT_REFS, DEQUANT_TOML, QUANTIZE, QUANTIZE_TOML
from workbench.errors import UserError
from workbench.pipelines import SHIPPED as SHIPPED_PIPELINES
from workbench.pipelines import corpus_pipelines, load_pipeline, locate, shipped_names
from workbench.pipelines.model import load
from workbench.pipelines.plan import plan
from workbench.pipelines.stepper import Stepper
from workbench.session import Session
from workbench.wgsl.corpus import SHIPPED, load_corpus

from .user_corpus import user_corpus


def _mine(session: Session, root: Path) -> Session:
    return session.with_corpus(load_corpus(root))


def test_the_corpus_pipeline_files_are_those_with_steps(tmp_path: Path) -> None:
    root = user_corpus(tmp_path / "mine")
    (root / "pyproject.toml").write_text('[project]\nname = "x"\n', encoding="utf-8")
    (root / "broken.toml").write_text("[[steps]\nkernel =", encoding="utf-8")
    (root / "top.toml").write_text((root / "pipelines/chain.toml").read_text(), encoding="utf-8")
    assert corpus_pipelines(root) == [root / "pipelines/chain.toml", root / "top.toml"]
    assert corpus_pipelines(SHIPPED) == []


def test_a_user_pipeline_steps_the_corpus_kernels(session: Session, tmp_path: Path) -> None:
    mine = _mine(session, user_corpus(tmp_path / "mine"))
    planned = plan(load(tmp_path / "mine/pipelines/chain.toml"), mine, {"n": 300})
    assert planned.corpus == mine.corpus.root
    s = Stepper(mine, planned)
    s.run_to_end()
    assert [r.verdict for r in s.records] == ["pass", "pass"]
    x = s.initial["x"].astype(np.float64)
    np.testing.assert_allclose(s.contents("z"), 0.5 * x * x + 2.0, rtol=1e-6)


def test_a_shipped_pipeline_plans_while_a_user_folder_is_open(
    session: Session, tmp_path: Path
) -> None:
    mine = _mine(session, user_corpus(tmp_path / "mine"))
    planned = plan(load_pipeline("gelu"), mine)  # was: no kernel named 'gelu_inplace'
    assert planned.corpus == SHIPPED
    s = Stepper(mine, planned)
    s.run_to_end()
    assert all(r.ok for r in s.records)
    # A copy of the shipped corpus holds every kernel: its own (edited) kernels are stepped.
    copy = tmp_path / "copy"
    shutil.copytree(SHIPPED, copy)
    assert plan(load_pipeline("gelu"), _mine(session, copy)).corpus == copy


def test_a_failing_step_opens_as_a_case_with_its_buffers(session: Session, tmp_path: Path) -> None:
    mine = _mine(session, user_corpus(tmp_path / "mine", bug=True))
    s = Stepper(mine, plan(load(tmp_path / "mine/pipelines/chain.toml"), mine, {"n": 300}))
    s.run_to_end()
    assert [r.verdict for r in s.records] == ["pass", "fail"]
    case = s.case(2)
    assert case.name == "main" and case.kernel.file == "scale.wgsl" and case.dims == {"n": 300}
    assert case.inputs["src"].tobytes() == s.contents("y", 1).tobytes()
    run = mine.run(case)
    assert str(run.verdict) == "fail"
    np.testing.assert_array_equal(run.outputs["dst"], s.contents("z", 2))
    y = s.contents("y", 1).astype(np.float64)
    np.testing.assert_allclose(run.reference["dst"], 0.5 * y + 2.0, rtol=1e-12)
    # The first step opens too (with the starting buffers); a step past the next one does not.
    s.run_to(0)
    assert s.case(1).inputs["src"].tobytes() == s.initial["x"].tobytes()
    with pytest.raises(Exception, match="steps 1 to 1 can"):
        s.case(2)


def test_the_command_line_lists_and_steps_the_corpus_pipelines(tmp_path: Path, cli) -> None:
    root = user_corpus(tmp_path / "mine")
    (root / "pipelines/broken.toml").write_text("[[steps]\n", encoding="utf-8")
    rc, out, err = cli("list", "--pipelines", "--corpus", str(root), "--json")
    rows = json.loads(out)["pipelines"]
    assert rc == 0 and [r["name"] for r in rows[:2]] == ["broken", "sqr_scale"], err
    assert "fix the syntax" in rows[0]["error"] and rows[1]["steps"] == [
        "sqr.wgsl:main",
        "scale.wgsl:main",
    ]
    assert {r["name"] for r in rows[2:]} == set(shipped_names())
    rc, out, err = cli("step", str(root / "pipelines/chain.toml"), "--corpus", str(root))
    assert rc == 0 and "2  scale.wgsl:main" in out and "verdict: PASS" in out, out + err


ROUND_TRIP = """
[dims]
nb = { default = 12, min = 1 }
[buffers]
x = { shape = ["nb * 32"], init = "randn:1" }
blocks = { shape = ["nb * 9"], dtype = "u32" }
y = { shape = ["nb * 32"] }
[[steps]]
kernel = "quantize"
bind = { src = "x", blocks = "blocks" }
[[steps]]
kernel = "dequant"
bind = { blocks = "blocks", dst = "y" }
"""


def test_a_packed_output_steps_into_a_packed_input(session: Session, tmp_path: Path) -> None:
    """Quantize to q8 blocks (a packed output, compared as its values), then dequantize them (a
    packed input, decoded for the reference); the float64 chain stops at the packed output."""
    files = {
        "quant.wgsl": QUANTIZE,
        "q.wgsl": DEQUANT,
        "refs.py": DEQUANT_REFS,
        "workbench.toml": QUANTIZE_TOML + DEQUANT_TOML,
        "round_trip.toml": ROUND_TRIP,
    }
    root = write(tmp_path / "q", files)
    mine = _mine(session, root)
    s = Stepper(mine, plan(load(root / "round_trip.toml"), mine), divergence=True)
    s.run_to_end()
    assert [r.verdict for r in s.records] == ["pass", "pass"]
    assert s.first_divergence is None and all(not r.chain for r in s.records)
    x = s.initial["x"].astype(np.float64).reshape(12, 32)
    half_step = np.abs(x).max(axis=1, keepdims=True) / 254
    assert np.all(np.abs(s.contents("y").reshape(12, 32) - x) <= half_step * (1 + 1e-5))


def test_a_corpus_pipeline_is_found_by_its_name(tmp_path: Path) -> None:
    """By its `name` or its file's, before a shipped one; a name two files go by, or none, is
    one line naming the pipelines there are."""
    root = user_corpus(tmp_path / "mine")
    chain = root / "pipelines/chain.toml"
    assert locate("sqr_scale", root) == chain and locate("chain", root) == chain
    assert locate(shipped_names()[0], root).parent == SHIPPED_PIPELINES
    with pytest.raises(UserError) as unknown:
        locate("nope", root)
    assert str(unknown.value) == (
        f"no pipeline named 'nope'; {root}'s pipelines: sqr_scale; shipped pipelines: "
        f"{', '.join(shipped_names())} (or give a path to a .toml file)"
    )
    (root / "top.toml").write_text(chain.read_text(encoding="utf-8"), encoding="utf-8")
    with pytest.raises(UserError) as twice:
        locate("sqr_scale", root)
    assert str(twice.value) == (
        f"2 pipelines of {root} are named 'sqr_scale' (pipelines/chain.toml, top.toml); "
        "give the file's path"
    )
    assert locate("top", root) == root / "top.toml"


def test_the_command_line_steps_a_corpus_pipeline_by_name(tmp_path: Path, cli) -> None:
    root = user_corpus(tmp_path / "mine")
    rc, out, err = cli("step", "sqr_scale", "--corpus", str(root))
    assert rc == 0 and "2  scale.wgsl:main" in out and "verdict: PASS" in out, out + err
    rc, out, err = cli("step", "sqr_scal", "--corpus", str(root))
    assert rc == 2 and "no pipeline named 'sqr_scal'" in err and "pipelines: sqr_scale;" in err
    assert len(err.strip().splitlines()) == 1
