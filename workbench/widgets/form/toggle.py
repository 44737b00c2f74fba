"""Toggle: a checkbox whose mark reads the same without colour."""

from __future__ import annotations

from textual.widgets import Checkbox


class Toggle(Checkbox):
    """A checkbox whose mark reads the same without colour: ✓ when on, blank when off."""

    @property
    def BUTTON_INNER(self) -> str:
        return "✓" if self.value else " "
