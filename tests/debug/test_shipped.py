"""Shipped kernels (preambles, struct builtins, vec4 bodies, helpers) traced on the real adapter:
the instrumented module compiles and its outputs are bit-identical to the plain run's."""

from __future__ import annotations

import pytest

from workbench.session import Session
from workbench.workgroups.debug import trace


@pytest.mark.parametrize(
    ("kernel", "dims"),
    [
        ("gelu_inplace", {"seq": 2}),
        ("embed_backward", {}),
        ("rope_q", {"seq": 8}),
        ("causal_conv1d_fwd", {"seqlen": 8}),
    ],
)
def test_shipped_kernel_traces_with_identical_outputs(session: Session, kernel, dims):
    case = session.case(kernel, dims=dims)
    t = trace(session, case, (1, 0, 0))
    assert t.outputs_identical and not t.truncated
    assert t.steps and all(st.file.endswith(".wgsl") and st.line > 0 for st in t.steps)
    assert any(st.kind in ("store", "atomic") for st in t.steps)
