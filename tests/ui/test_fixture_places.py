"""Fixtures saved from the UI go to a folder the user owns, never into the installed package; the
Fixtures screen lists the shipped ones (read-only) beside the user's and shows `not replayed`, not
the note, in its result column before a replay."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import DataTable, Label

from workbench.app import WorkbenchApp
from workbench.cli import main
from workbench.config import load_config
from workbench.dialogs.save_fixture import SaveFixtureScreen
from workbench.fixtures import SHIPPED_FIXTURES
from workbench.screens.fixtures import FixturesScreen
from workbench.viewmodel.fixture_places import (
    PACKAGE,
    fixture_places,
    inside_package,
    origin,
    user_fixtures_default,
)
from workbench.wgsl.corpus import SHIPPED

from .conftest import SIZE, SWIGLU, open_at, press_settled, run_async, settle


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A configuration folder of this test's own: the user-owned default lives beside it."""
    monkeypatch.setenv("WORKBENCH_CONFIG", str(tmp_path / "conf" / "config.toml"))
    return tmp_path / "conf"


def test_shipped_kernels_save_to_a_user_folder_outside_the_package(home: Path) -> None:
    places = fixture_places(SHIPPED)
    assert places.save_to == home / "fixtures" == user_fixtures_default()
    assert not inside_package(places.save_to) and not places.save_to.is_relative_to(PACKAGE)
    assert places.listed == [SHIPPED_FIXTURES, places.save_to]
    assert places.why == "default for shipped kernels" and places.problems == ()


def test_a_user_corpus_keeps_its_fixtures_beside_its_kernels(home: Path, tmp_path: Path) -> None:
    places = fixture_places(tmp_path / "mine")
    assert places.save_to == tmp_path / "mine" / "fixtures" and places.shipped is None
    assert places.listed == [tmp_path / "mine" / "fixtures"]


def test_option_wins_over_configuration_which_wins_over_the_corpus(
    home: Path, tmp_path: Path
) -> None:
    mine = tmp_path / "mine"
    assert fixture_places(mine, tmp_path / "opt", "/cfg").save_to == tmp_path / "opt"
    assert fixture_places(mine, None, str(tmp_path / "cfg")).save_to == tmp_path / "cfg"
    assert fixture_places(SHIPPED, None, str(tmp_path / "cfg")).why == "configuration"


def test_a_folder_inside_the_package_is_refused_with_a_reason(home: Path) -> None:
    places = fixture_places(SHIPPED, PACKAGE / "fixtures", str(PACKAGE))
    assert places.save_to == home / "fixtures"
    assert len(places.problems) == 2
    assert all("inside the installed package" in p for p in places.problems)


def test_origin_names_the_package_fixtures_shipped(tmp_path: Path) -> None:
    assert origin(SHIPPED_FIXTURES / "gelu.toml") == "shipped"
    assert origin(tmp_path / "gelu.toml") == "yours"


def test_configuration_takes_a_fixtures_folder(home: Path) -> None:
    home.mkdir(parents=True)
    (home / "config.toml").write_text('fixtures = "~/fx"\n', encoding="utf-8")
    cfg = load_config()
    assert cfg["fixtures"] == "~/fx" and cfg.problems == []
    assert fixture_places(SHIPPED, None, cfg["fixtures"]).save_to == Path.home() / "fx"


def test_cli_refuses_fixtures_inside_the_package(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["ui", "--fixtures", str(PACKAGE / "fixtures")]) == 2
    assert "inside the installed workbench package" in capsys.readouterr().err


def test_cli_hands_fixtures_to_the_app(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    started: list[Path | None] = []
    monkeypatch.setattr(WorkbenchApp, "run", lambda self: started.append(self.fixtures_option))
    assert main(["--fixtures", str(tmp_path / "fx"), str(SHIPPED)]) == 0
    assert started == [tmp_path / "fx"]


async def _save(app: WorkbenchApp, pilot, name: str) -> Path:
    """Run swiglu small, save it as `name` from the dialog; the folder the dialog named."""
    await open_at(pilot, SWIGLU, seq="2", d_ff="50")
    await press_settled(pilot, "r")
    await pilot.press("f")
    await pilot.pause()
    dialog = app.screen
    assert isinstance(dialog, SaveFixtureScreen)
    shown = " ".join(str(label.render()) for label in dialog.query(Label))
    assert str(dialog.folder) in shown
    dialog.query_one("#fixture-name").value = name
    dialog.query_one("#fixture-note").value = "a note that is not a result"
    await pilot.press("enter")
    for _ in range(200):
        await pilot.pause(0.05)
        if (dialog.folder / f"{name}.npz").exists():
            break
    return dialog.folder


@run_async
async def test_saving_for_a_shipped_kernel_never_writes_into_the_package(home: Path) -> None:
    before = set(SHIPPED_FIXTURES.iterdir())
    app = WorkbenchApp(snapshot=True, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        folder = await _save(app, pilot, "swiglu-mine")
        assert folder == home / "fixtures"
        assert (folder / "swiglu-mine.toml").exists() and (folder / "swiglu-mine.npz").exists()
        assert not folder.resolve().is_relative_to(PACKAGE)
        assert set(SHIPPED_FIXTURES.iterdir()) == before
        # The Fixtures screen lists the shipped ones and the user's, with where each comes from,
        # and no result (not the note) before a replay.
        await pilot.press("x")
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, FixturesScreen)
        table = screen.query_one(DataTable)
        mine = str(folder / "swiglu-mine.toml")
        assert str(table.get_cell(mine, "from")) == "yours"
        shipped = [k for k in screen.fixtures if k != mine]
        assert shipped and all(str(table.get_cell(k, "from")) == "shipped" for k in shipped)
        results = {str(table.get_cell(k, "result")) for k in screen.fixtures}
        assert results == {"not replayed"}
        assert "read-only" in str(screen.query_one("#fixtures-title").render())


@run_async
async def test_fixtures_option_is_honoured(home: Path, tmp_path: Path) -> None:
    chosen = tmp_path / "chosen"
    app = WorkbenchApp(snapshot=True, watch=False, fixtures=chosen)
    async with app.run_test(size=SIZE) as pilot:
        assert await _save(app, pilot, "here") == chosen
        assert (chosen / "here.toml").exists()
        assert not (home / "fixtures").exists()
