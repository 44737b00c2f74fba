"""Operations on typed WGSL values: the type each operator, constructor and builtin gives, and its
value when every operand is a known constant (const-expression evaluation).

A `Typed` pairs a `WType` with a value, or None when the value is not known (a runtime value, an
override without a value yet, or something this evaluator does not do). Values are Python ints
(integers), floats, bools, and tuples for vectors, matrices (columns), arrays and structs.

Nothing here raises for bad input: what the spec calls a shader-creation error (overflow, a
division by zero, a shift too far, mismatched operands) gives an unknown value or type, and the
compiler, which judges legality, says what is wrong.
"""

from __future__ import annotations

import math
import struct
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from workbench.wgsl.types import (
    ABSTRACT_FLOAT,
    ABSTRACT_INT,
    BOOL,
    FLOATS,
    INTEGERS,
    UNKNOWN,
    WType,
    make_array,
    make_matrix,
    make_scalar,
    make_struct,
    make_vector,
)

Value = int | float | bool | tuple["Value", ...]
_RANGES = {"i32": (-(1 << 31), 1 << 31), "u32": (0, 1 << 32), ABSTRACT_INT: (-(1 << 63), 1 << 63)}
_F16_MAX = 65504.0


@dataclass(frozen=True, slots=True)
class Typed:
    """A type and, for a known constant, its value."""

    type: WType
    value: Value | None = None

    def retyped(self, t: WType) -> Typed:
        return Typed(t, self.value)


UNKNOWN_TYPED = Typed(UNKNOWN)
VOID = WType("void", "void")  # what a call that returns nothing gives
ABSTRACT_INT_T = make_scalar(ABSTRACT_INT)
ABSTRACT_FLOAT_T = make_scalar(ABSTRACT_FLOAT)


def literal(text: str, kind: str) -> Typed:
    """The type and value of a literal as written (`1`, `2u`, `0x1fi`, `1.5e3f`, `2h`, `true`)."""
    if kind == "bool":
        return Typed(BOOL, text == "true")
    try:
        if kind == "int":
            suffix = text[-1] if text[-1] in "iu" else ""
            digits = text[:-1] if suffix else text
            value = int(digits, 16) if digits[:2] in ("0x", "0X") else int(digits, 10)
            scalar = {"i": "i32", "u": "u32"}.get(suffix, ABSTRACT_INT)
            return _checked(make_scalar(scalar), value)
        hexa = text[:2] in ("0x", "0X")
        suffix = text[-1] if text[-1] in "fh" and (not hexa or "p" in text.lower()) else ""
        digits = text[:-1] if suffix else text
        if hexa:
            number = float.fromhex(digits if "p" in digits.lower() else digits + "p0")
        else:
            number = float(digits)
        scalar = {"f": "f32", "h": "f16"}.get(suffix, ABSTRACT_FLOAT)
        return _checked(make_scalar(scalar), number)
    except (ValueError, OverflowError):
        return UNKNOWN_TYPED


def _checked(t: WType, value: Value | None) -> Typed:
    """`value` as a value of scalar type `t`, or unknown when it does not fit."""
    if value is None:
        return Typed(t)
    fitted = _fit(t.text, value)
    return Typed(t, fitted)


def _fit(scalar: str, value: Value) -> Value | None:
    if isinstance(value, tuple):
        parts = [_fit(scalar, v) for v in value]
        return None if any(p is None for p in parts) else tuple(p for p in parts if p is not None)
    if scalar in _RANGES:
        if isinstance(value, bool) or not isinstance(value, int):
            return None
        lo, hi = _RANGES[scalar]
        return value if lo <= value < hi else None
    if scalar in FLOATS:
        if isinstance(value, bool):
            return None
        f = float(value)
        if not math.isfinite(f):
            return None
        if scalar == "f32":
            try:
                return float(struct.unpack("<f", struct.pack("<f", f))[0])
            except OverflowError:
                return None
        if scalar == "f16":
            return f if abs(f) <= _F16_MAX else None
        return f
    if scalar == "bool":
        return value if isinstance(value, bool) else None
    return None


