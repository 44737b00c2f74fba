"""Results taken away from the UI, without Textual: the jump box's index parsing, the save path's
checks, arrays written as .npz/.npy (read back with allow_pickle=False), the Diff tab's tables as
CSV and Markdown (figures checked against the run's own comparison), and values as text."""

from __future__ import annotations

import csv
import io
from pathlib import Path

import numpy as np
import pytest

from workbench.errors import UserError
from workbench.session import Run, Session
from workbench.viewmodel.slicing import parse_index
from workbench.viewmodel.takeaway import (
    CASE,
    DIFF_COLUMNS,
    block_text,
    case_arrays,
    check_path,
    default_name,
    diff_csv,
    diff_markdown,
    save_arrays,
    save_diff,
    value_text,
)

SHAPE = (32, 8, 64)
AXES = ("s", "h", "d")


@pytest.fixture(scope="module")
def run(session: Session) -> Run:
    return session.run("ffn_swiglu_backward", dims={"seq": 4, "d_ff": 64})


@pytest.mark.parametrize(
    ("text", "index"),
    [
        ("s=17 h=3 d=40", (17, 3, 40)),
        ("d=40, s=17, h=3", (17, 3, 40)),
        ("17 3 40", (17, 3, 40)),
        ("0", (0, 0, 0)),
        (str(17 * 8 * 64 + 3 * 64 + 40), (17, 3, 40)),
    ],
)
def test_an_index_by_name_in_order_or_flat(text: str, index: tuple[int, ...]) -> None:
    assert parse_index(text, SHAPE, AXES) == index


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("", "give an index: s, h, d by name, or one flat index"),
        ("s=17 x=3 d=40", "no axis 'x': the axes are s, h, d"),
        ("s=17 h=8 d=40", "h=8 is outside 0–7"),
        ("s=17 d=40", "missing h: give every axis (s, h, d) or a flat index"),
        ("s=17 s=3 h=1 d=2", "s is given twice"),
        ("s=seven h=1 d=2", "'seven' is not a whole number"),
        ("17 3", "2 numbers for 3 axes (s, h, d)"),
        ("s=17 3 40", "'3': name every axis (s, h, d) or none"),
        ("16384", "flat index 16384 is outside 0–16,383"),
        ("-1", "flat index -1 is outside 0–16,383"),
    ],
)
def test_a_bad_index_says_what_is_wrong(text: str, problem: str) -> None:
    with pytest.raises(UserError) as exc:
        parse_index(text, SHAPE, AXES)
    assert str(exc.value) == problem


def test_paths_are_checked_before_writing(tmp_path: Path) -> None:
    assert check_path("out.npz", (".npz",), tmp_path) == tmp_path / "out.npz"
    for text, problem in [
        ("  ", "give a file name"),
        ("out.txt", "out.txt: the name must end in .csv or .md"),
        (str(tmp_path / "nowhere" / "a.csv"), f"folder {tmp_path / 'nowhere'} does not exist"),
    ]:
        with pytest.raises(UserError, match="^" + problem.replace(".", r"\.") + "$"):
            check_path(text, (".csv", ".md"), tmp_path)
    (tmp_path / "d.csv").mkdir()
    with pytest.raises(UserError, match="is a folder"):
        check_path("d.csv", (".csv",), tmp_path)


def test_the_case_saved_as_npz_reads_back_whole(run: Run, tmp_path: Path) -> None:
    path = tmp_path / default_name(run, CASE, ".npz")
    assert path.name == "ffn_swiglu_backward-seq4-d_ff64.npz"
    said = save_arrays(path, run, CASE)
    with np.load(path, allow_pickle=False) as z:
        assert sorted(z.files) == sorted(case_arrays(run))
        for name, arr in run.outputs.items():
            assert z[f"outputs.{name}"].dtype == arr.dtype
            np.testing.assert_array_equal(z[f"outputs.{name}"], arr)
        for name, arr in run.inputs.items():
            np.testing.assert_array_equal(z[f"inputs.{name}"], arr)
        np.testing.assert_array_equal(z["reference.grad_up"], run.reference["grad_up"])
    assert said.startswith(f"{len(case_arrays(run))} arrays")
    assert [p.name for p in tmp_path.iterdir()] == [path.name]  # no temporary left behind


def test_one_buffer_saved_as_npy(run: Run, tmp_path: Path) -> None:
    path = tmp_path / default_name(run, "outputs.grad_up", ".npy")
    assert path.name == "ffn_swiglu_backward-seq4-d_ff64-grad_up.npy"
    assert save_arrays(path, run, "outputs.grad_up") == "outputs.grad_up (4×64 float32)"
    np.testing.assert_array_equal(np.load(path, allow_pickle=False), run.outputs["grad_up"])


def test_diff_csv_holds_the_comparisons_figures(run: Run, tmp_path: Path) -> None:
    path = tmp_path / "d.csv"
    assert save_diff(path, run) == "the diff of 2 outputs"
    rows = list(csv.reader(io.StringIO(path.read_text(encoding="utf-8"))))
    assert rows[0] == list(DIFF_COLUMNS) and path.read_text(encoding="utf-8") == diff_csv(run)
    for row in rows[1:3]:
        c = run.compare[row[0]]
        assert float(row[2]) == c.max_abs and float(row[3]) == c.max_rel
        assert int(row[5]) == c.n_bad and int(row[6]) == c.n_total == 256
        assert float(row[7]) == c.rtol and float(row[8]) == c.atol
    blank = rows.index([])
    # The elements' index: one column per axis, each a whole number (issue 31, item 12).
    assert rows[blank + 1] == [
        "output",
        "seq",
        "d_ff",
        "got",
        "reference",
        "|Δ|",
        "|Δ| / tolerance",
    ]
    worst = rows[blank + 2 :]
    assert len(worst) == 24 and {r[0] for r in worst} == {"grad_gate", "grad_up"}
    # Each worst element's |Δ| is |got - reference| of the element it names.
    for name, seq, d_ff, got, ref, diff, _ in worst:
        idx = (int(seq), int(d_ff))
        assert float(got) == float(run.outputs[name][idx])
        assert float(ref) == float(run.reference[name][idx])
        assert float(diff) == pytest.approx(abs(float(got) - float(ref)), rel=1e-12, abs=0)


def test_diff_markdown_is_two_tables_under_a_heading(run: Run) -> None:
    text = diff_markdown(run)
    lines = text.splitlines()
    assert lines[0].startswith("# ffn_swiglu_backward seq=4 d_ff=64 seed 0 on ")
    assert (
        lines[2] == "| output | verdict | max \\|Δ\\| | max rel | max ULP | outside tol | "
        "elements | rtol | atol | tolerance from |"
    )
    assert sum(1 for ln in lines if ln.startswith("| ---")) == 2


def test_values_as_text_read_back_to_the_same_value() -> None:
    x = np.float32(0.1) / np.float32(3)
    assert np.float32(value_text(x)) == x and value_text(np.int32(-7)) == "-7"
    block = np.array([[1.5, -0.0], [np.nan, np.inf]], dtype=np.float32)
    assert block_text(block) == "1.5\t-0.0\nnan\tinf"
