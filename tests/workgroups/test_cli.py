"""`workbench footprint` and `workbench probe`: JSON shapes, text, exit codes (0 clean, 1 races or
holes, 2 user errors) and one clear line for every mistake."""

from __future__ import annotations

import json

import pytest

from workbench.cli import main
from workbench.session import Session


def _json(capsys, argv: list[str]) -> tuple[int, dict]:
    code = main(argv)
    return code, json.loads(capsys.readouterr().out)


def test_footprint_json_of_a_racing_kernel_exits_1(inside: Session, capsys):
    root = str(inside.corpus.root)
    code, out = _json(capsys, ["footprint", "overlap", "--corpus", root, "--json"])
    assert code == 1 and out["ok"] is False
    assert {"kernel", "workgroups", "stepped", "sampled", "outputs", "ok"} <= set(out)
    assert (out["workgroups"], out["stepped"], out["sampled"]) == (16, 16, False)
    o = out["outputs"]["out"]
    assert {
        "elements",
        "written",
        "holes",
        "races",
        "atomic",
        "hole_examples",
        "race_examples",
    } <= set(o)
    assert (o["elements"], o["written"], o["holes"], o["races"], o["atomic"]) == (
        1024,
        1024,
        0,
        15,
        False,
    )
    assert o["race_examples"][0] == {"index": "i=64", "flat": 64, "workgroups": [0, 1]}


def test_footprint_of_a_clean_shipped_kernel_exits_0(capsys):
    argv = ["footprint", "gelu_inplace", "--dim", "seq=4", "--dim", "d_ff=300", "--json"]
    code, out = _json(capsys, argv)
    assert code == 0 and out["ok"] is True and out["outputs"]["x"]["races"] == 0


def test_footprint_text_names_the_holes_and_the_sampling(inside: Session, capsys):
    root = str(inside.corpus.root)
    argv = ["footprint", "cover", "--corpus", root, "--size", "out=1088", "--max-workgroups", "4"]
    assert main(argv) == 1
    text = capsys.readouterr().out
    assert "sampled 4 of 16" in text and "hole i=1024 .. i=1087 (64 elements)" in text
    assert "0x7FA5A5A5" in text


def test_probe_json_has_the_records_dropped_and_capacity(inside: Session, capsys):
    root = str(inside.corpus.root)
    argv = ["probe", "probed", "--corpus", root, "--dim", "n=64", "--invocation", "0:0:0,3"]
    code, out = _json(capsys, [*argv, "--capacity", "5", "--json"])
    assert code == 0
    assert (out["dropped"], out["capacity"], len(out["records"])) == (2, 5, 5)
    first = out["records"][0]
    assert {k: first[k] for k in ("workgroup", "local", "tag", "value", "order")} == {
        "workgroup": [0, 0, 0],
        "local": [3, 0, 0],
        "tag": 0,
        "value": 1.5,
        "order": 0,
    }


@pytest.mark.parametrize(
    ("argv", "why"),
    [
        (["footprint", "overlap", "--max-workgroups", "0"], "--max-workgroups must be >= 1"),
        (["probe", "probed", "--capacity", "0"], "--capacity must be between 1"),
        (["probe", "probed", "--invocation", "x,y"], "expected WG or WG,LID"),
        (["probe", "overlap"], "calls no probe"),
    ],
)
def test_mistakes_exit_2_with_one_clear_line(inside: Session, capsys, argv, why):
    assert main([*argv, "--corpus", str(inside.corpus.root)]) == 2
    err = [ln for ln in capsys.readouterr().err.splitlines() if "no GPU found" not in ln]
    assert len(err) == 1 and why in err[0]
