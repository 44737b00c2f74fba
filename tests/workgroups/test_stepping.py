"""Stepping one dispatch by workgroup on the real adapter: buffers persist between steps, back
undoes a step, and a barrier kernel stepped to the end equals one full dispatch."""

from __future__ import annotations

import numpy as np

from workbench.session import Session
from workbench.workgroups.stepper import WorkgroupStepper


def _reversed_tiles(x: np.ndarray) -> np.ndarray:
    """The float64 reference of `reverse_tiles`: each 64-element tile reversed, doubled."""
    return (x.astype(np.float64).reshape(-1, 64)[:, ::-1] * 2.0).reshape(-1)


def test_a_barrier_kernel_stepped_by_workgroup_equals_one_full_dispatch(inside: Session):
    case = inside.case("reverse_tiles", dims={"n": 512})
    full = inside.run(case, reference=False).outputs["y"]
    stepper = WorkgroupStepper(inside, case)
    assert stepper.total == 8
    last = stepper.run_to_end()
    assert stepper.finished and last.done == 8
    assert np.array_equal(last.buffers["y"].view(np.uint32), full.view(np.uint32))
    assert np.array_equal(full.astype(np.float64), _reversed_tiles(case.inputs["x"]))


def test_each_step_writes_its_own_workgroups_elements_over_the_previous_state(inside: Session):
    case = inside.case("reverse_tiles", dims={"n": 512})
    want = _reversed_tiles(case.inputs["x"])
    stepper = WorkgroupStepper(inside, case)
    first = stepper.step()
    assert (first.lo, first.hi) == (0, 1)
    assert np.array_equal(first.changed["y"], np.arange(64))
    two = stepper.step(2)
    assert (two.lo, two.hi) == (1, 3)
    assert np.array_equal(two.changed["y"], np.arange(64, 192))
    y = two.buffers["y"].astype(np.float64)
    assert np.array_equal(y[:192], want[:192]) and not y[192:].any()
    # Back returns to the state before the last step, and stepping again redoes it.
    back = stepper.back()
    assert back is first and back.done == 1
    assert np.array_equal(stepper.step(2).buffers["y"], two.buffers["y"])


def test_back_at_the_start_does_nothing_and_steps_stop_at_the_end(inside: Session):
    case = inside.case("reverse_tiles", dims={"n": 128})
    stepper = WorkgroupStepper(inside, case)
    assert stepper.back() is None
    stepper.step(5)
    assert stepper.finished and stepper.step() is stepper.current


def test_a_scatter_builds_up_step_by_step(inside: Session):
    case = inside.case("overlap", dims={"n": 256})
    stepper = WorkgroupStepper(inside, case)
    seen = []
    for _ in range(stepper.total):
        seen.append(stepper.step().buffers["out"].copy())
    # Workgroup w writes 64 w .. 64 w + 64: the shared element holds the later workgroup's id.
    assert seen[0][64] == 0 and seen[1][64] == 1
    assert np.array_equal(seen[-1], np.repeat(np.arange(4, dtype=np.float32), 64))


def test_the_instrumented_source_is_viewable_and_the_guard_is_at_a_free_binding(inside: Session):
    stepper = WorkgroupStepper(inside, inside.case("reverse_tiles"))
    text = stepper.source()
    assert "@group(0) @binding(2) var<uniform> wb_range: vec4<u32>;" in text
    assert "if (!wb_selected(wg, wb_nwg)) { return; }" in text
