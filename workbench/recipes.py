"""Input recipes: how a binding's contents are made from a short text.

`zeros`, `ones`, `const:V`, `arange`, `randn[:SEED]`, `uniform:LO:HI[:SEED]`, `randint:LO:HI[:SEED]`,
`npy:PATH`. Seeds default to the run's seed plus the binding's index, so every binding differs.

Nothing is changed quietly on the way into a binding: a value the binding's type cannot hold (out
of range, a sign in an unsigned binding, a fraction in an integer one, a float that would become
infinite or zero) is an error naming the value and the binding. Rounding a decimal or a float64 to
the binding's float type is what people expect; for a float64 `.npy` it is said in one note.
An `.npy` file's header (shape, dtype) is checked against the binding before any data is read.
"""

from __future__ import annotations

import math
import os
from pathlib import Path
from typing import Any

import numpy as np

from workbench.errors import UserError
from workbench.userfiles import open_regular, read_npy_data, read_npy_header

# The seed of a case when none is given: the command line's `--seed` default, the UI's seed field,
# a fixture manifest without `seed`, and every engine function that takes one.
DEFAULT_SEED = 0

RECIPES = (
    "zeros",
    "ones",
    "const:V",
    "arange",
    "randn[:SEED]",
    "uniform:LO:HI[:SEED]",
    "randint:LO:HI[:SEED]",
    "npy:PATH",
)

# The random recipes, and how many arguments each takes before its optional seed.
_RANDOM = {"randn": 0, "uniform": 2, "randint": 2}


def takes_run_seed(recipe: str) -> bool:
    """Whether `recipe` draws from the run's seed: a random recipe without a seed of its own."""
    kind, _, rest = recipe.strip().partition(":")
    return kind in _RANDOM and len(rest.split(":") if rest else []) == _RANDOM[kind]


INT64_MIN, INT64_MAX = -(1 << 63), (1 << 63) - 1


def make_input(
    recipe: str,
    shape: tuple[int, ...],
    dtype: str | np.dtype[Any],
    seed: int,
    what: str,
    notes: list[str] | None = None,
) -> np.ndarray:
    """An array of `shape`/`dtype` made by `recipe`; `what` names the binding in errors.

    A conversion worth knowing about (float64 file data rounded to float32) adds a line to `notes`.
    """
    kind, _, rest = recipe.strip().partition(":")
    args = rest.split(":") if rest else []
    n = int(np.prod(shape, dtype=np.int64))
    if kind == "npy":
        return _load_npy(rest, shape, dtype, what, notes)
    if kind == "zeros" and not args:
        return np.zeros(shape, dtype)
    if kind == "ones" and not args:
        return np.ones(shape, dtype)
    if kind == "const" and len(args) == 1:
        # nan and ±inf are fine here: they are how special values are fed to a float binding.
        value = _number(args[0], what, recipe, finite=False)
        return _fit(np.full(shape, value), dtype, what, recipe)
    if kind == "arange" and not args:
        return _fit(np.arange(n).reshape(shape), dtype, what, recipe)
    if kind == "randn" and len(args) <= 1:
        rng = np.random.default_rng(_seed(args[0], what, recipe) if args else seed)
        return _fit(rng.standard_normal(shape), dtype, what, recipe)
    if kind == "uniform" and len(args) in (2, 3):
        lo, hi = _number(args[0], what, recipe), _number(args[1], what, recipe)
        if not lo < hi or not math.isfinite(hi - lo):
            raise UserError(f"{what}: uniform needs finite LO < HI, got {args[0]}:{args[1]}")
        rng = np.random.default_rng(_seed(args[2], what, recipe) if len(args) == 3 else seed)
        return _fit(rng.uniform(lo, hi, shape), dtype, what, recipe)
    if kind == "randint" and len(args) in (2, 3):
        lo, hi = _integer(args[0], what, recipe), _integer(args[1], what, recipe)
        if hi <= lo:
            raise UserError(f"{what}: randint needs LO < HI, got {lo}:{hi}")
        _check_range(lo, hi - 1, dtype, what, recipe)
        rng = np.random.default_rng(_seed(args[2], what, recipe) if len(args) == 3 else seed)
        return _fit(rng.integers(lo, hi, shape), dtype, what, recipe)
    raise UserError(f"{what}: unknown input recipe {recipe!r}; use one of {', '.join(RECIPES)}")


def _number(text: str, what: str, recipe: str, finite: bool = True) -> float:
    try:
        value = float(text)
    except ValueError:
        raise UserError(f"{what}: bad number in recipe {recipe!r}: {text!r}") from None
    if finite and not math.isfinite(value):
        raise UserError(f"{what}: recipe {recipe!r} needs finite numbers, got {text!r}")
    return value


