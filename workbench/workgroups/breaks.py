"""Conditional breaks over a trace: the first step after which a condition over the invocation's
variables holds (`acc > 1e6`, `isnan(x)`, `i == 17u`).

The condition is WGSL, read by the front end's parser and evaluated on the host over the values
the trace recorded (no GPU work): each name is the value last recorded under it (a variable, a
parameter, a load such as `x[i]`), in float64 for floats. A name not yet recorded makes the
condition false at that step; a name the trace never records is an error naming those it does.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable
from typing import Any

import numpy as np

from workbench.errors import ReflectionError, UserError
from workbench.session import Case, Session
from workbench.wgsl import syntax as s
from workbench.wgsl.parser import parse
from workbench.wgsl.trace import DEFAULT_CAPACITY, instrument_trace
from workbench.workgroups.debug import (
    Step,
    Trace,
    extent,
    invocation_at,
    trace,
    traces_in_range,
)

_BINARY: dict[str, Callable[[Any, Any], Any]] = {
    "+": operator.add,
    "-": operator.sub,
    "*": operator.mul,
    "/": lambda a, b: _divide(a, b, False),
    "%": lambda a, b: _divide(a, b, True),
    "<": operator.lt,
    "<=": operator.le,
    ">": operator.gt,
    ">=": operator.ge,
    "==": operator.eq,
    "!=": operator.ne,
    "&": operator.and_,
    "|": operator.or_,
    "^": operator.xor,
}
_CALLS: dict[str, Callable[[Any], Any]] = {
    "isnan": math.isnan,
    "isinf": math.isinf,
    "abs": abs,
}
_KINDS = ("assign", "param", "loop", "load", "store", "return")


def _divide(a: Any, b: Any, remainder: bool) -> Any:
    """WGSL's `/` and `%`: on integers truncated toward zero, `e1` when dividing by zero; on
    floats IEEE (x / 0 is an infinity, 0 / 0 NaN)."""
    if isinstance(a, int) and isinstance(b, int):
        if b == 0:
            return a if not remainder else 0
        q = abs(a) // abs(b) * (1 if (a < 0) == (b < 0) else -1)
        return a - q * b if remainder else q
    with np.errstate(divide="ignore", invalid="ignore"):
        x, y = np.float64(a), np.float64(b)
        return float(np.fmod(x, y) if remainder else x / y)


class _NotYet(Exception):
    """A name the condition uses has no value yet at this step."""


class Condition:
    """A WGSL expression over the names a trace records, read once; `what` names it in errors
    (`--break`, `watch`)."""

    def __init__(self, text: str, recorded: set[str], what: str = "--break") -> None:
        self.text = text
        self.src = f"fn wb_break() {{ _ = {text}; }}\n"
        try:
            tree = parse(self.src, what)
            body = tree.functions()[0].body.body
        except ReflectionError as e:
            raise UserError(f"{what} {text!r}: not one WGSL expression ({e})") from None
        if len(body) != 1 or not isinstance(body[0], s.Assign):
            raise UserError(f"{what} {text!r}: not one WGSL expression")
        self.expr = body[0].rhs
        _check(self.expr, self.src, what)
        for n in s.walk(self.expr):
            if isinstance(n, s.Ident) and n.template is None and n.name not in _CALLS:
                whole = self.src[n.span[0] : n.span[1]]
                if whole not in recorded and not any(r.startswith(whole + "[") for r in recorded):
                    names = ", ".join(sorted(recorded)) or "none"
                    raise UserError(f"{what}: the trace records no '{whole}' (it records {names})")

    def value(self, env: dict[str, Any]) -> Any:
        """Its value over `env` (name -> value last recorded); None while a name it uses has no
        value yet."""
        try:
            return _eval(self.expr, env, self.src)
        except _NotYet:
            return None
        except TypeError:  # a vector where a scalar is needed (`v > 1.0`): no value
            return None


def recorded(t: Trace) -> set[str]:
    """The names a condition over `t` may use."""
    return {st.name for st in t.steps if st.kind in _KINDS}


def names_a_value(st: Step) -> bool:
    """Whether step `st` gives its name a value a condition can use."""
    return st.kind in _KINDS and not (st.kind == "loop" and st.name == "end")


def see(env: dict[str, Any], st: Step) -> None:
    """Update `env` with the value step `st` records under its name, if any."""
    if names_a_value(st):
        env[st.name] = st.value


def _literal(e: s.Literal) -> Any:
    if e.kind == "bool":
        return e.text == "true"
    text = e.text.rstrip("uifh") if not e.text.startswith("0x") else e.text.rstrip("ui")
    return float(text) if e.kind == "float" else int(text, 0)


def _eval(e: s.Expr, env: dict[str, Any], src: str) -> Any:
    if isinstance(e, s.Literal):
        return _literal(e)
    if isinstance(e, s.Paren):
        return _eval(e.inner, env, src)
    if isinstance(e, (s.Ident, s.Index, s.Member)):
        name = src[e.span[0] : e.span[1]]
        if name in env:
            return env[name]
        # A part of a recorded value: a member, a component (`.x`), a column or an element.
        if isinstance(e, s.Member):
            base = _eval(e.base, env, src)
            if isinstance(base, dict) and e.name in base:
                return base[e.name]
            if isinstance(base, list) and len(e.name) == 1 and e.name in "xyzwrgba":
                return base["xyzwrgba".index(e.name) % 4]
        if isinstance(e, s.Index):
            base = _eval(e.base, env, src)
            k = _eval(e.index, env, src)
            if isinstance(base, list) and isinstance(k, int) and 0 <= k < len(base):
                return base[k]
        raise _NotYet(name)
    if isinstance(e, s.Unary) and e.op in ("-", "!"):
        v = _eval(e.operand, env, src)
        return -v if e.op == "-" else not v
    if isinstance(e, s.Binary):
        if e.op == "&&":
            return _eval(e.lhs, env, src) and _eval(e.rhs, env, src)
        if e.op == "||":
            return _eval(e.lhs, env, src) or _eval(e.rhs, env, src)
        if e.op in _BINARY:
            return _BINARY[e.op](_eval(e.lhs, env, src), _eval(e.rhs, env, src))
    if isinstance(e, s.Call) and e.callee.name in _CALLS and len(e.args) == 1:
        return _CALLS[e.callee.name](_eval(e.args[0], env, src))
    raise AssertionError(f"{type(e).__name__} passed _check")


def _check(e: s.Expr, src: str, what: str) -> None:
    """Refuse, naming it, any part of the expression `_eval` does not evaluate."""
    if isinstance(e, (s.Literal, s.Ident, s.Index, s.Member)):
        return
    if isinstance(e, s.Paren):
        return _check(e.inner, src, what)
    if isinstance(e, s.Unary) and e.op in ("-", "!"):
        return _check(e.operand, src, what)
    if isinstance(e, s.Binary) and (e.op in _BINARY or e.op in ("&&", "||")):
        _check(e.lhs, src, what)
        return _check(e.rhs, src, what)
    if isinstance(e, s.Call) and e.callee.name in _CALLS and len(e.args) == 1:
        return _check(e.args[0], src, what)
    raise UserError(
        f"{what}: {src[e.span[0] : e.span[1]]!r} is not supported (names, numbers, arithmetic, "
        f"comparisons, &&, ||, !, {', '.join(_CALLS)})"
    )


def break_at(t: Trace, text: str) -> int | None:
    """The first step after which `text` holds, or None."""
    return _first(t.steps, Condition(text, recorded(t)))


def _first(steps: list[Step], cond: Condition) -> int | None:
    env: dict[str, Any] = {}
    for st in steps:
        see(env, st)
        if cond.value(env):
            return st.step
    return None


def first_break(
    session: Session, case: Case, text: str, capacity: int = DEFAULT_CAPACITY
) -> tuple[Trace, int, int] | None:
    """Over every invocation of the dispatch, in linear id order, the first in which `text`
    holds after some step: its whole trace (outputs compared), that step, and its linear id.
    None when no invocation meets it.

    Invocations are recorded a range at a time (`MODE_RANGE`), as many as `capacity` records
    hold: a range whose records overflow is halved; an invocation alone that overflows is
    judged on the records kept, as a single trace is."""
    plan = instrument_trace(case.kernel)
    cond = Condition(text, {loc.name for loc in plan.locations if loc.kind in _KINDS})
    total = math.prod(extent(case))
    lo, chunk = 0, 1
    while lo < total:
        hi = min(total, lo + chunk)
        found, attempted = traces_in_range(session, case, plan, capacity, lo, hi)
        if attempted > capacity and hi - lo > 1:
            chunk = max(1, (hi - lo) // 2)
            continue
        for linear in range(lo, hi):
            step = _first(found.get(linear, []), cond)
            if step is not None:
                t = trace(session, case, invocation_at(case, linear), capacity, plan)
                return t, step, linear
        per = max(attempted / (hi - lo), 1.0)
        lo, chunk = hi, max(1, min(4 * chunk, int(0.8 * capacity / per)))
    return None
