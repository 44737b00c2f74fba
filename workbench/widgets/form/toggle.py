"""Toggle: a checkbox whose mark reads the same without colour."""

from __future__ import annotations

from textual.widgets import Checkbox


class Toggle(Checkbox):
    """A checkbox whose mark reads the same without colour: ✓ when on, blank when off."""

    # Textual declares BUTTON_INNER a plain class attribute; here the mark follows the value.
    @property
    def BUTTON_INNER(self) -> str:  # type: ignore[override]
        return "✓" if self.value else " "
