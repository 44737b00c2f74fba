"""The adapter switcher: every adapter this machine has, the current one marked; enter chooses."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, ClassVar

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Label, OptionList
from textual.widgets.option_list import Option

from workbench.commands import bindings

if TYPE_CHECKING:
    from workbench.session import AdapterInfo


class AdapterScreen(ModalScreen[int | None]):
    """Choose the adapter to run on; the current one is marked."""

    BINDINGS: ClassVar[list[BindingType]] = bindings("dialog")

    def __init__(self, adapters: Sequence[AdapterInfo], current: int) -> None:
        super().__init__()
        self.adapters = tuple(adapters)
        self.current = current

    def compose(self) -> ComposeResult:
        options = []
        for a in self.adapters:
            label = Text()
            label.append("● " if a.index == self.current else "  ", style="green")
            label.append(f"{a.index}: {a.label}", style="bold")
            label.append(f"  {a.type}\n    ")
            label.append("features: " + a.features_line, style="dim")
            options.append(Option(label, id=str(a.index)))
        with Vertical():
            yield Label("Run on which adapter? (enter chooses, escape keeps the current one)")
            yield OptionList(*options, id="adapter-list")

    def on_mount(self) -> None:
        olist = self.query_one(OptionList)
        olist.highlighted = next(
            (i for i, a in enumerate(self.adapters) if a.index == self.current), 0
        )
        olist.focus()

    @on(OptionList.OptionSelected)
    def _chosen(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(int(event.option.id or 0))

    def action_dismiss_none(self) -> None:
        self.dismiss(None)
