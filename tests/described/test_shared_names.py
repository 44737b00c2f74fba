"""Kernels whose entry points share a name (`main` in every file): `FILE:ENTRY` names them on the
command line, in workbench.toml sections and in `describe`'s output; `check --all` shows the file
beside each; a bare ambiguous name is one error asking for FILE:NAME. And the CLI's numbers: hex
for integers (`--set params.x=0x..`)."""

from __future__ import annotations

import tomllib
from pathlib import Path

from .corpora import write

NEG = """
@group(0) @binding(0) var<storage, read_write> src: array<f32>;
@group(0) @binding(1) var<storage, read_write> dst: array<f32>;
@group(0) @binding(2) var<uniform> params: vec4<u32>;  // n, bits

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    if (gid.x < params.x) { dst[gid.x] = -src[gid.x]; }
}
"""

BITS = """
@group(0) @binding(0) var<storage, read_write> dst: array<u32>;
@group(0) @binding(1) var<uniform> params: vec4<u32>;  // n, value

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    if (gid.x < params.x) { dst[gid.x] = params.y; }
}
"""

TOML = """
[kernels."neg.wgsl:main"]
dims = { n = 300 }
grid = ["ceil(n / 64)"]
uniforms.params = ["n", 0, 0, 0]
buffers.src = { shape = ["n"], role = "in" }
buffers.dst = { shape = ["n"], role = "out" }
reference = { function = "std:neg", x = "src" }
"""


def corpus(tmp: Path, toml: str = TOML) -> Path:
    return write(tmp / "shared", {"neg.wgsl": NEG, "bits.wgsl": BITS, "workbench.toml": toml})


def test_file_entry_section_loads_and_passes(tmp_path: Path, cli) -> None:
    root = corpus(tmp_path)
    res = cli("check", "neg.wgsl:main", "--corpus", str(root), "--what", "compare,evidence")
    assert res.rc == 0 and "verdict: PASS" in res.out, res.out + res.err
    # The file is told beside each kernel by check --all.
    res = cli("check", "--all", "--corpus", str(root), "--what", "compare,evidence")
    assert "main  neg.wgsl" in res.out and "main  bits.wgsl" in res.out


def test_a_bare_shared_name_asks_for_file_entry(tmp_path: Path, cli) -> None:
    root = corpus(tmp_path, TOML.replace('[kernels."neg.wgsl:main"]', "[kernels.main]"))
    res = cli("list", "--corpus", str(root))
    assert res.rc == 2 and "kernels.main" in res.err and "FILE:NAME" in res.err


def test_describe_of_a_shared_name_emits_a_section_that_loads(tmp_path: Path, cli) -> None:
    root = corpus(tmp_path, "")
    res = cli("describe", "bits.wgsl:main", "--corpus", str(root))
    assert res.rc == 0, res.err
    assert '[kernels."bits.wgsl:main"]' in res.out
    assert "bits.wgsl:main" in tomllib.loads(res.out)["kernels"]
    (root / "workbench.toml").write_text(res.out)
    run = cli("run", "bits.wgsl:main", "--corpus", str(root), "--reps", "0")
    assert run.rc in (0, 1) and "no kernel" not in run.err, run.err


def test_set_takes_hex_for_a_bit_pattern(tmp_path: Path, cli) -> None:
    root = corpus(tmp_path, "")
    res = cli(
        "run",
        "bits.wgsl:main",
        "--corpus",
        str(root),
        "--adhoc",
        "--set",
        "params.x=0x40",
        "--set",
        "params.y=0x01020304",
        "--grid",
        "1",
        "--reps",
        "0",
        "--json",
    )
    assert res.rc == 0, res.err
    assert res.json()["uniforms"]["params"] == [0x40, 0x01020304, 0, 0]
    out = res.json()["outputs"]["dst"]
    assert out["max"] == 0x01020304 and out["mean"] == 0x01020304 * 64 / 1024


def test_fixture_of_a_shared_name_records_and_replays(tmp_path: Path, cli) -> None:
    root = corpus(tmp_path)
    out = tmp_path / "fx" / "neg"
    res = cli("record", "neg.wgsl:main", "--corpus", str(root), "--out", str(out))
    assert res.rc == 0, res.err
    text = out.with_suffix(".toml").read_text()
    assert 'kernel = "main"' in text and 'source = "neg.wgsl"' in text
    res = cli("replay", str(out.parent), "--corpus", str(root))
    assert res.rc == 0 and "1 passed" in res.out, res.out + res.err