# -- types ---------------------------------------------------------------------------------------


def element_scalar(t: WType) -> str | None:
    """The scalar of a scalar or vector type (None for others)."""
    if t.kind in ("scalar", "vector"):
        return t.scalar
    return None


def with_scalar(t: WType, scalar: str) -> WType:
    """`t` with its scalar replaced (a scalar, vector, matrix or array of them)."""
    if t.kind == "scalar":
        return make_scalar(scalar)
    if t.kind == "vector":
        return make_vector(t.count or 4, scalar)
    if t.kind == "matrix":
        return make_matrix(t.count or 4, t.rows, scalar)
    if t.kind == "array" and t.element is not None:
        return make_array(with_scalar(t.element, scalar), t.count)
    return t


def concrete(t: WType) -> WType:
    """The concrete type an abstract one takes where no other type decides (i32, f32)."""
    if t.scalar == ABSTRACT_INT:
        return with_scalar(t, "i32")
    if t.scalar == ABSTRACT_FLOAT:
        return with_scalar(t, "f32")
    return t


def unify_scalars(a: str, b: str) -> str | None:
    """The scalar both operands convert to, if any (abstract ones convert to concrete ones)."""
    if a == b:
        return a
    if a == ABSTRACT_INT and (b in INTEGERS or b in FLOATS):
        return b
    if b == ABSTRACT_INT and (a in INTEGERS or a in FLOATS):
        return a
    if a == ABSTRACT_FLOAT and b in FLOATS:
        return b
    if b == ABSTRACT_FLOAT and a in FLOATS:
        return a
    return None


def convert(v: Typed, scalar: str) -> Typed:
    """`v` converted to `scalar` the way an abstract value converts automatically."""
    t = with_scalar(v.type, scalar)
    if v.value is None:
        return Typed(t)
    if scalar in FLOATS:
        return _checked(make_scalar(scalar), _floats(v.value)).retyped(t)
    return _checked(make_scalar(scalar), v.value).retyped(t)


def _floats(v: Value) -> Value:
    if isinstance(v, tuple):
        return tuple(_floats(x) for x in v)
    return float(v)


# -- operators -----------------------------------------------------------------------------------


def _zip(a: Value, b: Value, f: Callable[[Value, Value], Value]) -> Value:
    if isinstance(a, tuple) and isinstance(b, tuple):
        return tuple(_zip(x, y, f) for x, y in zip(a, b, strict=True))
    if isinstance(a, tuple):
        return tuple(_zip(x, b, f) for x in a)
    if isinstance(b, tuple):
        return tuple(_zip(a, y, f) for y in b)
    return f(a, b)


def _each(a: Value, f: Callable[[Value], Value]) -> Value:
    if isinstance(a, tuple):
        return tuple(_each(x, f) for x in a)
    return f(a)


def _number(v: Value) -> float | int:
    """A scalar value as a number (a tuple where a scalar belongs is an operand no rule fits)."""
    if isinstance(v, tuple):
        raise TypeError("a composite where a scalar belongs")
    return v


class _Undefined(Exception):
    """An operation whose result the spec leaves to the compiler to reject (x / 0, overflow)."""


def _int_div(a: int, b: int) -> int:
    if b == 0:
        raise _Undefined
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


def _int_rem(a: int, b: int) -> int:
    return a - b * _int_div(a, b)


def _arith(op: str, scalar: str) -> Callable[[Value, Value], Value]:
    is_int = scalar in INTEGERS

    def f(x: Value, y: Value) -> Value:
        assert isinstance(x, (int, float)) and isinstance(y, (int, float))
        if op == "+":
            return x + y
        if op == "-":
            return x - y
        if op == "*":
            return x * y
        if op == "/":
            if is_int:
                return _int_div(int(x), int(y))
            if y == 0:
                raise _Undefined
            return x / y
        if is_int:
            return _int_rem(int(x), int(y))
        if y == 0:
            raise _Undefined
        return math.fmod(x, y)

    return f


