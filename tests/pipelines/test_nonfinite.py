"""`workbench step PIPELINE --first-nonfinite`: the first step that made a NaN or infinity from
finite inputs, and the invocation and line inside it, on a user's pipeline of doublings that
overflows f32 at its second step."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

DOUBLE = """@group(0) @binding(0) var<storage, read_write> x: array<f32>;

@compute @workgroup_size(256)
fn double(@builtin(global_invocation_id) gid: vec3<u32>) {
    let v = x[gid.x];
    x[gid.x] = 2.0 * v;
}
"""


def _doublings(tmp_path: Path, start: str) -> tuple[Path, Path]:
    corpus = tmp_path / "mine"
    corpus.mkdir()
    (corpus / "double.wgsl").write_text(DOUBLE, encoding="utf-8")
    path = tmp_path / "double.toml"
    steps = '[[steps]]\nkernel = "double"\nbind = { x = "x" }\ngrid = [4]\n' * 3
    path.write_text(f'[buffers]\nx = {{ shape = [1024], init = "{start}" }}\n{steps}', "utf-8")
    return path, corpus


def test_the_step_that_overflowed_and_the_line_inside_it(cli, tmp_path: Path) -> None:
    path, corpus = _doublings(tmp_path, "const:1e38")
    # 1e38 doubled is 2e38 (finite), doubled again is past f32's 3.4e38: step 2 makes the inf.
    assert float(np.float32(np.float32(2e38) * 2)) == np.inf
    rc, out, _ = cli("step", str(path), "--corpus", str(corpus), "--first-nonfinite", "--json")
    assert rc == 0
    found = json.loads(out)["first_nonfinite_step"]
    assert (found["step"], found["kernel"], found["gained"]) == (2, "double", {"x": 1024})
    inside = found["first_nonfinite"]
    assert inside["invocation"] == [0, 0, 0] and inside["invocations"] == 1024
    assert (inside["file"], inside["line"], inside["name"], inside["value"]) == (
        "double.wgsl",
        6,
        "x[gid.x]",
        "Inf",
    )
    assert inside["operands"] == {"v": float(np.float32(2e38))}
    rc, out, _ = cli("step", str(path), "--corpus", str(corpus), "--first-nonfinite")
    assert "first non-finite: step 2 (double) gained x 1,024 non-finite elements" in out
    assert "at double.wgsl:6:5 in invocation 0,0,0" in out


def test_finite_throughout_names_no_step(cli, tmp_path: Path) -> None:
    path, corpus = _doublings(tmp_path, "ones")
    rc, out, _ = cli("step", str(path), "--corpus", str(corpus), "--first-nonfinite")
    assert rc == 0
    assert "first non-finite: no step made a NaN or infinity from finite inputs" in out
