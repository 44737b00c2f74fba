"""One test per finding of issue 25 (llama.cpp's shaders and hostile input, tried as a new user):
each on the real adapter, the deep ones through the real command in a subprocess, where a crash
of the native compiler would show as exit 139 instead of killing pytest."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from workbench.session import Session, StatusKind
from workbench.wgsl.corpus import load_corpus
from workbench.wgsl.parser import parse

REPO = Path(__file__).resolve().parents[2]
# Generous: what these catch is a hang (the old reader took minutes) or a crash, not slowness.
LIMIT_S = 120
OUT = "@group(0) @binding(0) var<storage, read_write> out: array<f32>;\n"


def write(root: Path, files: dict[str, str | bytes]) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    for rel, text in files.items():
        path = root / rel
        if isinstance(text, bytes):
            path.write_bytes(text)
        else:
            path.write_text(text, encoding="utf-8", newline="")
    return root


def list_json(root: Path) -> tuple[subprocess.CompletedProcess[str], dict[str, dict]]:
    env = dict(os.environ)
    env.setdefault("XDG_RUNTIME_DIR", "/tmp/workbench-xdg-tests")
    proc = subprocess.run(
        [sys.executable, "-m", "workbench", "list", str(root), "--json"],
        capture_output=True,
        text=True,
        env=env,
        cwd=REPO,
        timeout=LIMIT_S,
        stdin=subprocess.DEVNULL,
    )
    assert "Traceback" not in proc.stderr, proc.stderr
    rows = {}
    if proc.returncode == 0:
        rows = {r["name"]: r for r in json.loads(proc.stdout)["kernels"]}
    return proc, rows


def on(session: Session, root: Path) -> Session:
    return Session(load_corpus(root), session.gpu)


def test_a_struct_declared_after_its_use_reflects_and_runs(session, tmp_path):
    root = write(
        tmp_path / "c",
        {
            "k.wgsl": "@group(0) @binding(0) var<uniform> params: Params;\n"
            "@group(0) @binding(1) var<storage, read_write> out: array<f32>;\n"
            "@compute @workgroup_size(64)\n"
            "fn k(@builtin(global_invocation_id) gid: vec3<u32>) {\n"
            "    if (gid.x < params.n) { out[gid.x] = params.scale * f32(gid.x); }\n}\n"
            "struct Params { n: u32, scale: f32 }\n"
        },
    )
    s = on(session, root)
    kernel = s.kernel("k")
    assert s.status(kernel).kind == StatusKind.OK, s.status(kernel)
    params = kernel.entry_point.bindings[0]
    assert [(m.name, m.offset) for m in params.type.members] == [("n", 0), ("scale", 4)]


def test_max_in_an_array_size_is_a_constant(session, tmp_path):
    root = write(
        tmp_path / "c",
        {
            "k.wgsl": "const kv_shmem_size = 64 * max(64, 64);\n"
            "var<workgroup> kv: array<f32, kv_shmem_size / 4>;\n"
            + OUT
            + "@compute @workgroup_size(64)\n"
            "fn k(@builtin(local_invocation_index) i: u32) { kv[i] = 1.0; out[i] = kv[i]; }\n"
        },
    )
    s = on(session, root)
    kernel = s.kernel("k")
    assert s.status(kernel).kind == StatusKind.OK, s.status(kernel)
    # 64 * 64 / 4 = 1024 f32s: 4,096 bytes.
    assert kernel.entry_point.workgroup_bytes == 4096
    assert kernel.module.consts["kv_shmem_size"] == 4096


def test_an_unknown_enable_marks_the_kernel_as_needing_that_feature_and_is_kept(session, tmp_path):
    root = write(
        tmp_path / "c",
        {
            "k.wgsl": "enable chromium_experimental_subgroup_matrix;\n"
            + OUT
            + "@compute @workgroup_size(1)\n"
            "fn k() { out[0] = 1.0; }\n"
        },
    )
    s = on(session, root)
    kernel = s.kernel("k")
    status = s.status(kernel)
    assert status.kind == StatusKind.NEEDS
    assert kernel.features == ("chromium_experimental_subgroup_matrix",)
    assert "chromium_experimental_subgroup_matrix" in s.missing_features(kernel)
    text, smap = kernel.assemble(session.adapter.features)
    assert text.splitlines()[0] == "enable chromium_experimental_subgroup_matrix;"
    assert smap.locate(1) == ("k.wgsl", 1)


def test_requires_and_10000_spaces_lists_at_once(tmp_path):
    # The old directive regex was cubic in the spaces (minutes); the lexer reads them once.
    root = write(tmp_path / "c", {"k.wgsl": "requires" + " " * 10_000 + "\n" + OUT})
    proc, _ = list_json(root)
    assert proc.returncode == 0, proc.stderr


def _deep_listing(tmp_path: Path, name: str, body: str) -> None:
    root = write(
        tmp_path / name,
        {
            f"{name}.wgsl": OUT + f"@compute @workgroup_size(1)\nfn {name}() {{\n{body}\n}}\n",
            "fine.wgsl": OUT + "@compute @workgroup_size(1)\nfn fine() { out[0] = 1.0; }\n",
        },
    )
    proc, rows = list_json(root)
    assert proc.returncode in (0, 2), (proc.returncode, proc.stderr[-2000:])
    if proc.returncode == 2:
        assert len([ln for ln in proc.stderr.splitlines() if ln.startswith("workbench:")]) == 1
        return
    assert rows["fine"]["status"] == "ok", rows
    status = rows[name]["status"]
    assert status == "ok" or (status.startswith(f"error: {name}.wgsl:5: ") and "\n" not in status)


def test_40000_chained_swizzles_give_one_line_never_a_crash(tmp_path):
    _deep_listing(tmp_path, "swizzles", "let v = vec4f(1.0);\nlet w = v" + ".yzwx" * 40_000 + ";")


def test_10000_else_if_branches_give_one_line_never_a_crash(tmp_path):
    chain = "var x = 0;\nif x == 0 { x = 1; }" + " else if x == 1 { x = 2; }" * 10_000
    _deep_listing(tmp_path, "branches", chain)


def test_kernel_markers_in_a_crlf_file_split_it(session, tmp_path):
    text = (
        "diagnostic(off, derivative_uniformity);\n"
        + OUT
        + "// --- KERNEL: one ---\n@compute @workgroup_size(1)\nfn one() { let y = 1.0; out[0] = y; }\n"
        "// --- KERNEL: two ---\n@compute @workgroup_size(1)\nfn two() { let y = 2.0; out[1] = y; }\n"
    ).replace("\n", "\r\n")
    s = on(session, write(tmp_path / "c", {"k.wgsl": text}))
    assert [k.name for k in s.corpus.kernels] == ["one", "two"]
    for kernel in s.corpus.kernels:
        assert s.status(kernel).kind == StatusKind.OK, s.status(kernel)
    assert s.kernel("two").line == 6
    assembled, _ = s.kernel("two").assemble(session.adapter.features)
    assert assembled.splitlines()[0] == "diagnostic(off, derivative_uniformity);"


def test_a_byte_order_mark_is_named(session, tmp_path):
    root = write(
        tmp_path / "c",
        {
            "bom.wgsl": "\ufeff"
            + OUT
            + "@compute @workgroup_size(1)\nfn bom() { out[0] = 1.0; }\n",
            "fine.wgsl": OUT + "@compute @workgroup_size(1)\nfn fine() { out[0] = 1.0; }\n",
        },
    )
    s = on(session, root)
    bom = next(k for k in s.corpus.kernels if k.file == "bom.wgsl")
    assert bom.problem.startswith("bom.wgsl:1: a byte-order mark (U+FEFF)"), bom.problem
    assert "\n" not in bom.problem
    assert s.status(s.kernel("fine")).kind == StatusKind.OK


def test_one_out_of_range_workgroup_size_affects_that_kernel_alone(session, tmp_path):
    root = write(
        tmp_path / "c",
        {
            "k.wgsl": OUT + "@compute @workgroup_size(4294967295)\nfn huge() { out[0] = 1.0; }\n"
            "@compute @workgroup_size(64)\nfn fine(@builtin(global_invocation_id) g: vec3<u32>) "
            "{ if (g.x < arrayLength(&out)) { out[g.x] = 2.0; } }\n"
        },
    )
    s = on(session, root)
    huge, fine = s.kernel("huge"), s.kernel("fine")
    assert "huge" in fine.without
    assert huge.problem.startswith("k.wgsl:3: @workgroup_size of 'huge' has 4294967295"), (
        huge.problem
    )
    assert s.status(fine).kind == StatusKind.OK, s.status(fine)


def test_tree_positions_name_the_users_file_behind_preambles(session, tmp_path):
    root = write(
        tmp_path / "c",
        {
            "wgslconfig.toml": '[preamble]\nfiles = ["pre.wgsl"]\n',
            "pre.wgsl": "const SCALE = 2.0;\n\n",
            "k.wgsl": OUT + "@compute @workgroup_size(1)\nfn k() {\n\tout[0] = SCALE;\n}\n",
        },
    )
    kernel = on(session, root).kernel("k")
    tree = parse(kernel.text, kernel.file)
    fn = tree.functions()[0]
    statement = fn.body.body[0]
    assert kernel.position(statement.span[0]) == ("k.wgsl", 4, 2)
    assert kernel.position(tree.decls[0].span[0]) == ("pre.wgsl", 1, 1)


def test_what_the_checker_cannot_work_out_is_named_beside_the_entry_point_and_deferred():
    from workbench.wgsl.reflect import reflect

    info = reflect(OUT + "@compute @workgroup_size(1)\nfn k() {\n  out[0] = mystery(1.0);\n}\n")
    assert info.entry_points["k"].deferred == ((4, "no rule for the builtin 'mystery'"),)
    assert not info.entry_problems  # the compiler, not the front end, judges it


PREAMBLE = {
    "wgslconfig.toml": '[preamble]\nfiles = ["pre.wgsl"]\n',
    "pre.wgsl": "const SCALE = 2.0;\n\n",
}
# A builtin the checker has no rule for (yet): wgpu compiles it, the front end defers.
DEFERRING = (
    OUT + "@compute @workgroup_size(1)\nfn k() {\n"
    "    out[0] = SCALE * f32(dot4U8Packed(0x01020304u, 0x01010101u));\n}\n"
)


def test_what_the_front_end_defers_is_said_beside_the_kernel_in_the_users_file(
    session, tmp_path, capsys
):
    from workbench.cli import main

    root = write(tmp_path / "c", {**PREAMBLE, "k.wgsl": DEFERRING})
    s = on(session, root)
    kernel = s.kernel("k")
    note = "k.wgsl:4: no rule for the builtin 'dot4U8Packed'"
    assert kernel.deferred == (note,)
    # Deferred, not refused: it compiles and computes what WGSL says, 2 * (4*1 + 3*1 + 2*1 + 1*1).
    assert s.status(kernel).kind == StatusKind.OK
    ran = s.run(s.case(kernel, dims={"n": 4}), reference=False)
    assert ran.outputs["out"][0] == 20.0

    assert main(["list", str(root), "--json"]) == 0
    (row,) = json.loads(capsys.readouterr().out)["kernels"]
    assert row["deferred"] == [note] and row["status"] == "ok"
    assert main(["list", str(root)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert f"      not worked out here, left to the compiler: {note}" in lines


def test_a_body_the_parser_cannot_read_is_noted_where_the_reading_stopped(session, tmp_path):
    body = "fn k() {\n    let a = 1.0;\n    out[0] = (a;\n}\n"
    root = write(
        tmp_path / "c", {**PREAMBLE, "k.wgsl": OUT + "@compute @workgroup_size(1)\n" + body}
    )
    s = on(session, root)
    kernel = s.kernel("k")
    (note,) = kernel.deferred
    assert note == "k.wgsl:5: the body of 'k' was not read: expected ')' but found ';'"
    assert s.status(kernel).kind == StatusKind.COMPILE_ERROR  # the compiler's word on it


def test_an_unknown_attribute_on_one_entry_point_affects_that_kernel_alone(session, tmp_path):
    root = write(
        tmp_path / "c",
        {
            "k.wgsl": OUT + "@compute @workgroup_size(1) @fast\nfn odd() { out[0] = 1.0; }\n"
            "@compute @workgroup_size(1)\nfn fine() { out[0] = 2.0; }\n"
        },
    )
    s = on(session, root)
    assert s.kernel("odd").problem.startswith("k.wgsl:3: @fast is no attribute of a function")
    assert s.status(s.kernel("fine")).kind == StatusKind.OK


def test_an_enable_wgpu_knows_needs_its_feature_by_wgpus_name(session, tmp_path):
    root = write(
        tmp_path / "c",
        {
            "k.wgsl": "enable clip_distances;\n"
            + OUT
            + "@compute @workgroup_size(1)\nfn k() { out[0] = 1.0; }\n"
        },
    )
    kernel = on(session, root).kernel("k")
    assert kernel.features == ("clip-distances",)
