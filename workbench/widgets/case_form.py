"""The case form: dims, seed, special values and one input recipe per binding, plus the figures
derived from them (n, grid, workgroups, bytes) and every problem with them shown inline.

`FormState` is what the form holds as plain text; `parse_form` turns it into session.case()
arguments or a list of one-line problems (never an exception). `inject_specials` writes the special
values (NaN, ±Inf, ±0, denormals, ±100, ±1e4) into a case's float inputs at fixed, spread
positions, so a run shows how a kernel treats them and the reference sees the same inputs.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.containers import Grid, Horizontal, Vertical
from textual.message import Message
from textual.widgets import Button, Checkbox, Input, Label, Static

from workbench.session import Case
from workbench.specs.base import Dim, KernelSpec
from workbench.units import fmt_bytes

ADHOC_DIMS = (Dim("n", 1024, lo=0, hi=1 << 28, doc="elements of every runtime-sized binding"),)
# f32 denormal 1e-40; f16's smallest normal is 6.1e-5, so 1e-6 is one of its subnormals.
SPECIALS = {
    "float32": (math.nan, math.inf, -math.inf, 0.0, -0.0, 1e-40, -1e-40, 100.0, -100.0, 1e4, -1e4),
    "float16": (math.nan, math.inf, -math.inf, 0.0, -0.0, 1e-6, -1e-6, 100.0, -100.0, 1e4, -1e4),
}


@dataclass(frozen=True)
class FormState:
    """The form as typed: every value is text until `parse_form` checks it."""

    dims: dict[str, str] = field(default_factory=dict)
    seed: str = "0"
    recipes: dict[str, str] = field(default_factory=dict)
    special: bool = False

    @property
    def key(self) -> tuple:
        return (
            tuple(sorted(self.dims.items())),
            self.seed.strip(),
            tuple(sorted((k, v.strip()) for k, v in self.recipes.items() if v.strip())),
            self.special,
        )

    def with_dim(self, name: str, value: str) -> FormState:
        return replace(self, dims={**self.dims, name: value})

    def with_recipe(self, name: str, value: str) -> FormState:
        return replace(self, recipes={**self.recipes, name: value})


@dataclass(frozen=True)
class ParsedForm:
    dims: dict[str, int]
    seed: int
    inputs: dict[str, str]
    special: bool
    problems: tuple[str, ...] = ()


def dims_of(spec: KernelSpec | None) -> tuple[Dim, ...]:
    return spec.dims if spec is not None else ADHOC_DIMS


def default_form(spec: KernelSpec | None) -> FormState:
    return FormState(dims={d.name: str(d.default) for d in dims_of(spec)})


def parse_form(state: FormState, spec: KernelSpec | None) -> ParsedForm:
    """Integers within each dim's range, a non-negative seed; problems as one line each."""
    problems: list[str] = []
    dims: dict[str, int] = {}
    for d in dims_of(spec):
        text = state.dims.get(d.name, str(d.default)).strip().replace(",", "").replace("_", "")
        try:
            value = int(text)
        except ValueError:
            problems.append(f"{d.name}: {text!r} is not a whole number")
            continue
        if not d.lo <= value <= d.hi:
            problems.append(
                f"{d.name} must be in [{d.lo:,}, {d.hi:,}]" + (f": {d.doc}" if d.doc else "")
            )
            continue
        dims[d.name] = value
    seed = 0
    try:
        seed = int(state.seed.strip() or "0")
        if seed < 0:
            raise ValueError
    except ValueError:
        problems.append(f"seed: {state.seed!r} is not a whole number >= 0")
    inputs = {k: v.strip() for k, v in state.recipes.items() if v.strip()}
    return ParsedForm(dims, seed, inputs, state.special, tuple(problems))


def inject_specials(case: Case) -> list[str]:
    """Overwrite spread positions of every float input with the special values; names touched."""
    touched = []
    for name, arr in list(case.inputs.items()):
        specials = SPECIALS.get(str(arr.dtype))
        if specials is None or arr.size == 0:
            continue
        flat = arr.copy().reshape(-1)
        pos = np.linspace(0, flat.size - 1, min(len(specials), flat.size)).astype(np.int64)
        with np.errstate(over="ignore"):
            flat[pos] = np.asarray(specials[: pos.size], dtype=np.float64).astype(arr.dtype)
        case.inputs[name] = flat.reshape(arr.shape)
        touched.append(name)
    if touched:
        case.notes.append(f"special values written into {', '.join(touched)}")
    return touched


def derived_text(case: Case) -> Text:
    """`n = 1,572,864 · grid 6144×1×1 · wg 256 · 6,144 workgroups · 30.0 MiB in 5 buffers`."""
    ep = case.kernel.entry_point
    text = Text()
    n = case.uniforms.get("n")
    if isinstance(n, (int, np.integer)):
        text.append(f"n = {int(n):,}", style="bold")
        text.append(" · ")
    text.append("grid " + "×".join(map(str, case.grid)))
    if ep is not None:
        text.append(" · wg " + "×".join(map(str, ep.workgroup_size)))
    text.append(f" · {case.workgroups:,} workgroups")
    storage = [p for p in case.bindings if p.role != "uniform"]
    total = sum(p.nbytes for p in storage)
    text.append(f" · {fmt_bytes(total)} in {len(storage)} buffers")
    return text


class Toggle(Checkbox):
    """A checkbox whose mark reads the same without colour: ✓ when on, blank when off."""

    @property
    def BUTTON_INNER(self) -> str:
        return "✓" if self.value else " "


