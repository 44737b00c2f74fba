"""The Outputs tab's slice box: which 2-D slice of an N-d array to show (`seq=3 head=1` or `3 1`)."""

from __future__ import annotations

import re


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