def _bits(op: str, scalar: str) -> Callable[[Value, Value], Value]:
    def f(x: Value, y: Value) -> Value:
        if isinstance(x, bool) or isinstance(y, bool):
            xb, yb = bool(x), bool(y)
            return {"&": xb and yb, "|": xb or yb, "^": xb != yb}[op]
        assert isinstance(x, int) and isinstance(y, int)
        r = {"&": x & y, "|": x | y, "^": x ^ y}[op]
        return r

    return f


def _shift(op: str, scalar: str) -> Callable[[Value, Value], Value]:
    width = 32 if scalar in ("i32", "u32") else 64

    def f(x: Value, y: Value) -> Value:
        assert isinstance(x, int) and isinstance(y, int)
        if not 0 <= y < width:
            raise _Undefined
        return x << y if op == "<<" else x >> y

    return f


_COMPARE: dict[str, Callable[[Value, Value], Value]] = {
    "==": lambda x, y: x == y,
    "!=": lambda x, y: x != y,
    "<": lambda x, y: x < y,  # type: ignore[operator]
    ">": lambda x, y: x > y,  # type: ignore[operator]
    "<=": lambda x, y: x <= y,  # type: ignore[operator]
    ">=": lambda x, y: x >= y,  # type: ignore[operator]
}


def binary(op: str, a: Typed, b: Typed) -> Typed:
    """`a op b`: its type, and its value when both are known."""
    ta, tb = a.type, b.type
    if op in ("&&", "||"):
        if a.value is not None and b.value is not None:
            return Typed(
                BOOL,
                bool(a.value) and bool(b.value) if op == "&&" else bool(a.value) or bool(b.value),
            )
        return Typed(BOOL)
    if ta.kind == "matrix" or tb.kind == "matrix":
        return Typed(_matrix_result(op, ta, tb))
    sa, sb = element_scalar(ta), element_scalar(tb)
    if sa is None or sb is None:
        return UNKNOWN_TYPED
    if op in ("<<", ">>"):
        # The shift's type is the left operand's; the right one is u32 (or abstract).
        result_t = ta if sa != ABSTRACT_INT or sb == ABSTRACT_INT else with_scalar(ta, sa)
        return _apply(result_t, a.value, b.value, _shift(op, sa), sa)
    scalar = unify_scalars(sa, sb)
    if scalar is None:
        return UNKNOWN_TYPED
    width = ta.count if ta.kind == "vector" else tb.count if tb.kind == "vector" else None
    if ta.kind == "vector" and tb.kind == "vector" and ta.count != tb.count:
        return UNKNOWN_TYPED
    a2, b2 = convert(a, scalar), convert(b, scalar)
    operand_t = make_vector(width, scalar) if width else make_scalar(scalar)
    if op in _COMPARE:
        result_t = make_vector(width, "bool") if width else BOOL
        return _apply(result_t, a2.value, b2.value, _COMPARE[op], "bool")
    if op in ("&", "|", "^"):
        return _apply(operand_t, a2.value, b2.value, _bits(op, scalar), scalar)
    return _apply(operand_t, a2.value, b2.value, _arith(op, scalar), scalar)


def _apply(
    t: WType, x: Value | None, y: Value | None, f: Callable[[Value, Value], Value], scalar: str
) -> Typed:
    if x is None or y is None:
        return Typed(t)
    try:
        value = _zip(x, y, f)
    except (_Undefined, ArithmeticError, ValueError, TypeError, AssertionError):
        return Typed(t)
    return Typed(t, _fit(scalar, value) if scalar != "bool" else value)


def _matrix_result(op: str, ta: WType, tb: WType) -> WType:
    if op in ("+", "-") and ta.kind == tb.kind == "matrix":
        return ta
    if op != "*":
        return UNKNOWN
    if ta.kind == "matrix" and tb.kind == "matrix":
        return make_matrix(tb.count or 4, ta.rows, ta.scalar or "f32")
    if ta.kind == "matrix" and tb.kind == "vector":
        return make_vector(ta.rows, ta.scalar or "f32")
    if ta.kind == "vector" and tb.kind == "matrix":
        return make_vector(tb.count or 4, tb.scalar or "f32")
    return ta if ta.kind == "matrix" else tb


