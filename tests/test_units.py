"""The formatting module: every count, size, duration, rate and ratio the tool shows is written by
`workbench.units`, by one rule per kind of figure."""

from __future__ import annotations

import math

import pytest

from workbench.units import (
    NONE,
    clip_words,
    fmt_bytes,
    fmt_count,
    fmt_err,
    fmt_fit,
    fmt_grid,
    fmt_ms,
    fmt_percent,
    fmt_rate,
    fmt_ratio,
    fmt_seconds,
    fmt_ulp,
    fmt_val,
    plural,
)


@pytest.mark.parametrize(
    ("n", "noun", "text"),
    [
        (1, "workgroup", "1 workgroup"),
        (0, "fixture", "0 fixtures"),
        (1, "fixture", "1 fixture"),
        (1536, "workgroup", "1,536 workgroups"),
        (2, "dispatch", "2 dispatches"),
        (3, "entry", "3 entries"),
        (4, "back-to-back pass", "4 back-to-back passes"),
        (2, "day", "2 days"),
    ],
)
def test_count_has_separators_and_the_right_number(n: int, noun: str, text: str) -> None:
    assert fmt_count(n, noun) == text
    assert plural(1, noun) == noun


@pytest.mark.parametrize(
    ("n", "text"),
    [(0, "0 B"), (1023, "1023 B"), (1024, "1.0 KiB"), (5 << 20, "5.0 MiB"), (3 << 29, "1.5 GiB")],
)
def test_sizes_are_binary(n: int, text: str) -> None:
    assert fmt_bytes(n) == text


@pytest.mark.parametrize(
    ("seconds", "text"),
    [
        (8.12e-7, "812 ns"),
        (1.234e-5, "12.3 µs"),
        (0.141143, "141 ms"),
        (3.2449, "3.24 s"),
        (0.0099996, "10.0 ms"),  # rounds up to the next decade: 3 digits, never `10.00 ms`
        (0.99996, "1.00 s"),  # and to the next unit: never `1000 ms`
        (0.0, "0 s"),
    ],
)
def test_durations_keep_three_significant_digits(seconds: float, text: str) -> None:
    assert fmt_seconds(seconds) == text
    assert fmt_ms(seconds * 1e3) == text


def test_durations_side_by_side_read_alike() -> None:
    """The issue's pair: `141.143 ms` beside `3.24 s` had 6 and 3 significant digits."""
    digits = [sum(c.isdigit() for c in fmt_ms(ms).split()[0]) for ms in (141.143, 3240.0, 0.05)]
    assert digits == [3, 3, 3]


def test_a_duration_that_was_not_measured_is_a_dash() -> None:
    assert fmt_ms(math.nan) == NONE


@pytest.mark.parametrize(
    ("giga", "unit", "text"),
    [
        (1.5, "B", "1.50 GB/s"),
        (0.0123, "B", "12.3 MB/s"),
        (2.5e-5, "FLOP", "25.0 kFLOP/s"),
        (1234.0, "FLOP", "1.23 TFLOP/s"),
        (999.96, "B", "1.00 TB/s"),
    ],
)
def test_rates_take_the_prefix_of_their_magnitude(giga: float, unit: str, text: str) -> None:
    assert fmt_rate(giga, unit) == text


@pytest.mark.parametrize("giga", [0.0, math.nan, None])
def test_a_rate_that_does_not_exist_is_a_dash_not_zero(giga: float | None) -> None:
    """A kernel that does no flops, or a case too small to time, has no rate: `— FLOP/s`."""
    assert fmt_rate(giga, "FLOP") == f"{NONE} FLOP/s"


def test_grid_says_its_workgroup_count_once() -> None:
    assert fmt_grid((1536, 1, 1)) == "1,536 workgroups"
    assert fmt_grid((1, 1, 1)) == "1 workgroup"
    assert fmt_grid((8, 4, 2)) == "8×4×2 = 64 workgroups"


def test_error_value_ulp_ratio_and_percent() -> None:
    assert fmt_err(3.6512e-6) == "3.7e-06"
    assert fmt_err(0.0) == "0"
    assert fmt_val(1 / 3) == "0.3333333"
    assert fmt_val(-0.0) == "-0"
    assert (fmt_ulp(None), fmt_ulp(1), fmt_ulp(2048)) == (NONE, "1 ULP", "2,048 ULP")
    assert (fmt_ratio(1.234), fmt_ratio(12.34)) == ("1.23×", "12.3×")
    assert (fmt_percent(0.45), fmt_percent(0.0041), fmt_percent(0.0)) == ("45%", "0.41%", "0%")


@pytest.mark.parametrize(
    ("x", "width", "text"),
    [
        (0.42, 6, "0.42"),
        (362159.52, 6, "362160"),
        (362159.52, 5, "3.6e5"),
        (85712.3, 5, "85712"),
        (6e-8, 5, "6e-8"),
        (4.4e-6, 6, "4.4e-6"),
        (-2e10, 5, "-2e10"),
        (math.inf, 5, "inf"),
        (-math.inf, 5, "-inf"),
        (math.nan, 5, "nan"),
        (0.0, 5, "0.00"),
    ],
)
def test_fmt_fit_shortens_a_number_and_never_cuts_it(x: float, width: int, text: str) -> None:
    got = fmt_fit(x, width)
    assert got == text and len(got) <= width
    if math.isfinite(x) and x:  # the short form reads as the number, to its digits
        assert math.isclose(float(got), x, rel_tol=0.1)


@pytest.mark.parametrize(
    ("text", "width", "clipped"),
    [
        ("y max|Δ| 6.0e-08 at i=3", 40, "y max|Δ| 6.0e-08 at i=3"),
        ("y max|Δ| 6.0e-08 at i=3", 12, "y max|Δ|…"),
        ("dK max|Δ| 4.4e-06; dV max|Δ| 1e-07", 20, "dK max|Δ| 4.4e-06…"),
    ],
)
def test_clip_words_cuts_after_a_whole_word(text: str, width: int, clipped: str) -> None:
    assert clip_words(text, width) == clipped
    assert len(clipped) <= width
