"""A pipeline file read into data: dims, buffers, steps, alternative branches and agree checks.

This module knows the file's shape only (which keys, which types, dims that depend on each other
without a cycle); whether the kernels exist and the bindings fit is `plan`'s business. Every
mistake is a `PipelineError`: one line naming the file, the place (step and field) and the fix.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from workbench.closeness import ToleranceError, validate_tolerance
from workbench.errors import UserError
from workbench.specs import expr
from workbench.userfiles import describe, read_text

DTYPES = {"f32": "float32", "f16": "float16", "u32": "uint32", "i32": "int32"}


MAX_BYTES = 1 << 20  # a pipeline file is a few KiB


class PipelineError(UserError):
    """A mistake in a pipeline file, located by file, step and field."""

    def __init__(self, file: str, where: str, message: str) -> None:
        super().__init__(f"{file}: {where}: {message}")


@dataclass(frozen=True)
class DimDef:
    """A named dim: a whole number or an expression of other dims, with optional limits."""

    name: str
    default: int | str
    lo: int | None = None
    hi: int | None = None
    doc: str = ""


@dataclass(frozen=True)
class BufferDef:
    """A named buffer: shape in dims, element type, and how it starts."""

    name: str
    shape: tuple[int | str, ...]
    dtype: str  # numpy name
    init: str  # an --input recipe (dims may appear as {name}), "zeros", or "copy:BUFFER"
    doc: str = ""


@dataclass(frozen=True)
class StepDef:
    """One dispatch: a kernel, its bindings → buffers, and optional overrides."""

    index: int  # 1-based within its list (the main steps, or one branch's steps)
    where: str  # how errors name it: "step 3 (attention_forward)"
    kernel: str
    bind: dict[str, str]
    id: str = ""
    dims: dict[str, int | str] = field(default_factory=dict)
    uniforms: dict[str, Any] = field(default_factory=dict)
    grid: tuple[int | str, ...] | None = None


@dataclass(frozen=True)
class Branch:
    """Steps that replace a consecutive run of main steps (named by their ids)."""

    name: str
    replaces: tuple[str, ...]
    steps: tuple[StepDef, ...]
    doc: str = ""


@dataclass(frozen=True)
class Agree:
    """Buffers that must agree at the end: the same buffers after `branch` and after the main
    path, or two buffers (`pair`) of one run."""

    index: int
    branch: str | None
    buffers: tuple[str, ...]
    pair: tuple[str, str] | None
    rtol: float
    atol: float
    why: str


@dataclass(frozen=True)
class Pipeline:
    name: str
    doc: str
    file: str
    dims: dict[str, DimDef]
    buffers: dict[str, BufferDef]
    steps: tuple[StepDef, ...]
    branches: dict[str, Branch]
    agree: tuple[Agree, ...]


def load(path: Path) -> Pipeline:
    """Read and check a pipeline file; any problem reading it is one PipelineError line."""
    file = str(path)
    # Only a regular file of sane size is read (a named pipe is refused, not waited on).
    text = read_text(
        path, lambda msg: PipelineError(file, "file", msg.removeprefix(f"{file}: ")), MAX_BYTES
    )
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise PipelineError(file, "TOML", f"{exc}; fix the syntax") from None
    except Exception as exc:  # anything else a hostile file can raise still becomes one line
        raise PipelineError(file, "TOML", f"cannot be read: {describe(exc)}") from None
    return parse(data, file, default_name=path.stem)


def parse(data: dict[str, Any], file: str, default_name: str = "pipeline") -> Pipeline:
    r = _Reader(file)
    r.keys(data, "top level", {"name", "doc", "dims", "buffers", "steps", "branches", "agree"})
    name = r.text(data.get("name", default_name), "name")
    doc = r.text(data.get("doc", ""), "doc")
    dims = {k: r.dim(k, v) for k, v in r.table(data.get("dims", {}), "dims").items()}
    _check_cycles(file, dims)
    buffers = {k: r.buffer(k, v) for k, v in r.table(data.get("buffers", {}), "buffers").items()}
    if not buffers:
        raise PipelineError(file, "buffers", "no buffers; add a [buffers] table")
    _check_copies(file, buffers)
    steps = r.steps(data.get("steps"), "steps", "step")
    if not steps:
        raise PipelineError(file, "steps", "no steps; add [[steps]] entries")
    ids = [s.id for s in steps if s.id]
    dup = sorted({i for i in ids if ids.count(i) > 1})
    if dup:
        raise PipelineError(file, "steps", f"step id {dup[0]!r} is used twice")
    branches = {
        k: r.branch(k, v, ids) for k, v in r.table(data.get("branches", {}), "branches").items()
    }
    agree_items = data.get("agree", [])
    if not isinstance(agree_items, list):
        raise PipelineError(file, "agree", "must be an array of tables ([[agree]])")
    agree = tuple(r.agree(i + 1, a, buffers, branches) for i, a in enumerate(agree_items))
    return Pipeline(name, doc, file, dims, buffers, steps, branches, agree)


class _Reader:
    """Type checks with the location in every message."""

    def __init__(self, file: str) -> None:
        self.file = file

    def fail(self, where: str, message: str) -> PipelineError:
        return PipelineError(self.file, where, message)

    def keys(self, table: dict[str, Any], where: str, allowed: set[str]) -> None:
        unknown = sorted(set(table) - allowed)
        if unknown:
            raise self.fail(
                where, f"unknown key {unknown[0]!r}; allowed: {', '.join(sorted(allowed))}"
            )

    def table(self, value: Any, where: str) -> dict[str, Any]:
        if not isinstance(value, dict):
            raise self.fail(where, f"must be a table, got {type(value).__name__}")
        return value

    def text(self, value: Any, where: str) -> str:
        if not isinstance(value, str):
            raise self.fail(where, f"must be a string, got {value!r}")
        return value

    def tolerance(self, value: Any, where: str, rtol: bool) -> float:
        """A tolerance, held to the one validator (`workbench.closeness`): finite, >= 0, and an
        rtol within the ceiling."""
        try:
            validate_tolerance(
                value if rtol else None, None if rtol else value, labels=(where, where)
            )
        except ToleranceError as exc:
            raise self.fail(where, str(exc).removeprefix(f"{where} ")) from None
        return float(value)

    def size(self, value: Any, where: str) -> int | str:
        """A whole number or an expression of dims, checked for form now, evaluated later."""
        if isinstance(value, bool) or not isinstance(value, int | str):
            raise self.fail(
                where, f"must be a whole number or an expression of dims, got {value!r}"
            )
        if isinstance(value, str):
            try:
                expr.parse(value)
            except expr.ExprError as exc:
                raise self.fail(where, str(exc)) from None
        return value

    def dim(self, name: str, value: Any) -> DimDef:
        where = f"dims.{name}"
        if not isinstance(value, dict):
            return DimDef(name, self.size(value, where))
        self.keys(value, where, {"default", "min", "max", "doc"})
        if "default" not in value:
            raise self.fail(where, "needs a default")
        lo, hi = value.get("min"), value.get("max")
        for key, v in (("min", lo), ("max", hi)):
            if v is not None and (isinstance(v, bool) or not isinstance(v, int)):
                raise self.fail(f"{where}.{key}", f"must be a whole number, got {v!r}")
        return DimDef(
            name,
            self.size(value["default"], f"{where}.default"),
            lo,
            hi,
            self.text(value.get("doc", ""), f"{where}.doc"),
        )

    def buffer(self, name: str, value: Any) -> BufferDef:
        where = f"buffers.{name}"
        value = self.table(value, where)
        self.keys(value, where, {"shape", "dtype", "init", "doc"})
        shape = value.get("shape")
        if not isinstance(shape, list) or not shape:
            raise self.fail(f"{where}.shape", 'must be a list of dims, e.g. ["seq", "d_ff"]')
        dtype = value.get("dtype", "f32")
        if dtype not in DTYPES:
            raise self.fail(f"{where}.dtype", f"{dtype!r} is not one of {', '.join(DTYPES)}")
        return BufferDef(
            name,
            tuple(self.size(s, f"{where}.shape") for s in shape),
            DTYPES[dtype],
            self.text(value.get("init", "zeros"), f"{where}.init").strip(),
            self.text(value.get("doc", ""), f"{where}.doc"),
        )

    def steps(self, value: Any, where: str, label: str) -> tuple[StepDef, ...]:
        if not isinstance(value, list):
            raise self.fail(where, "must be an array of tables ([[steps]])")
        return tuple(self.step(i + 1, s, f"{label} {i + 1}") for i, s in enumerate(value))

    def step(self, index: int, value: Any, where: str) -> StepDef:
        value = self.table(value, where)
        self.keys(value, where, {"kernel", "bind", "id", "dims", "uniforms", "grid", "doc"})
        if "kernel" not in value:
            raise self.fail(f"{where} (kernel)", 'no kernel named; write kernel = "NAME"')
        kernel = self.text(value["kernel"], f"{where} (kernel)")
        where = f"{where} ({kernel})"
        bind = self.table(value.get("bind", {}), f"{where} bind")
        for b, buf in bind.items():
            self.text(buf, f"{where} bind.{b}")
        dims = self.table(value.get("dims", {}), f"{where} dims")
        for d, v in dims.items():
            self.size(v, f"{where} dims.{d}")
        grid = value.get("grid")
        if grid is not None:
            if not isinstance(grid, list) or not 1 <= len(grid) <= 3:
                raise self.fail(f"{where} grid", "must be a list of 1 to 3 sizes")
            grid = tuple(self.size(g, f"{where} grid") for g in grid)
        return StepDef(
            index,
            where,
            kernel,
            dict(bind),
            self.text(value.get("id", ""), f"{where} id"),
            dict(dims),
            self.table(value.get("uniforms", {}), f"{where} uniforms"),
            grid,
        )

    def branch(self, name: str, value: Any, ids: list[str]) -> Branch:
        where = f"branches.{name}"
        value = self.table(value, where)
        self.keys(value, where, {"replaces", "steps", "doc"})
        replaces = value.get("replaces")
        if not isinstance(replaces, list) or not replaces:
            raise self.fail(f"{where}.replaces", "must list the ids of the steps it replaces")
        for r in replaces:
            if r not in ids:
                raise self.fail(
                    f"{where}.replaces",
                    f"no step has id {r!r}; step ids: {', '.join(ids) or 'none'}",
                )
        at = [ids.index(r) for r in replaces]
        if at != list(range(at[0], at[0] + len(at))):
            raise self.fail(f"{where}.replaces", "must name consecutive steps, in order")
        steps = self.steps(value.get("steps"), f"{where}.steps", f"branch {name} step")
        return Branch(name, tuple(replaces), steps, self.text(value.get("doc", ""), f"{where}.doc"))

    def agree(
        self, index: int, value: Any, buffers: dict[str, BufferDef], branches: dict[str, Branch]
    ) -> Agree:
        where = f"agree {index}"
        value = self.table(value, where)
        self.keys(value, where, {"branch", "buffers", "pair", "rtol", "atol", "why"})
        branch, pair, names = value.get("branch"), value.get("pair"), value.get("buffers", [])
        if (branch is None) == (pair is None):
            raise self.fail(where, "give either branch (with buffers) or pair, not both")
        if branch is not None and branch not in branches:
            raise self.fail(f"{where} branch", f"no branch {branch!r}")
        if pair is not None:
            if not isinstance(pair, list) or len(pair) != 2:
                raise self.fail(f"{where} pair", "must be two buffer names")
            names = pair
        if not isinstance(names, list) or not names:
            raise self.fail(f"{where} buffers", "must list buffer names")
        for b in names:
            if b not in buffers:
                raise self.fail(f"{where} buffers", f"no buffer {b!r}")
        return Agree(
            index,
            branch,
            tuple(names),
            tuple(pair) if pair is not None else None,
            self.tolerance(value.get("rtol", 0.0), f"{where} rtol", rtol=True),
            self.tolerance(value.get("atol", 0.0), f"{where} atol", rtol=False),
            self.text(value.get("why", ""), f"{where} why"),
        )


def _check_cycles(file: str, dims: dict[str, DimDef]) -> None:
    """Dims defined by expressions must not depend on themselves, however indirectly."""
    deps: dict[str, frozenset[str]] = {}
    for name, d in dims.items():
        if isinstance(d.default, str):
            mentioned = expr.parse(d.default).names
            unknown = sorted(mentioned - set(dims))
            if unknown:
                raise PipelineError(file, f"dims.{name}", f"mentions unknown dim {unknown[0]!r}")
            deps[name] = mentioned
    state: dict[str, int] = {}  # 1: on the current path, 2: done

    def visit(name: str, path: list[str]) -> None:
        if state.get(name) == 2:
            return
        if state.get(name) == 1:
            loop = " -> ".join([*path[path.index(name) :], name])
            raise PipelineError(file, f"dims.{name}", f"dim cycle {loop}; give one a number")
        state[name] = 1
        for dep in sorted(deps.get(name, ())):
            visit(dep, [*path, name])
        state[name] = 2

    for name in dims:
        visit(name, [])


def _check_copies(file: str, buffers: dict[str, BufferDef]) -> None:
    """`copy:B` starts a buffer as a copy of B's start, which must be made another way."""
    for name, b in buffers.items():
        if b.init.startswith("copy:"):
            src = b.init[5:].strip()
            where = f"buffers.{name}.init"
            if src not in buffers:
                raise PipelineError(file, where, f"copies unknown buffer {src!r}")
            if buffers[src].init.startswith("copy:"):
                raise PipelineError(file, where, f"copies {src}, itself a copy; copy its source")
            if buffers[src].dtype != b.dtype or buffers[src].shape != b.shape:
                raise PipelineError(file, where, f"copies {src}, whose shape or dtype differs")
