"""Typed keys are never lost or moved: keys sent at full speed, in one burst, across fields that go
from invalid to valid (which starts planning in a worker) and across focus moves (tab, escape).

The keys are posted to the app back to back, as the terminal driver posts them, faster than
`pilot.press` (which waits for the app to go idle after each key), as they arrive when a user types
while the UI is busy.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from pathlib import Path

from textual import events
from textual.pilot import Pilot
from textual.widgets import Input, TabbedContent, Tree

from workbench.app import WorkbenchApp
from workbench.keys_in_order import key_path

from .conftest import SIZE, handled, open_kernel, run_async, settle

EMBED = "01_embedding.wgsl:embed_lookup"
# Key names of the characters that are not their own name.
NAMES = {":": "colon", " ": "space"}


async def type_fast(
    pilot: Pilot, *keys: str, hold: Callable[[], Awaitable[None]] | None = None
) -> None:
    """Post every key to the app at once (a character, or a key name such as `tab`), as the
    terminal driver posts what it reads, then wait until the app has handled them all and settled.

    Posted here rather than through `driver.send_message`, which hops through the event loop
    once per key: a settle started before the keys are on the app's queue could return before
    they are handled (seen under load: the second burst of keys checked before it was typed)."""
    app = pilot.app
    for k in keys:
        char = k if len(k) == 1 else None
        event = events.Key(NAMES.get(k, k), char)
        event.set_sender(app)
        app.post_message(event)
    if hold is not None:  # run on the app's queue right behind the keys
        app.call_later(hold)
    await settle(pilot)


def _values(app: WorkbenchApp) -> dict[str, str]:
    return {w.id: w.value for w in app.main.form.query(Input) if w.id}


async def _focus_first_dim(pilot: Pilot) -> None:
    app: WorkbenchApp = pilot.app  # type: ignore[assignment]
    app.main.query_one("#dim-seq", Input).focus()  # its text is selected, as on a click or tab
    await pilot.pause()


@run_async
async def test_fast_typing_across_invalid_to_valid_keeps_every_key() -> None:
    app = WorkbenchApp(snapshot=True, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await open_kernel(pilot, EMBED)
        await _focus_first_dim(pilot)
        await type_fast(pilot, "backspace")
        assert "seq" in str(app.main.query_one("#problems").render())  # invalid: error shown
        # Valid again (a plan starts), then tab ×5 (d_model, vocab, seed, special, tokens).
        await type_fast(pilot, *"64", *["tab"] * 5, *"arange")
        assert _values(app) == {
            "dim-seq": "64",
            "dim-d_model": "768",
            "dim-vocab": "16384",
            "seed": "0",
            "recipe-tokens": "arange",
            "recipe-table": "",
        }
        assert app.focused is app.main.query_one("#recipe-tokens")
        assert str(app.main.query_one("#problems").render()) == ""
        # Back to seq (its text selected on focus), invalid, valid, and forward again over a
        # selected recipe, all in one burst.
        await type_fast(
            pilot,
            *["shift+tab"] * 5,
            "x",
            "backspace",
            *"128",
            *["tab"] * 3,
            *"7",
            *["tab"] * 2,
            *"randint:0:20000",
        )
        assert _values(app) == {
            "dim-seq": "128",
            "dim-d_model": "768",
            "dim-vocab": "16384",
            "seed": "7",
            "recipe-tokens": "randint:0:20000",
            "recipe-table": "",
        }
        case = app.main.current_state().case
        assert case is not None and case.dims["seq"] == 128 and case.seed == 7


@run_async
async def test_keys_after_leaving_a_field_reach_the_bindings() -> None:
    app = WorkbenchApp(snapshot=True, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await open_kernel(pilot, EMBED)
        await _focus_first_dim(pilot)
        # escape leaves the field for the kernel list; the digit after it is a tab key there.
        await type_fast(pilot, *"32", "escape", "2")
        assert _values(app)["dim-seq"] == "32"
        assert isinstance(app.focused, Tree)
        assert app.main.query_one(TabbedContent).active == "tab-diff"


@run_async
async def test_keys_after_d_wait_for_its_focus_move_while_the_app_is_busy() -> None:
    app = WorkbenchApp(snapshot=True, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        tree = app.focused
        assert isinstance(tree, Tree)

        async def busy() -> None:
            # The app's queue is held until `d` has travelled up from the kernel list and waits
            # there, and a while longer (a slow handler, as under load): everything else the
            # loop has to do runs meanwhile. Then `d`'s binding moves the focus on the app's
            # queue (a deferred move), and the digits typed after it must wait for that move.
            for node in key_path(tree):
                await handled(pilot.app, node)
            await asyncio.sleep(0.2)

        await type_fast(pilot, "d", *"128", hold=busy)
        assert app.focused is app.main.query_one("#dim-seq")
        assert _values(app)["dim-seq"] == "128"
        assert app.main.query_one(TabbedContent).active == "tab-outputs"  # no tab key fired


@run_async
async def test_reload_keeps_the_field_being_typed_in(corpus_copy: Path) -> None:
    app = WorkbenchApp(corpus_copy, snapshot=True, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await open_kernel(pilot, EMBED)
        # Only the kernel's own dims: no field of the first, empty form edited its state.
        assert set(app.main.current_state().form.dims) == {"seq", "d_model", "vocab"}
        tokens = app.main.query_one("#recipe-tokens", Input)
        tokens.focus()
        await type_fast(pilot, *"ara")
        # The corpus is re-read (a file saved elsewhere) while the user is in the field: the
        # form is refreshed in place, the same field keeps the focus and what was typed.
        app.action_reload()
        await settle(pilot)
        await type_fast(pilot, *"nge")
        assert app.focused is tokens and tokens.is_attached
        assert _values(app)["recipe-tokens"] == "arange"
