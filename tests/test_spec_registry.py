"""Per-kernel facts for the checks are declared with each spec and validated once by the
registry: every shipped spec passes, and each kind of inconsistency is refused by name."""

from __future__ import annotations

import importlib
import pkgutil
from dataclasses import replace

import pytest

import workbench.specs as specs_pkg
from workbench.specs.base import GradLink
from workbench.specs.registry import _NOT_SPEC_MODULES, all_specs, spec_for, validate_spec


def test_every_shipped_spec_declares_consistent_facts() -> None:
    specs = all_specs()
    for spec in specs.values():
        validate_spec(spec, specs)
    # What the checks used to look up by name now sits on the spec.
    assert all(s.small_dims for s in specs.values())
    bwd = spec_for("attention_backward")
    assert bwd is not None and bwd.saved == ("LSE",) and bwd.resaved == ("LSE",)
    assert bwd.special_rule is not None and bwd.special_rule("K", 1e4) == "pattern"
    conv = spec_for("causal_conv1d_bwd")
    assert conv is not None and conv.deterministic_when is not None
    assert conv.deterministic_when({"deterministic": 1}) and not conv.deterministic_when({})


def test_the_modules_the_registry_skips_hold_no_specs() -> None:
    """A spec added to a module the registry does not read would be lost without a word."""
    for info in pkgutil.iter_modules(specs_pkg.__path__):
        if info.name in _NOT_SPEC_MODULES:
            module = importlib.import_module(f"workbench.specs.{info.name}")
            assert not hasattr(module, "SPECS"), info.name


@pytest.mark.parametrize(
    ("change", "problem"),
    [
        ({"small_dims": {"seq": 4, "nope": 2}}, "small_dims: ffn_gelu_backward: unknown dim nope"),
        ({"small_dims": {"seq": -1}}, "small_dims: ffn_gelu_backward: dim seq=-1 is outside"),
        ({"saved": ("LSE",)}, "saved/resaved name no binding: LSE"),
        ({"saved": ("pre_gelu",), "resaved": ("pre_gelu",)}, "resaved needs a gradient link"),
    ],
)
def test_inconsistent_facts_are_refused(change: dict[str, object], problem: str) -> None:
    spec = spec_for("ffn_gelu_backward")
    assert spec is not None
    broken = replace(spec, **change)
    if "resaved" in change:
        broken = replace(broken, gradient=replace(spec.gradient, saved=None))
    with pytest.raises(RuntimeError, match=problem):
        validate_spec(broken, all_specs())


def test_a_gradient_link_must_name_what_exists() -> None:
    spec = spec_for("ffn_swiglu_backward")
    assert spec is not None and isinstance(spec.gradient, GradLink)
    specs = all_specs()
    with pytest.raises(RuntimeError, match=r"gradient\.wrt"):
        validate_spec(replace(spec, gradient=replace(spec.gradient, wrt={"nope": "gate"})), specs)
    with pytest.raises(RuntimeError, match="forward_kernel missing has no spec"):
        validate_spec(
            replace(spec, gradient=replace(spec.gradient, forward_kernel="missing")), specs
        )
    with pytest.raises(RuntimeError, match="grad_dims"):
        validate_spec(replace(spec, gradient=replace(spec.gradient, grad_dims={"d": 1})), specs)