def _integer(text: str, what: str, recipe: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise UserError(
            f"{what}: bad number in recipe {recipe!r}: {text!r} is not an integer"
        ) from None
    # The generator draws 64-bit integers; a larger bound would fail inside NumPy.
    if not INT64_MIN <= value <= INT64_MAX:
        raise UserError(
            f"{what}: {text} in recipe {recipe!r} is out of range: integers in a recipe are "
            f"from {INT64_MIN} to {INT64_MAX}"
        )
    return value


def _seed(text: str, what: str, recipe: str) -> int:
    seed = _integer(text, what, recipe)
    if seed < 0:
        raise UserError(f"{what}: the seed in recipe {recipe!r} must be >= 0, got {seed}")
    return seed


def _check_range(lo: int, hi: int, dtype: str | np.dtype[Any], what: str, source: str) -> None:
    """Integers lo..hi must all fit an integer binding (a float one holds them up to rounding)."""
    dt = np.dtype(dtype)
    if dt.kind not in "iu":
        return
    info = np.iinfo(dt)
    for v in (lo, hi):
        if not info.min <= v <= info.max:
            raise UserError(
                f"{what}: {v} from {source!r} does not fit the binding's {dt} "
                f"({info.min}..{info.max}); it would wrap around"
            )


def _fit(values: np.ndarray, dtype: str | np.dtype[Any], what: str, source: str) -> np.ndarray:
    """`values` as `dtype`, refusing any value the conversion would change beyond float rounding."""
    dt = np.dtype(dtype)
    if dt.names is not None:
        raise UserError(
            f"{what}: a struct binding is filled from a file (npy:PATH), not {source!r}"
        )
    src = values.dtype
    with np.errstate(all="ignore"):
        out = values.astype(dt)
    bad = None
    if dt.kind in "iu":
        info = np.iinfo(dt)
        if src.kind == "f":
            whole = np.isfinite(values) & (values == np.trunc(values))
            bad_mask = ~whole | (values < info.min) | (values > info.max)
        else:
            bad_mask = (values < info.min) | (values > info.max)
        if bad_mask.any():
            bad = values.reshape(-1)[np.flatnonzero(bad_mask)[0]]
            why = (
                "not a whole number"
                if src.kind == "f" and not float(bad).is_integer()
                else f"outside {info.min}..{info.max}"
            )
    elif dt.kind == "f":
        fin = np.isfinite(values)
        with np.errstate(all="ignore"):
            back = out.astype(np.float64)
            src64 = values.astype(np.float64)
        overflow = fin & ~np.isfinite(back)
        underflow = fin & (src64 != 0) & (back == 0)
        bad_mask = overflow | underflow
        if bad_mask.any():
            bad = values.reshape(-1)[np.flatnonzero(bad_mask)[0]]
            why = (
                f"beyond the largest {dt} ({float(np.finfo(dt).max):.4g}); it would become inf"
                if overflow.any()
                else f"below the smallest {dt} ({float(np.finfo(dt).smallest_subnormal):.4g}); "
                "it would become 0"
            )
        elif src.kind in "iu" and (fin & (back != src64)).any():
            bad = values.reshape(-1)[np.flatnonzero(back != src64)[0]]
            why = f"not exactly representable in {dt} (it would be rounded)"
    if bad is not None:
        raise UserError(
            f"{what}: value {bad.item()!r} from {source!r} does not fit the binding's {dt}: {why}"
        )
    return out


def _load_npy(
    path: str,
    shape: tuple[int, ...],
    dtype: str | np.dtype[Any],
    what: str,
    notes: list[str] | None,
) -> np.ndarray:
    p = Path(path).expanduser()

    def err(msg: str) -> UserError:
        return UserError(f"{what}: {msg}")

    want = int(np.prod(shape, dtype=np.int64))
    if not os.path.lexists(p):
        raise err(f"{p} does not exist")
    with open_regular(p, err) as fh:
        got_shape, fortran, got = read_npy_header(fh, p, err)
        if got.names is not None or got.subdtype is not None or got.kind not in "fiub":
            raise err(f"{p} holds {got}, not plain numbers")
        count = int(np.prod(got_shape, dtype=np.int64))
        if count != want:
            raise err(
                f"{p} has {count:,} elements {got_shape}, the binding needs {want:,} {shape}; "
                "resize the binding or change the dims"
            )
        squeeze = tuple(d for d in got_shape if d != 1)
        if len(got_shape) > 1 and squeeze != tuple(d for d in shape if d != 1):
            raise err(
                f"{p} is shaped {got_shape}, the binding {shape}: save it with the binding's shape "
                f"or flat ({want:,} elements), so no axis is reinterpreted"
            )
        arr = read_npy_data(fh, got_shape, fortran, got, p, err)
    source = f"npy:{p}"
    if got.kind == "b":
        arr = arr.astype(np.uint8)
    out = _fit(arr.reshape(shape), dtype, what, source)
    narrowed = got.kind == "f" and np.dtype(dtype).kind == "f" and got.itemsize > out.itemsize
    if narrowed and notes is not None:
        notes.append(f"{what}: {p.name} holds {got} values, rounded to the binding's {dtype}")
    return out
