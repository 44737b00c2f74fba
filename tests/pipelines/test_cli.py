"""`workbench step` and `workbench list --pipelines`: the JSON shape, exit codes, every pipeline-file
mistake as one line naming file, step and field (exit 2, before any GPU work), user pipelines on
user corpora, and --divergence finding the one kernel with a planted bug."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from workbench.session import Session

from .conftest import shipped_text, step_json

SCALE_KERNEL = """
@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> y: array<f32>;
@group(0) @binding(2) var<uniform> n: u32;
@compute @workgroup_size(64)
fn scale2(@builtin(global_invocation_id) gid: vec3<u32>) {
    if (gid.x < n) { y[gid.x] = 2.0 * x[gid.x]; }
}
"""


def test_step_json_has_the_documented_shape(cli) -> None:
    rc, doc = step_json(cli, "swiglu")
    assert rc == 0
    assert {"pipeline", "adapter", "dims", "steps", "agree", "first_divergence", "ok"} <= set(doc)
    assert doc["pipeline"] == "swiglu" and doc["dims"] == {"seq": 64, "d_ff": 256} and doc["ok"]
    step = doc["steps"][1]
    assert {"index", "kernel", "ms", "written", "ok", "compare"} <= set(step)
    assert step["kernel"] == "ffn_swiglu_backward"
    assert step["written"] == {"grad_gate": 64 * 256, "grad_up": 64 * 256}
    assert set(step["compare"]) == {"grad_gate", "grad_up"}
    assert doc["first_divergence"] is None


def test_step_text_to_a_step_with_dims_and_a_branch(cli) -> None:
    rc, out, _ = cli("step", "attention", "--dim", "seq=32", "--to", "4", "--branch", "streaming")
    assert rc == 0
    assert "attention (branch streaming)" in out and "seq 32" in out
    assert "attention_backward " in out and "not run (--to 4)" in out
    assert "agree checks skipped" in out
    rc, out, _ = cli("step", "attention", "--cap", "100KiB")
    assert rc == 0 and "the cap evicted steps 1–" in out


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["nosuch"], "no pipeline named 'nosuch'; shipped pipelines: attention"),
        (["gelu", "--branch", "nope"], "gelu.toml: no branch 'nope'; branches: none"),
        (["gelu", "--to", "3"], "--to 3: gelu has steps 1 to 2"),
        (["gelu", "--dim", "width=3"], "no dim 'width' in this pipeline; its dims are seq, d_ff"),
        (["attention", "--dim", "seq=2048"], "dims.seq: 2048 is outside [1, 1024]"),
        (["gelu", "--cap", "lots"], "--cap 'lots': give a size"),
        (
            ["attention", "--dim", "n_kv_heads=3"],
            "step 3 (attention_forward) dims: attention_forward: n_heads=4 is not a multiple",
        ),
    ],
)
def test_bad_arguments_give_exit_2_and_one_line(cli, args: list[str], message: str) -> None:
    rc, out, err = cli("step", *args)
    assert rc == 2 and out == ""
    assert err.count("\n") == 1 and message in err, err


def _mistakes() -> list[tuple[str, str, str, str]]:
    """(id, pipeline, (old, new) edit of its shipped file, what the one line must say)."""
    return [
        (
            "unknown kernel",
            "gelu",
            'kernel = "ffn_gelu_backward"',
            'kernel = "ffn_gelu_backwards"',
            "step 2 (ffn_gelu_backwards) kernel: no kernel named 'ffn_gelu_backwards'",
        ),
        (
            "unbound binding",
            "gelu",
            'pre_gelu = "pre_gelu", ',
            "",
            "step 2 (ffn_gelu_backward) bind.pre_gelu: binding 'pre_gelu' of ffn_gelu_backward "
            "is not bound",
        ),
        (
            "buffer too small",
            "attention",
            'LSE = { shape = ["seq", "n_heads"] }',
            'LSE = { shape = ["seq"] }',
            "step 3 (attention_forward) bind.LSE: buffer LSE (64 float32, 256 bytes) is too small: "
            "attention_forward expects 64x4 (1,024 bytes)",
        ),
        (
            "dim cycle",
            "gelu",
            'seq = { default = 64, min = 1, max = 65535, doc = "tokens" }\nd_ff = { default = 256,',
            'seq = { default = "d_ff // 4" }\nd_ff = { default = "4 * seq",',
            "dims.seq: dim cycle seq -> d_ff -> seq; give one a number",
        ),
        (
            "bad recipe",
            "swiglu",
            'init = "randn:2"',
            'init = "gaussian:2"',
            "buffers.up.init: unknown input recipe 'gaussian:2'",
        ),
        (
            "bad recipe number",
            "swiglu",
            'init = "randn:2"',
            'init = "uniform:a:b"',
            "buffers.up.init: bad number in recipe 'uniform:a:b'",
        ),
        (
            "unknown binding",
            "swiglu",
            'bind = { gate = "gate", up = "up", hidden = "hidden" }',
            'bind = { gate = "gate", up = "up", hidden = "hidden", out = "hidden" }',
            "step 1 (swiglu_combine) bind.out: swiglu_combine has no binding 'out'",
        ),
        (
            "unknown buffer",
            "swiglu",
            'bind = { gate = "gate", up = "up", hidden = "hidden" }',
            'bind = { gate = "gate", up = "upp", hidden = "hidden" }',
            "step 1 (swiglu_combine) bind.up: no buffer 'upp'",
        ),
        (
            "wrong dtype",
            "swiglu",
            'up = { shape = ["seq", "d_ff"], init = "randn:2" }',
            'up = { shape = ["seq", "d_ff"], dtype = "f16", init = "randn:2" }',
            "step 1 (swiglu_combine) bind.up: buffer up holds float16, swiglu_combine expects "
            "float32",
        ),
        (
            "TOML syntax",
            "gelu",
            "[buffers]",
            "[buffers",
            "TOML: ",
        ),
        (
            "unknown key",
            "gelu",
            'kernel = "gelu_inplace"',
            'kernel = "gelu_inplace"\nkernal = "x"',
            "step 1: unknown key 'kernal'; allowed: bind, dims",
        ),
        (
            "step dim the spec lacks",
            "gelu",
            'kernel = "gelu_inplace"',
            'kernel = "gelu_inplace"\ndims = { vocab = 3 }',
            "step 1 (gelu_inplace) dims.vocab: gelu_inplace has no dim 'vocab'",
        ),
        (
            "branch replaces unknown step",
            "attention",
            'replaces = ["dq", "dkdv"]',
            'replaces = ["dq", "dkvd"]',
            "branches.streaming.replaces: no step has id 'dkvd'",
        ),
        (
            "mistake inside a branch",
            "attention",
            'kernel = "attention_backward"\n',
            'kernel = "attention_backward"\ngrid = [1, -1]\n',
            "branch streaming step 1 (attention_backward) grid: [1, -1, 1] has a negative size",
        ),
    ]


@pytest.mark.parametrize(
    ("pipeline", "old", "new", "message"),
    [m[1:] for m in _mistakes()],
    ids=[m[0] for m in _mistakes()],
)
def test_each_pipeline_file_mistake_is_one_line_and_exit_2_before_gpu_work(
    cli,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    pipeline: str,
    old: str,
    new: str,
    message: str,
) -> None:
    text = shipped_text(pipeline)
    assert text.count(old) >= 1, old
    path = tmp_path / f"{pipeline}.toml"
    path.write_text(text.replace(old, new, 1), encoding="utf-8")

    def no_gpu(*_args, **_kw):
        raise AssertionError("GPU work before the pipeline file was checked")

    monkeypatch.setattr(Session, "allocate", no_gpu)
    monkeypatch.setattr(Session, "dispatch_on", no_gpu)
    rc, out, err = cli("step", str(path))
    assert rc == 2 and out == ""
    assert err.count("\n") == 1, err
    assert err.startswith(f"workbench: {path}: "), err
    assert message in err, err


def test_unreadable_pipeline_files_are_one_line(cli, tmp_path: Path) -> None:
    binary = tmp_path / "bin.toml"
    binary.write_bytes(b"\xff\xfe\x00name")
    rc, _, err = cli("step", str(binary))
    assert rc == 2 and err.count("\n") == 1 and "is not UTF-8 text" in err
    rc, _, err = cli("step", str(tmp_path / "missing.toml"))
    assert rc == 2 and "does not exist" in err


def test_a_user_pipeline_with_an_ad_hoc_kernel(cli, tmp_path: Path) -> None:
    corpus = tmp_path / "mine"
    corpus.mkdir()
    (corpus / "scale.wgsl").write_text(SCALE_KERNEL, encoding="utf-8")
    path = tmp_path / "double.toml"
    path.write_text(
        """
