"""Validation (not parse) errors lead with naga's specific cause, with plain WGSL type names."""

from __future__ import annotations

import pytest

from workbench.errors import CompileError

MIXED_ADD = """@group(0) @binding(0) var<storage, read_write> x: array<f32>;
@compute @workgroup_size(1) fn main() {
  let a = x[0];
  x[0] = a + 1u;
}
"""


def test_a_type_error_names_the_operation_and_the_types(make_corpus, on_corpus):
    sess = on_corpus(make_corpus({"k.wgsl": MIXED_ADD}))
    with pytest.raises(CompileError) as err:
        sess.run("main", dims={"n": 4})
    head, src, caret = str(err.value).splitlines()
    assert head == (
        "k.wgsl:4:10: Operation Add can't work with f32 and u32 "
        "(Entry point main at Compute is invalid)"
    )
    assert src == "4 |   x[0] = a + 1u;"
    assert caret.index("^") == src.index("a + 1u")
