"""The case form as typed (`FormState`: every value text) and its parsing into case arguments.

`parse_form` never raises: a bad value becomes a one-line problem naming the field and what it
accepts, shown inline beside the form.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from workbench.specs.base import Dim, KernelSpec

FormKey = tuple[object, ...]

ADHOC_DIMS = (Dim("n", 1024, lo=0, hi=1 << 28, doc="elements of every runtime-sized binding"),)


@dataclass(frozen=True)
class FormState:
    """The form as typed: every value is text until `parse_form` checks it."""

    dims: dict[str, str] = field(default_factory=dict)
    seed: str = "0"
    recipes: dict[str, str] = field(default_factory=dict)
    special: bool = False

    @property
    def key(self) -> FormKey:
        """Equal for two forms that describe the same case (blank recipes and spaces ignored)."""
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

    def with_field(self, field_id: str, value: object) -> FormState:
        """The state after the form field `field_id` (`dim-N`, `recipe-B`, `seed`, `special`)
        took `value`; an unknown field changes nothing."""
        if field_id.startswith("dim-"):
            return self.with_dim(field_id.removeprefix("dim-"), str(value))
        if field_id.startswith("recipe-"):
            return self.with_recipe(field_id.removeprefix("recipe-"), str(value))
        if field_id == "seed":
            return replace(self, seed=str(value))
        if field_id == "special":
            return replace(self, special=bool(value))
        return self


@dataclass(frozen=True)
class ParsedForm:
    """The form checked: arguments for `Session.case`, or the problems that stop it."""

    dims: dict[str, int]
    seed: int
    inputs: dict[str, str]
    special: bool
    problems: tuple[str, ...] = ()


def dims_of(spec: KernelSpec | None) -> tuple[Dim, ...]:
    """The spec's dims, or the one size `n` of an ad-hoc kernel."""
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
