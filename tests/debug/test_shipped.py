"""Shipped kernels (preambles, struct builtins, vec4 bodies, helpers) traced on the real adapter:
the instrumented module compiles and its outputs are bit-identical to the plain run's."""

from __future__ import annotations

import pytest

from workbench.session import Session
from workbench.workgroups.debug import parse_element, trace, writers


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


def test_element_by_its_named_index_finds_the_store_that_made_it(session: Session):
    case = session.case("rope_q", dims={"seq": 8})
    name, flat = parse_element("Q[seq=3 n_heads=5 head_dim=7]", case)
    assert (name, flat) == ("Q", (3 * 12 + 5) * 64 + 7)
    found = writers(session, case, name, flat)
    assert len(found) == 1
    t = trace(session, case, found[0].invocation)
    stores = [st for st in t.steps if st.kind == "store" and st.index == flat]
    out = session.run(case, reference=False).outputs["Q"]
    assert len(stores) == 1 and stores[0].value == float(out[3, 5, 7])
    assert stores[0].line == found[0].line
