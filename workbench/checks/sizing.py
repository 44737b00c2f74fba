"""Sizes for checks that run a kernel many times: each spec's small dims, and budgets.

The compare check runs the case as given. Checks that dispatch or evaluate it many times (special
values: a dozen scenarios per input; gradients: two forward evaluations per sample; determinism:
N repeats) run it as given only while it fits a budget, and otherwise at the kernel's small dims
(`KernelSpec.small_dims`, also what `workbench check --quick` uses), saying so in the result. `full=True`
turns the reduction off. Ad-hoc kernels and kernels without small dims keep their size.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from workbench.session import Case, Session
from workbench.specs.base import Dims
from workbench.units import fmt_bytes


@dataclass(frozen=True)
class Budget:
    """The largest case a check runs as given: bytes bound, and flops from the spec's cost."""

    name: str
    max_bytes: int
    max_flops: int


# A few dozen dispatches plus float64 references each: about a MiB of bindings.
SCENARIOS = Budget("scenario", 1 << 20, 1 << 22)
# N repeats of one dispatch: an elementwise kernel of default size (tens of MiB) fits; attention
# at seq 512 (seconds per dispatch on a CPU adapter) does not.
REPEATS = Budget("repeat", 64 << 20, 1 << 26)


def case_bytes(case: Case) -> int:
    return sum(p.nbytes for p in case.bindings if p.role != "uniform")


def fits(case: Case, budget: Budget) -> bool:
    cost = case.cost
    flops = cost.flops if cost else 0
    return case_bytes(case) <= budget.max_bytes and flops <= budget.max_flops


def small_dims(case: Case, override: Mapping[str, int] | None = None) -> dict[str, int] | None:
    """The case's dims with the kernel's small ones laid over; None when none are known."""
    if case.spec is None:
        return None
    small = override or case.spec.small_dims
    if not small:
        return None
    known = {d.name for d in case.spec.dims}
    return {**case.dims, **{k: v for k, v in small.items() if k in known}}


def sized(
    session: Session,
    case: Case,
    budget: Budget,
    override: Mapping[str, int] | None = None,
    full: bool = False,
) -> tuple[Case, str | None]:
    """`case` itself when it fits `budget` (or `full`), else the same kernel at small dims.

    The note says what was done, for the result's summary and details.
    """
    if full or fits(case, budget):
        return case, None
    dims = small_dims(case, override)
    if dims is None:
        return case, (
            f"checked at the case's size ({fmt_bytes(case_bytes(case))}): no smaller dims are "
            "known for this kernel"
        )
    small = session.case(case.kernel, dims=dims, seed=case.seed)
    return small, (
        f"at {dims_text(small.dims)}, not the case's dims: the case ({fmt_bytes(case_bytes(case))}) "
        f"is over the {budget.name} budget ({fmt_bytes(budget.max_bytes)}); a full-size check runs it as "
        "given"
    )


def dims_text(dims: Dims) -> str:
    return " ".join(f"{k}={v}" for k, v in dims.items())
