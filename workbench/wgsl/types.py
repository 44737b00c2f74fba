"""WGSL types as reflection sees them, with the host-shareable memory layout rules.

Sizes and alignments follow the WGSL spec's "Memory Layout" section: scalars 4 bytes (f16: 2),
vec2/vec3/vec4 aligned to 2x/4x/4x their scalar, arrays strided by `roundUp(align, size)`, structs
aligned to their widest member; in the uniform address space arrays and structs round their alignment
up to 16 (and array strides must then be multiples of 16).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field

SCALARS = {"f32": 4, "u32": 4, "i32": 4, "f16": 2, "bool": 4}
NUMPY_DTYPE = {"f32": "float32", "u32": "uint32", "i32": "int32", "f16": "float16"}
_VEC_SHORT = {"f": "f32", "u": "u32", "i": "i32", "h": "f16"}


def round_up(align: int, n: int) -> int:
    return (n + align - 1) // align * align


@dataclass(frozen=True)
class Member:
    name: str
    type: WType
    offset: int
    align_attr: int | None = None  # an explicit @align(N) on the member
    size_attr: int | None = None  # an explicit @size(N) on the member

    def align(self, uniform: bool = False) -> int:
        return self.align_attr or self.type.align(uniform)

    def size(self, uniform: bool = False) -> int:
        return self.size_attr if self.size_attr is not None else self.type.size(uniform)


@dataclass(frozen=True)
class WType:
    """A WGSL type. `kind` is scalar, vector, matrix, atomic, array, struct, pointer, texture
    (`scalar` the type its texels read as), sampler, opaque (what else only the compiler needs to
    know: binding arrays, ray queries) or unknown (the front end could not work it out and defers
    to the compiler). Scalars include bool and the abstract numeric types of const-expressions,
    `abstract-int` and `abstract-float`."""

    kind: str
    text: str
    scalar: str | None = None  # the innermost scalar, when there is one kind of scalar
    count: int | None = None  # vector width, matrix columns, or fixed array length (None: runtime)
    rows: int = 0  # matrix rows
    element: WType | None = None  # array element / atomic inner
    members: tuple[Member, ...] = field(default=())
    space: str = ""  # a pointer's address space

    @property
    def runtime_sized(self) -> bool:
        return self.kind == "array" and self.count is None

    def align(self, uniform: bool = False) -> int:
        if self.kind in ("scalar", "atomic"):
            return SCALARS[self.scalar or "u32"]
        if self.kind == "vector":
            s = SCALARS[self.scalar or "f32"]
            return s * (2 if self.count == 2 else 4)
        if self.kind == "matrix":
            return _vector(self.scalar or "f32", self.rows).align()
        if self.kind == "array":
            a = self.element.align(uniform) if self.element else 4
            return round_up(16, a) if uniform else a
        a = max((m.align(uniform) for m in self.members), default=4)
        return round_up(16, a) if uniform else a

    def size(self, uniform: bool = False) -> int:
        """Byte size; a runtime-sized array counts one element."""
        if self.kind in ("scalar", "atomic"):
            return SCALARS[self.scalar or "u32"]
        if self.kind == "vector":
            return SCALARS[self.scalar or "f32"] * (self.count or 4)
        if self.kind == "matrix":
            col = _vector(self.scalar or "f32", self.rows)
            return (self.count or 4) * round_up(col.align(), col.size())
        if self.kind == "array":
            return self.stride(uniform) * (self.count or 1)
        if not self.members:
            return 0
        last = self.members[-1]
        end = last.offset + last.size(uniform)
        return round_up(self.align(uniform), end)

    def stride(self, uniform: bool = False) -> int:
        """Array element stride."""
        el = self.element
        if el is None:
            return 4
        s = round_up(el.align(uniform), el.size(uniform))
        return round_up(16, s) if uniform else s


ABSTRACT_INT = "abstract-int"
ABSTRACT_FLOAT = "abstract-float"
UNKNOWN = WType("unknown", "?")
BOOL = WType("scalar", "bool", scalar="bool")
INTEGERS = frozenset({"i32", "u32", ABSTRACT_INT})
FLOATS = frozenset({"f32", "f16", ABSTRACT_FLOAT})


# The texture types (WGSL spec, "Texture and Sampler Types") by name, with how many coordinates
# their texels take (what `textureDimensions` returns: u32, vec2<u32> or vec3<u32>).
TEXTURE_DIMENSIONS = {
    **{f"texture_{d}": n for d, n in (("1d", 1), ("2d", 2), ("2d_array", 2), ("3d", 3))},
    **{f"texture_{d}": 2 for d in ("cube", "cube_array", "multisampled_2d", "external")},
    **{f"texture_depth_{d}": 2 for d in ("2d", "2d_array", "cube", "cube_array")},
    "texture_depth_multisampled_2d": 2,
    **{f"texture_storage_{d}": n for d, n in (("1d", 1), ("2d", 2), ("2d_array", 2), ("3d", 3))},
}
SAMPLERS = frozenset({"sampler", "sampler_comparison"})


def make_texture(name: str, args: tuple[str, ...]) -> WType:
    """A texture type from its name and template words: a sampled texture reads as its sampled
    type, a depth texture as f32, a storage texture as its texel format's channel type."""
    if name.startswith("texture_storage_"):
        fmt = args[0] if args else ""
        scalar = "u32" if fmt.endswith("uint") else "i32" if fmt.endswith("sint") else "f32"
    elif name.startswith("texture_depth_") or name == "texture_external":
        scalar = "f32"
    else:
        scalar = args[0] if args and args[0] in ("f32", "i32", "u32") else "f32"
    text = f"{name}<{', '.join(args)}>" if args else name
    return WType("texture", text, scalar=scalar, count=TEXTURE_DIMENSIONS[name])


