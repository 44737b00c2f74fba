"""An ad-hoc kernel that writes nothing is said to in the terminal UI as on the command line, in
the same words, from one place in the engine (`Run.unwritten_note`; issue 31, item 4)."""

from __future__ import annotations

import contextlib
import io
from pathlib import Path

from rich.style import Style

from workbench.cli import main
from workbench.session import Session
from workbench.wgsl.corpus import load_corpus
from workbench.widgets.verdict_bar import verdict_text

# y = 2x with the bound check the wrong way round (`i > n`): it writes nothing. No spec: ad hoc.
NOOP = """
@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> y: array<f32>;
@group(0) @binding(2) var<uniform> n: u32;

@compute @workgroup_size(64)
fn noop(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.x;
    if (i > n) { y[i] = 2.0 * x[i]; }
}
"""


def test_the_ui_and_the_cli_say_the_kernel_wrote_nothing_alike(
    tmp_path: Path, session: Session
) -> None:
    (tmp_path / "noop.wgsl").write_text(NOOP)
    own = Session.on_adapter(load_corpus(tmp_path), session.adapter)
    run = own.run(own.case("noop", dims={"n": 256}))
    note = run.unwritten_note
    assert note == "the kernel wrote nothing into y (check the dims, grid and uniforms)"
    line = verdict_text(lambda _part: Style(), run, None, None, True, False, None)
    assert line.plain.startswith(" NO_WORK  " + note)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        rc = main(["run", "noop", "--corpus", str(tmp_path), "--dim", "n=256", "--reps", "0"])
    assert rc == 1 and f"  {note}\n" in out.getvalue()
