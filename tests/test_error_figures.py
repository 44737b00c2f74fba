"""Error figures that agree and say where they come from: max |Δ|, max rel and max ULP each name
the element they are about, rel and ULP are measured only where the relative term of the tolerance
governs, and a ULP is a step of the output's dtype from the reference rounded to it. References are
float64 arrays built here; every expected figure is computed from them independently."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from workbench.checks.comparing import comparison_result
from workbench.closeness import compare
from workbench.fixtures.replay import ReplayResult

AXES = ("s", "h", "d")


def f32_steps(x: float, n: int) -> np.float32:
    """The float32 `n` representable steps above `x`."""
    v = np.float32(x)
    for _ in range(n):
        v = np.nextafter(v, np.float32(np.inf))
    return v


def three_elements() -> tuple[np.ndarray, np.ndarray]:
    """A float64 reference exact in float32 except where noted, and an output with:
    s=1 h=2 d=3: ref 1000, 3 float32 steps off (the largest |Δ| and the most ULP);
    s=1 h=0 d=0: ref 10, 2 steps off (the largest relative error);
    s=0 h=1 d=2: ref 1e-7, output 0 (relative error 1, but atol governs there)."""
    ref = np.arange(24, dtype=np.float64).reshape(2, 3, 4) * 0.25
    ref[1, 2, 3], ref[1, 0, 0], ref[0, 1, 2] = 1000.0, 10.0, 1e-7
    got = ref.astype(np.float32)
    got[1, 2, 3] = f32_steps(1000.0, 3)
    got[1, 0, 0] = f32_steps(10.0, 2)
    got[0, 1, 2] = 0.0
    return got, ref


def test_each_maximum_names_the_element_it_comes_from() -> None:
    got, ref = three_elements()
    cmp = compare("y", got, ref, axes=AXES)
    assert cmp.ok
    diff = np.abs(got.astype(np.float64) - ref)
    assert cmp.at_abs is not None and cmp.at_abs.named == "s=1 h=2 d=3"
    assert cmp.max_abs == diff[1, 2, 3] == pytest.approx(3 * 2.0**-14)  # float32 ulp of 1000
    assert cmp.at_rel is not None and cmp.at_rel.named == "s=1 h=0 d=0"
    assert cmp.max_rel == pytest.approx(2 * 2.0**-20 / 10.0)  # float32 ulp of 10 is 2^-20
    assert cmp.at_ulp is not None and cmp.at_ulp.named == "s=1 h=2 d=3"
    assert cmp.max_ulp == 3 == cmp.at_ulp.ulp
    # Each element's own figures agree with the maximum named after it.
    assert cmp.at_abs.abs_err == cmp.max_abs and cmp.at_rel.rel_err == cmp.max_rel


def test_figures_are_said_once_per_element_with_the_reference() -> None:
    got, ref = three_elements()
    text = compare("y", got, ref, axes=AXES).figures()
    assert text == (
        "max|Δ| 1.8e-04, 3 ULP at s=1 h=2 d=3 (ref 1000); rel 1.9e-07 at s=1 h=0 d=0 (ref 10)"
    )


def test_relative_error_near_zero_is_not_a_scary_one() -> None:
    """The Diff tab showed `max rel 1 max ULP 0` for a tiny |Δ| at a reference near zero."""
    got, ref = three_elements()
    cmp = compare("y", got, ref, axes=AXES)
    assert cmp.max_rel is not None and cmp.max_rel < 1e-6  # s=0 h=1 d=2 (rel 1) is below the floor
    assert cmp.rel_floor == pytest.approx(1e-5 / 1.3e-6)
    # Every reference near zero: no relative figure at all, and the reason said.
    small = np.linspace(-4e-6, 4e-6, 9)
    near = compare("z", np.zeros(9, np.float32), small)
    assert near.ok and near.max_rel is None and near.max_ulp is None
    assert near.at_abs is not None and near.at_abs.named == "i=0"
    assert (
        near.figures()
        == "max|Δ| 4.0e-06 at i=0 (ref -4e-06); rel, ULP — (no element has rtol·|ref| ≥ atol)"
    )
    assert "rel 1" not in near.summary()


def test_ulp_counts_steps_from_the_reference_rounded_to_the_dtype() -> None:
    # 9 + a quarter of float32's step at 9 (2^-20) rounds to 9.0: 5 steps above 9.0 is 5 ULP,
    # although |Δ| is 4.75 steps of the float64 reference.
    ref = np.array([3.0, 9.0 + 2.0**-22])
    got = np.array([3.0, f32_steps(9.0, 5)], dtype=np.float32)
    cmp = compare("w", got, ref, axes=("i",))
    assert cmp.at_ulp is not None and cmp.at_ulp.named == "i=1" and cmp.max_ulp == 5
    assert cmp.max_abs == pytest.approx(4.75 * 2.0**-20)
    assert "float32 steps between the output and the reference rounded to float32" in cmp.about()
    assert "|ref| ≥ 7.69" in cmp.about()


def test_a_large_passing_difference_reads_against_its_reference() -> None:
    """Replay said `grad_up max|Δ| 1.75e+22 (2 ULP)` for a pass: the line now names the element and
    its reference (1e29), so a |Δ| of 1e22 reads as the 2 ULP it is."""
    ref = np.array([1.5e29, -2.0e29, 3.0])
    got = ref.astype(np.float32)
    got[1] = np.nextafter(np.nextafter(got[1], np.float32(0)), np.float32(0))
    cmp = compare("grad_up", got, ref, axes=("i",))
    assert cmp.ok and cmp.max_ulp == 2
    step = float(np.spacing(np.float32(2.0e29)))
    assert cmp.max_abs == pytest.approx(abs(float(got[1]) - ref[1]))
    assert abs(float(got[1]) - float(np.float32(ref[1]))) == pytest.approx(2 * step)
    result = ReplayResult(Path("f.toml"), "f", "pass", comparisons={"grad_up": cmp})
    line = result.worst()
    assert line.startswith("grad_up max|Δ| ") and "2 ULP at i=1 (ref -2e+29)" in line
    assert "rel " in line


def test_the_check_table_and_its_summary_agree() -> None:
    got, ref = three_elements()
    cmp = compare("y", got, ref, axes=AXES)
    res = comparison_result("compare", "y", cmp, got, ref, AXES)
    assert cmp.figures() in res.summary and res.summary.endswith(" ok")
    rows = {r[0]: r for r in res.rows}
    # The largest errors listed within tolerance: rel and ULP where they are measured, else —.
    assert rows["s=1 h=2 d=3"][4:6] == ("1.8e-07", "3")
    assert rows["s=0 h=1 d=2"][4:6] == ("—", "")
    assert res.details["max_abs_at"]["named"] == "s=1 h=2 d=3"
    assert res.details["max_rel_at"]["named"] == "s=1 h=0 d=0"
