"""Sweep an override constant: every value checked against the reference first, then timed.

Each value becomes its own case (through `make_case`, so a grid that follows a workgroup size the
override sets is planned like any other case) with the value passed as a pipeline constant, never
written into the user's file. A value that fails its check, or does not compile, is shown failing
and is never timed, so it can never be the fastest; the rest are timed one after another within
the same budget and sorted by median time.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from workbench.bench.measure import BenchResult, check, place
from workbench.errors import UserError, WorkbenchError
from workbench.session import Budget, Case, Roofline, Session


@dataclass
class SweepResult:
    name: str
    results: list[BenchResult]  # usable ones by median time, then the rest in the order given

    @property
    def best(self) -> BenchResult | None:
        return next((r for r in self.results if r.usable), None)

    def to_json(self) -> dict[str, Any]:
        best = self.best
        return {
            "override": self.name,
            "best": best.label if best else None,
            "variants": [r.to_json() for r in self.results],
        }


def parse_sweep(text: str) -> tuple[str, list[float]]:
    """`NAME=64,128,256` → ("NAME", [64, 128, 256])."""
    name, sep, values = text.partition("=")
    name = name.strip()
    items = [v.strip() for v in values.split(",") if v.strip()]
    if not sep or not name or not items:
        raise UserError(f"--sweep expects NAME=V1,V2,…, got {text!r}")
    out: list[float] = []
    for v in items:
        try:
            x = float(v)
        except ValueError:
            raise UserError(f"--sweep {name}: {v!r} is not a number") from None
        out.append(int(x) if x.is_integer() else x)
    if len(set(out)) != len(out):
        raise UserError(f"--sweep {name}: a value is given twice")
    return name, out


def replan(session: Session, case: Case, overrides: Mapping[str, float]) -> Case:
    """`case` planned again with `overrides` over its own values, the same dims, seed and input
    arrays: a grid that follows a workgroup size an override sets is planned again."""
    return session.case(
        case.kernel,
        dims=case.dims,
        inputs=dict(case.inputs),
        seed=case.seed,
        adhoc=case.spec is None,
        overrides={**case.overrides, **overrides},
    )


def check_override(case: Case, name: str) -> None:
    mod = case.kernel.module
    names = sorted(mod.overrides) if mod else []
    if name not in names:
        raise UserError(
            f"{case.name} has no override constant {name!r}; "
            + (f"its overrides: {', '.join(names)}" if names else "it declares no `override`")
        )


def _rounds(
    say: Callable[[str, float], None], base: float, share: float
) -> Callable[[int, int], None]:
    """Timed rounds, said as their share of the sweep from `base`."""
    return lambda done, total: say("timing", base + share * done / total)


def _warming(say: Callable[[str, float], None], label: str, base: float) -> Callable[[float], None]:
    return lambda _part: say(f"warming up before timing {label}", base)


def _median_ms(r: BenchResult) -> float:
    return r.timing.median_ms if r.timing is not None else math.inf


def sweep(
    session: Session,
    make_case: Callable[[Mapping[str, float]], Case],
    name: str,
    values: Sequence[float],
    budget: Budget,
    roof: Roofline | None,
    progress: Callable[[str, float], None] | None = None,
    cancelled: Callable[[], bool] | None = None,
) -> SweepResult:
    say = progress or (lambda _msg, _frac: None)
    checked: list[BenchResult] = []
    for i, value in enumerate(values):
        label = f"{name}={value}"
        say(f"checking {label}", i / (2 * len(values)))
        case = None
        try:
            case = make_case({name: value})
            checked.append(check(session, case, label))
        except WorkbenchError as exc:
            if case is None:
                raise
            checked.append(BenchResult(label, case, "error", str(exc).splitlines()[0]))
    flush = session.flush_size
    for i, r in enumerate(checked):
        if cancelled is not None and cancelled():
            break
        if r.verdict not in ("pass", "ran"):
            continue
        base = 0.5 + i / (2 * len(checked))
        say(f"timing {r.label}", base)
        timing = session.time_cases(
            [r.case],
            budget,
            _rounds(say, base, 1 / (2 * len(checked))),
            cancelled,
            _warming(say, r.label, base),
        )[0]
        place(r, timing, roof, budget, flush)
    usable = sorted((r for r in checked if r.usable), key=_median_ms)
    rest = [r for r in checked if not r.usable]
    return SweepResult(name, usable + rest)
