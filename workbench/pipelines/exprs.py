"""Integer expressions over named dims, as pipeline files write them: `4 * d_model`,
`cdiv(seq * d_ff, 256)`. Only + - * // % ( ), whole numbers, dim names and the functions cdiv
(ceiling division), min and max are allowed; anything else is refused, nothing is executed."""

from __future__ import annotations

import ast
import warnings
from collections.abc import Callable, Mapping

_FUNCS: dict[str, Callable[..., int]] = {
    "cdiv": lambda a, b: -(-a // b),
    "min": min,
    "max": max,
}
_OPS: dict[type, Callable[[int, int], int]] = {
    ast.Add: lambda a, b: a + b,
    ast.Sub: lambda a, b: a - b,
    ast.Mult: lambda a, b: a * b,
    ast.FloorDiv: lambda a, b: a // b,
    ast.Mod: lambda a, b: a % b,
}


# A pipeline's expressions are short; a longer one is refused before the parser sees it (Python's
# parser recurses once per operator), and every value stays far inside 64 bits.
MAX_LENGTH = 400
MAX_VALUE = 1 << 62


class ExprError(ValueError):
    """An expression that cannot be read or evaluated; the message says why."""


def parse(text: str) -> ast.expr:
    """The expression's tree, checked for allowed forms only."""
    if len(text) > MAX_LENGTH:
        raise ExprError(f"expression of {len(text):,} characters; at most {MAX_LENGTH} are read")
    try:
        # Python's own warnings about the text (`1seq`: invalid decimal literal) would reach the
        # terminal as raw lines; the one-line error below says what matters.
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tree = ast.parse(text.strip(), mode="eval").body
    except (SyntaxError, RecursionError, MemoryError, ValueError):
        raise ExprError(f"{text!r} is not an expression of dims (e.g. 'seq * d_ff')") from None
    for node in ast.walk(tree):
        ok = (
            isinstance(
                node,
                ast.BinOp | ast.UnaryOp | ast.Name | ast.Constant | ast.Call | ast.Load | ast.USub,
            )
            or type(node) in _OPS
        )
        if isinstance(node, ast.Constant) and (
            not isinstance(node.value, int) or isinstance(node.value, bool)
        ):
            ok = False
        if isinstance(node, ast.Call):
            if not (
                isinstance(node.func, ast.Name) and node.func.id in _FUNCS and not node.keywords
            ):
                raise ExprError(f"{text!r}: only {', '.join(_FUNCS)} may be called")
            if any(isinstance(a, ast.Starred) for a in node.args):
                raise ExprError(f"{text!r}: {node.func.id} takes plain arguments")
            if len(node.args) < 2 or (node.func.id == "cdiv" and len(node.args) != 2):
                want = "two" if node.func.id == "cdiv" else "two or more"
                raise ExprError(f"{text!r}: {node.func.id} takes {want} arguments")
        if not ok:
            raise ExprError(
                f"{text!r}: only whole numbers, dim names, + - * // %, and "
                f"{', '.join(_FUNCS)} are allowed"
            )
    return tree


def names(text: str) -> set[str]:
    """The dim names an expression mentions."""
    return {n.id for n in ast.walk(parse(text)) if isinstance(n, ast.Name) and n.id not in _FUNCS}


def evaluate(value: int | str, dims: Mapping[str, int]) -> int:
    """A whole number, or an expression evaluated with `dims`."""
    if isinstance(value, bool):
        raise ExprError(f"{value!r} is not a whole number")
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if not isinstance(value, str):
        raise ExprError(f"{value!r} is not a whole number or an expression of dims")
    return _eval(parse(value), dims, value)


def _eval(node: ast.expr, dims: Mapping[str, int], text: str) -> int:
    value = _value(node, dims, text)
    if abs(value) > MAX_VALUE:
        # Not printed: a literal of hundreds of digits is no float to format.
        raise ExprError(f"{text!r}: a value goes over 2^62 ({MAX_VALUE:,}); use smaller numbers")
    return value


def _value(node: ast.expr, dims: Mapping[str, int], text: str) -> int:
    if isinstance(node, ast.Constant):
        return int(node.value)
    if isinstance(node, ast.Name):
        if node.id not in dims:
            raise ExprError(f"{text!r}: no dim named {node.id!r}")
        return int(dims[node.id])
    if isinstance(node, ast.UnaryOp):
        return -_eval(node.operand, dims, text)
    if isinstance(node, ast.BinOp):
        a, b = _eval(node.left, dims, text), _eval(node.right, dims, text)
        if isinstance(node.op, ast.FloorDiv | ast.Mod) and b == 0:
            raise ExprError(f"{text!r}: division by zero")
        return _OPS[type(node.op)](a, b)
    if isinstance(node, ast.Call):
        args = [_eval(a, dims, text) for a in node.args]
        if node.func.id == "cdiv" and args[1] == 0:  # type: ignore[attr-defined]
            raise ExprError(f"{text!r}: cdiv takes two numbers, the second not 0")
        return _FUNCS[node.func.id](*args)  # type: ignore[attr-defined]
    raise ExprError(f"{text!r} cannot be evaluated")