class RecipeGrid(Grid):
    """One field per storage binding: its size, and a recipe Input for the inputs."""

    def __init__(self, spec_inputs: bool, blink: bool) -> None:
        super().__init__(classes="form-grid recipes")
        self.roles: list[tuple[str, str]] = []
        self.recipes: dict[str, str] = {}
        self.spec_inputs = spec_inputs
        self.blink = blink

    def compose(self) -> ComposeResult:
        for name, role in self.roles:
            with Horizontal(classes="field"):
                yield Label(name)
                yield Label("", id=f"size-{name}", classes="size")
                if role in ("input", "inout"):
                    box = Input(
                        self.recipes.get(name, ""),
                        placeholder="spec inputs" if self.spec_inputs else "default",
                        id=f"recipe-{name}",
                        compact=True,
                    )
                    box.cursor_blink = self.blink
                    box.tooltip = (
                        "empty: the spec's inputs; or zeros, ones, const:V, arange, "
                        "randn[:SEED], uniform:LO:HI, randint:LO:HI, npy:PATH"
                    )
                    yield box
                else:
                    yield Label("→ output" if role != "scratch" else "scratch", classes="role")
        if self.roles:
            with Horizontal(classes="field"):
                yield Button("load .npy", id="load-npy", compact=True)


class CaseForm(Vertical):
    """Dims, seed, special values and recipes for the current kernel."""

    DEFAULT_CSS = """
    CaseForm { height: auto; }
    CaseForm .form-grid { grid-size: 4; grid-gutter: 0 2; height: auto; grid-rows: 1; }
    CaseForm .recipes { grid-size: 3; }
    CaseForm .field { height: 1; width: 1fr; }
    CaseForm .field Label { width: auto; padding-right: 1; color: $text-muted; }
    CaseForm .field Input { width: 1fr; }
    CaseForm .field Checkbox { border: none; padding: 0; height: 1; background: transparent; }
    CaseForm .field Button { border: none; height: 1; min-width: 10; width: auto; }
    CaseForm .field .size { color: $text-disabled; }
    CaseForm .field .role { color: $text-muted; }
    CaseForm #derived { height: 1; color: $text; }
    CaseForm #problems { height: auto; color: $error; }
    CaseForm #problems.-empty { display: none; }
    """

    class Changed(Message):
        """The form text changed (not yet checked)."""

        def __init__(self, state: FormState) -> None:
            super().__init__()
            self.state = state

    class Submitted(Message):
        """Enter was pressed in a field: apply and run."""

        def __init__(self, state: FormState) -> None:
            super().__init__()
            self.state = state

    class LoadNpy(Message):
        """The load .npy button was pressed."""

    def __init__(self, *, id: str | None = None, blink: bool = True) -> None:
        super().__init__(id=id)
        self._spec: KernelSpec | None = None
        self._roles: list[tuple[str, str]] = []  # (name, role)
        self._state = FormState()
        self._blink = blink
        self.ready = True  # False while the fields are being rebuilt for another kernel

    @property
    def state(self) -> FormState:
        return self._state

    async def set_kernel(self, spec: KernelSpec | None, state: FormState) -> None:
        """Show the fields for `spec` (None: ad hoc) filled from `state`; the recipe fields come
        with `set_roles`, once a planned case says which bindings are inputs."""
        self._spec = spec
        self._state = state
        self._roles = []
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

    def _input(self, value: str, id: str, placeholder: str = "", kind: str = "text") -> Input:
        field_ = Input(
            value,
            placeholder=placeholder,
            id=id,
            compact=True,
            type="integer" if kind == "integer" else "text",
            select_on_focus=True,
        )
        field_.cursor_blink = self._blink
        return field_

    def compose(self) -> ComposeResult:
        with Grid(classes="form-grid"):
            for d in dims_of(self._spec):
                with Horizontal(classes="field"):
                    yield Label(d.name)
                    inp = self._input(self._state.dims.get(d.name, str(d.default)), f"dim-{d.name}")
                    inp.tooltip = f"{d.name}: {d.doc or 'dimension'} [{d.lo:,}, {d.hi:,}]"
                    yield inp
            with Horizontal(classes="field"):
                yield Label("seed")
                yield self._input(self._state.seed, "seed")
            with Horizontal(classes="field"):
                yield Toggle("special values", self._state.special, id="special", compact=True)
        yield Static(id="derived")
        yield Static(id="problems", classes="-empty")
        yield RecipeGrid(self._spec is not None, self._blink)

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

    def _read(self, widget_id: str | None, value: Any) -> FormState:
        state = self._state
        if widget_id is None:
            return state
        if widget_id.startswith("dim-"):
            return state.with_dim(widget_id[4:], str(value))
        if widget_id.startswith("recipe-"):
            return state.with_recipe(widget_id[7:], str(value))
        if widget_id == "seed":
            return replace(state, seed=str(value))
        if widget_id == "special":
            return replace(state, special=bool(value))
        return state

    @on(Input.Changed)
    def _changed(self, event: Input.Changed) -> None:
        event.stop()
        new = self._read(event.input.id, event.value)
        if new != self._state:
            self._state = new
            self.post_message(self.Changed(new))

    @on(Checkbox.Changed)
    def _toggled(self, event: Checkbox.Changed) -> None:
        event.stop()
        new = self._read(event.checkbox.id, event.value)
        if new != self._state:
            self._state = new
            self.post_message(self.Changed(new))

    @on(Input.Submitted)
    def _submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.post_message(self.Submitted(self._state))

    @on(Button.Pressed, "#load-npy")
    def _load(self, event: Button.Pressed) -> None:
        event.stop()
        self.post_message(self.LoadNpy())
