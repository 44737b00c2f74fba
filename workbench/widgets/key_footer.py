"""KeyFooter: Textual's footer with an explicit order, so that the keys that matter survive a
narrow terminal.

The order is the priority (`workbench.viewmodel.keys.footer_rank`): help, quit and the kernel
list's key first, then the keys that work now in the screen's order, then the greyed-out ones.
The keys that do not fit whole are left out (they still work, and help lists them all) rather
than cut mid-word; the command palette key stays docked on the right. Below `COMPACT_BELOW`
columns the keys are packed tighter.
"""

from __future__ import annotations

from rich.cells import cell_len
from textual import events
from textual.app import ComposeResult
from textual.widgets import Footer
from textual.widgets._footer import FooterKey

from workbench.viewmodel.keys import footer_rank

COMPACT_BELOW = 120


def _rank(key: FooterKey) -> int:
    return footer_rank(key.action, not key.has_class("-disabled"))


def _width(key: FooterKey, compact: bool) -> int:
    """The cells a key takes in the footer: Textual's padding and margins around its two words."""
    words = cell_len(key.key_display) + cell_len(key.description)
    return words + (2 if compact else 3)


class KeyFooter(Footer):
    """The footer of every workbench screen: help and quit first, then the keys of the moment."""

    def compose(self) -> ComposeResult:
        keys = [k for k in super().compose() if isinstance(k, FooterKey)]
        palette = [k for k in keys if k.has_class("-command-palette")]
        width = self.size.width
        room = width - sum(_width(k, self.compact) + 2 for k in palette)
        # sorted() is stable: within a rank the screen's own order is kept.
        for key in sorted((k for k in keys if k not in palette), key=_rank):
            room -= _width(key, self.compact)
            if width and room < 0:
                break
            yield key
        yield from palette

    def on_resize(self, event: events.Resize) -> None:
        self.compact = event.size.width < COMPACT_BELOW
        self.refresh(recompose=True)