def unary(op: str, a: Typed) -> Typed:
    """`op a` for `-`, `!`, `~` (pointers are the checker's)."""
    t = a.type
    scalar = element_scalar(t)
    if t.kind == "matrix" and op == "-":
        return Typed(t)
    if scalar is None:
        return UNKNOWN_TYPED
    if a.value is None:
        return Typed(t)
    try:
        if op == "-":
            value = _each(a.value, lambda x: -x)  # type: ignore[operator]
        elif op == "!":
            value = _each(a.value, lambda x: not x)
        elif scalar == "u32":
            value = _each(a.value, lambda x: 0xFFFFFFFF ^ int(_number(x)))
        else:
            value = _each(a.value, lambda x: ~int(_number(x)))
    except (TypeError, ValueError):
        return Typed(t)
    return Typed(t, _fit(scalar, value) if scalar != "bool" else value)


# -- constructors and builtins -------------------------------------------------------------------


def _flat(args: Sequence[Typed]) -> list[Value] | None:
    """The components of the arguments, vectors spread out (None if any is unknown)."""
    out: list[Value] = []
    for a in args:
        if a.value is None:
            return None
        if a.type.kind == "vector" and isinstance(a.value, tuple):
            out.extend(a.value)
        else:
            out.append(a.value)
    return out


def _convert_value(v: Value, src: str, dst: str) -> Value | None:
    """A value conversion `dst(v)` between scalars (the spec's conversion rules)."""
    if isinstance(v, tuple):
        parts = [_convert_value(x, src, dst) for x in v]
        return None if any(p is None for p in parts) else tuple(p for p in parts if p is not None)
    if dst == "bool":
        return bool(v)
    if dst in FLOATS:
        return _fit(dst, float(v))
    if isinstance(v, float):
        if not math.isfinite(v):
            return None
        lo, hi = _RANGES[dst]
        return min(max(int(v), lo), hi - 1)
    iv = int(v)
    if src in ("i32", "u32") and dst in ("i32", "u32"):
        iv &= 0xFFFFFFFF
        return iv - (1 << 32) if dst == "i32" and iv >= 1 << 31 else iv
    return _fit(dst, iv)


def construct(t: WType, args: Sequence[Typed]) -> Typed:
    """`T(args)` for a scalar, vector, matrix, array or struct type `t` (zero values too)."""
    if t.kind == "unknown":
        return UNKNOWN_TYPED
    if not args:
        return Typed(t, _zero(t))
    if t.kind == "scalar":
        a = args[0]
        src = element_scalar(a.type)
        if a.value is None or src is None or len(args) != 1:
            return Typed(t)
        return Typed(t, _convert_value(a.value, src, t.scalar or ""))
    if t.kind == "vector":
        n, scalar = t.count or 4, t.scalar or ""
        if len(args) == 1 and args[0].type.kind == "vector":
            a = args[0]
            src = element_scalar(a.type) or ""
            value = None if a.value is None else _convert_value(a.value, src, scalar)
            return Typed(t, value)
        if len(args) == 1 and args[0].type.kind == "scalar":
            a = args[0]
            one = None if a.value is None else _convert_value(a.value, a.type.scalar or "", scalar)
            return Typed(t, None if one is None else tuple(one for _ in range(n)))
        flat = _flat([convert(a, scalar) for a in args])
        return Typed(t, tuple(flat) if flat is not None and len(flat) == n else None)
    if t.kind == "matrix":
        cols, rows, scalar = t.count or 4, t.rows, t.scalar or ""
        if len(args) == 1 and args[0].type.kind == "matrix":
            a = args[0]
            src = a.type.scalar or ""
            return Typed(t, None if a.value is None else _convert_value(a.value, src, scalar))
        flat = _flat([convert(a, scalar) for a in args])
        if flat is None or len(flat) != cols * rows:
            return Typed(t)
        return Typed(t, tuple(tuple(flat[c * rows : (c + 1) * rows]) for c in range(cols)))
    if t.kind in ("array", "struct"):
        values = [a.value for a in args]
        if any(v is None for v in values):
            return Typed(t)
        return Typed(t, tuple(v for v in values if v is not None))
    return Typed(t)


