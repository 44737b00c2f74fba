"""From a form to a Case: the session plans it (no GPU work), special values are spread in, and
the adapter's limits are checked before anything is allocated."""

from __future__ import annotations

from typing import TYPE_CHECKING

from workbench.errors import LimitError, WorkbenchError
from workbench.viewmodel.advice import ui_message
from workbench.viewmodel.form import FormState, parse_form

if TYPE_CHECKING:
    from workbench.session import Case, Session
    from workbench.specs.base import KernelSpec
    from workbench.wgsl.corpus import Kernel


def build_case(session: Session, kernel: Kernel, spec: KernelSpec | None, state: FormState) -> Case:
    """The case the form describes; WorkbenchError for anything the user can fix."""
    from workbench.checks.special import spread_specials

    parsed = parse_form(state, spec)
    if parsed.problems:
        raise WorkbenchError("; ".join(parsed.problems))
    case = session.case(
        kernel,
        dims=parsed.dims,
        inputs=parsed.inputs,
        sets=parsed.sets,
        seed=parsed.seed,
        adhoc=spec is None,
        grid=parsed.grid,
        overrides=parsed.overrides,
    )
    if parsed.special:
        spread_specials(case)
    return case


def limit_problem(session: Session, case: Case) -> str | None:
    """The adapter limit this case would exceed, said before anything is allocated."""
    refusal = session.limit_refusal(case)
    return f"refused: {ui_message(refusal)}" if refusal else None


def plan_case(
    session: Session, kernel: Kernel, spec: KernelSpec | None, state: FormState
) -> tuple[Case | None, tuple[str, ...]]:
    """The case and the problems that stop it from running (a refusal, a bad recipe…)."""
    try:
        case = build_case(session, kernel, spec, state)
        refusal = limit_problem(session, case)
    except LimitError as exc:
        return None, (f"refused: {ui_message(exc)}",)
    except WorkbenchError as exc:
        return None, (ui_message(exc),)
    except Exception as exc:  # a spec's own bug must not take the UI down; show it
        return None, (f"internal error while planning: {type(exc).__name__}: {exc}",)
    return case, ((refusal,) if refusal else ())
