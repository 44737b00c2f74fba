"""The across-adapters check: the same case (same inputs, same dims) on a second adapter, each
output compared with the first adapter's by the compare metrics.

Each adapter may be off the truth by an output's tolerance, so two adapters may differ by twice
it: the comparison uses 2 x rtol and 2 x atol (bitwise-exact outputs stay exact). A kernel that
needs a feature the second adapter lacks (the OpenGL adapter has neither f16 nor subgroups) is
reported as skipped with the reason, and so is an adapter that cannot run compute shaders at all
(the H100 machine's OpenGL 3.3); one the second adapter cannot compile or run fails, with
the error. The second adapter's own comparison with the reference rides along in the details.
"""

from __future__ import annotations

from collections.abc import Callable

from workbench.checks.comparing import comparison_result
from workbench.checks.result import CheckResult, skipped
from workbench.closeness import Override, compare, tolerance_for
from workbench.errors import WorkbenchError
from workbench.session import Case, Run, Session


def other_session(session: Session, against: str | int | None) -> Session | str:
    """A session on the adapter `against` names (None: the best adapter other than this one),
    or why there is none."""
    if against is None or against == "":
        others = [a for a in Session.adapters() if a.index != session.adapter.index]
        if not others:
            return "there is no second adapter on this machine"
        info = min(others, key=lambda a: (a.is_cpu, a.backend == "OpenGL", a.index))
    else:
        info = Session.choose_adapter(against)
    return session.with_adapter(info, shared=True)


def adapter_results(
    session: Session,
    case: Case,
    against: str | int | None,
    first: Run | None = None,
    override: Override | None = None,
    say: Callable[[str, float], None] | None = None,
) -> list[CheckResult]:
    """One result per output: this adapter's output against the other's."""
    say = say or (lambda _m, _f: None)
    other = other_session(session, against)
    if isinstance(other, str):
        return [skipped("adapters", case.name, other)]
    a, b = session.adapter, other.adapter
    if a.index == b.index:
        return [
            skipped(
                "adapters",
                case.name,
                f"the adapter to compare with is {a.label}, the adapter under test",
            )
        ]
    cannot = other.probe_compute()
    if cannot:
        return [skipped("adapters", case.name, f"{b.label} {cannot}", adapter=b.label)]
    missing = other.missing_features(case.kernel)
    if missing:
        return [
            skipped(
                "adapters",
                case.name,
                f"needs {', '.join(missing)}, which {b.label} lacks",
                adapter=b.label,
                missing_features=list(missing),
            )
        ]
    if first is None:
        say(f"adapters: {a.label}", 0.1)
        first = session.run(case, tolerance=override, reference=case.spec is not None)
    say(f"adapters: {b.label}", 0.5)
    try:
        second = other.run(case, tolerance=override, reference=case.spec is not None)
    except WorkbenchError as exc:
        return [
            CheckResult(
                "adapters",
                case.name,
                False,
                f"{case.name}: {b.label} failed: {exc} FAIL",
                {"adapter": b.label, "error": str(exc)},
            )
        ]
    labels = (b.backend or b.label, a.backend or a.label)
    if labels[0] == labels[1]:
        labels = (f"#{b.index}", f"#{a.index}")
    out = []
    for name, mine in first.outputs.items():
        theirs = second.outputs[name]
        if mine.dtype.names:
            same = bool((mine == theirs).all())
            out.append(
                CheckResult(
                    "adapters",
                    name,
                    same,
                    f"{name}: structured output, {'identical' if same else 'differs'} {'ok' if same else 'FAIL'}",
                )
            )
            continue
        tol = tolerance_for(case.spec, name, case.dims, mine.dtype, override)
        cmp = compare(
            name,
            theirs,
            mine.astype("float64") if mine.dtype.kind == "f" else mine,
            axes=case.plan(name).axes,
            tol=tol.scaled(
                2.0, 2.0, "each adapter may be off the truth by the tolerance: 2 x rtol, 2 x atol"
            ),
        )
        res = comparison_result("adapters", name, cmp, theirs, mine, case.plan(name).axes, labels)
        details = res.details | {
            "adapter": a.label,
            "against": b.label,
            "against_vs_reference": second.compare[name].to_json()
            if name in second.compare
            else None,
        }
        summary = f"{b.backend} vs {a.backend}: {res.summary}"
        out.append(CheckResult("adapters", name, res.ok, summary, details, res.columns, res.rows))
    return out