def infer_constructed(name: str, args: Sequence[Typed]) -> WType:
    """The type of `vec3(...)`, `array(...)`, `mat2x2(...)` written without a template."""
    if not args:
        return UNKNOWN
    first = args[0].type
    if name == "array":
        elements = [a.type for a in args]
        scalar = first.scalar
        for e in elements[1:]:
            scalar = unify_scalars(scalar or "", e.scalar or "") if scalar else None
        if first.kind in ("scalar", "vector") and scalar:
            return make_array(with_scalar(first, scalar), len(args))
        return make_array(first, len(args))
    scalar = None
    for a in args:
        s = element_scalar(a.type) if a.type.kind != "matrix" else a.type.scalar
        if s is None:
            return UNKNOWN
        scalar = s if scalar is None else unify_scalars(scalar, s)
        if scalar is None:
            return UNKNOWN
    assert scalar is not None
    if name.startswith("vec"):
        return make_vector(int(name[3]), scalar)
    return make_matrix(int(name[3]), int(name[5]), scalar)


def _zero(t: WType) -> Value | None:
    if t.kind == "scalar":
        return False if t.scalar == "bool" else 0.0 if t.scalar in FLOATS else 0
    if t.kind == "vector" and t.scalar:
        z = _zero(make_scalar(t.scalar))
        return None if z is None else tuple(z for _ in range(t.count or 4))
    if t.kind == "matrix" and t.scalar:
        col = _zero(make_vector(t.rows, t.scalar))
        return None if col is None else tuple(col for _ in range(t.count or 4))
    if t.kind == "array" and t.element is not None and t.count:
        z = _zero(t.element)
        return None if z is None else tuple(z for _ in range(t.count))
    if t.kind == "struct":
        parts = [_zero(m.type) for m in t.members]
        return None if any(p is None for p in parts) else tuple(p for p in parts if p is not None)
    return None


_FLOAT_FNS: dict[str, Callable[[float], float]] = {
    "floor": math.floor,
    "ceil": math.ceil,
    "trunc": math.trunc,
    "round": lambda x: float(round(x)),
    "sqrt": math.sqrt,
    "inverseSqrt": lambda x: 1 / math.sqrt(x),
    "exp": math.exp,
    "exp2": lambda x: 2.0**x,
    "log": math.log,
    "log2": math.log2,
    "sin": math.sin,
    "cos": math.cos,
    "tan": math.tan,
    "asin": math.asin,
    "acos": math.acos,
    "atan": math.atan,
    "sinh": math.sinh,
    "cosh": math.cosh,
    "tanh": math.tanh,
    "fract": lambda x: x - math.floor(x),
    "saturate": lambda x: min(max(x, 0.0), 1.0),
    "radians": math.radians,
    "degrees": math.degrees,
}
# Builtins whose result has the type of their (unified) arguments.
SAME_TYPE = frozenset(
    set(_FLOAT_FNS)
    | {"abs", "min", "max", "clamp", "sign", "fma", "mix", "step", "smoothstep", "pow", "atan2"}
    | {"countOneBits", "reverseBits", "firstLeadingBit", "firstTrailingBit", "countLeadingZeros"}
    | {"countTrailingZeros", "extractBits", "insertBits", "normalize", "faceForward", "reflect"}
    | {"refract", "dpdx", "dpdy", "fwidth", "quantizeToF16", "ldexp"}
)


