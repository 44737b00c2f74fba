"""Nothing ends the UI but the user: an invalid workbench.toml (at start and mid-session), an
edited reference module, a character that is no digit in a number field, user code that raises,
a worker that raises. Each time the app stays up, says what is wrong beside what it concerns,
keeps its state (pins, history, results, marked stale), and picks up the fix."""

from __future__ import annotations

from pathlib import Path

from textual.app import App
from textual.widgets import Input, Static

from tests.described.corpora import MATMUL, MATMUL_TOML, REFS, matmul_corpus, write
from workbench.app import WorkbenchApp
from workbench.jobs import SafeWorkers
from workbench.widgets.browser import KernelBrowser

from .conftest import SIZE, Recording, press_settled, run_async, settle, type_into, verdict

KEY = "matmul.wgsl:matmul"
BROKEN = MATMUL_TOML.replace("[kernels.matmul.buffers]", "[kernels.matmul.buffers")


def _status(app: WorkbenchApp) -> str:
    return app.main.query_one(KernelBrowser).status(KEY).kind


def _focus_list(app: WorkbenchApp) -> None:
    app.main.query_one(KernelBrowser).kernel_tree.focus()


@run_async
async def test_invalid_workbench_toml_at_start_then_fixed(tmp_path: Path) -> None:
    root = matmul_corpus(tmp_path, toml=BROKEN)
    app = Recording(corpus=root, snapshot=True, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert app.is_running  # it says why it cannot start, where the kernel view would be
        doc = str(app.main.query_one("#kv-doc", Static).render())
        assert "workbench.toml" in doc and "not valid TOML" in doc
        (root / "workbench.toml").write_text(MATMUL_TOML, encoding="utf-8")
        app.poll_files()
        await settle(pilot)
        assert _status(app) == "spec"
        _focus_list(app)
        await press_settled(pilot, "r")
        assert "PASS" in verdict(app)


@run_async
async def test_invalid_workbench_toml_mid_session_keeps_state(tmp_path: Path) -> None:
    root = matmul_corpus(tmp_path)
    app = Recording(corpus=root, snapshot=True, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await type_into(pilot, "#dim-M", "32")
        _focus_list(app)
        await press_settled(pilot, "r", "P")  # a run, pinned
        run = app.main.current_run()
        assert run is not None and "PASS" in verdict(app)
        (root / "workbench.toml").write_text(BROKEN, encoding="utf-8")
        app.poll_files()
        await settle(pilot)
        assert app.is_running and any("not valid TOML" in n for n in app.notices)
        assert "STALE" in verdict(app) and "not valid TOML" in verdict(app)
        assert app.main.current_run() is run  # the last good results stay, marked stale
        assert app.main.history.pinned(KEY) is not None
        assert app.main.query_one("#dim-M").value == "32"  # the form as it was
        (root / "workbench.toml").write_text(MATMUL_TOML, encoding="utf-8")
        app.poll_files()
        await settle(pilot)
        assert _status(app) == "spec"
        assert "STALE" not in verdict(app) and "PASS" in verdict(app)  # run again on reload
        assert app.main.history.pinned(KEY) is not None


@run_async
async def test_a_reference_edit_is_picked_up(tmp_path: Path) -> None:
    root = matmul_corpus(tmp_path)
    app = Recording(corpus=root, snapshot=True, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await type_into(pilot, "#dim-M", "32")
        _focus_list(app)
        await press_settled(pilot, "r")
        assert "PASS" in verdict(app)
        # A wrong reference (and a longer file: the edit shows in its size whatever the clock).
        wrong = REFS.replace('np.einsum("mk,kn->mn", A, B)', '2.0 * np.einsum("mk,kn->mn", A, B)')
        write(root, {"refs.py": wrong})
        app.poll_files()
        await settle(pilot)
        assert "FAIL" in verdict(app)
        write(root, {"refs.py": REFS})
        app.poll_files()
        await settle(pilot)
        assert "PASS" in verdict(app)


@run_async
async def test_reference_that_raises_is_an_error_in_the_view(tmp_path: Path) -> None:
    raising = REFS.replace(
        'return {"C": np.einsum("mk,kn->mn", A, B)}', 'raise RuntimeError("my reference broke")'
    )
    root = write(
        tmp_path, {"matmul.wgsl": MATMUL, "refs.py": raising, "workbench.toml": MATMUL_TOML}
    )
    app = Recording(corpus=root, snapshot=True, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await type_into(pilot, "#dim-M", "32")
        _focus_list(app)
        await press_settled(pilot, "r")
        assert app.is_running and "my reference broke" in verdict(app)


@run_async
async def test_a_superscript_in_the_grid_is_a_problem_not_a_crash(tmp_path: Path) -> None:
    root = matmul_corpus(tmp_path, toml=None)
    app = Recording(corpus=root, snapshot=True, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await type_into(pilot, "#grid", "2²")  # the superscript is refused as it is typed
        assert app.is_running and app.main.query_one("#grid", Input).value == "2"
        assert "grid takes a number: that key was not typed; esc leaves the field" in app.notices
        app.main.query_one("#grid", Input).value = "2²"  # set otherwise: a problem, no crash
        await settle(pilot)
        problems = str(app.main.query_one("#problems", Static).render())
        assert "grid" in problems and "whole numbers" in problems
        await type_into(pilot, "#grid", "2")
        assert str(app.main.query_one("#problems", Static).render()) == ""


@run_async
async def test_invalid_wgslconfig_at_start_then_fixed(tmp_path: Path) -> None:
    root = matmul_corpus(tmp_path)
    (root / "wgslconfig.toml").write_text("[preamble\n", encoding="utf-8")
    app = Recording(corpus=root, snapshot=True, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert app.is_running and "wgslconfig.toml" in str(
            app.main.query_one("#kv-doc", Static).render()
        )
        (root / "wgslconfig.toml").unlink()
        app.poll_files()
        await settle(pilot)
        assert app.main.current == KEY and _status(app) == "spec"


class _Raises(SafeWorkers, App[None]):
    """An app whose worker raises: it is said, and the app goes on."""

    def __init__(self) -> None:
        super().__init__()
        self.notices: list[str] = []

    def notify(self, message: str, **kwargs: object) -> None:  # type: ignore[override]
        self.notices.append(message)

    def on_mount(self) -> None:
        self.run_worker(self._boom, thread=True, group="probe", exit_on_error=False)

    def _boom(self) -> None:
        raise ValueError("a bug below the UI")


@run_async
async def test_a_worker_that_raises_is_a_notification() -> None:
    app = _Raises()
    async with app.run_test() as pilot:
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert app.is_running
        assert app.notices == ["internal error in probe: ValueError: a bug below the UI"]
