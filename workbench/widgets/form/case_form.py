"""The case form: dims, seed, special values and one input recipe per binding, plus the figures
derived from them (n, grid, workgroups, bytes) and every problem with them shown inline. An
ad-hoc kernel also gets a field per uniform field (a described one, per field its description gives
a value of its own), one for the grid, and one per `override` constant (a blank field shows the
planned value and keeps it).

The form holds a `FormState` (text as typed) and posts `CaseForm.Changed` on every edit; parsing
and planning happen in the view model and the screen, never here.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.containers import Horizontal, ItemGrid, Vertical
from textual.message import Message
from textual.widgets import Button, Checkbox, Input, Label, Static

from workbench.session import Case
from workbench.specs.base import KernelSpec
from workbench.units import fmt_bytes, fmt_count, fmt_grid, fmt_int
from workbench.viewmodel.form import (
    FormState,
    dims_of,
    field_chars,
    path_field_id,
    uniform_value,
)
from workbench.widgets.form.recipe_grid import RecipeGrid
from workbench.widgets.form.toggle import Toggle


def derived_text(case: Case) -> Text:
    """`n = 1,572,864 · grid 6,144 workgroups · wg 256×1×1 · 30.0 MiB in 5 buffers` (a grid of more
    than one axis: `grid 8×4×1 = 32 workgroups`)."""
    ep = case.kernel.entry_point
    text = Text()
    n = case.uniforms.get("n")
    if isinstance(n, (int, np.integer)):
        text.append(f"n = {fmt_int(int(n))}", style="bold")
        text.append(" · ")
    text.append("grid " + fmt_grid(case.grid))
    if ep is not None:
        text.append(" · wg " + "×".join(map(str, ep.workgroup_size)))
    storage = [p for p in case.bindings if p.role != "uniform"]
    total = sum(p.nbytes for p in storage)
    text.append(f" · {fmt_bytes(total)} in {fmt_count(len(storage), 'buffer')}")
    return text


class NumberInput(Input):
    """A field that takes a number: any other character is refused with a bell and a note
    saying so, never typed into the number (a command key pressed while the field still has
    the focus would otherwise make `64d`)."""

    def restricted(self) -> None:
        super().restricted()
        name = (self.id or "").split("-", 1)[-1].replace("-", ".")
        self.notify(
            f"{name} takes a number: that key was not typed; esc leaves the field",
            severity="warning",
        )


class CaseForm(Vertical):
    """Dims, seed, special values and recipes for the current kernel."""

    DEFAULT_CSS = """
    CaseForm { height: auto; }
    CaseForm .form-grid { grid-gutter: 0 2; height: auto; grid-rows: 1; }
    CaseForm .field { height: 1; width: 1fr; }
    CaseForm .field Label { width: auto; padding-right: 1; color: $text-muted; }
    CaseForm .field Input { width: 1fr; }
    CaseForm .field Checkbox { border: none; padding: 0; height: 1; background: transparent; }
    CaseForm .field Button { border: none; height: 1; min-width: 10; width: auto; }
    CaseForm .field .size { color: $text-disabled; }
    CaseForm .field .role { color: $text-muted; }
    CaseForm #derived { height: auto; color: $text; }
    CaseForm #problems { height: auto; color: $error; }
    CaseForm #problems.-empty { display: none; }
    """

    @dataclass
    class Changed(Message):
        """The form text changed (not yet checked)."""

        state: FormState

    @dataclass
    class Submitted(Message):
        """Enter was pressed in a field: apply and run."""

        state: FormState

    class LoadNpy(Message):
        """The load .npy button was pressed."""

    def __init__(self, *, id: str | None = None, blink: bool = True) -> None:
        super().__init__(id=id)
        self._spec: KernelSpec | None = None
        self._uniform_paths: tuple[str, ...] = ()
        self._overrides: tuple[str, ...] = ()
        self._roles: list[tuple[str, str]] = []  # (name, role)
        self._layout: tuple[object, ...] = ()  # which fields are shown (names, not values)
        self._state = FormState()
        self._blink = blink
        self.ready = True  # False while the fields are being rebuilt for another kernel

    @property
    def state(self) -> FormState:
        return self._state

    async def set_kernel(
        self,
        spec: KernelSpec | None,
        state: FormState,
        uniform_paths: tuple[str, ...] = (),
        overrides: tuple[str, ...] = (),
        roles: list[tuple[str, str]] | None = None,
        kernel: str = "",
    ) -> None:
        """Show the fields for `spec` (None: ad hoc, with a field for the grid), its
        `uniform_paths` (`viewmodel.form.form_paths`) and the kernel's `overrides`, filled from `state`; the recipe fields come with
        `roles` when a case was planned before, else with `set_roles`.

        The same `kernel` with the same fields is updated in place, never rebuilt: a reload or an
        adapter switch must not take away the field being typed in, or its focus."""
        layout = (
            kernel,
            spec is None,
            dims_of(spec),
            uniform_paths,
            overrides,
        )
        roles = roles or []
        self._spec, self._state = spec, state
        if layout == self._layout and self.ready and roles in (self._roles, []):
            for field_ in self.query(Input).results(Input):
                value = state.text_of(field_.id or "")
                if value is not None and field_.value != value:
                    field_.value = value
            for toggle in self.query("#special").results(Toggle):
                toggle.value = state.special
            return
        self._layout = layout
        self._uniform_paths = uniform_paths
        self._overrides = overrides
        self._roles = roles
        self.ready = False
        try:
            await self.recompose()
        finally:
            self.ready = True

    async def set_roles(self, roles: list[tuple[str, str]]) -> None:
        """(name, role) of each storage binding; the recipe grid is rebuilt only if they changed."""
        if roles == self._roles or not self.ready:
            return
        self._roles = roles
        grid = self.query_one(RecipeGrid)
        grid.roles, grid.recipes = roles, dict(self._state.recipes)
        await grid.recompose()

    def _input(self, value: str, id: str) -> Input:
        chars = field_chars(id)
        field_ = (
            Input(value, id=id, compact=True, select_on_focus=True)
            if chars is None
            else NumberInput(value, id=id, compact=True, select_on_focus=True, restrict=chars)
        )
        field_.cursor_blink = self._blink
        return field_

    def compose(self) -> ComposeResult:
        # As many columns as fit, so that no value is cut: a label and 7 digits need about 18.
        with ItemGrid(classes="form-grid", min_column_width=18):
            for d in dims_of(self._spec):
                with Horizontal(classes="field"):
                    yield Label(d.name)
                    inp = self._input(self._state.dims.get(d.name, str(d.default)), f"dim-{d.name}")
                    inp.tooltip = (
                        f"{d.name}: {d.doc or 'dimension'} [{fmt_int(d.lo)}, {fmt_int(d.hi)}]"
                    )
                    yield inp
            with Horizontal(classes="field"):
                yield Label("seed")
                yield self._input(self._state.seed, "seed")
            with Horizontal(classes="field"):
                yield Toggle("special values", self._state.special, id="special", compact=True)
            for path in self._uniform_paths:
                with Horizontal(classes="field"):
                    yield Label(path)
                    inp = self._input(self._state.sets.get(path, ""), f"set-{path_field_id(path)}")
                    inp.tooltip = f"uniform field {path}; blank: the planned value"
                    yield inp
            if self._spec is None:
                with Horizontal(classes="field"):
                    yield Label("grid")
                    inp = self._input(self._state.grid, "grid")
                    inp.tooltip = "workgroups X,Y,Z; blank: ceil(n / workgroup size x)"
                    yield inp
            for name in self._overrides:
                with Horizontal(classes="field"):
                    yield Label(name)
                    inp = self._input(self._state.overrides.get(name, ""), f"override-{name}")
                    inp.tooltip = f"override {name}; blank: its default"
                    yield inp
        yield Static(id="derived")
        yield Static(id="problems", classes="-empty")
        grid = RecipeGrid(self._spec is not None, self._blink)
        grid.roles, grid.recipes = self._roles, dict(self._state.recipes)
        yield grid

    def show_plan(self, case: Case | None, problems: tuple[str, ...]) -> None:
        """A planned case's figures and byte sizes, or the problems that stop it."""
        self.show_problems(problems)
        self.show_derived(derived_text(case) if case is not None else "")
        self.show_sizes(case)
        self.show_planned(case)

    def show_planned(self, case: Case | None) -> None:
        """The planned uniform values and grid as the placeholders of their blank fields."""
        if not self.ready or case is None:
            return
        for path in self._uniform_paths:
            value = uniform_value(case.uniforms, path)
            for field_ in self.query(f"#set-{path_field_id(path)}").results(Input):
                field_.placeholder = "" if value is None else f"{value:g}"
        for field_ in self.query("#grid").results(Input):
            field_.placeholder = ",".join(map(str, case.grid))

    def show_derived(self, text: Text | str) -> None:
        if self.ready:
            self.query_one("#derived", Static).update(text)

    def show_problems(self, problems: list[str] | tuple[str, ...]) -> None:
        if not self.ready:
            return
        widget = self.query_one("#problems", Static)
        widget.update("\n".join(f"✗ {p}" for p in problems))
        widget.set_class(not problems, "-empty")

    def set_recipe(self, name: str, recipe: str) -> None:
        self.query_one(f"#recipe-{name}", Input).value = recipe

    def input_names(self) -> list[str]:
        return [n for n, role in self._roles if role in ("input", "inout")]

    def show_sizes(self, case: Case | None) -> None:
        """Each binding's byte size beside its name (blank while the form has problems)."""
        if not self.ready:
            return
        sizes = {p.name: p.nbytes for p in case.bindings} if case else {}
        for name, _ in self._roles:
            label = self.query(f"#size-{name}")
            if label:
                label.first(Label).update(fmt_bytes(sizes[name]) if name in sizes else "")

    def _edited(self, field: Input | Checkbox, value: object) -> None:
        # A field posts Changed when it is mounted too: one of the fields being replaced (the
        # first, empty form's; another kernel's) must not edit the state of the new ones.
        if not self.ready or not field.is_attached or field.id is None:
            return
        if field.id.startswith("dim-") and self._state.text_of(field.id) is None:
            return
        new = self._state.with_field(field.id, value)
        if new != self._state:
            self._state = new
            self.post_message(self.Changed(new))

    @on(Input.Changed)
    def _changed(self, event: Input.Changed) -> None:
        event.stop()
        self._edited(event.input, event.value)

    @on(Checkbox.Changed)
    def _toggled(self, event: Checkbox.Changed) -> None:
        event.stop()
        self._edited(event.checkbox, event.value)

    @on(Input.Submitted)
    def _submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.post_message(self.Submitted(self._state))

    @on(Button.Pressed, "#load-npy")
    def _load(self, event: Button.Pressed) -> None:
        event.stop()
        self.post_message(self.LoadNpy())
