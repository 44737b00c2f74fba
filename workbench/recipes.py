"""Input recipes: how a binding's contents are made from a short text.

`zeros`, `ones`, `const:V`, `arange`, `randn[:SEED]`, `uniform:LO:HI[:SEED]`, `randint:LO:HI[:SEED]`,
`npy:PATH`. Seeds default to the run's seed plus the binding's index, so every binding differs.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from workbench.errors import UserError

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


def make_input(
    recipe: str, shape: tuple[int, ...], dtype: str | np.dtype[Any], seed: int, what: str
) -> np.ndarray:
    """An array of `shape`/`dtype` made by `recipe`; `what` names the binding in errors."""
    kind, _, rest = recipe.strip().partition(":")
    args = rest.split(":") if rest else []
    n = int(np.prod(shape, dtype=np.int64))
    try:
        if kind == "npy":
            return _load_npy(rest, shape, dtype, what)
        if kind == "zeros" and not args:
            return np.zeros(shape, dtype)
        if kind == "ones" and not args:
            return np.ones(shape, dtype)
        if kind == "const" and len(args) == 1:
            return np.full(shape, float(args[0])).astype(dtype)
        if kind == "arange" and not args:
            return np.arange(n).reshape(shape).astype(dtype)
        if kind == "randn" and len(args) <= 1:
            rng = np.random.default_rng(int(args[0]) if args else seed)
            return rng.standard_normal(shape).astype(dtype)
        if kind == "uniform" and len(args) in (2, 3):
            rng = np.random.default_rng(int(args[2]) if len(args) == 3 else seed)
            return rng.uniform(float(args[0]), float(args[1]), shape).astype(dtype)
        if kind == "randint" and len(args) in (2, 3):
            rng = np.random.default_rng(int(args[2]) if len(args) == 3 else seed)
            lo, hi = int(args[0]), int(args[1])
            if hi <= lo:
                raise UserError(f"{what}: randint needs LO < HI, got {lo}:{hi}")
            return rng.integers(lo, hi, shape).astype(dtype)
    except ValueError as exc:
        raise UserError(f"{what}: bad number in recipe {recipe!r}: {exc}") from None
    raise UserError(f"{what}: unknown input recipe {recipe!r}; use one of {', '.join(RECIPES)}")


def _load_npy(
    path: str, shape: tuple[int, ...], dtype: str | np.dtype[Any], what: str
) -> np.ndarray:
    p = Path(path).expanduser()
    try:
        arr = np.load(p, allow_pickle=False)
    except FileNotFoundError:
        raise UserError(f"{what}: {p} does not exist") from None
    except (ValueError, OSError) as exc:
        raise UserError(f"{what}: {p} is not a readable .npy file: {exc}") from None
    if not isinstance(arr, np.ndarray) or arr.dtype.kind not in "fiub":
        raise UserError(f"{what}: {p} holds {getattr(arr, 'dtype', type(arr))}, not numbers")
    if arr.size != int(np.prod(shape, dtype=np.int64)):
        raise UserError(
            f"{what}: {p} has {arr.size} elements {arr.shape}, the binding needs "
            f"{int(np.prod(shape, dtype=np.int64))} {shape}; resize the binding or change the dims"
        )
    return arr.reshape(shape).astype(dtype)