def builtin(name: str, args: Sequence[Typed]) -> Typed | None:
    """The type (and value, for constants) of a call of builtin function `name`; None when `name`
    is no builtin this knows."""
    if name in SAME_TYPE:
        return _same_type(name, args)
    if name == "select" and len(args) == 3:
        f, t, c = args
        scalar = unify_scalars(element_scalar(f.type) or "", element_scalar(t.type) or "")
        if scalar is None:
            return Typed(f.type)
        f2, t2 = convert(f, scalar), convert(t, scalar)
        if f2.value is None or t2.value is None or c.value is None:
            return Typed(f2.type)
        if isinstance(c.value, tuple):
            fv, tv = f2.value, t2.value
            assert isinstance(fv, tuple) and isinstance(tv, tuple)
            return Typed(
                f2.type, tuple(y if k else x for x, y, k in zip(fv, tv, c.value, strict=False))
            )
        return Typed(f2.type, t2.value if c.value else f2.value)
    if name in ("all", "any"):
        if args and args[0].value is not None:
            v = args[0].value
            items = v if isinstance(v, tuple) else (v,)
            return Typed(BOOL, all(items) if name == "all" else any(items))
        return Typed(BOOL)
    if name in ("dot", "length", "distance", "determinant"):
        if not args:
            return UNKNOWN_TYPED
        rt = make_scalar(args[0].type.scalar or "f32")
        first = args[0].value
        second = args[1].value if len(args) > 1 else None
        try:
            if name == "dot" and isinstance(first, tuple) and isinstance(second, tuple):
                products = [_number(x) * _number(y) for x, y in zip(first, second, strict=True)]
                return _checked(rt, sum(products))
            if name == "length" and first is not None:
                items = first if isinstance(first, tuple) else (first,)
                return _checked(rt, math.sqrt(sum(_number(c) ** 2 for c in items)))
        except (TypeError, ValueError, ArithmeticError):
            return Typed(rt)
        return Typed(rt)
    if name == "cross" and args:
        return Typed(args[0].type)
    if name == "transpose" and args and args[0].type.kind == "matrix":
        m = args[0].type
        return Typed(make_matrix(m.rows, m.count or 4, m.scalar or "f32"))
    if name == "arrayLength" or name.startswith("pack"):
        return Typed(make_scalar("u32"))
    if name.startswith("unpack"):
        width = 4 if "4x" in name else 2
        scalar = "i32" if "I8" in name and "4xI" in name else "u32" if "4xU" in name else "f32"
        return Typed(make_vector(width, scalar))
    if name in ("atomicLoad", "atomicAdd", "atomicSub", "atomicMax", "atomicMin"):
        return _atomic_result(args)
    if name in ("atomicAnd", "atomicOr", "atomicXor", "atomicExchange"):
        return _atomic_result(args)
    if name == "atomicStore":
        return Typed(VOID)
    if name == "atomicCompareExchangeWeak":
        inner = _atomic_result(args).type
        if inner.kind == "unknown":
            return UNKNOWN_TYPED
        fields = [("old_value", inner), ("exchanged", BOOL)]
        return Typed(make_struct(f"__atomic_compare_exchange_result<{inner.text}>", fields))
    if name in ("workgroupUniformLoad",) and args:
        pointee = args[0].type.element
        return Typed(
            pointee.element
            if pointee and pointee.kind == "atomic" and pointee.element
            else pointee or UNKNOWN
        )
    texture = next((a.type for a in args if a.type.kind == "texture"), None)
    if texture is not None and name.startswith("texture"):
        return _texture_call(name, texture)
    if name in ("storageBarrier", "workgroupBarrier", "textureBarrier", "subgroupBarrier"):
        return Typed(VOID)
    if name.startswith(("subgroup", "quad")):
        if name in ("subgroupBallot",):
            return Typed(make_vector(4, "u32"))
        if name in ("subgroupElect", "subgroupAll", "subgroupAny"):
            return Typed(BOOL)
        return Typed(concrete(args[0].type)) if args else UNKNOWN_TYPED
    return None


_TEXTURE_COUNTS = frozenset({"textureNumLayers", "textureNumLevels", "textureNumSamples"})
# Texture reads whose result is a texel: one f32 from a depth texture, else a vec4 of the
# texture's channel type (WGSL spec, "Texture Built-in Functions").
_TEXEL_READS = frozenset(
    {
        "textureLoad",
        "textureSample",
        "textureSampleBias",
        "textureSampleGrad",
        "textureSampleLevel",
        "textureSampleBaseClampToEdge",
    }
)


