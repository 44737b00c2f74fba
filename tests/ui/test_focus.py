"""Focus is obvious, and what is meant for a field never fires commands: at start the kernel list
has the focus (the footer's keys act), its region lit; `d` jumps to the dims, and the digits typed
right after it go into the field, not to the tab keys; the filter's enter opens its match.

Keys are posted at full speed (`type_fast`), as the terminal driver posts what a user types.
"""

from __future__ import annotations

from textual.color import Color
from textual.widgets import Input, TabbedContent, Tree

from workbench.screens.fixtures import FixturesScreen
from workbench.viewmodel.keys import help_table

from .conftest import SIZE, Recording, open_kernel, run_async, settle
from .test_typing import EMBED, type_fast


def _edge(widget: object, side: str) -> Color:
    return getattr(widget.styles, f"border_{side}")[1]  # type: ignore[attr-defined]


@run_async
async def test_d_then_digits_at_start_go_into_the_dims_not_into_commands() -> None:
    app = Recording(snapshot=True, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert app.main.current == EMBED  # the first kernel
        assert isinstance(app.focused, Tree)  # the footer's keys act at start
        seq = app.main.query_one("#dim-seq", Input)
        # `d64x` typed at full speed: the field gets what follows `d` (its text was selected),
        # no tab switches (6, 4) and no Fixtures screen (x); the letter is refused, said, and
        # never joins the number.
        await type_fast(pilot, "d", *"64x")
        assert app.focused is seq and seq.value == "64"
        assert app.main.query_one(TabbedContent).active == "tab-outputs"
        assert not isinstance(app.screen, FixturesScreen)
        assert "seq takes a number: that key was not typed; esc leaves the field" in app.notices


@run_async
async def test_enter_in_the_form_runs_and_the_next_keys_act_as_keys() -> None:
    app = Recording(snapshot=True, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        seq = app.main.query_one("#dim-seq", Input)
        # Enter runs; the `2` after it switches to the Diff tab instead of making `322`.
        await type_fast(pilot, "d", *"32", "enter")
        await type_fast(pilot, "2")
        assert seq.value == "32"
        assert app.focused is app.main.query_one("#tabs Tabs")
        assert app.main.query_one(TabbedContent).active == "tab-diff"
        run = app.main.current_run()
        assert run is not None and run.case.dims["seq"] == 32
        # A form with a problem does not run: the focus stays in the field to fix it.
        await type_fast(pilot, "d", "backspace", "enter")
        assert app.focused is seq


@run_async
async def test_the_focused_region_is_lit() -> None:
    app = Recording(snapshot=True, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        form, tabs, browser = app.main.form, app.main.tabs, app.main.browser
        accent = _edge(browser, "right")  # the kernel list has the focus at start
        assert _edge(form, "left") != accent and _edge(tabs, "left") != accent
        await type_fast(pilot, "d")  # into the dims form
        assert _edge(form, "left") == accent and _edge(browser, "right") != accent
        app.main.query_one("#tabs Tabs").focus()
        await pilot.pause()
        assert _edge(tabs, "left") == accent and _edge(form, "left") != accent
        await type_fast(pilot, "escape")  # back to the kernel list
        assert isinstance(app.focused, Tree)
        assert _edge(browser, "right") == accent and _edge(tabs, "left") != accent


@run_async
async def test_d_jumps_to_the_dims_form_from_anywhere_but_a_field() -> None:
    app = Recording(snapshot=True, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await type_fast(pilot, "3", "d", *"128")
        assert app.main.query_one(TabbedContent).active == "tab-gradients"
        assert app.focused is app.main.query_one("#dim-seq")
        assert app.main.query_one("#dim-seq", Input).value == "128"
        assert "| `d` | jump to the dims form" in help_table()
        await type_fast(pilot, "escape")
        footer = [b.binding.key for b in app.main.active_bindings.values() if b.binding.show]
        assert "d" in footer


@run_async
async def test_filter_enter_opens_the_only_match() -> None:
    app = Recording(snapshot=True, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await open_kernel(pilot, EMBED)
        app.main.browser.kernel_tree.focus()
        await type_fast(pilot, "slash", *"nosuch", "enter")
        assert app.focused is app.main.browser.filter_box  # nothing to open: stays to be fixed
        assert any("no kernel matches 'nosuch'" in n for n in app.notices)
        await type_fast(pilot, "ctrl+u", *"rope_k_b", "enter")
        assert app.main.current == "11_rope.wgsl:rope_k_backward"
        assert isinstance(app.focused, Tree)
        assert "rope_k_backward" in str(app.main.query_one("#kv-title").render())
