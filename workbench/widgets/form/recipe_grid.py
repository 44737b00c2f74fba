"""RecipeGrid: one field per storage binding of the planned case, with a recipe box for inputs."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import Horizontal, ItemGrid
from textual.widgets import Button, Input, Label

from workbench.recipes import RECIPES


class RecipeGrid(ItemGrid):
    """One field per storage binding: its size, and a recipe Input for the inputs."""

    def __init__(self, spec_inputs: bool, blink: bool) -> None:
        # As many columns as fit: a binding's name, its size and a recipe need about 32.
        super().__init__(classes="form-grid recipes", min_column_width=32)
        self.roles: list[tuple[str, str]] = []
        self.recipes: dict[str, str] = {}
        self.spec_inputs = spec_inputs
        self.blink = blink

    def compose(self) -> ComposeResult:
        for name, role in self.roles:
            with Horizontal(classes="field"):
                yield Label(name)
                yield Label("", id=f"size-{name}", classes="size")
                # Ad hoc, a read_write buffer may be given an input too: it becomes in-out.
                if role in ("input", "inout") or (role == "output" and not self.spec_inputs):
                    default = "default" if role != "output" else "zeros: output"
                    box = Input(
                        self.recipes.get(name, ""),
                        placeholder="spec inputs" if self.spec_inputs else default,
                        id=f"recipe-{name}",
                        compact=True,
                    )
                    box.cursor_blink = self.blink
                    box.tooltip = "empty: the spec's inputs; or " + ", ".join(RECIPES)
                    yield box
                else:
                    yield Label("→ output" if role != "scratch" else "scratch", classes="role")
        if self.roles:
            with Horizontal(classes="field"):
                yield Button("load .npy", id="load-npy", compact=True)
