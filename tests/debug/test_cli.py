"""`workbench debug`: the JSON object the issue specifies, the text, exit codes and one clear line
for every mistake."""

from __future__ import annotations

import json

import numpy as np
import pytest

from workbench.cli import main
from workbench.session import Session


def _json(capsys, argv: list[str]) -> tuple[int, dict]:
    code = main(argv)
    return code, json.loads(capsys.readouterr().out)


def test_json_is_the_issues_object(debug_session: Session, capsys):
    root = str(debug_session.corpus.root)
    code, out = _json(
        capsys, ["debug", "helper", "--corpus", root, "--invocation", "9,0,0", "--json"]
    )
    assert code == 0
    assert list(out) == [
        "kernel",
        "invocation",
        "workgroup",
        "local",
        "outputs_identical",
        "truncated",
        "steps",
    ]
    assert (out["invocation"], out["workgroup"], out["local"]) == ([9, 0, 0], [0, 0, 0], [9, 0, 0])
    assert out["outputs_identical"] is True and out["truncated"] is False
    assert [st["kind"] for st in out["steps"]] == [
        "load",
        "param",
        "param",
        "assign",
        "return",
        "assign",
        "param",
        "param",
        "assign",
        "return",
        "assign",
        "store",
    ]
    first = out["steps"][0]
    assert set(first) == {
        "step",
        "file",
        "line",
        "col",
        "kind",
        "name",
        "type",
        "value",
        "index",
        "depth",
    }
    assert (first["file"], first["line"], first["index"], first["depth"]) == (
        "helper.wgsl",
        11,
        9,
        0,
    )
    assert out["steps"][1]["depth"] == 1 and out["steps"][1]["index"] is None


def test_workgroup_and_local_name_the_same_invocation(debug_session: Session, capsys):
    root = str(debug_session.corpus.root)
    argv = ["debug", "matmul", "--corpus", root, "--grid", "4,4,1", "--json"]
    _, a = _json(capsys, [*argv, "--invocation", "11,6,0"])
    _, b = _json(capsys, [*argv, "--workgroup", "1,0,0", "--local", "3,6,0"])
    assert a == b and a["local"] == [3, 6, 0]


def test_first_nonfinite_names_the_line_and_operands(debug_session: Session, capsys):
    root = str(debug_session.corpus.root)
    argv = [
        "debug",
        "planted_nan",
        "--corpus",
        root,
        "--input",
        "den=arange",
        "--input",
        "num=ones",
    ]
    code, out = _json(capsys, [*argv, "--first-nonfinite", "--json"])
    assert code == 0
    nf = out["first_nonfinite"]
    assert nf["invocation"] == [0, 0, 0] and nf["invocations"] == 1
    assert (nf["line"], nf["name"], nf["value"]) == (9, "q", "NaN")
    assert nf["operands"] == {"top": 0.0, "den[i]": 0.0, "i": 0}
    main([*argv, "--first-nonfinite"])
    text = capsys.readouterr().out
    assert "first non-finite: q = nan at planted_nan.wgsl:9:5 in invocation 0,0,0" in text
    assert "from top = 0.0, den[i] = 0.0, i = 0; 1 invocation made one" in text


def test_compare_and_break(debug_session: Session, capsys):
    root = str(debug_session.corpus.root)
    argv = ["debug", "diverge", "--corpus", root, "--input", "x=ones", "--invocation", "2"]
    code, out = _json(capsys, [*argv, "--compare", "7", "--json"])
    assert code == 0
    assert out["first_difference"] == {
        "step": 2,
        "file": "diverge.wgsl",
        "line": 7,
        "name": "if",
        "a": 1,
        "b": 0,
    }
    main([*argv, "--compare", "7"])
    assert "2,0,0 and 7,0,0 first differ in control flow at step 2, diverge.wgsl:7 if: 1 vs 0" in (
        capsys.readouterr().out
    )
    _, out = _json(capsys, [*argv, "--break", "v > 1.5", "--json"])
    assert out["break"] == 3 and len(out["steps"]) == 4
    assert out["steps"][-1]["value"] == 2.0


def test_element_traces_the_last_writer(debug_session: Session, capsys):
    root = str(debug_session.corpus.root)
    argv = ["debug", "reduce", "--corpus", root, "--element", "sums[5]", "--json"]
    _, out = _json(capsys, argv)
    assert out["element"] == {"binding": "sums", "index": 5, "writers": [[320, 0, 0]]}
    assert out["invocation"] == [320, 0, 0]
    assert out["steps"][-1]["kind"] == "store" and out["steps"][-1]["index"] == 5


def test_a_truncated_trace_says_where_in_text(debug_session: Session, capsys):
    root = str(debug_session.corpus.root)
    argv = ["debug", "early_break", "--corpus", root, "--input", "x=const:0.01"]
    assert main([*argv, "--invocation", "0", "--capacity", "20"]) == 0
    out = capsys.readouterr().out
    assert out.rstrip().endswith(
        "trace stopped at step 20: the loop at early_break.wgsl:9 had run 4 times"
    )


@pytest.mark.parametrize(
    ("extra", "why"),
    [
        ([], "name one invocation"),
        (["--invocation", "1", "--first-nonfinite"], "name one invocation"),
        (["--invocation", "a,b"], "expected X,Y,Z"),
        (["--invocation", "99999"], "outside the dispatch"),
        (["--workgroup", "0,0,0"], "go together"),
        (["--invocation", "1", "--capacity", "0"], "--capacity must be"),
        (["--invocation", "1", "--break", "nosuch > 1"], "records no 'nosuch'"),
        (["--invocation", "1", "--break", "a >"], "not one WGSL expression"),
        (["--element", "y[zz]"], "whole numbers"),
        (["--any"], "give --break"),
        (["--any", "--break", "a > 1.0", "--invocation", "1"], "give --break, and no"),
    ],
)
def test_mistakes_are_one_clear_line(debug_session: Session, capsys, extra, why):
    root = str(debug_session.corpus.root)
    assert main(["debug", "helper", "--corpus", root, *extra]) == 2
    err = [line for line in capsys.readouterr().err.splitlines() if "no GPU found" not in line]
    assert len(err) == 1 and why in err[0]


def test_break_any_json_names_the_invocation(debug_session: Session, capsys, tmp_path):
    x = np.ones(1024, np.float32)
    x[[300, 500]] = -4.0  # s = x * 0.5 + 1.0 = -1.0 in the first call
    np.save(tmp_path / "x.npy", x)
    root = str(debug_session.corpus.root)
    args = ["debug", "helper", "--corpus", root, "--input", f"x=npy:{tmp_path / 'x.npy'}"]
    assert main([*args, "--break", "s < 0.0", "--any", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["break_invocation"] == [300, 0, 0] and out["invocation"] == [300, 0, 0]
    last = out["steps"][-1]
    assert (last["name"], last["value"], out["break"]) == ("s", -1.0, len(out["steps"]) - 1)
    assert main([*args, "--break", "s > 1e30", "--any"]) == 0
    assert "holds in no invocation" in capsys.readouterr().out


def test_instrumentation_never_changes_the_users_file(debug_session: Session, capsys):
    root = debug_session.corpus.root
    before = {p.name: p.read_bytes() for p in root.glob("*.wgsl")}
    main(["debug", "matmul", "--corpus", str(root), "--grid", "4,4,1", "--invocation", "3,3"])
    capsys.readouterr()
    assert {p.name: p.read_bytes() for p in root.glob("*.wgsl")} == before
    assert np.array_equal(np.zeros(1), np.zeros(1))
