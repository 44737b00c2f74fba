"""Issue 31, item 12, one test each below the UI where there is one: cells as wide as the values
(more columns fit), the check-all progress's percentage and count agree, the instrumented module
opens at the kernel's own first line. (The CSV export's one column per axis is in
test_takeaway, the table header's axes in test_app.)"""

from __future__ import annotations

import numpy as np
import pytest

from workbench.cli.check import per_kernel
from workbench.session import Session
from workbench.widgets.array_view import CELL, fmt_cell, value_width
from workbench.workgroups.stepper import WorkgroupStepper

RNG = np.random.default_rng(7)


@pytest.mark.parametrize(
    "data",
    [
        np.arange(256, dtype=np.float32),  # `255`: 3 wide, not 10
        np.arange(-5, 100_000, dtype=np.int32),
        RNG.standard_normal(4096).astype(np.float32),
        RNG.standard_normal(512) * 1e-6,
        np.array([9999.5, -1.234e-4, 1e-30, -np.inf, np.nan, -0.0, 1234.0]),
        np.array([0.5, 0.25, 3.0]),
    ],
)
def test_cells_are_as_wide_as_the_widest_value_and_never_narrower(data: np.ndarray) -> None:
    integer = data.dtype.kind in "iu"
    widest = max(len(fmt_cell(v, integer)) for v in data)
    assert widest <= value_width(data, integer) <= max(widest + 4, 1)
    if data.dtype == np.float32 and data.max() == 255:
        assert value_width(data, integer) + 1 < CELL // 2  # more than twice the columns fit


def test_check_all_progress_is_of_the_whole_run() -> None:
    said: list[tuple[str, float]] = []
    say = per_kernel(lambda msg, frac: said.append((msg, frac)), 16, 17)
    say("gradients", 0.4)
    ((msg, frac),) = said
    assert msg == "[17/17] gradients" and frac == pytest.approx(16.4 / 17)
    per_kernel(lambda msg, frac: said.append((msg, frac)), 0, 17)("compare", 1.0)
    assert said[-1] == ("[1/17] compare", pytest.approx(1 / 17))


def test_the_instrumented_module_opens_at_the_kernels_first_line(session: Session) -> None:
    case = session.case("ffn_swiglu_backward", dims={"seq": 2, "d_ff": 8})
    stepper = WorkgroupStepper(session, case)
    lines = stepper.source().splitlines()
    at = stepper.kernel_line()
    assert at > 1 and lines[at - 1] == "// --- KERNEL: ffn_swiglu_backward ---"
