"""The UI in a small terminal (80x24) and a wide one: the kernel list hides and comes back, form
values and the help box fit, the footer keeps help and quit, long lines wrap or unfold."""

from __future__ import annotations

from typing import ClassVar, cast

import pytest
from textual.app import App, ComposeResult
from textual.binding import BindingType
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import Input

from workbench.app import WorkbenchApp
from workbench.commands import bindings
from workbench.screens.help import HelpScreen
from workbench.viewmodel.keys import BY_ID, FOOTER_FIRST, footer_rank
from workbench.widgets.browser import KernelBrowser
from workbench.widgets.detail_line import DetailLine
from workbench.widgets.key_footer import KeyFooter, ShownKey

from .conftest import SWIGLU, Recording, open_kernel, press_settled, run_async, settle

SMALL = (80, 24)
EMBED = "01_embedding.wgsl:embed_lookup"


def _app() -> WorkbenchApp:
    return WorkbenchApp(snapshot=True, watch=False)


def _footer_keys(app: WorkbenchApp) -> list[ShownKey]:
    return app.screen.query_one(KeyFooter).shown()


def test_footer_order_is_help_quit_then_what_works_now() -> None:
    assert [footer_rank(BY_ID[i].action, True) for i in FOOTER_FIRST] == [0, 1, 2]
    assert footer_rank("run", True) < footer_rank("run", False)
    assert footer_rank("run", False) > footer_rank("help", False)


@run_async
async def test_kernel_list_hides_below_100_columns_and_ctrl_b_toggles_it() -> None:
    app = _app()
    async with app.run_test(size=SMALL) as pilot:
        await settle(pilot)
        browser = app.main.query_one(KernelBrowser)
        assert not browser.display or not browser.region.width
        await press_settled(pilot, "ctrl+b")
        assert browser.region.width >= 26 and browser.kernel_tree.has_focus
        await press_settled(pilot, "ctrl+b")
        assert browser.region.width == 0 and not browser.has_focus_within
        assert app.focused is not None and app.focused.id == "dim-seq"  # on to the form
        await press_settled(pilot, "escape")  # back to the kernel list: it shows again
        assert browser.region.width and browser.kernel_tree.has_focus
    app = _app()
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        browser = app.main.query_one(KernelBrowser)
        assert browser.region.width == 36
        await press_settled(pilot, "ctrl+b")
        assert browser.region.width == 0


@run_async
async def test_form_values_are_never_cut_at_80_columns() -> None:
    app = _app()
    async with app.run_test(size=SMALL) as pilot:
        await settle(pilot)
        await open_kernel(pilot, EMBED)
        fields = list(app.main.form.query(Input))
        assert fields
        for field in fields:
            shown = field.value or field.placeholder
            # A compact Input shows its value in its whole width, the cursor one cell past it.
            assert field.content_region.width > len(shown), (field.id, shown, field.region)


class _Keys(Screen[None]):
    """The main screen's keys over a footer, and nothing else."""

    BINDINGS: ClassVar[list[BindingType]] = bindings("main")

    def compose(self) -> ComposeResult:
        yield KeyFooter()


class _Footer(App[None]):
    BINDINGS: ClassVar[list[BindingType]] = bindings("app")

    def on_mount(self) -> None:
        self.push_screen(_Keys())


@pytest.mark.parametrize("size", [SMALL, (100, 30), (120, 36)])
def test_footer_keeps_help_and_quit_and_cuts_no_key(size: tuple[int, int]) -> None:
    """The footer on its own (no GPU): help and quit lead, every key shown is whole and clear
    of the palette key docked on the right."""

    @run_async
    async def body() -> None:
        app = _Footer()
        async with app.run_test(size=size) as pilot:
            await pilot.pause()
            keys = app.screen.query_one(KeyFooter).shown()
            shown = [k.key_display for k in keys if not k.has_class("-command-palette")]
            assert shown[:2] == ["?", "q"], (size, shown)
            if size[0] >= 120:  # the kernel screen's keys that matter, up to the steppers
                assert {"r", "d", "c", "b", "g", "w", "o", "p", "F4"} <= set(shown), shown
            palette = next(k for k in keys if k.has_class("-command-palette"))
            for k in keys:
                if k is not palette:
                    assert cast(Widget, k).region.right <= cast(Widget, palette).region.x, (
                        size,
                        k.description,
                    )

    body()


class _Help(App[None]):
    """The help screen over the app's own stylesheet, and nothing else (no GPU, no corpus)."""

    CSS_PATH = Recording.CSS_PATH

    def on_mount(self) -> None:
        self.push_screen(HelpScreen())


@run_async
async def test_help_fits_a_small_terminal_and_names_mouse_themes_and_every_key() -> None:
    app = _Help()
    async with app.run_test(size=SMALL) as pilot:
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
        box = app.screen.children[0]
        assert box.region.right <= SMALL[0] and box.region.bottom <= SMALL[1]
        text = app.screen.query_one("Markdown").source
        assert "## Mouse" in text and "## Themes" in text
        for k in BY_ID.values():
            if k.current:
                assert f"| {k.id} |" in text


@run_async
async def test_long_lines_wrap_or_unfold_at_80_columns() -> None:
    app = _app()
    async with app.run_test(size=SMALL) as pilot:
        await settle(pilot)
        await open_kernel(pilot, SWIGLU)
        await press_settled(pilot, "ctrl+b")  # the kernel list leaves the view 49 columns
        verdict = app.main.query_one("#verdict")
        # "not run yet: r run  b bench  g gradcheck  enter in a field runs it too" is longer than
        # that: it wraps instead of ending in an ellipsis.
        assert verdict.region.height >= 2
        doc = app.main.query_one("#kv-doc", DetailLine)  # the kernel's doc: whole when hovered
        assert doc.region.height == 1 and doc.tooltip and doc.tooltip.endswith("< 0 below.")
        await press_settled(pilot, "r", "2")
        why = app.main.query_one("#diff-why", DetailLine)  # a tolerance's reason: one line …
        assert why.region.height == 1 and why.tooltip and why.tooltip.startswith("tolerance: ")
        why.focus()
        await settle(pilot)
        assert why.region.height >= 2  # … unfolded when focused
