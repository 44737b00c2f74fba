"""The Bindings tab: the reflected bindings with the case's shapes, roles, bytes and contents."""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.reactive import reactive
from textual.widgets import DataTable, Static

from workbench.units import fmt_bytes
from workbench.viewmodel.kernel_state import View


def _short(value: Any) -> str:
    if isinstance(value, dict):
        return ", ".join(f"{k}={_short(v)}" for k, v in value.items())
    if isinstance(value, (list, tuple)):
        return "(" + ", ".join(_short(v) for v in value) + ")"
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)


class BindingsPane(Vertical):
    """The reflected bindings with the case's shapes, roles and bytes."""

    DEFAULT_CSS = """
    BindingsPane #bind-table { height: auto; max-height: 100%; }
    BindingsPane #bind-notes { height: auto; color: $text-muted; margin-top: 1; }
    """

    view: reactive[View] = reactive(View, init=False)

    def compose(self) -> ComposeResult:
        table: DataTable[Text | str] = DataTable(
            id="bind-table", zebra_stripes=True, cursor_type="row"
        )
        table.add_columns("g/b", "name", "role", "WGSL type", "shape", "dtype", "bytes", "contents")
        yield table
        yield Static(id="bind-notes")

    def watch_view(self, view: View) -> None:
        table = self.query_one("#bind-table", DataTable)
        table.clear()
        notes = self.query_one("#bind-notes", Static)
        case = view.case
        if case is None:
            ep = view.kernel.entry_point if view.kernel is not None else None
            for b in ep.bindings if ep else ():
                table.add_row(
                    f"{b.group}/{b.binding}", b.name, b.space, b.type.text, "", "", "", ""
                )
            notes.update("sizes appear once the dims are valid")
            return
        for p in case.bindings:
            b = p.binding
            value = case.uniforms.get(p.name) if p.role == "uniform" else None
            table.add_row(
                f"{b.group}/{b.binding}",
                p.name,
                p.role,
                b.type.text,
                "×".join(map(str, p.shape)) if p.shape else "–",
                p.dtype or "–",
                fmt_bytes(p.nbytes),
                _short(value) if value is not None else p.source.replace("spec generator", "spec"),
            )
        text = Text()
        if case.spec is not None:
            text.append("spec: ", style="bold")
            text.append(case.spec.doc or case.spec.name)
        else:
            text.append("ad hoc: every runtime-sized array holds n elements; no reference")
        for note in case.notes:
            text.append(f"\nnote: {note}")
        notes.update(text)
