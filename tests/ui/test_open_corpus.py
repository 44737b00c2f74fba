"""Which corpus the UI opens, and why, is said in its header; the palette opens any other folder
(issue 31, item 9). `corpus_why` alone, and one pilot test of the palette's Open corpus."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import Input, Static

from workbench.app import WorkbenchApp
from workbench.cli.ui import corpus_why
from workbench.dialogs.open_corpus import OpenCorpusScreen, corpus_problem

from .conftest import SIZE, run_async, settle

DOUBLE = """
@group(0) @binding(0) var<storage, read_write> y: array<f32>;

@compute @workgroup_size(64)
fn double_it(@builtin(global_invocation_id) gid: vec3<u32>) {
    if (gid.x < arrayLength(&y)) { y[gid.x] = 2.0 * y[gid.x]; }
}
"""


def test_the_header_says_why_this_corpus() -> None:
    assert corpus_why("kernels", None) == ""  # given: nothing to explain
    assert corpus_why("kernels", "kernels") == "from $WORKBENCH_CORPUS"
    assert corpus_why(None, None) == "the default"


def test_a_corpus_path_is_checked_before_the_dialog_closes(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("")
    assert corpus_problem(tmp_path) is None
    assert corpus_problem(tmp_path / "gone") == f"{tmp_path / 'gone'} does not exist"
    assert corpus_problem(tmp_path / "notes.txt") == (
        f"{tmp_path / 'notes.txt'} is not a .wgsl file or a folder of them"
    )


def _topbar(app: WorkbenchApp) -> str:
    return str(app.main.query_one("#topbar", Static).render())


@run_async
async def test_the_palette_opens_another_folder_on_the_same_adapter(tmp_path: Path) -> None:
    (tmp_path / "double.wgsl").write_text(DOUBLE)
    app = WorkbenchApp(snapshot=True, watch=False, corpus_why="the default")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert "corpus shipped kernels (workbench/shaders) (the default)" in _topbar(app)
        adapter = app.session.adapter if app.session else None
        app.action_open_corpus()
        await pilot.pause()
        assert isinstance(app.screen, OpenCorpusScreen)
        app.screen.query_one("#corpus-path", Input).value = str(tmp_path)
        await pilot.press("enter")
        await settle(pilot)
        assert app.session is not None and app.session.adapter is adapter
        assert Path(app.session.corpus.root) == tmp_path
        assert app.main.current == "double.wgsl:double_it"
        assert set(app.main.states) == {"double.wgsl:double_it"}  # nothing of the last corpus
        assert "(the default)" not in _topbar(app) and tmp_path.name in _topbar(app)
