"""Which storage bindings an entry point stores to (workbench.wgsl.stores), read from the tree; and
`describe` giving the others role = "in", so a described elementwise kernel PASSes unchanged."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from workbench.wgsl.stores import stored_bindings

from .templated import templated_corpus

DECLS = """
@group(0) @binding(0) var<storage, read_write> a: array<f32>;
@group(0) @binding(1) var<storage, read_write> b: array<f32>;
@group(0) @binding(2) var<storage, read_write> c: array<atomic<u32>>;
struct S { x: f32, v: vec4<f32> };
@group(0) @binding(3) var<storage, read_write> d: array<S>;
"""
NAMES = {"a", "b", "c", "d"}


@pytest.mark.parametrize(
    ("body", "stored"),
    [
        ("a[0] = b[1];", {"a"}),
        ("a[0] += b[1];", {"a"}),
        ("a[0]++;", {"a"}),
        ("(d[1]).v.x = 2.0;", {"d"}),
        ("let p = &b[0]; *p = 1.0;", set()),  # through a let pointer: the pointer, not b, is named
        ("atomicAdd(&c[0], 1u);", {"c"}),
        ("let v = atomicLoad(&c[0]); a[v] = 0.0;", {"a"}),
        ("helper(&b[0]);", {"b"}),
        ("let x = a[0] + b[0];", set()),
        ("if (a[0] > 0.0) { for (var i = 0u; i < 4u; i++) { b[i] = 1.0; } }", {"b"}),
    ],
)
def test_stores(body: str, stored: set[str]) -> None:
    text = (
        DECLS
        + "fn helper(p: ptr<storage, f32, read_write>) { *p = 3.0; }\n"
        + "fn unused() { a[9] = 1.0; }\n"
        + f"@compute @workgroup_size(1) fn main() {{ {body} }}\n"
    )
    reached = ["main", "helper"] if "helper" in body else ["main"]
    assert stored_bindings(text, reached, NAMES) == stored


def test_describe_gives_inputs_their_role_and_the_std_reference(tmp_path: Path, cli) -> None:
    root = templated_corpus(
        tmp_path,
        toml='[variants.silu_f32]\nfile = "unary.wgsl"\n'
        "defines = { TYPE_F32 = true, OP_SILU = true, WG_SIZE = 64 }\n",
    )
    res = cli("describe", "silu_f32", "--corpus", str(root))
    table = tomllib.loads(res.out)["kernels"]["silu_f32"]
    assert table["buffers"]["src"]["role"] == "in" and table["buffers"]["dst"]["role"] == "out"
    assert table["reference"] == {"function": "std:silu", "x": "src", "y": "dst"}
    with (root / "workbench.toml").open("a") as f:
        f.write(res.out)
    check = cli("check", "silu_f32", "--corpus", str(root), "--what", "compare,evidence")
    assert check.rc == 0 and "verdict: PASS" in check.out, check.out + check.err