def make_pointer(space: str, store: WType, access: str = "") -> WType:
    text = f"ptr<{space}, {store.text}{', ' + access if access else ''}>"
    return WType("pointer", text, scalar=store.scalar, element=store, space=space)


def _vector(scalar: str, n: int) -> WType:
    return WType("vector", f"vec{n}<{scalar}>", scalar=scalar, count=n)


@functools.cache
def make_scalar(name: str) -> WType:
    return WType("scalar", name, scalar=name)


@functools.cache
def make_vector(n: int, scalar: str) -> WType:
    return _vector(scalar, n)


def make_matrix(cols: int, rows: int, scalar: str) -> WType:
    return WType("matrix", f"mat{cols}x{rows}<{scalar}>", scalar=scalar, count=cols, rows=rows)


def make_atomic(inner: WType) -> WType:
    return WType("atomic", f"atomic<{inner.text}>", scalar=inner.scalar, element=inner)


def make_array(element: WType, count: int | None) -> WType:
    text = f"array<{element.text}>" if count is None else f"array<{element.text}, {count}>"
    return WType("array", text, scalar=element.scalar, count=count, element=element)


def make_struct(
    name: str,
    fields: list[tuple[str, WType]],
    uniform: bool = False,
    attrs: list[tuple[int | None, int | None]] | None = None,
) -> WType:
    """A struct with member offsets laid out by the host-shareable rules.

    Offsets are computed with the storage rules; `uniform_layout` recomputes them for uniforms.
    `attrs` gives each field's explicit (@align, @size), None where the field has none.
    """
    members: list[Member] = []
    offset = 0
    for k, (fname, ftype) in enumerate(fields):
        align_attr, size_attr = attrs[k] if attrs else (None, None)
        member = Member(fname, ftype, 0, align_attr, size_attr)
        offset = round_up(member.align(uniform), offset)
        members.append(Member(fname, ftype, offset, align_attr, size_attr))
        offset += member.size(uniform)
    scalars = {f.scalar for _, f in fields}
    scalar = scalars.pop() if len(scalars) == 1 else None
    return WType("struct", name, scalar=scalar, members=tuple(members))


def uniform_layout(t: WType) -> WType:
    """The same type with struct member offsets recomputed under the uniform address space rules."""
    if t.kind == "struct":
        fields = [(m.name, uniform_layout(m.type)) for m in t.members]
        attrs = [(m.align_attr, m.size_attr) for m in t.members]
        return make_struct(t.text, fields, uniform=True, attrs=attrs)
    if t.kind == "array" and t.element is not None:
        return make_array(uniform_layout(t.element), t.count)
    return t


def vector_shorthand(name: str) -> WType | None:
    """`vec4f`, `vec2u`, `mat4x4f`... as full types."""
    if len(name) == 5 and name.startswith("vec") and name[3] in "234" and name[4] in _VEC_SHORT:
        return make_vector(int(name[3]), _VEC_SHORT[name[4]])
    if (
        len(name) == 7
        and name.startswith("mat")
        and name[3] in "234"
        and name[4] == "x"
        and name[5] in "234"
        and name[6] in "fh"
    ):
        return make_matrix(int(name[3]), int(name[5]), _VEC_SHORT[name[6]])
    return None
