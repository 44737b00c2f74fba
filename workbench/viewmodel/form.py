"""The case form as typed (`FormState`: every value text) and its parsing into case arguments.

`parse_form` never raises: a bad value becomes a one-line problem naming the field and what it
accepts, shown inline beside the form. An ad-hoc kernel's form also holds its uniform fields
(`sets`, by path such as `dims.x`), the workgroup counts (`grid`, blank: planned) and the values of
its `override` constants; a described kernel's, the uniform fields its description gives values
of their own (`form_paths`); blank fields keep what planning gives.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from workbench.recipes import DEFAULT_SEED
from workbench.specs.base import Dim, KernelSpec
from workbench.units import parse_number, whole_number
from workbench.wgsl.reflect import Binding
from workbench.wgsl.types import WType

FormKey = tuple[object, ...]

ADHOC_DIMS = (Dim("n", 1024, lo=0, hi=1 << 28, doc="elements of every runtime-sized binding"),)


@dataclass(frozen=True)
class FormState:
    """The form as typed: every value is text until `parse_form` checks it."""

    dims: dict[str, str] = field(default_factory=dict)
    seed: str = str(DEFAULT_SEED)
    recipes: dict[str, str] = field(default_factory=dict)
    special: bool = False
    sets: dict[str, str] = field(default_factory=dict)
    grid: str = ""
    overrides: dict[str, str] = field(default_factory=dict)

    @property
    def key(self) -> FormKey:
        """Equal for two forms that describe the same case (blank fields and spaces ignored)."""
        return (
            tuple(sorted(self.dims.items())),
            self.seed.strip(),
            _filled(self.recipes),
            self.special,
            _filled(self.sets),
            self.grid.strip(),
            _filled(self.overrides),
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
        if field_id.startswith("set-"):
            path = field_id_path(field_id.removeprefix("set-"))
            return replace(self, sets={**self.sets, path: str(value)})
        if field_id == "grid":
            return replace(self, grid=str(value))
        if field_id.startswith("override-"):
            name = field_id.removeprefix("override-")
            return replace(self, overrides={**self.overrides, name: str(value)})
        return self

    def text_of(self, field_id: str) -> str | None:
        """The text of the form field `field_id` (`with_field`'s inverse); None for a field that
        holds no text (`special`) or that the form does not have."""
        if field_id.startswith("dim-"):
            return self.dims.get(field_id.removeprefix("dim-"))
        if field_id.startswith("recipe-"):
            return self.recipes.get(field_id.removeprefix("recipe-"), "")
        if field_id.startswith("set-"):
            return self.sets.get(field_id_path(field_id.removeprefix("set-")), "")
        if field_id.startswith("override-"):
            return self.overrides.get(field_id.removeprefix("override-"), "")
        return {"seed": self.seed, "grid": self.grid}.get(field_id)


# What each number field lets be typed (Textual's `Input.restrict`, matched against the whole
# text): what its parser below reads, and no other letter, so that a key meant as a command
# (`d`, `r`) is refused with a bell and a note instead of silently joining the number. A character
# class, not a grammar: a grammar of every prefix would also refuse deleting a middle character.
WHOLE_CHARS = r"[0-9_, ]*"
SEED_CHARS = r"[0-9_ ]*"
GRID_CHARS = r"[0-9_,× ]*"
NUMBER_CHARS = r"[-+0-9_.eE ]*"


def field_chars(field_id: str) -> str | None:
    """The characters the form field `field_id` accepts (a regex for `Input.restrict`); None
    for a field of free text (an input recipe)."""
    if field_id.startswith("dim-"):
        return WHOLE_CHARS
    if field_id.startswith(("set-", "override-")):
        return NUMBER_CHARS
    return {"seed": SEED_CHARS, "grid": GRID_CHARS}.get(field_id)


def _filled(fields: dict[str, str]) -> tuple[tuple[str, str], ...]:
    return tuple(sorted((k, v.strip()) for k, v in fields.items() if v.strip()))


def path_field_id(path: str) -> str:
    """A uniform field's path (`dims.x`) as a widget id part (`dims-x`: ids have no dots, and
    WGSL names have no hyphens)."""
    return path.replace(".", "-")


def field_id_path(part: str) -> str:
    return part.replace("-", ".")


@dataclass(frozen=True)
class ParsedForm:
    """The form checked: arguments for `Session.case`, or the problems that stop it."""

    dims: dict[str, int]
    seed: int
    inputs: dict[str, str]
    special: bool
    problems: tuple[str, ...] = ()
    sets: dict[str, float] = field(default_factory=dict)
    grid: tuple[int, int, int] | None = None
    overrides: dict[str, float] = field(default_factory=dict)


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
    seed = DEFAULT_SEED
    try:
        seed = int(state.seed.strip() or DEFAULT_SEED)
        if seed < 0:
            raise ValueError
    except ValueError:
        problems.append(f"seed: {state.seed!r} is not a whole number >= 0")
    inputs = {k: v.strip() for k, v in state.recipes.items() if v.strip()}
    sets = _numbers(state.sets, problems)
    overrides = _numbers(state.overrides, problems)
    grid = None
    if state.grid.strip():
        parts = [whole_number(p) for p in state.grid.replace("×", ",").split(",")]
        numbers = [n for n in parts if n is not None]
        if len(parts) > 3 or len(numbers) < len(parts):
            problems.append(f"grid: {state.grid!r} is not 1 to 3 whole numbers X,Y,Z (digits 0-9)")
        else:
            x, y, z = (*numbers, 1, 1)[:3]
            grid = (x, y, z)
    return ParsedForm(dims, seed, inputs, state.special, tuple(problems), sets, grid, overrides)


def _numbers(fields: dict[str, str], problems: list[str]) -> dict[str, float]:
    """The filled fields as numbers; a field that is not one becomes a problem."""
    out: dict[str, float] = {}
    for name, text in fields.items():
        if not text.strip():
            continue
        try:
            value = parse_number(text)
        except ValueError:
            problems.append(f"{name}: {text!r} is not a number (hex: 0x...)")
            continue
        out[name] = int(value) if float(value).is_integer() else value
    return out


def uniform_paths(bindings: tuple[Binding, ...]) -> list[str]:
    """The editable fields of the uniform bindings: scalars by name, vector lanes and struct
    members by path (`dims.x`, `params.scale`); arrays and matrices are left to `--set`."""
    out: list[str] = []
    for b in bindings:
        if b.space == "uniform":
            out += _paths(b.type, b.name)
    return out


def form_paths(spec: KernelSpec | None, bindings: tuple[Binding, ...]) -> tuple[str, ...]:
    """The uniform fields the form shows for a kernel: every one of an ad-hoc kernel's; of a
    spec's, those it gives a value of its own (`KernelSpec.settable`: a described kernel's
    `eps`), whose typed value its reference sees too. (Fields fed by dims are the dims' fields.)"""
    paths = uniform_paths(bindings)
    if spec is None:
        return tuple(paths)
    return tuple(p for p in paths if p in spec.settable)


def _paths(t: WType, path: str) -> list[str]:
    if t.kind in ("scalar", "atomic"):
        return [path]
    if t.kind == "vector":
        return [f"{path}.{lane}" for lane in "xyzw"[: t.count or 4]]
    if t.kind == "struct":
        return [p for m in t.members for p in _paths(m.type, f"{path}.{m.name}")]
    return []


def uniform_value(uniforms: dict[str, object], path: str) -> object:
    """The planned value at `path` (`dims.x`) of a case's uniform values, or None."""
    head, *rest = path.split(".")
    value = uniforms.get(head)
    for part in rest:
        if isinstance(value, dict):
            value = value.get(part)
        elif isinstance(value, list) and part in "xyzw":
            index = "xyzw".index(part)
            value = value[index] if index < len(value) else None
        else:
            return None
    return value
