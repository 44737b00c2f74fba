"""KeyFooter: Textual's public Footer with an explicit order, so that the keys that matter survive a
narrow terminal.

The order is the priority (`workbench.viewmodel.keys.footer_rank`): help, quit and the kernel
list's key first, then the keys that work now in the screen's order, then the greyed-out ones.
The keys that do not fit whole are left out (they still work, and help lists them all) rather
than cut mid-word; the command palette key stays docked on the right. Below `COMPACT_BELOW`
columns the keys are packed tighter.
"""

from __future__ import annotations

from typing import Protocol, cast

from rich.cells import cell_len
from textual import events
from textual.app import ComposeResult
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import Footer

from workbench.viewmodel.keys import footer_rank

# Below this width the keys are packed tighter: the kernel screen's keys that matter (run to steps,
# `workbench.viewmodel.keys` order) fit at 120 columns only packed.
COMPACT_BELOW = 140


class ShownKey(Protocol):
    """What the footer composes for each binding, as far as the order and the fit need: the
    binding's action, the key and the words shown, and the widget's classes."""

    action: str
    key_display: str
    description: str

    def has_class(self, *class_names: str) -> bool: ...


def _keys(widgets: list[Widget]) -> list[ShownKey]:
    # Footer.compose yields one widget per shown binding, each carrying its action: the keys are
    # told apart from anything else it may yield by that, not by a private class.
    return [cast(ShownKey, w) for w in widgets if isinstance(getattr(w, "action", None), str)]


def _rank(key: ShownKey) -> int:
    return footer_rank(key.action, not key.has_class("-disabled"))


def _width(key: ShownKey, compact: bool) -> int:
    """The cells a key takes in the footer: Textual's padding and margins around its two words."""
    words = cell_len(key.key_display) + cell_len(key.description)
    return words + (2 if compact else 3)


def _shown_bindings(screen: Screen[object]) -> tuple[object, ...]:
    """What the footer's keys are made from: each active binding with its state."""
    return tuple(
        (b.action, b.key, b.key_display, b.description, b.show, b.group, enabled, tooltip)
        for _, b, enabled, tooltip in screen.active_bindings.values()
    )


class KeyFooter(Footer):
    """The footer of every workbench screen: help and quit first, then the keys of the moment."""

    _composed_for: tuple[object, ...] | None = None
    _composed_width = -1

    def bindings_changed(self, screen: Screen[object]) -> None:
        # Textual remakes every key of the footer at each change of focus or of a binding's state;
        # most leave the same keys (a focus move inside the kernel view), and remaking them cost
        # about a sixth of the app's start. The same keys are left as they are.
        shown = _shown_bindings(screen)
        if shown == self._composed_for:
            return
        if screen.app.app_focus and self.is_attached and screen is self.screen:
            self._composed_for = shown
        super().bindings_changed(screen)

    def compose(self) -> ComposeResult:
        keys = _keys(list(super().compose()))
        palette = [k for k in keys if k.has_class("-command-palette")]
        width = self.size.width
        room = width - sum(_width(k, self.compact) + 2 for k in palette)
        # sorted() is stable: within a rank the screen's own order is kept.
        for key in sorted((k for k in keys if k not in palette), key=_rank):
            room -= _width(key, self.compact)
            if width and room < 0:
                break
            yield cast(Widget, key)
        yield from (cast(Widget, k) for k in palette)

    def shown(self) -> list[ShownKey]:
        """The keys on show now, left to right."""
        return _keys(list(self.children))

    def on_resize(self, event: events.Resize) -> None:
        # Which keys fit depends on the width alone: a resize to the same width changes nothing.
        if event.size.width == self._composed_width:
            return
        self._composed_width = event.size.width
        self.compact = event.size.width < COMPACT_BELOW
        self.refresh(recompose=True)
