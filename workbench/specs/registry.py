"""Collects the specs of every module in `workbench.specs`, validates what each declares for the
checks (once, when first asked), and looks them up by kernel name."""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Collection, Mapping
from functools import cache

import workbench.specs as specs_pkg
from workbench.errors import UserError
from workbench.specs.base import KernelSpec

# The package's modules that hold no SPECS: not imported to look for any (`starter` needs tomlkit,
# which a listing, the registry's most frequent caller, has no other use for).
_NOT_SPEC_MODULES = {
    "base",
    "described",
    "expr",
    "refargs",
    "refs",
    "refworker",
    "registry",
    "starter",
    "std",
}


@cache
def all_specs() -> dict[str, KernelSpec]:
    """Every spec by kernel name; a duplicate name or an inconsistent spec is a programming
    error (RuntimeError)."""
    found: dict[str, KernelSpec] = {}
    for info in pkgutil.iter_modules(specs_pkg.__path__):
        if info.name in _NOT_SPEC_MODULES or info.name.startswith("_"):
            continue
        module = importlib.import_module(f"{specs_pkg.__name__}.{info.name}")
        for spec in getattr(module, "SPECS", ()):
            if spec.name in found:
                raise RuntimeError(f"two specs named {spec.name!r}")
            found[spec.name] = spec
    for spec in found.values():
        validate_spec(spec, found)
    return found


def spec_for(name: str) -> KernelSpec | None:
    """The spec whose kernel is called `name`, or None for an ad-hoc kernel."""
    return all_specs().get(name)


def validate_spec(spec: KernelSpec, kernels: Collection[str]) -> None:
    """RuntimeError unless what `spec` declares for the checks agrees with its own dims, buffers
    and outputs: small dims and gradient dims in range, saved inputs that exist, a gradient link
    whose names exist and whose forward kernel (`kernels`: the names with a spec) is known."""
    where = f"spec {spec.name}"

    def resolved(dims: Mapping[str, int], what: str) -> dict[str, int]:
        try:
            return spec.resolve_dims(dims)
        except UserError as exc:
            raise RuntimeError(f"{where}: {what}: {exc}") from None

    buffers = set(spec.buffers(resolved({}, "default dims")))
    resolved(spec.small_dims, "small_dims")
    unknown = sorted({*spec.saved, *spec.resaved} - buffers)
    if unknown:
        raise RuntimeError(f"{where}: saved/resaved name no binding: {', '.join(unknown)}")
    if not set(spec.resaved) <= set(spec.saved):
        raise RuntimeError(f"{where}: resaved {spec.resaved} must be among saved {spec.saved}")
    link = spec.gradient
    if spec.resaved and (link is None or link.saved is None):
        raise RuntimeError(f"{where}: resaved needs a gradient link that recomputes them (saved)")
    if link is None:
        return
    resolved(link.grad_dims, "gradient.grad_dims")
    if not set(link.wrt) <= set(spec.outputs):
        raise RuntimeError(f"{where}: gradient.wrt names {sorted(link.wrt)}, not all outputs")
    if not set(link.upstream.values()) <= buffers:
        raise RuntimeError(f"{where}: gradient.upstream names a binding it does not have")
    if link.forward_kernel is not None and link.forward_kernel not in kernels:
        raise RuntimeError(f"{where}: gradient.forward_kernel {link.forward_kernel} has no spec")
