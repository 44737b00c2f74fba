"""Probe runs on the real adapter: records are exactly the values written, in program order for one
invocation; the capacity's overflow is counted; filters keep what they say."""

from __future__ import annotations

import numpy as np
import pytest

from workbench.errors import UserError
from workbench.session import Session
from workbench.workgroups.probes import ProbeFilter, parse_invocation, run_probes


def _acc(gid: int) -> list[float]:
    """The kernel's running sum after each of its four steps, in f32 as it computes it."""
    acc, out = np.float32(0), []
    for k in range(4):
        acc = np.float32(acc + np.float32(gid) * np.float32(0.5) + np.float32(k))
        out.append(float(acc))
    return out


def test_one_invocations_trace_comes_back_in_program_order(inside: Session):
    case = inside.case("probed", dims={"n": 128})
    result = run_probes(inside, case, where=parse_invocation("1,5", case))
    gid = 32 + 5
    acc = _acc(gid)
    assert [r.tag for r in result.records] == [0, 1, 2, 3, 10, 11, 12]
    assert [r.value for r in result.records] == [*acc, gid, -gid, (1.0, 2.0, float(gid), acc[3])]
    assert [r.kind for r in result.records] == ["f32"] * 4 + ["u32", "i32", "vec4<f32>"]
    assert all(r.workgroup == (1, 0, 0) and r.local == (5, 0, 0) for r in result.records)
    orders = [r.order for r in result.records]
    assert orders == sorted(orders) and len(set(orders)) == 7
    assert result.dropped == 0


def test_probe_records_are_exactly_the_values_the_kernel_writes(inside: Session):
    case = inside.case("probed", dims={"n": 128})
    out = inside.run(case, reference=False).outputs["out"]
    result = run_probes(inside, case)
    assert len(result.records) == 128 * 7 and result.dropped == 0
    last = {r.workgroup[0] * 32 + r.local[0]: r.value for r in result.records if r.tag == 3}
    assert sorted(last) == list(range(128))
    assert np.array_equal(np.array([last[i] for i in range(128)], np.float32), out)


def test_a_full_log_counts_what_it_dropped(inside: Session):
    case = inside.case("probed", dims={"n": 128})
    result = run_probes(inside, case, capacity=100)
    assert len(result.records) == 100 and result.dropped == 128 * 7 - 100
    assert result.to_json()["dropped"] == 796 and result.to_json()["capacity"] == 100


def test_one_workgroup_filter_keeps_only_its_invocations(inside: Session):
    case = inside.case("probed", dims={"n": 128})
    result = run_probes(inside, case, where=ProbeFilter(workgroup=2))
    assert len(result.records) == 32 * 7
    assert {r.workgroup for r in result.records} == {(2, 0, 0)}


def test_a_kernel_calling_probes_without_definitions_runs_and_probes(inside: Session):
    case = inside.case("bare", dims={"n": 16})
    out = inside.run(case, reference=False).outputs["out"]
    assert np.array_equal(out, np.arange(16, dtype=np.uint32) * 3)
    result = run_probes(inside, case)
    assert sorted(r.value for r in result.records) == list(range(16))


@pytest.mark.parametrize(
    ("text", "why"),
    [("99", "not in the grid"), ("0,40", "outside the workgroup size"), ("a", "expected WG")],
)
def test_bad_invocations_are_one_clear_error(inside: Session, text, why):
    case = inside.case("probed", dims={"n": 128})
    with pytest.raises(UserError, match=why):
        run_probes(inside, case, where=parse_invocation(text, case))


def test_a_kernel_without_probes_is_refused_with_how_to_add_them(inside: Session):
    with pytest.raises(UserError, match="calls no probe"):
        run_probes(inside, inside.case("cover"))
