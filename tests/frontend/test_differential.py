"""The front end against the real compiler (wgpu's naga on the test adapter), module by module:
every module wgpu accepts is read with no error, every error the front end reports wgpu reports
too, and every legal module's tree prints back to text that wgpu accepts and that reflects the
same. The modules (tests/frontend/cases.py) are small and written here, legal and illegal."""

from __future__ import annotations

import numpy as np
import pytest

from workbench.errors import ReflectionError
from workbench.session import Session
from workbench.wgsl.parser import parse
from workbench.wgsl.printer import print_module
from workbench.wgsl.reflect import ModuleInfo, reflect

from .cases import all_cases

CASES = all_cases()


def compiler_error(session: Session, text: str) -> str | None:
    """What wgpu says about `text`, None when it compiles."""
    import wgpu

    try:
        session.gpu.device.create_shader_module(code=text)
    except wgpu.GPUError as exc:
        return str(exc)
    return None


def front_end_error(text: str) -> str | None:
    """The front end's one-line error for `text` (reflection's, or an entry point's problem)."""
    try:
        info = reflect(text, "case.wgsl")
    except ReflectionError as exc:
        assert "\n" not in str(exc)
        return str(exc)
    if info.entry_problems:
        return next(iter(info.entry_problems.values()))[1]
    if info.enabled_features:
        return f"needs {', '.join(info.enabled_features)}"
    return None


def shape(info: ModuleInfo) -> object:
    return (
        {n: b.signature for n, b in info.bindings.items()},
        {n: (e.workgroup_size, [b.name for b in e.bindings]) for n, e in info.entry_points.items()},
        {n: v.size for n, v in info.workgroup_vars.items()},
        info.consts,
    )


def test_there_are_at_least_150_cases_both_kinds():
    assert len(CASES) >= 150
    assert sum(legal for *_, legal in CASES) >= 100
    assert sum(not legal for *_, legal in CASES) >= 40


@pytest.mark.parametrize(("name", "text", "legal"), CASES, ids=[c[0] for c in CASES])
def test_the_front_end_never_refuses_what_wgpu_compiles(session, name, text, legal):
    wgpu_says = compiler_error(session, text)
    ours = front_end_error(text)
    # The case is what it claims to be, so the suite keeps covering both sides.
    assert (wgpu_says is None) == legal, wgpu_says
    if wgpu_says is None:
        assert ours is None, ours
    if ours is not None:
        assert wgpu_says is not None, ours
    if legal:
        printed = print_module(parse(text, "case.wgsl"))
        assert compiler_error(session, printed) is None, printed
        assert print_module(parse(printed)) == printed
        assert shape(reflect(printed)) == shape(reflect(text))


def test_every_shipped_kernel_prints_back_to_text_that_compiles_and_reflects_the_same(session):
    features = session.adapter.features
    for kernel in session.corpus.kernels:
        text, _ = kernel.assemble(features)
        printed = print_module(parse(text, kernel.file))
        assert compiler_error(session, printed) is None, kernel.name
        before, after = reflect(text), reflect(printed)
        assert shape(after) == shape(before), kernel.name
        ep_before, ep_after = before.entry_points[kernel.entry], after.entry_points[kernel.entry]
        assert ep_after.workgroup_bytes == ep_before.workgroup_bytes
        assert ep_after.features == ep_before.features


def test_shipped_kernels_printed_back_compute_bit_identical_outputs(session):
    """The printed module is the same program: on the same case, every output is the same bits.
    (The attention backward kernels are left out for time: they print and compile above.)"""
    from workbench.wgsl.corpus import Kernel, Piece

    for kernel in session.corpus.kernels:
        if kernel.name.startswith("attention_backward"):
            continue
        printed = print_module(parse(kernel.text, kernel.file))
        twin = Kernel(
            name=kernel.name,
            file=kernel.file,
            line=1,
            pieces=(Piece(kernel.file, 1, printed),),
            entry=kernel.entry,
        )
        ran = session.run(session.case(kernel), reference=False).outputs
        again = session.run(session.case(twin), reference=False).outputs
        assert ran.keys() == again.keys()
        for name, value in ran.items():
            assert np.array_equal(value, again[name], equal_nan=True), (kernel.name, name)
