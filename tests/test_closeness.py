"""What "close" means (`workbench.closeness`), checked against hand-worked values: the precision
table, who set each tolerance value, validation (finite, >= 0, the rtol ceiling unless forced),
the allclose formula with NaN/Inf by position, the tolerance ratio the UI shades, and ULPs."""

from __future__ import annotations

import math

import numpy as np
import pytest

from workbench.closeness import (
    RTOL_CEILING,
    Origin,
    Override,
    ToleranceError,
    bad_mask,
    compare,
    default_tolerance,
    resolve_tolerance,
    tolerance_for,
    tolerance_ratio,
    ulp_distance,
    validate_tolerance,
)
from workbench.errors import Advice, UserError
from workbench.specs.base import KernelSpec, Tol
from workbench.specs.registry import spec_for


def test_the_precision_table_is_torch_testings() -> None:
    assert default_tolerance("float32") == (1.3e-6, 1e-5)
    assert default_tolerance("float16") == (1e-3, 1e-5)
    assert default_tolerance(np.dtype("uint32")) == (0.0, 0.0)


def test_each_value_says_who_set_it() -> None:
    spec = Tol(1e-4, 1e-6, "transcendental")
    t = resolve_tolerance("float32")
    assert (t.rtol, t.atol, t.rtol_from, t.atol_from) == (
        1.3e-6,
        1e-5,
        Origin.DEFAULT,
        Origin.DEFAULT,
    )
    t = resolve_tolerance("float32", spec)
    assert (t.rtol, t.atol, t.why) == (1e-4, 1e-6, "transcendental")
    assert t.rtol_from is t.atol_from is Origin.SPEC
    # A lone user rtol keeps the spec's atol, and says so.
    lone = Override.checked(0.5, None)
    t = resolve_tolerance("float32", spec, lone)
    assert (t.rtol, t.atol) == (0.5, 1e-6)
    assert (t.rtol_from, t.atol_from) == (Origin.USER, Origin.SPEC)
    assert t.describe() == "rtol 0.5 (user), atol 1e-06 (spec)"
    assert "transcendental" in t.why and "rtol given" in t.why
    note = lone.note()
    assert note is not None and "keeps its own atol" in note
    assert Override.checked(0.5, 1e-3).note() is None


def test_tolerance_for_reads_the_spec_at_these_dims() -> None:
    spec = spec_for("rope_q")
    assert spec is not None
    near = tolerance_for(spec, "Q", {**_rope_dims(spec), "pos_offset": 0}, "float32")
    far = tolerance_for(spec, "Q", {**_rope_dims(spec), "pos_offset": 60000}, "float32")
    assert near.atol_from is Origin.SPEC and near.atol < far.atol
    assert tolerance_for(None, "out", {}, "float16").atol_from is Origin.DEFAULT


def _rope_dims(spec: KernelSpec) -> dict[str, int]:
    return spec.resolve_dims({})


@pytest.mark.parametrize(
    ("rtol", "atol", "problem"),
    [
        (math.nan, None, "rtol must be a finite number >= 0, got nan"),
        (None, math.nan, "atol must be a finite number >= 0, got nan"),
        (math.inf, None, "rtol must be a finite number >= 0, got inf"),
        (-1.0, -1.0, "rtol must be a finite number >= 0, got -1.0"),
        (None, -1e-9, "atol must be a finite number >= 0"),
        (1e300, None, "rtol = 1e+300 is over 1"),
        ("0.1", None, "rtol must be a number, got '0.1'"),
        (True, None, "rtol must be a number"),
    ],
)
def test_bad_tolerances_are_refused_with_one_line(rtol: object, atol: object, problem: str) -> None:
    with pytest.raises(ToleranceError) as err:
        Override.checked(rtol, atol)
    assert isinstance(err.value, UserError) and err.value.exit_code == 2
    assert problem in str(err.value) and "\n" not in str(err.value)


def test_the_rtol_ceiling_gives_way_only_when_forced() -> None:
    with pytest.raises(ToleranceError) as err:
        validate_tolerance(RTOL_CEILING * 2, None)
    assert err.value.advice is Advice.FORCE_TOLERANCE
    validate_tolerance(RTOL_CEILING, None)
    validate_tolerance(RTOL_CEILING * 2, None, forced=True)
    # Forcing never admits a NaN or a negative value.
    with pytest.raises(ToleranceError):
        validate_tolerance(math.nan, None, forced=True)
    with pytest.raises(ToleranceError, match="--atol must be"):
        validate_tolerance(None, -1, labels=("--rtol", "--atol"))


def test_allclose_with_nan_and_inf_by_position() -> None:
    ref = np.array([1.0, 100.0, math.nan, math.inf, -math.inf, 0.0, 2.0, math.nan])
    got = np.array([1.0 + 3e-5, 100.001, math.nan, math.inf, math.inf, 1e-5, math.nan, 1.0])
    # Allowed is atol 1e-5 + rtol 1e-5 * |ref|: 2e-5 at element 0 (3e-5 off: out), 1.01e-3 at
    # element 1 (1e-3 off: in), 1e-5 at element 5 (exactly that far: in). NaN matches NaN and
    # +Inf matches +Inf; -Inf against +Inf, NaN against 2 and 1 against NaN are out.
    bad = bad_mask(got, ref, 1e-5, 1e-5)
    assert bad.tolist() == [True, False, False, False, True, False, True, True]
    ratio = tolerance_ratio(got, ref, 1e-5, 1e-5)
    assert ratio[1] == pytest.approx(0.001 / (1e-5 + 1e-3), rel=1e-6)
    assert ratio[5] == pytest.approx(1.0)
    assert ratio[2] == ratio[3] == 0.0
    assert math.isinf(ratio[4]) and math.isinf(ratio[6]) and math.isinf(ratio[7])
    # Where nothing is allowed, any difference is infinitely far; equality is not.
    exact = tolerance_ratio(np.array([3.0, 4.0]), np.array([3.0, 4.5]), 0.0, 0.0)
    assert exact.tolist() == [0.0, math.inf]


def test_compare_counts_and_names_the_worst() -> None:
    ref = np.arange(12, dtype=np.float64).reshape(3, 4)
    got = ref.astype(np.float32)
    got[2, 1] += 0.5
    got[0, 3] = np.nan
    tol = resolve_tolerance("float32", override=Override.checked(0.0, 1e-3))
    cmp = compare("y", got, ref, axes=("row", "col"), tol=tol)
    assert (cmp.n_bad, cmp.n_nonfinite_mismatch, cmp.n_total) == (2, 1, 12)
    assert cmp.worst[0].named == "row=0 col=3" and cmp.worst[0].kind == "non-finite"
    assert cmp.worst[1].named == "row=2 col=1" and cmp.worst[1].abs_err == pytest.approx(0.5)
    assert cmp.rtol_from is Origin.USER and cmp.to_json()["atol_from"] == "user"
    assert cmp.tolerance.describe() == "rtol 0 (user), atol 0.001 (user)"


def test_ulp_distance_in_the_outputs_own_precision() -> None:
    one = np.float32(1.0)
    up = np.nextafter(one, np.float32(2.0))
    got = np.array([one, up, -one, np.float32(0.0)], dtype=np.float32)
    ref = np.array([1.0, 1.0, float(np.nextafter(-one, np.float32(0.0))), -0.0])
    assert ulp_distance(got, ref).tolist() == [0, 1, 1, 0]
    half = np.array([np.float16(1.0) + np.float16(2**-10) * 3], dtype=np.float16)
    assert ulp_distance(half, np.array([1.0])).tolist() == [3]
