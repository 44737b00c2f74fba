"""Shipped kernels against peers measured in the same run, on the same GPU.

For every shipped kernel (elementwise ones at sizes far over the L2 cache, `--seed-dims` for the
seed defaults; attention at its defaults) this prints the workbench time
(GPU timestamps, median of `--reps`), its GB/s by the spec's cost model, and two ratios:
  - vs torch: the same operation in eager PyTorch on the same GPU (CUDA events), when torch with CUDA
    is present (the GPU machine has it);
  - vs copy: a device-to-device copy of the same number of bytes (the memory roofline), in torch when
    available, else a WGSL copy kernel through the same engine.
A ratio above 1 means the workbench kernel is faster than the peer. Absolute times count only on a GPU.

    python benchmarks/bench_kernels.py [--reps 50] [--only NAME ...] [--seed-dims] [--json OUT.json]
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections.abc import Callable
from typing import Any

import numpy as np

from workbench.session import Case, Session
from workbench.specs.registry import all_specs
from workbench.wgsl.corpus import Corpus, Kernel, Piece

_COPY_WGSL = """
@group(0) @binding(0) var<storage, read> src: array<vec4<f32>>;
@group(0) @binding(1) var<storage, read_write> dst: array<vec4<f32>>;
@group(0) @binding(2) var<uniform> n: u32;
@compute @workgroup_size(256)
fn copy_vec4(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = gid.y * nwg.x * 256u + gid.x;
    if (i < n) { dst[i] = src[i]; }
}
"""


def torch_peers() -> dict[str, Callable[[Case, Any], Callable[[], Any]]]:
    """Per kernel: given the case and torch, a zero-argument callable doing the same work."""

    def t(case: Case, torch: Any, name: str) -> Any:
        return torch.from_numpy(np.ascontiguousarray(case.inputs[name])).cuda()

    def gelu(case, torch):
        x = t(case, torch, "x")
        return lambda: torch.nn.functional.gelu(x, approximate="tanh")

    def swiglu(case, torch):
        g, u = t(case, torch, "gate"), t(case, torch, "up")
        return lambda: torch.nn.functional.silu(g) * u

    def gelu_bwd(case, torch):
        g, x = t(case, torch, "grad_hidden"), t(case, torch, "pre_gelu")
        return lambda: torch.ops.aten.gelu_backward(g, x, approximate="tanh")

    def swiglu_bwd(case, torch):
        g, gate, up = (t(case, torch, k) for k in ("grad_hidden", "gate", "up"))

        def run():
            s = torch.sigmoid(gate)
            return g * up * s * (1 + gate * (1 - s)), g * gate * s

        return run

    def embed(case, torch, table="table", tokens="tokens"):
        tok = t(case, torch, tokens).long()
        tab = t(case, torch, table)
        vocab = case.dims["vocab"]
        tok = tok.clamp(max=vocab - 1)
        return lambda: torch.nn.functional.embedding(tok, tab.view(vocab, -1)).float()

    def embed_bwd(case, torch):
        tok = t(case, torch, "tokens").long().clamp(max=case.dims["vocab"] - 1)
        go = t(case, torch, "grad_out").view(tok.numel(), -1)
        vocab = case.dims["vocab"]
        return lambda: torch.ops.aten.embedding_dense_backward(go, tok, vocab, -1, False)

    def qkv(case, torch):
        d = case.dims
        s, h, kv, hd = d["seq"], d["n_heads"], d["n_kv_heads"], d["head_dim"]
        q = t(case, torch, "Q").view(1, s, h, hd).transpose(1, 2)
        k = t(case, torch, "K").view(1, s, kv, hd).transpose(1, 2)
        v = t(case, torch, "V").view(1, s, kv, hd).transpose(1, 2)
        return q.contiguous(), k.contiguous(), v.contiguous()

    def attn_fwd(case, torch):
        q, k, v = qkv(case, torch)
        f = torch.nn.functional.scaled_dot_product_attention
        return lambda: f(q, k, v, is_causal=True, enable_gqa=True)

    def attn_bwd(case, torch):
        q, k, v = (x.requires_grad_() for x in qkv(case, torch))
        out = torch.nn.functional.scaled_dot_product_attention(
            q, k, v, is_causal=True, enable_gqa=True
        )
        grad = torch.randn_like(out)
        return lambda: torch.autograd.grad(out, (q, k, v), grad, retain_graph=True)

    def rope(case, torch, name):
        d = case.dims
        x = t(case, torch, name)
        hd = d["head_dim"]
        pos = torch.arange(d["seq"], device="cuda").float() + d["pos_offset"]
        inv = 10000.0 ** (-torch.arange(0, hd, 2, device="cuda").float() / hd)
        ang = pos[:, None] * inv[None, :]
        c, sn = torch.cos(ang)[:, None, :], torch.sin(ang)[:, None, :]
        xv = x.view(d["seq"], -1, hd // 2, 2)

        def run():
            a, b = xv[..., 0], xv[..., 1]
            return torch.stack((a * c - b * sn, a * sn + b * c), -1)

        return run

    def conv(case, torch, backward):
        d = case.dims
        x = t(case, torch, "x").view(d["batch"], d["dim"], d["seqlen"])
        w = t(case, torch, "weight").view(d["dim"], d["width"])
        b = t(case, torch, "bias") if d["bias"] else None
        f = torch.nn.functional

        def fwd(x, w, b):
            y = f.conv1d(x, w.unsqueeze(1), b, padding=d["width"] - 1, groups=d["dim"])
            y = y[..., : d["seqlen"]]
            return f.silu(y) if d["silu"] else y

        if not backward:
            return lambda: fwd(x, w, b)
        xs, ws = x.requires_grad_(), w.requires_grad_()
        bs = b.requires_grad_() if b is not None else None
        out = fwd(xs, ws, bs)
        dout = t(case, torch, "dout").view_as(out)
        wrt = tuple(v for v in (xs, ws, bs) if v is not None)
        return lambda: torch.autograd.grad(out, wrt, dout, retain_graph=True)

    return {
        "gelu_inplace": gelu,
        "swiglu_combine": swiglu,
        "ffn_gelu_backward": gelu_bwd,
        "ffn_swiglu_backward": swiglu_bwd,
        "embed_lookup": embed,
        "embed_lookup_w16": lambda c, tr: embed(c, tr, "table_w16", "tokens_w16"),
        "embed_backward": embed_bwd,
        "attention_forward": attn_fwd,
        "attention_backward": attn_bwd,
        "attention_backward_short": attn_bwd,
        "rope_q": lambda c, tr: rope(c, tr, "Q"),
        "rope_k": lambda c, tr: rope(c, tr, "K"),
        "rope_q_backward": lambda c, tr: rope(c, tr, "dQ"),
        "rope_k_backward": lambda c, tr: rope(c, tr, "dK"),
        "causal_conv1d_fwd": lambda c, tr: conv(c, tr, False),
        "causal_conv1d_bwd": lambda c, tr: conv(c, tr, True),
    }


def time_torch(fn: Callable[[], Any], torch: Any, reps: int) -> float:
    """Milliseconds per call: CUDA events around `reps` back-to-back calls, after warm-up, so
    launches overlap execution the way our timed passes run back to back in one submit."""
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    a.record()
    for _ in range(reps):
        fn()
    b.record()
    b.synchronize()
    return a.elapsed_time(b) / reps


# Dims large enough that every buffer is far bigger than the H100's 50 MB L2 cache, so GB/s
# figures are memory-bound figures (the seed defaults fit in L2 and flatter everyone).
LARGE = {
    "gelu_inplace": {"seq": 16384},
    "swiglu_combine": {"seq": 16384},
    "ffn_gelu_backward": {"seq": 16384},
    "ffn_swiglu_backward": {"seq": 16384},
    "embed_lookup": {"seq": 16384},
    "embed_lookup_w16": {"seq": 16384},
    "embed_backward": {"seq": 16384},
    "rope_q": {"seq": 16384},
    "rope_k": {"seq": 16384},
    "rope_q_backward": {"seq": 16384},
    "rope_k_backward": {"seq": 16384},
    "causal_conv1d_fwd": {"batch": 8, "dim": 1024, "seqlen": 4096},
    "causal_conv1d_bwd": {"batch": 8, "dim": 1024, "seqlen": 4096},
}


def copy_kernel_ms(session: Session, nbytes: int, reps: int) -> float:
    """A WGSL vec4 copy of `nbytes` (half read, half written) through the same engine."""
    piece = Piece("copy.wgsl", 1, _COPY_WGSL)
    kernel = Kernel("copy_vec4", "copy.wgsl", 1, (piece,), entry="copy_vec4")
    session_copy = Session(Corpus(root=session.corpus.root, kernels=[kernel]), session.gpu)
    n = max(1, nbytes // 2 // 16)
    case = session_copy.case("copy_vec4", dims={"n": n}, inputs={"src": "zeros"})
    run = session_copy.run(case, reps=reps, warmup=3, reference=False)
    return run.timing.median_ms


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--reps", type=int, default=50)
    ap.add_argument("--adapter")
    ap.add_argument("--only", nargs="*", default=None)
    ap.add_argument("--json", metavar="FILE")
    ap.add_argument(
        "--seed-dims", action="store_true", help="the seed default dims instead of L2-busting ones"
    )
    args = ap.parse_args()
    try:
        import torch

        if not torch.cuda.is_available():
            torch = None
    except ImportError:
        torch = None
    session = Session.open(adapter=args.adapter)
    print(f"adapter: {session.adapter.label}   torch peer: {'yes' if torch else 'no'}", flush=True)
    peers = torch_peers()
    rows = []
    hdr = f"{'kernel':<30} {'ours':>10} {'GB/s':>8} {'torch':>10} {'vs torch':>9} {'vs copy':>8}"
    print(hdr)
    for name in all_specs():
        if args.only and name not in args.only:
            continue
        case = session.case(name, dims={} if args.seed_dims else LARGE.get(name, {}))
        run = session.run(case, reps=args.reps, warmup=3, reference=False)
        ours = run.timing.median_ms
        cost = case.cost
        gbs = cost.bytes / (ours / 1e3) / 1e9 if cost else math.nan
        peer_ms = math.nan
        if torch is not None and name in peers:
            peer_ms = time_torch(peers[name](case, torch), torch, args.reps)
        if torch is not None:
            src = torch.empty(max(1, cost.bytes // 2 // 4), device="cuda")
            dst = torch.empty_like(src)
            copy_ms = time_torch(lambda s=src, d=dst: d.copy_(s), torch, args.reps)
        else:
            copy_ms = copy_kernel_ms(session, cost.bytes, args.reps)
        row = {
            "kernel": name,
            "dims": case.dims,
            "ours_ms": ours,
            "gb_per_s": gbs,
            "torch_ms": peer_ms,
            "vs_torch": peer_ms / ours if not math.isnan(peer_ms) else None,
            "copy_ms": copy_ms,
            "vs_copy": copy_ms / ours,
            "method": run.timing.method,
        }
        rows.append(row)
        vt = f"{row['vs_torch']:.2f}x" if row["vs_torch"] else "–"
        tms = f"{peer_ms:.4f}" if not math.isnan(peer_ms) else "–"
        print(
            f"{name:<30} {ours:>10.4f} {gbs:>8.1f} {tms:>10} {vt:>9} {row['vs_copy']:>7.2f}x",
            flush=True,
        )
    print("(times in ms, medians; 'vs' = peer time / our time, >1 means ours is faster)")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump({"adapter": session.adapter.label, "rows": rows}, fh, indent=2, default=str)
    return 0


if __name__ == "__main__":
    sys.exit(main())
