"""The Source tab: the kernel's file (or the assembled module), highlighted, scrolled to the
kernel; a compile error is marked at its line and said above the code, and so is what the front
end could not work out in the kernel (left to the compiler)."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.reactive import reactive
from textual.widgets import Static

from workbench.viewmodel.kernel_state import View
from workbench.viewmodel.keys import key
from workbench.widgets.source_view import SourceView


class SourcePane(Vertical):
    """The kernel's file, highlighted, scrolled to the kernel; compile errors marked at their line."""

    DEFAULT_CSS = """
    SourcePane #src-head { height: auto; }
    SourcePane #src-code { height: 1fr; }
    """

    view: reactive[View] = reactive(View, init=False)

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        # What was last shown: the kernel (by id), its error and whether the module was shown.
        self._shown: tuple[int, str | None, bool] | None = None
        self._target = 1

    def compose(self) -> ComposeResult:
        yield Static(id="src-head")
        yield SourceView(id="src-code")

    def watch_view(self, view: View) -> None:
        k = view.kernel
        if k is None:
            return
        loc = view.error_location
        shown = (id(k), view.error, view.show_module)
        if shown == self._shown:
            return
        self._shown = shown
        toggle = key("toggle_module")
        head = Text()
        if view.show_module:
            code, smap = k.assemble(view.features)
            title = f"assembled module of {k.name} (preambles + file preamble + kernel), {toggle}: the file"
            # The error's line, else the kernel's own first line (not the preambles' first).
            at = smap.module_line(loc[0], loc[1]) if loc else None
            marked: set[int] = {at} if at is not None else set()
            target = at or smap.module_line(k.file, k.line) or 1
        else:
            file = loc[0] if loc else k.file
            try:
                if view.corpus_root is None:
                    raise FileNotFoundError(file)
                code = (view.corpus_root / file).read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError):
                code = k.pieces[-1].text if k.pieces else ""
                file = k.file
            title = f"{file}  (kernel at line {k.line}; {toggle}: the assembled module)"
            marked = {loc[1]} if loc else set()
            target = loc[1] if loc else k.line
        head.append(title, style="bold")
        if view.error:
            head.append("\n")
            head.append(view.error.split("\n", 1)[0], style="bold red")
        for line in view.deferred:
            head.append("\n")
            head.append(line, style="yellow")
        self.query_one("#src-head", Static).update(head)
        self.query_one(SourceView).show_code(code, marked)
        self._target = target
        self.call_after_refresh(self.scroll_to_target)

    def scroll_to_target(self) -> None:
        """Bring the kernel (or the error) into view; called again when the tab is shown."""
        self.query_one(SourceView).scroll_to(0, max(self._target - 4, 0), animate=False)
