"""FootprintPicture: an output drawn by owner workgroup, races and holes marked, with a cursor.

One character per cell (the view model's `picture` decides which elements a cell covers): a block
in the owner workgroup's colour, `×` for a race (or a shared atomic element), `·` for a hole, `?`
for an element written only outside a sampled footprint. Arrow keys move the cursor; the cell under
it is described (its elements by named index and who wrote them) in a `Selected` message.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from rich.style import Style
from rich.text import Text
from textual.binding import BindingType
from textual.geometry import Size
from textual.message import Message
from textual.reactive import reactive
from textual.widget import Widget

from workbench.commands import bindings
from workbench.viewmodel.footprint import (
    MARK_COLOURS,
    MARKS,
    OWNED,
    OwnerGrid,
    owner_colour,
    picture,
)
from workbench.workgroups.footprint import OutputFootprint


class FootprintPicture(Widget, can_focus=True):
    """The picture of one output's footprint; `show` swaps the output."""

    BINDINGS: ClassVar[list[BindingType]] = bindings("footprint")
    DEFAULT_CSS = """
    FootprintPicture { height: auto; max-height: 20; width: 1fr; }
    FootprintPicture:focus { background: $boost; }
    """

    cursor: reactive[tuple[int, int]] = reactive((0, 0))

    @dataclass
    class Selected(Message):
        """The cursor moved onto a cell; `text` says what it covers and who wrote it."""

        text: str

    def __init__(self, *, width: int = 64, height: int = 16, id: str | None = None) -> None:
        super().__init__(id=id)
        self._cells = (width, height)
        self._picture: OwnerGrid | None = None

    def show(self, output: OutputFootprint) -> None:
        self._picture = picture(output, *self._cells)
        self.cursor = (0, 0)
        self.refresh(layout=True)
        self._announce()

    def clear(self) -> None:
        self._picture = None
        self.refresh(layout=True)

    def action_move(self, dr: int, dc: int) -> None:
        if self._picture is None:
            return
        rows, cols = self._picture.shape
        r, c = self.cursor
        self.cursor = (min(max(r + dr, 0), rows - 1), min(max(c + dc, 0), cols - 1))
        self._announce()

    def _announce(self) -> None:
        if self._picture is not None:
            self.post_message(self.Selected(self._picture.describe(*self.cursor)))

    def watch_cursor(self) -> None:
        self.refresh()

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        return self._picture.shape[0] if self._picture is not None else 1

    def render(self) -> Text:
        pic = self._picture
        if pic is None:
            return Text("no footprint yet", style="dim")
        text = Text(no_wrap=True, overflow="crop")
        rows, cols = pic.shape
        for i in range(rows):
            for j in range(cols):
                kind = int(pic.kinds[i, j])
                if kind == OWNED:
                    mark, style = "█", Style(color=f"rgb{owner_colour(int(pic.owners[i, j]))}")
                else:
                    mark = MARKS[kind]
                    style = Style(color=f"rgb{MARK_COLOURS[kind]}", bold=True)
                if (i, j) == self.cursor and self.has_focus:
                    style += Style(reverse=True)
                text.append(mark, style)
            if i + 1 < rows:
                text.append("\n")
        return text