name = "double"
doc = "x -> 2x -> 4x"
[dims]
n = 1000
[buffers]
a = { shape = ["n"], init = "arange" }
b = { shape = ["n"] }
c = { shape = ["n"] }
[[steps]]
kernel = "scale2"
bind = { x = "a", y = "b" }
uniforms = { n = "n" }
grid = ["cdiv(n, 64)"]
[[steps]]
kernel = "scale2"
bind = { x = "b", y = "c" }
uniforms = { n = "n" }
grid = ["cdiv(n, 64)"]
[[agree]]
pair = ["b", "c"]
""",
        encoding="utf-8",
    )
    rc, doc = step_json(cli, str(path), "--corpus", str(corpus))
    # The pair check compares c (4x) with b (2x): it fails, and says so.
    assert rc == 1 and doc["ok"] is False
    assert [s["ok"] for s in doc["steps"]] == [None, None]
    assert doc["steps"][1]["written"] == {"c": 999}  # 4 * 0 is still 0
    assert doc["agree"][0]["ok"] is False and doc["agree"][0]["what"] == "c vs b"
    rc, doc = step_json(cli, str(path), "--corpus", str(corpus), "--to", "1")
    assert rc == 0 and doc["steps"][0]["written"] == {"b": 999}
    missing = path.read_text().replace('uniforms = { n = "n" }\ngrid', "grid", 1)
    path.write_text(missing, encoding="utf-8")
    rc, _, err = cli("step", str(path), "--corpus", str(corpus))
    assert rc == 2 and "step 1 (scale2) uniforms.n: uniform 'n' of scale2 is not set" in err


def test_divergence_names_the_kernel_with_a_planted_bug(
    cli, corpus_copy: Callable[[str, str, str], Path]
) -> None:
    """dK off by 1% in attention_backward_short_dKdV (step 5): the divergence names step 5 and dK,
    not an earlier step; rope_k_backward (step 7), judged on its own inputs, still passes."""
    root = corpus_copy(
        "10_backward_attention.wgsl", "dK[o] = dK[o] + tk.x;", "dK[o] = dK[o] + tk.x * 1.01;"
    )
    rc, doc = step_json(cli, "attention", "--corpus", str(root), "--divergence")
    assert rc == 1 and doc["ok"] is False
    assert [s["ok"] for s in doc["steps"]] == [True, True, True, True, False, True, True]
    div = doc["first_divergence"]
    assert div["step"] == 5 and div["kernel"] == "attention_backward_short_dKdV"
    assert div["buffer"] == "dK" and div["index"].startswith("seq=")
    assert div["max_abs"] > 1e-3
    assert not all(a["ok"] for a in doc["agree"])  # the streaming branch disagrees with it
    rc, out, _ = cli("step", "attention", "--corpus", str(root), "--divergence")
    assert "first divergence: step 5 attention_backward_short_dKdV, dK:" in out


def test_list_pipelines(cli) -> None:
    rc, out, _ = cli("list", "--pipelines")
    assert rc == 0
    assert "rope_q → rope_k → attention_forward → attention_backward_short" in out
    assert "branch streaming: attention_backward instead of dq, dkdv" in out
    rc, out, _ = cli("list", "--pipelines", "--json")
    rows = {p["name"]: p for p in json.loads(out)["pipelines"]}
    assert set(rows) == {"attention", "conv1d", "embedding", "gelu", "swiglu"}
    assert rows["embedding"]["steps"] == ["embed_lookup", "embed_lookup_w16", "embed_backward"]
