"""The describe command of the terminal UI: the current kernel's settings written into its corpus's
`workbench.toml`, edited in place (`specs.starter.describe_into`, with tomlkit): comments, order
and the form of an existing description (a table, an inline table) are kept.

For an ad-hoc kernel the description is the one `workbench describe` writes (`specs.starter`:
dims named after the uniform fields they feed, shapes and grid in terms of them, roles, the
`std:` reference or a refs.py stub), with the case's values: the uniform fields' values as the
dims' defaults, and the grid, sizes, recipes and override values it ran with. For a kernel already
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
from tomlkit.items import Table

from workbench.errors import UserError
from workbench.jsonable import jsonable
from workbench.safewrite import write_text
from workbench.specs.described import FILE
from workbench.specs.starter import AsRun, describe_into, starter_table

if TYPE_CHECKING:
    from workbench.session import Case

_SEEDED = re.compile(r"^(?P<recipe>[a-z]+(?::[^ ]+)?) \(seed (?P<seed>\d+)\)$")


def write_description(case: Case, root: Path, label: str) -> Path:
    """Write the tables of kernel `label` (as its corpus names it: `unary.wgsl:main` where entry
    points share a name) from `case` into `root`/workbench.toml; returns the file."""
    path = root / FILE
    try:
        text = path.read_text(encoding="utf-8") if path.exists() else ""
        existing = tomlkit.parse(text).unwrap().get("kernels", {}).get(label)
        table = described_table(case, existing) if existing else adhoc_table(case, label)
        new = describe_into(text, label, table)
    except (OSError, UnicodeDecodeError, TOMLKitError) as exc:
        raise UserError(f"{path}: cannot be updated: {exc}") from None
    # An edit of the corpus's own description, asked for by the describe command: the rest of
    # the file is kept, so replacing it is what the user asked.
    return write_text(path, new, overwrite=True)


def adhoc_table(case: Case, label: str) -> Table:
    """The description `workbench describe` writes (`specs.starter`), from what `case` ran
    with: its uniform values as the dims' defaults, its grid, sizes, recipes and in-out
    bindings."""
    if case.spec is not None and not case.spec.described:
        raise UserError(
            f"{case.name} has a shipped spec: its meaning is the spec, not a description"
        )
    storage = [p for p in case.bindings if p.role != "uniform"]
    for p in storage:
        if not isinstance(p.dtype, str):
            raise UserError(f"{p.name} holds structs, which a description cannot give a shape")
    run = AsRun(
        uniforms=jsonable(case.uniforms),
        n=case.dims.get("n", 0),
        counts={p.name: p.shape[0] if p.shape else 1 for p in storage},
        recipes={p.name: r for p in storage if (r := _recipe(p.source)) is not None},
        inout=[p.name for p in storage if p.role == "inout"],
        grid=case.grid,
        overrides=case.overrides,
    )
    return starter_table(case.kernel, label, run=run)


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


def _recipe(source: str) -> str | None:
    """The recipe text a binding's source stands for (`randn (seed 3)` -> `randn:3`); None for
    contents no recipe makes (an array given, a spec's generator) or zeros."""
    m = _SEEDED.match(source)
    if m:
        return f"{m['recipe']}:{m['seed']}"
    if source.startswith("spec generator") or source in ("", "array", "zeros"):
        return None
    return source
