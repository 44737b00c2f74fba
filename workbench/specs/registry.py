"""Collects the specs of every module in `workbench.specs` and looks them up by kernel name."""

from __future__ import annotations

import importlib
import pkgutil
from functools import cache

import workbench.specs as specs_pkg
from workbench.specs.base import KernelSpec

_NOT_SPEC_MODULES = {"base", "registry", "refs"}


@cache
def all_specs() -> dict[str, KernelSpec]:
    """Every spec by kernel name; a duplicate name is a programming error."""
    found: dict[str, KernelSpec] = {}
    for info in pkgutil.iter_modules(specs_pkg.__path__):
        if info.name in _NOT_SPEC_MODULES or info.name.startswith("_"):
            continue
        module = importlib.import_module(f"{specs_pkg.__name__}.{info.name}")
        for spec in getattr(module, "SPECS", ()):
            if spec.name in found:
                raise RuntimeError(f"two specs named {spec.name!r}")
            found[spec.name] = spec
    return found


def spec_for(name: str) -> KernelSpec | None:
    """The spec whose kernel is called `name`, or None for an ad-hoc kernel."""
    return all_specs().get(name)
