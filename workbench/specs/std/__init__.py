"""The reference library: float64 NumPy references for the operations most kernel corpora
implement, named `std:NAME` in a description (`reference = "std:rms_norm"`).

Each reference is a plain function of arrays (outermost axis first) and parameters, returning a
dict of named outputs; `LIBRARY` lists them with the names of the arrays they take and give, so a
description can map each to a binding, a dim, a uniform or a literal (workbench.specs.described).
Every function is written from the mathematics and tested against loops in pure Python.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from workbench.specs.std import attention, conv, elementwise, linalg, norms, reduce, rope, rows
from workbench.specs.std.common import StdError

PREFIX = "std:"


@dataclass(frozen=True)
class StdReference:
    """One library entry: the function, parameters it is called with always, its outputs."""

    name: str
    fn: Callable[..., dict[str, np.ndarray]]
    outputs: tuple[str, ...]
    fixed: dict[str, Any] = field(default_factory=dict)

    @property
    def parameters(self) -> dict[str, inspect.Parameter]:
        """The parameters a description may map, by name (the fixed ones left out)."""
        sig = inspect.signature(self.fn)
        return {n: p for n, p in sig.parameters.items() if n not in self.fixed}

    @property
    def arrays(self) -> tuple[str, ...]:
        """The parameters that take arrays (bindings), required ones first."""
        return tuple(n for n, p in self.parameters.items() if "ndarray" in str(p.annotation))

    @property
    def required(self) -> tuple[str, ...]:
        return tuple(n for n, p in self.parameters.items() if p.default is inspect.Parameter.empty)

    @property
    def doc(self) -> str:
        if "op" in self.fixed:
            return (
                f"y = {self.fixed['op']}(a, b)"
                if "b" in self.parameters
                else f"y = {self.fixed['op']}(x)"
            )
        return (inspect.getdoc(self.fn) or "").splitlines()[0]

    def __call__(self, **kwargs: Any) -> dict[str, np.ndarray]:
        return self.fn(**self.fixed, **kwargs)


def _entries() -> dict[str, StdReference]:
    y = ("y",)
    out: dict[str, StdReference] = {}

    def add(
        name: str,
        fn: Callable[..., dict[str, np.ndarray]],
        outputs: tuple[str, ...] = y,
        **fixed: Any,
    ) -> None:
        out[name] = StdReference(name, fn, outputs, dict(fixed))

    add("unary", elementwise.unary)
    for op in elementwise.UNARY:
        add(op, elementwise.unary, op=op)
    add("leaky_relu", elementwise.leaky_relu)
    add("clamp", elementwise.clamp)
    add("scale", elementwise.scale)
    add("binary", elementwise.binary)
    for op in elementwise.BINARY:
        add(op, elementwise.binary, op=op)
    add("cast", elementwise.cast)
    add("cpy_f16", elementwise.cast, dtype="f16")
    add("cpy_f32", elementwise.cast, dtype="f32")
    add("matmul", linalg.matmul)
    add("softmax", norms.softmax)
    add("softmax_back", norms.softmax_back, ("dx",))
    add("rms_norm", norms.rms_norm)
    add("rms_norm_back", norms.rms_norm_back, ("dx",))
    add("layer_norm", norms.layer_norm)
    add("norm", norms.layer_norm)
    add("layer_norm_back", norms.layer_norm_back, ("dx", "dweight", "dbias"))
    add("rope", rope.rope)
    add("rope_neox", rope.rope, mode="neox")
    add("rope_back", rope.rope, backward=True)
    add("get_rows", rows.get_rows)
    add("embedding", rows.get_rows)
    add("set_rows", rows.set_rows)
    add("sum_rows", reduce.sum_rows)
    add("sum", reduce.sum_all)
    add("mean", reduce.mean)
    add("argmax", reduce.argmax)
    add("cumsum", reduce.cumsum)
    add("conv1d", conv.conv1d)
    add("conv1d_dw", conv.conv1d_dw)
    add("conv2d", conv.conv2d)
    add("conv2d_dw", conv.conv2d_dw)
    add("flash_attn", attention.flash_attn, ("y", "lse"))
    return out


LIBRARY: dict[str, StdReference] = _entries()


def lookup(text: str) -> StdReference:
    """The entry `std:NAME` names; an unknown name is one error listing the library."""
    name = text.removeprefix(PREFIX)
    if name not in LIBRARY:
        raise StdError(f"{text!r} is not in the reference library; it has {', '.join(LIBRARY)}")
    return LIBRARY[name]


__all__ = ["LIBRARY", "PREFIX", "StdError", "StdReference", "lookup"]
