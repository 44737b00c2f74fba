"""The Outputs tab's slice box: which 2-D slice of an N-d array to show (`seq=3 head=1` or `3 1`),
and the element a jump names (`s=17 h=3 d=40`, or a flat index)."""

from __future__ import annotations

import re

import numpy as np

from workbench.errors import UserError


def parse_slice(
    text: str, shape: tuple[int, ...], axes: tuple[str, ...]
) -> tuple[tuple[int, ...], str]:
    """Leading indices for an N-d array shown as 2-D, and a problem as text ("" when none).

    Every axis but the last two is a leading one; each is 0 unless named (`seq=3`) or given in
    order (`3 1`). An index out of range is clamped and reported, so the table never goes blank."""
    lead = [0] * max(len(shape) - 2, 0)
    if not lead:
        return (), ""
    problem = ""
    positional = 0
    for tok in re.split(r"[\s,]+", text.strip()):
        if not tok:
            continue
        name, sep, value = tok.partition("=")
        try:
            if sep:
                if name not in axes[: len(lead)]:
                    problem = f"no leading axis {name!r} ({', '.join(axes[: len(lead)])})"
                    continue
                k, v = axes.index(name), int(value)
            else:
                k, v = positional, int(name)
                positional += 1
        except ValueError:
            problem = f"{tok!r} is not an index"
            continue
        if k >= len(lead):
            problem = f"only {len(lead)} leading axes"
            continue
        if not 0 <= v < shape[k]:
            problem = f"{axes[k]}={v} is outside [0, {shape[k] - 1}]"
            v = min(max(v, 0), shape[k] - 1)
        lead[k] = v
    return tuple(lead), problem


def placeholder(axes: tuple[str, ...], ndim: int) -> str:
    """What the slice box shows when empty: every leading axis at 0, or that there is none."""
    return " ".join(f"{a}=0" for a in axes[:-2]) if ndim > 2 else "(2-D: no slice)"


def parse_index(text: str, shape: tuple[int, ...], axes: tuple[str, ...]) -> tuple[int, ...]:
    """The element a jump names: every axis by name (`s=17 h=3 d=40`) or in order (`17 3 40`),
    or one flat (row-major) index (`1234`). UserError saying what is wrong otherwise."""
    tokens = [t for t in re.split(r"[\s,]+", text.strip()) if t]
    size = int(np.prod(shape)) if shape else 1
    names = ", ".join(axes)
    if not tokens:
        raise UserError(f"give an index: {names} by name, or one flat index")
    if len(tokens) == 1 and "=" not in tokens[0]:
        flat = _whole(tokens[0])
        if not 0 <= flat < size:
            raise UserError(f"flat index {flat} is outside 0–{size - 1:,}")
        return tuple(int(i) for i in np.unravel_index(flat, shape))
    given: dict[int, int] = {}
    for k, tok in enumerate(tokens):
        name, sep, value = tok.partition("=")
        if sep:
            if name not in axes:
                raise UserError(f"no axis {name!r}: the axes are {names}")
            k = axes.index(name)
        elif any("=" in t for t in tokens):
            raise UserError(f"{tok!r}: name every axis ({names}) or none")
        elif len(tokens) != len(shape):
            raise UserError(f"{len(tokens)} numbers for {len(shape)} axes ({names})")
        else:
            value = tok
        if k in given:
            raise UserError(f"{axes[k]} is given twice")
        v = _whole(value)
        if not 0 <= v < shape[k]:
            raise UserError(f"{axes[k]}={v} is outside 0–{shape[k] - 1}")
        given[k] = v
    missing = [axes[k] for k in range(len(shape)) if k not in given]
    if missing:
        raise UserError(f"missing {', '.join(missing)}: give every axis ({names}) or a flat index")
    return tuple(given[k] for k in range(len(shape)))


def _whole(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise UserError(f"{text!r} is not a whole number") from None
