"""Searches over a whole dispatch: the first non-finite value made from finite operands, the
first difference between two invocations, and the invocations that wrote an element."""

from __future__ import annotations

import numpy as np
import pytest

from workbench.errors import UserError
from workbench.session import Session
from workbench.workgroups.breaks import first_break
from workbench.workgroups.debug import (
    first_difference,
    first_nonfinite,
    parse_element,
    trace,
    writers,
)


def test_a_planted_nan_is_found_at_its_line_with_its_operands(debug_session: Session):
    num = np.ones(1024, np.float32)
    den = np.ones(1024, np.float32)
    den[[77, 300, 901]] = 0
    case = debug_session.case("planted_nan", inputs={"num": num, "den": den})
    found = first_nonfinite(debug_session, case)
    assert found is not None
    nf, t = found
    assert nf.invocation == (77, 0, 0) and nf.invocations == 3
    assert (nf.step.file, nf.step.line, nf.step.name) == ("planted_nan.wgsl", 9, "q")
    assert nf.operands == {"top": 0.0, "den[i]": 0.0, "i": 77}
    js = nf.to_json()
    assert js["value"] == "NaN" and js["col"] == 5 and js["invocations"] == 3
    assert t.invocation == (77, 0, 0)


def test_a_nan_loaded_from_the_input_is_not_made_by_the_kernel(debug_session: Session):
    num = np.ones(1024, np.float32)
    num[5] = np.nan
    case = debug_session.case("planted_nan", inputs={"num": num, "den": np.ones(1024, np.float32)})
    assert first_nonfinite(debug_session, case) is None


def test_finite_everywhere_finds_nothing(debug_session: Session):
    case = debug_session.case("helper", inputs={"x": np.ones(1024, np.float32)})
    assert first_nonfinite(debug_session, case) is None


def test_compare_names_the_planted_divergence(debug_session: Session):
    x = np.array([1, 2, 3, 4] * 256, np.float32)
    case = debug_session.case("diverge", inputs={"x": x})
    same = first_difference(
        trace(debug_session, case, (2, 0, 0)), trace(debug_session, case, (6, 0, 0))
    )
    assert same is None  # x[2] == x[6 % 4]: the same statements and values
    d = first_difference(
        trace(debug_session, case, (2, 0, 0)), trace(debug_session, case, (3, 0, 0))
    )
    assert d is not None
    assert (d.step, d.line, d.name, d.a, d.b) == (0, 6, "x[gid.x % 4u]", 3.0, 4.0)
    case = debug_session.case("diverge", inputs={"x": np.ones(1024, np.float32)})
    d = first_difference(
        trace(debug_session, case, (2, 0, 0)), trace(debug_session, case, (7, 0, 0))
    )
    assert d is not None and d.why == "control flow"
    assert (d.step, d.line, d.name, d.a, d.b) == (2, 7, "if", 1, 0)
    assert d.to_json() == {
        "step": 2,
        "file": "diverge.wgsl",
        "line": 7,
        "name": "if",
        "a": 1,
        "b": 0,
    }


def test_element_finds_its_writer(debug_session: Session):
    case = debug_session.case("reduce", inputs={"x": np.ones(1024, np.float32)})
    name, flat = parse_element("sums[5]", case)
    found = writers(debug_session, case, name, flat)
    assert [(w.invocation, w.line) for w in found] == [((320, 0, 0), 20)]
    case = debug_session.case("matmul", grid=(4, 4, 1))
    found = writers(debug_session, case, *parse_element("c[200]", case))
    assert [w.invocation for w in found] == [(200 % 32, 200 // 32, 0)]


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("nope[1]", "no binding 'nope'"),
        ("sums[x]", "whole numbers"),
        ("sums[99999]", "outside sums"),
        ("sums", "expected BINDING"),
    ],
)
def test_bad_elements_are_one_clear_error(debug_session: Session, text, why):
    case = debug_session.case("reduce")
    with pytest.raises(UserError, match=why):
        parse_element(text, case)


def test_an_element_of_a_binding_the_kernel_only_reads_is_refused(debug_session: Session):
    case = debug_session.case("reduce")
    with pytest.raises(UserError, match="not a binding the kernel writes"):
        writers(debug_session, case, "x", 3)


def test_break_any_names_the_first_invocation_where_the_condition_holds(debug_session: Session):
    rng = np.random.default_rng(5)
    x = rng.standard_normal(1024).astype(np.float32)
    x[[40, 700]] = -3.0  # s = v * 0.5 + 1.0 < 0 in the first call to scale: x < -2
    x[:40] = np.clip(x[:40], -1.5, None)
    case = debug_session.case("helper", inputs={"x": x})
    # The first call computes s = x * 0.5 + 1.0 in f32; the second is scale(a, -0.25) with
    # a = s * s >= 0, so s = 1 - a / 4 can be negative too: replay both in f32.
    half, quarter, one = np.float32(0.5), np.float32(-0.25), np.float32(1.0)
    s1 = x * half + one
    a = s1 * s1
    s2 = a * quarter + one
    expect = int(np.flatnonzero((s1 < 0) | (s2 < 0))[0])
    # A small capacity: the search goes a few invocations per dispatch.
    found = first_break(debug_session, case, "s < 0.0", capacity=64)
    assert found is not None
    t, step, linear = found
    assert linear == expect and t.invocation == (expect, 0, 0)
    assert t.steps[step].name == "s" and t.steps[step].value < 0
    assert first_break(debug_session, case, "s > 1e30") is None
    with pytest.raises(UserError, match="records no 'nosuch'"):
        first_break(debug_session, case, "nosuch > 1.0")
