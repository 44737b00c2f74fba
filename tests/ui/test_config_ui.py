"""The user's configuration in the terminal UI: a keymap rebinds an action everywhere its key is
shown (footer, help) and the new key works; a bad configuration file starts the app with defaults and
a notice naming the file and the key; the chosen theme and the kernel on screen are remembered."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import Markdown

from workbench.app import WorkbenchApp
from workbench.config import load_config
from workbench.screens.help import HelpScreen
from workbench.viewmodel.keys import rebind

from .conftest import SIZE, SWIGLU, Recording, open_at, press_settled, run_async, settle, verdict


@pytest.fixture
def conf(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    path = tmp_path / "config.toml"
    monkeypatch.setenv("WORKBENCH_CONFIG", str(path))
    # What a test remembers (theme, kernel) stays with it: the next app starts from defaults.
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    yield path
    rebind({})  # the registry is module state: leave the default keys for the next test


def _footer_keys(app: WorkbenchApp) -> dict[str, str]:
    """Binding id -> the key the footer shows for it."""
    return {
        b.binding.id: b.binding.key
        for b in app.screen.active_bindings.values()
        if b.binding.id and b.binding.show
    }


def test_a_keymap_rebinds_run_in_the_footer_the_help_and_the_keys(conf: Path) -> None:
    conf.write_text('[keys]\nrun = "ctrl+r"\n', encoding="utf-8")

    @run_async
    async def body() -> None:
        app = Recording(snapshot=True, watch=False, config=load_config())
        async with app.run_test(size=SIZE) as pilot:
            await open_at(pilot, SWIGLU, seq="8", d_ff="64")
            await settle(pilot)  # the browser has the focus: the main screen's keys are live
            assert _footer_keys(app)["run"] == "ctrl+r"
            await press_settled(pilot, "r")
            assert "not run yet" in verdict(app), "r no longer runs"
            await press_settled(pilot, "ctrl+r")
            assert "PASS" in verdict(app)
            await press_settled(pilot, "f1")
            assert isinstance(app.screen, HelpScreen)
            help_text = app.screen.query_one(Markdown).source
            assert "| `ctrl+r` | run once" in help_text

    body()


def test_a_bad_configuration_starts_with_defaults_and_a_notice(conf: Path) -> None:
    conf.write_text('theme = "no-such-theme"\nbench_ms = -3\n[keys]\nnot_an_action = "x"\n')

    @run_async
    async def body() -> None:
        app = Recording(snapshot=True, watch=False, config=load_config())
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot)
            notices = app.notices
            assert any("bench_ms: -3 is not a number" in n and str(conf) in n for n in notices)
            assert any("theme 'no-such-theme' is not installed" in n for n in notices)
            assert any("[keys] not_an_action: no action" in n for n in notices)
            assert app.theme == "textual-dark" and app.config["bench_ms"] == 100.0
            assert "not run yet" in verdict(app), "the app started and shows a kernel"

    body()


def test_theme_and_kernel_are_remembered(conf: Path) -> None:
    @run_async
    async def body() -> None:
        app = Recording(snapshot=True, watch=False, config=load_config(), remember=True)
        async with app.run_test(size=SIZE) as pilot:
            await open_at(pilot, SWIGLU)
            app.theme = "nord"
            await settle(pilot)

    body()
    remembered = load_config()
    assert remembered.remembered["kernel"] == SWIGLU and remembered["theme"] == "nord"
    # The shipped kernels are remembered as no corpus: a start opens its own install's.
    assert "corpus" not in remembered.remembered

    @run_async
    async def again() -> None:
        app = Recording(
            snapshot=True,
            watch=False,
            config=remembered,
            kernel=remembered.remembered["kernel"],
        )
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot)
            assert app.main.current == SWIGLU and app.theme == "nord"

    again()
