"""Numbers with units, the same everywhere (command line, terminal UI, reports): the one place that
decides how a count, a size, a duration, a rate, an error figure, a ULP distance or a ratio is written.

Rules, so that figures side by side read alike:
- counts get thousands separators and a noun in the right number (`1 workgroup`, `1,536 workgroups`);
- sizes are binary (B, KiB, MiB, GiB) with one decimal above a KiB;
- durations and rates keep 3 significant digits, the unit (ns/µs/ms/s, or the SI prefix of a rate)
  chosen by magnitude, so `141 ms` sits beside `3.24 s`, never `141.143 ms`;
- a figure that does not exist (a rate of a kernel with no flops, a time too small to measure, a
  NaN) is `—`, never `0.0`.

The reverse direction lives here too: `parse_number` reads a number a user typed (hex for a bit
pattern), `whole_number` a count (ASCII digits only: `²` passes `str.isdigit()` but is no number),
and `shown` makes text from outside (a file name) safe to print, control characters escaped.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

NONE = "—"  # a figure that does not exist or could not be measured


def fmt_int(n: int) -> str:
    """A whole number with thousands separators: `1,572,864`."""
    return f"{int(n):,}"


def plural(n: int, noun: str) -> str:
    """`noun` in the number `n` asks for: `workgroup` for 1, `workgroups`, `dispatches`, `entries`
    otherwise (the last word of a phrase takes the plural: `back-to-back passes`)."""
    if n == 1:
        return noun
    if noun.endswith(("s", "x", "ch", "sh")):
        return noun + "es"
    if noun.endswith("y") and noun[-2:-1] not in ("a", "e", "i", "o", "u"):
        return noun[:-1] + "ies"
    return noun + "s"


def fmt_count(n: int, noun: str) -> str:
    """A count and its noun: `1 workgroup`, `0 fixtures`, `1,536 workgroups`."""
    return f"{fmt_int(n)} {plural(n, noun)}"


def fmt_bytes(n: float) -> str:
    """A size in binary units: `512 B`, `5.0 KiB`, `30.0 MiB`, `1.5 GiB`."""
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= scale:
            return f"{n / scale:,.1f} {unit}"
    return f"{int(n)} B"


def _three_digits(x: float) -> str:
    """`x` to 3 significant digits with no exponent: `0.123`, `4.56`, `78.9`, `141`, `1,234`."""
    if x >= 1000:
        return f"{x:,.0f}"
    if x >= 100:
        return f"{x:.0f}"
    if x >= 10:
        return f"{x:.1f}"
    if x >= 1:
        return f"{x:.2f}"
    return f"{x:.3g}"


def _round3(x: float) -> float:
    """`x` rounded to 3 significant digits (so 999.6 becomes 1000 and picks the next unit)."""
    return float(f"{x:.3g}")


def fmt_seconds(s: float) -> str:
    """A duration to 3 significant digits in ns, µs, ms or s: `812 ns`, `12.3 µs`, `141 ms`, `3.24 s`."""
    if math.isnan(s) or s < 0:
        return NONE
    if math.isinf(s):
        return "∞ s"
    if s == 0:
        return "0 s"
    s = _round3(s)
    for unit, scale in (("ns", 1e-9), ("µs", 1e-6), ("ms", 1e-3)):
        if s < scale * 1000:
            return f"{_three_digits(_round3(s / scale))} {unit}"
    return f"{_three_digits(s)} s"


def fmt_ms(ms: float) -> str:
    """A duration given in milliseconds, written as `fmt_seconds` writes it."""
    return fmt_seconds(ms / 1e3)


_SI = (("P", 1e15), ("T", 1e12), ("G", 1e9), ("M", 1e6), ("k", 1e3))


def fmt_rate(per_s: float | None, unit: str, scale: float = 1e9) -> str:
    """A rate with the SI prefix its magnitude needs: `fmt_rate(0.0123, "B")` is `12.3 MB/s`.

    `per_s` is in units of `scale` per second (giga-units by default, as the bench computes them).
    Zero, NaN or None (a kernel that does no flops, a case too small to time) is `— FLOP/s`.
    """
    if per_s is None or math.isnan(per_s) or per_s <= 0 or math.isinf(per_s):
        return f"{NONE} {unit}/s"
    x = _round3(per_s * scale)
    for prefix, size in _SI:
        if x >= size:
            return f"{_three_digits(_round3(x / size))} {prefix}{unit}/s"
    return f"{_three_digits(x)} {unit}/s"


def fmt_err(x: float) -> str:
    """An error figure (|Δ|, relative error): two significant digits in exponent form, or 0."""
    if math.isnan(x):
        return "nan"
    if math.isinf(x):
        return "inf"
    if x == 0:
        return "0"
    return f"{x:.1e}"


def fmt_fit(x: float, width: int) -> str:
    """`x` in at most `width` characters (5 or more), as exactly as they allow: fixed point with
    up to 2 decimals (`0.42`, `85712`), else a short exponent form (`8.6e4`, `6e-8`, `-2e10`),
    never a prefix of a longer number; `inf`, `-inf`, `nan` as such."""
    if math.isnan(x):
        return "nan"
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    for decimals in (2, 1, 0):
        text = f"{x:.{decimals}f}"
        if len(text) <= width and (x == 0 or abs(float(text)) >= 10.0**-decimals):
            return text
    for digits in range(width, 0, -1):
        mantissa, exponent = f"{x:.{digits - 1}e}".split("e")
        text = f"{mantissa}e{int(exponent)}"
        if len(text) <= width:
            return text
    return f"{x:.0e}"


def fmt_val(x: float) -> str:
    """A value beside its reference: enough digits (7) to see an f32 difference."""
    if math.isnan(x):
        return "NaN"
    if math.isinf(x):
        return "+Inf" if x > 0 else "-Inf"
    if x == 0:
        return "-0" if math.copysign(1.0, x) < 0 else "0"
    return f"{x:.7g}"


def fmt_ulp(n: int | None) -> str:
    """A distance in units in the last place: `0 ULP`, `1 ULP`, `1,024 ULP`; `—` when not measured."""
    return NONE if n is None else f"{fmt_int(n)} ULP"


def fmt_ratio(x: float) -> str:
    """How many times one figure is another: `1.23×`, `0.98×`, `12.5×`."""
    if math.isnan(x):
        return NONE
    if math.isinf(x):
        return "∞×"
    return f"{x:.3g}×" if x >= 10 else f"{x:.2f}×"


def fmt_percent(frac: float) -> str:
    """A fraction as a percentage to 2 significant digits below 10 %: `45%`, `3.2%`, `0.41%`."""
    if math.isnan(frac):
        return NONE
    pct = 100 * frac
    if pct == 0 or pct >= 10:
        return f"{pct:.0f}%"
    return f"{pct:.2g}%"


def fmt_num(x: float) -> str:
    """A value of an array (a minimum, a mean, a uniform): 4 significant digits, integers whole."""
    if isinstance(x, int):
        return f"{x:,}"
    if math.isnan(x):
        return "nan"
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    return f"{x:.4g}"


def clip_words(text: str, width: int) -> str:
    """`text` in at most `width` characters: whole if it fits, else cut after its last whole word
    that fits and ended with `…`, so that no number is cut into another (`6.0e-08` never shows as
    `6.0`)."""
    if len(text) <= width:
        return text
    head = text[: max(width - 1, 0)]
    cut = head.rfind(" ")
    return (head[:cut] if cut > 0 else head).rstrip(" ,;:") + "…"


def fmt_grid(grid: Sequence[int]) -> str:
    """A dispatch grid, its workgroup count said once: `1,536 workgroups` for a one-axis grid,
    `8×4×2 = 64 workgroups` otherwise."""
    total = math.prod(grid)
    if all(g == 1 for g in grid[1:]):
        return fmt_count(total, "workgroup")
    return "×".join(map(str, grid)) + " = " + fmt_count(total, "workgroup")


def parse_number(text: str) -> float | int:
    """A number as the command line and the UI form take it: decimal, float, or an integer in
    hex (0x...), binary (0b...) or octal (0o...), as a bit pattern for a u32 field is written."""
    t = text.strip().replace("_", "")
    if not t.isascii():
        raise ValueError(text)  # float() would take other scripts' digits
    body = t.lstrip("+-")
    if body[:2].lower() in ("0x", "0b", "0o"):
        return int(t, 0)
    return float(t)


def whole_number(text: str) -> int | None:
    """`text` as a whole number >= 0 (ASCII digits, `_` between them allowed), else None.

    `str.isdigit()` is not the test: it accepts superscripts and other digits `int()` refuses."""
    digits = text.strip().replace("_", "")
    if not digits or not digits.isascii() or not digits.isdigit():
        return None
    return int(digits)


def shown(text: str) -> str:
    """`text` with every control character but tab (and any other unprintable one) written as an
    escape such as `\\x1b`, so a file name cannot move the cursor, ring the bell, recolour a
    terminal or start a line of its own."""
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() or c == "\t" else ascii(c)[1:-1] for c in text)