def _texture_call(name: str, texture: WType) -> Typed | None:
    """The type of a texture builtin's result on `texture`; None for a name this does not know."""
    if name == "textureDimensions":
        n = texture.count or 2
        return Typed(make_scalar("u32") if n == 1 else make_vector(n, "u32"))
    if name in _TEXTURE_COUNTS:
        return Typed(make_scalar("u32"))
    if name == "textureStore":
        return Typed(VOID)
    if name in ("textureSampleCompare", "textureSampleCompareLevel"):
        return Typed(make_scalar("f32"))
    if name in _TEXEL_READS:
        if texture.text.startswith("texture_depth_"):
            return Typed(make_scalar("f32"))
        return Typed(make_vector(4, texture.scalar or "f32"))
    if name in ("textureGather", "textureGatherCompare"):
        return Typed(make_vector(4, texture.scalar or "f32"))
    return None


def _atomic_result(args: Sequence[Typed]) -> Typed:
    if not args:
        return UNKNOWN_TYPED
    pointee = args[0].type.element
    if pointee is not None and pointee.kind == "atomic" and pointee.element is not None:
        return Typed(pointee.element)
    return UNKNOWN_TYPED


def _same_type(name: str, args: Sequence[Typed]) -> Typed:
    if not args:
        return UNKNOWN_TYPED
    result = args[0].type
    scalar = element_scalar(result)
    if name not in ("ldexp", "extractBits", "insertBits", "step") and scalar is not None:
        for a in args[1:]:
            other = element_scalar(a.type)
            if other is None:
                return Typed(result)
            unified = unify_scalars(scalar, other)
            if unified is None:
                return Typed(result)
            scalar = unified
            if a.type.kind == "vector":
                result = a.type
        result = with_scalar(result, scalar)
    if scalar is None:
        return Typed(result)
    converted = [convert(a, scalar) if element_scalar(a.type) else a for a in args]
    values = [a.value for a in converted]
    if any(v is None for v in values):
        return Typed(result)
    try:
        value = _eval_same_type(name, scalar, values)  # type: ignore[arg-type]
    except (ArithmeticError, ValueError, TypeError, IndexError, _Undefined):
        return Typed(result)
    if value is None:
        return Typed(result)
    return Typed(result, _fit(scalar, value))


def _eval_same_type(name: str, scalar: str, values: list[Value]) -> Value | None:
    def zipn(f: Callable[..., Value], *vs: Value) -> Value:
        if any(isinstance(v, tuple) for v in vs):
            n = max(len(v) for v in vs if isinstance(v, tuple))
            return tuple(
                zipn(f, *[v[k] if isinstance(v, tuple) else v for v in vs]) for k in range(n)
            )
        return f(*vs)

    if name in _FLOAT_FNS and scalar in FLOATS:
        fn = _FLOAT_FNS[name]
        return zipn(lambda x: float(fn(float(x))), values[0])
    if name == "abs":
        return zipn(abs, values[0])
    if name == "min":
        return zipn(min, values[0], values[1])
    if name == "max":
        return zipn(max, values[0], values[1])
    if name == "clamp":
        return zipn(lambda x, lo, hi: min(max(x, lo), hi), *values[:3])
    if name == "sign":
        return zipn(lambda x: type(x)((x > 0) - (x < 0)), values[0])
    if name == "pow":
        return zipn(lambda x, y: float(x) ** float(y), values[0], values[1])
    if name == "fma":
        return zipn(lambda a, b, c: a * b + c, *values[:3])
    if name == "mix":
        return zipn(lambda a, b, t: a * (1 - t) + b * t, *values[:3])
    if name == "countOneBits" and scalar in INTEGERS:
        return zipn(lambda x: bin(x & 0xFFFFFFFF).count("1"), values[0])
    return None
