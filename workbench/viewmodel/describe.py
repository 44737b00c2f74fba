"""The describe command of the terminal UI: the current kernel's settings written into its corpus's
`workbench.toml`, edited in place (`specs.starter.describe_into`, with tomlkit): comments, order
and the form of an existing description (a table, an inline table) are kept.

For an ad-hoc kernel the description is the case as it stands: `n`, each binding's size (`n` where
it is n), the uniform values, the grid, the recipes and the override values. For a kernel already
described, its own table is kept (expressions, reference, gradient) with the dims' defaults and
the override values taken from the case. A shipped spec's kernel is not described: its meaning is
its spec.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

import tomlkit
from tomlkit.exceptions import TOMLKitError

from workbench.errors import UserError
from workbench.jsonable import jsonable
from workbench.safewrite import write_text
from workbench.specs.described import FILE
from workbench.specs.starter import describe_into

if TYPE_CHECKING:
    from workbench.session import Case

_SEEDED = re.compile(r"^(?P<recipe>[a-z]+(?::[^ ]+)?) \(seed (?P<seed>\d+)\)$")


def write_description(case: Case, root: Path) -> Path:
    """Write the kernel's tables of `case` into `root`/workbench.toml; returns the file."""
    path = root / FILE
    try:
        text = path.read_text(encoding="utf-8") if path.exists() else ""
        existing = tomlkit.parse(text).unwrap().get("kernels", {}).get(case.name)
        table = described_table(case, existing) if existing else adhoc_table(case)
        new = describe_into(text, case.name, table)
    except (OSError, UnicodeDecodeError, TOMLKitError) as exc:
        raise UserError(f"{path}: cannot be updated: {exc}") from None
    # An edit of the corpus's own description, asked for by the describe command: the rest of
    # the file is kept, so replacing it is what the user asked.
    return write_text(path, new, overwrite=True)


def adhoc_table(case: Case) -> dict[str, Any]:
    """A description of an ad-hoc case as it stands."""
    if case.spec is not None and not case.spec.described:
        raise UserError(
            f"{case.name} has a shipped spec: its meaning is the spec, not a description"
        )
    n = case.dims.get("n", 0)
    buffers: dict[str, Any] = {}
    for p in case.bindings:
        if p.role == "uniform":
            continue
        if not isinstance(p.dtype, str):
            raise UserError(f"{p.name} holds structs, which a description cannot give a shape")
        lead: Any = "n" if p.binding.runtime_sized and p.shape and p.shape[0] == n else p.shape[0]
        entry: dict[str, Any] = {"shape": [lead, *p.shape[1:]]}
        if p.role in ("input", "inout"):
            entry["input"] = _recipe(p.source)
        elif p.role == "output":
            entry["output"] = True
        buffers[p.name] = entry
    table: dict[str, Any] = {
        "doc": case.name,
        "dims": {"n": n},
        "grid": list(case.grid),
    }
    if case.overrides:
        table["overrides"] = dict(case.overrides)
    uniforms = {k: jsonable(v) for k, v in case.uniforms.items()}
    if uniforms:
        table["uniforms"] = uniforms
    table["buffers"] = buffers
    return table


def described_table(case: Case, existing: dict[str, Any]) -> dict[str, Any]:
    """The kernel's own table with the dims' defaults and override values of `case`."""
    table = dict(existing)
    dims = dict(table.get("dims", {}))
    for name, value in case.dims.items():
        old = dims.get(name)
        dims[name] = {**old, "default": value} if isinstance(old, dict) else value
    table["dims"] = dims
    if case.overrides:
        table["overrides"] = dict(case.overrides)
    return table


def _recipe(source: str) -> str:
    """The recipe text a binding's source stands for (`randn (seed 3)` -> `randn:3`)."""
    m = _SEEDED.match(source)
    if m:
        return f"{m['recipe']}:{m['seed']}"
    if source.startswith("spec generator") or source in ("", "array", "zeros"):
        return "zeros"
    return source
