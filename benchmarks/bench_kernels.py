"""Shipped kernels against their peers, measured in one run on one GPU, and the table it writes.

For every row (a kernel, or the two kernels of the attention split backward together) this
measures, in the same process on the same GPU:
  - ours: the workbench kernel through the session, timed the two ways torch is (time_ours);
  - torch eager: the same operation in PyTorch (time_torch);
  - torch.compile: that expression compiled by Inductor (elementwise rows only: the peer a user
    would pick for them);
  - copy: a torch device-to-device copy moving the bytes the row's cost model counts (half read,
    half written): the memory roofline at that size;
  - WGSL copy: a vec4 copy of the same bytes through the same engine and timing as ours: what
    this API reaches at that size, which shows how much of a gap to torch's copy is the kernel
    and how much the path.
Every time on both sides is the faster of two methods, the same two for each: the median of one
call timed alone (GPU timestamps around each dispatch; CUDA events around each call) and the
mean of `--reps` calls back to back between two marks (timestamps at the beginning and end of
one compute pass of that many dispatches; two CUDA events around that many calls), where a short
call's ramp-up and tail overlap its neighbours'. In-place kernels start each of our batches from
their inputs (Session.time_back_to_back), and outputs are checked on the first dispatch, before
any timing.
Ratios are peer time / our time (above 1: ours is faster); "% of copy" is copy time / our time.
Each row carries its targets from issue 13 (attention past 512 tokens: issue 30); a miss prints by
how much. Rows marked "variant"
time the changed-ABI kernels of benchmarks/abi_variants/ (a corpus described in its own
workbench.toml, checked against the shipped float64 references) beside the seed-ABI kernel they
vary, over the same bytes and with the same peers: what a wider element type buys. Elementwise
sizes are far over the H100's 50 MB L2 cache. Without torch and CUDA only our times (and a WGSL copy) are shown.

    python benchmarks/bench_kernels.py [--reps 50] [--only LABEL ...] [--check]
        [--json OUT.json] [--write-docs docs/benchmarks.md [--section "## TITLE"]]

`--check` also compares every output with the spec's float64 reference at the benchmark sizes
(slow on a CPU). `--write-docs` replaces the generated part of the section "## Kernels on the
H100" (or `--section`) of the given Markdown file (creating the section if missing); the prose
after the generated part, and every other section, are kept.
"""

from __future__ import annotations

import argparse
import datetime
import json
import math
import re
import shlex
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from workbench.errors import LimitError
from workbench.session import DEFAULT_WARMUP_MS, Case, Run, Session
from workbench.wgsl.corpus import Corpus, Kernel, Piece, load_corpus

SECTION = "## Kernels on the H100"
BEGIN = "<!-- bench_kernels.py: generated, do not edit by hand -->"
END = "<!-- bench_kernels.py: end of generated part -->"

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

FFN = {"seq": 8192, "d_ff": 4096}  # 33.5M elements, 134 MB per tensor
EMBED = {"seq": 16384, "d_model": 768, "vocab": 16384}
ROPE = {"seq": 16384}
# RoPE's K tensors at seq 16384 are 16 MiB (a 10-15 us kernel, inside the 50 MB L2): launch and
# timing method weigh on that figure, so the rows are repeated at 4x the tokens.
ROPE_LONG = {"seq": 65536}
CONV = {"batch": 8, "dim": 1024, "seqlen": 4096, "width": 4, "bias": 1}
ATTN = {"n_heads": 12, "n_kv_heads": 4, "head_dim": 64}
# Sequence lengths of the attention rows: the split backward is refused past 1024 (its P/dS
# scratch grows as seq^2), so its row is at 512 only.
ATTN_SEQS = (512, 2048, 8192, 16384)
# The streaming backward's changed-ABI variants (benchmarks/abi_variants/), by their rows' label:
# O bound (D = rowsum(dO * O), no first pass), that with dK/dV added by native f32 atomics, and
# the seed kernel with only the f32 atomics.
ATTN_VARIANTS = {
    "O-bound ABI variant": "attention_backward_o",
    "O-bound f32-atomic ABI variant": "attention_backward_of32",
    "f32-atomic ABI variant": "attention_backward_f32",
}


@dataclass(frozen=True)
class Row:
    """One line of the table: the kernels timed together, their dims and the issue's targets."""

    label: str
    kernels: tuple[str, ...]
    dims: dict[str, int]
    peer: str  # key into torch_peers()
    min_copy: float | None = None  # fraction of the copy roofline
    min_eager: float | None = None
    min_compile: float | None = None
    compiled: bool = False  # also time torch.compile of the peer
    # A changed-ABI variant: its kernels come from benchmarks/abi_variants/, and its bytes and
    # flops are those of this seed kernel's cost model at the same dims.
    seed: str | None = None


def _elementwise(label: str, kernel: str, dims: dict[str, int]) -> Row:
    return Row(label, (kernel,), dims, kernel, min_copy=0.9, min_compile=1.0, compiled=True)


VARIANTS = Path(__file__).resolve().parent / "abi_variants"


def _variant(seed: str, dims: dict[str, int]) -> Row:
    """The row of the vec4-ABI variant of `seed` (no targets: it is evidence, not shipped)."""
    return Row(f"{seed}, vec4 ABI variant", (f"{seed}_vec4",), dims, seed, compiled=True, seed=seed)


ROWS = [
    _elementwise("gelu_inplace", "gelu_inplace", FFN),
    _elementwise("swiglu_combine", "swiglu_combine", FFN),
    _elementwise("ffn_gelu_backward", "ffn_gelu_backward", FFN),
    _elementwise("ffn_swiglu_backward", "ffn_swiglu_backward", FFN),
    *(_variant(k, FFN) for k in ("swiglu_combine", "ffn_gelu_backward", "ffn_swiglu_backward")),
    _elementwise("embed_lookup", "embed_lookup", EMBED),
    _elementwise("embed_lookup_w16", "embed_lookup_w16", EMBED),
    _elementwise("rope_q", "rope_q", ROPE),
    _elementwise("rope_k", "rope_k", ROPE),
    _elementwise("rope_q_backward", "rope_q_backward", ROPE),
    _elementwise("rope_k_backward", "rope_k_backward", ROPE),
    *(_variant(k, ROPE) for k in ("rope_k", "rope_k_backward")),
    *(
        _elementwise(f"{k}, seq 65536", k, ROPE_LONG)
        for k in ("rope_q", "rope_k", "rope_q_backward", "rope_k_backward")
    ),
    Row("embed_backward", ("embed_backward",), EMBED, "embed_backward", min_eager=1.0),
    Row("causal_conv1d_fwd", ("causal_conv1d_fwd",), CONV | {"silu": 0}, "conv_fwd"),
    Row(
        "causal_conv1d_bwd",
        ("causal_conv1d_bwd",),
        CONV | {"silu": 0},
        "conv_bwd",
        min_copy=0.6,
        min_eager=1.5,
    ),
    Row(
        "causal_conv1d_bwd, SiLU",
        ("causal_conv1d_bwd",),
        CONV | {"silu": 1},
        "conv_bwd",
        min_copy=0.6,
        min_eager=1.5,
    ),
    *(
        Row(
            f"attention_forward, seq {seq}",
            ("attention_forward",),
            ATTN | {"seq": seq},
            "attn_fwd",
            min_eager=0.5 if seq <= 512 else 1.5,
        )
        for seq in ATTN_SEQS
    ),
    Row(
        "attention backward, split, seq 512",
        ("attention_backward_short", "attention_backward_short_dKdV"),
        ATTN | {"seq": 512},
        "attn_bwd",
        min_eager=0.5,
    ),
    *(
        Row(
            f"attention backward, streaming, seq {seq}",
            ("attention_backward",),
            ATTN | {"seq": seq},
            "attn_bwd",
            min_eager=None if seq <= 512 else 0.5,
        )
        for seq in ATTN_SEQS
    ),
    *(
        Row(
            f"attention backward, streaming, seq {seq}, {what}",
            (kernel,),
            ATTN | {"seq": seq},
            "attn_bwd",
            seed="attention_backward",
        )
        for what, kernel in ATTN_VARIANTS.items()
        for seq in ATTN_SEQS[1:]
    ),
]


def torch_peers() -> dict[str, Callable[[Case, Any], Callable[[], Any]]]:
    """Per peer key: given the row's first case and torch, a zero-argument callable doing the
    same work as the row."""

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
        vocab = case.dims["vocab"]
        tok = t(case, torch, tokens).long().clamp(max=vocab - 1)
        tab = t(case, torch, table).view(vocab, -1)
        return lambda: torch.nn.functional.embedding(tok, tab).float()

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
        "attn_fwd": attn_fwd,
        "attn_bwd": attn_bwd,
        "rope_q": lambda c, tr: rope(c, tr, "Q"),
        "rope_k": lambda c, tr: rope(c, tr, "K"),
        "rope_q_backward": lambda c, tr: rope(c, tr, "dQ"),
        "rope_k_backward": lambda c, tr: rope(c, tr, "dK"),
        "conv_fwd": lambda c, tr: conv(c, tr, False),
        "conv_bwd": lambda c, tr: conv(c, tr, True),
    }


def compiled_peer(make: Callable[[], Callable[[], Any]], torch: Any) -> Callable[[], Any]:
    """torch.compile (Inductor, default mode, static shapes) of a peer's zero-argument call."""
    return torch.compile(make(), dynamic=False)


def time_ours(
    session: Session, case: Case, reps: int, check: bool
) -> tuple[float, dict[str, float], Run]:
    """Milliseconds per dispatch of `case`, the faster of the two methods torch is timed by (see
    time_torch): the median of GPU timestamps around each of `reps` dispatches, and the mean of
    `reps` dispatches back to back in one compute pass between two timestamps (from the case's
    inputs; in-place kernels apply at most `reps` times to their data either way). Also each
    method's figure and the run (outputs of the first dispatch, compared when `check`)."""
    run = session.run(case, reps=reps, warmup_ms=DEFAULT_WARMUP_MS, reference=check)
    stream = session.time_back_to_back(case, batch=reps, samples=1, warmup=1)
    methods = {"per_dispatch_ms": run.timing.median_ms, "back_to_back_ms": stream.median_ms}
    return min(methods.values()), methods, run


def time_torch(fn: Callable[[], Any], torch: Any, reps: int) -> float:
    """Milliseconds per call, the faster of two honest ways to time torch, so that no way of
    timing flatters our kernels: per call (the median CUDA-event time around each call, the
    statistic our timestamps give; launch gaps show for short calls) and back to back
    (time_torch_stream; neighbouring calls overlap their ramp-up and tail)."""
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    marks = [
        (torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True))
        for _ in range(reps)
    ]
    for a, b in marks:
        a.record()
        fn()
        b.record()
    marks[-1][1].synchronize()
    per_call = float(np.median([a.elapsed_time(b) for a, b in marks]))
    return min(per_call, time_torch_stream(fn, torch, reps))


def time_torch_stream(fn: Callable[[], Any], torch: Any, reps: int) -> float:
    """Milliseconds per call as the mean over `reps` back-to-back calls between two CUDA events:
    the calls' ramp-up and tail overlap, which per-call timing (ours too) cannot show."""
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


def torch_copy_ms(nbytes: int, torch: Any, reps: int) -> float:
    """A device-to-device copy moving `nbytes` in all (half read, half written)."""
    src = torch.empty(max(1, nbytes // 2 // 4), device="cuda")
    dst = torch.empty_like(src)
    return time_torch(lambda: dst.copy_(src), torch, reps)


def wgsl_copy_ms(session: Session, nbytes: int, reps: int) -> float:
    """A WGSL vec4 copy moving `nbytes` in all, through the same engine (no torch here)."""
    piece = Piece("copy.wgsl", 1, _COPY_WGSL)
    kernel = Kernel("copy_vec4", "copy.wgsl", 1, (piece,), entry="copy_vec4")
    session_copy = Session(Corpus(root=session.corpus.root, kernels=[kernel]), session.gpu)
    n = max(1, nbytes // 2 // 16)
    try:
        case = session_copy.case("copy_vec4", dims={"n": n}, inputs={"src": "zeros"})
    except LimitError:  # a copy this size does not fit the adapter's bindings (CPU adapters)
        return math.nan
    return time_ours(session_copy, case, reps, check=False)[0]


@dataclass
class Result:
    row: Row
    dims: dict[str, int]
    ours_ms: float
    nbytes: int
    flops: int
    copy_ms: float
    wgsl_copy_ms: float = math.nan
    eager_ms: float = math.nan
    compile_ms: float = math.nan
    parts_ms: dict[str, float] = field(default_factory=dict)  # ours, per kernel of the row
    # ours, per kernel of the row: each timing method's figure (time_ours)
    methods_ms: dict[str, dict[str, float]] = field(default_factory=dict)
    checked: str = "not checked"
    misses: list[str] = field(default_factory=list)

    @property
    def copy_frac(self) -> float:
        return self.copy_ms / self.ours_ms

    @property
    def wgsl_copy_frac(self) -> float:
        return self.wgsl_copy_ms / self.ours_ms

    @property
    def vs_eager(self) -> float:
        return self.eager_ms / self.ours_ms

    @property
    def vs_compile(self) -> float:
        return self.compile_ms / self.ours_ms

    def judge(self) -> None:
        """Fill `misses` with every target this result falls short of, and by how much."""
        r = self.row
        if r.min_copy is not None and self.copy_frac < r.min_copy:
            self.misses.append(
                f"{self.copy_frac:.1%} of copy, target {r.min_copy:.0%} "
                f"({_points(r.min_copy - self.copy_frac)} short)"
            )
        for name, got, want in (
            ("eager", self.vs_eager, r.min_eager),
            ("torch.compile", self.vs_compile, r.min_compile),
        ):
            if want is not None and not math.isnan(got) and got < want:
                short = 1 - got / want
                self.misses.append(
                    f"{got:.3f}x {name}, target {want:.2f}x ({short:.1%} short)"
                    if short < 0.01
                    else f"{got:.2f}x {name}, target {want:.2f}x ({short:.0%} short)"
                )

    def to_json(self) -> dict[str, Any]:
        return {
            "label": self.row.label,
            "kernels": list(self.row.kernels),
            "dims": self.dims,
            "ours_ms": self.ours_ms,
            "gb_per_s": self.nbytes / self.ours_ms / 1e6,
            "gflop_per_s": self.flops / self.ours_ms / 1e6,
            "copy_ms": self.copy_ms,
            "wgsl_copy_ms": self.wgsl_copy_ms,
            "eager_ms": self.eager_ms,
            "compile_ms": self.compile_ms,
            "parts_ms": self.parts_ms,
            "methods_ms": self.methods_ms,
            "copy_frac": self.copy_frac,
            "vs_eager": self.vs_eager,
            "vs_compile": self.vs_compile,
            "checked": self.checked,
            "misses": self.misses,
        }


def row_session(row: Row, session: Session, variants: Session | None) -> Session:
    """The session whose corpus holds the row's kernels: `variants` (benchmarks/abi_variants/)
    for a variant row."""
    if row.seed is None:
        return session
    if variants is None:
        raise ValueError(f"{row.label}: a variant row needs the abi_variants session")
    return variants


def missing_features(row: Row, session: Session, variants: Session | None) -> list[str]:
    """The device features the row's kernels need that the adapter lacks (the f32-atomic
    variant's shader-float32-atomic, say): such a row is skipped, not a crash mid-run."""
    own = row_session(row, session, variants)
    return list(dict.fromkeys(f for k in row.kernels for f in own.missing_features(own.kernel(k))))


def measure(
    session: Session,
    row: Row,
    torch: Any,
    peers: dict,
    reps: int,
    check: bool,
    variants: Session | None = None,
) -> Result:
    """Time one row: ours (summed over its kernels), its torch peers and the copy roofline.
    `variants` is the session of benchmarks/abi_variants/ for a variant row."""
    ours, nbytes, flops, checked, first, parts, methods = 0.0, 0, 0, [], None, {}, {}
    own = row_session(row, session, variants)
    for name in row.kernels:
        case = own.case(name, dims=row.dims)
        first = first or case
        ms, methods[name], run = time_ours(own, case, reps, check)
        ours += ms
        parts[name] = ms
        cost = session.case(row.seed, dims=row.dims).cost if row.seed else case.cost
        if cost:
            nbytes += cost.bytes
            flops += cost.flops
        if check:
            bad = [n for n, c in run.compare.items() if not c.ok]
            checked.append(f"{name}: {'FAILED ' + ', '.join(bad) if bad else 'ok'}")
    wgsl_ms = wgsl_copy_ms(session, nbytes, reps)
    copy_ms = torch_copy_ms(nbytes, torch, reps) if torch else wgsl_ms
    res = Result(
        row,
        dict(first.dims),
        ours,
        nbytes,
        flops,
        copy_ms,
        wgsl_ms,
        parts_ms=parts,
        methods_ms=methods,
    )
    if check:
        res.checked = "; ".join(checked)
    if torch is not None:
        try:
            res.eager_ms = time_torch(peers[row.peer](first, torch), torch, reps)
        except torch.cuda.OutOfMemoryError:
            # SDPA's fp32 backward may hold whole [heads, seq, seq] score matrices: no peer time.
            print(f"{row.label}: torch eager ran out of GPU memory", file=sys.stderr)
            torch.cuda.empty_cache()
        if row.compiled:
            fn = compiled_peer(lambda: peers[row.peer](first, torch), torch)
            res.compile_ms = time_torch(fn, torch, reps)
    res.judge()
    return res


def _points(frac: float) -> str:
    """Percentage points, with a decimal under one (a 0.4-point miss must not read "0 points")."""
    n = round(frac * 100)
    if n < 1:
        return f"{frac * 100:.1f} points"
    return f"{n} point" if n == 1 else f"{n} points"


def _fmt(v: float, spec: str) -> str:
    return "–" if math.isnan(v) else format(v, spec)


def _ratio(v: float) -> str:
    return "–" if math.isnan(v) else f"{v:.2f}x"


def _verdict(r: Result) -> str:
    """met / missed, or – where the row has no target or a peer it is judged by is unmeasured."""
    row = r.row
    needed = [(row.min_eager, r.vs_eager), (row.min_compile, r.vs_compile)]
    if all(v is None for v in (row.min_copy, row.min_eager, row.min_compile)):
        return "–"
    if r.misses:
        return "**missed**"
    return "–" if any(want is not None and math.isnan(got) for want, got in needed) else "met"


def _dims_text(dims: dict[str, int]) -> str:
    return ", ".join(f"{k} {v}" for k, v in dims.items())


def markdown(results: list[Result], header: dict[str, str]) -> str:
    """The generated part of the docs section: provenance, the table, the misses."""
    lines = [
        BEGIN,
        "",
        f"Measured {header['date']} by "
        f"`{header.get('command', 'python benchmarks/bench_kernels.py --write-docs docs/benchmarks.md')}`"
        " in one run on one GPU:",
        "",
        f"- device: {header['device']}; driver {header['driver']}; torch {header['torch']}",
        f"- copy roofline: a torch device-to-device copy of 256 MiB moved "
        f'{header["copy_gbs"]} GB/s (bytes read plus written); each row\'s "% of copy" uses a '
        "copy of that row's own bytes, timed in the same run",
        "- timing, the same two methods on both sides, the faster counts: the median of one call "
        "timed alone (ours and the WGSL copy: GPU timestamps around each dispatch; torch eager, "
        "compile and copy: CUDA events around each call) and the mean of "
        f"{header.get('reps', '50')} calls back to back between two marks (ours: timestamps at "
        "the beginning and end of one compute pass of that many dispatches, each batch from the "
        "case's inputs; torch: two CUDA events around that many calls), where a short call's "
        "ramp-up and tail overlap its neighbours'; outputs are checked on the first dispatch, "
        "before any timing; ratios are peer time / our time (above 1: ours is faster)",
        "- WGSL copy: a vec4 copy of the row's bytes through the same engine, timed as ours; "
        "% of WGSL copy = its time / ours (the kernel against what this API reaches)",
        '- rows marked "vec4 ABI variant": the same arithmetic with every buffer an '
        "`array<vec4<f32>>` instead of the seed's `array<f32>` (benchmarks/abi_variants/, checked "
        "against the same float64 references), over the seed kernel's bytes: what the wider "
        "element type buys; they carry no targets",
        '- rows marked "O-bound ABI variant": the streaming attention backward with one more '
        "binding, the forward's O, so D = rowsum(dO * O) replaces the seed kernel's first pass "
        "over the keys (benchmarks/abi_variants/attention_o.wgsl, checked against the float64 "
        "reference with that D); no targets",
        '- rows marked "O-bound f32-atomic ABI variant": the O-bound variant with dK and dV bound '
        "as `array<atomic<f32>>` and added with one native `atomicAdd` per element instead of a "
        "compare-and-swap loop on the seed's `array<atomic<u32>>` (device feature "
        "shader-float32-atomic; benchmarks/abi_variants/attention_f32.wgsl, the same reference); "
        "no targets",
        '- rows marked "f32-atomic ABI variant": the seed kernel (no O: D by a first pass over the '
        "keys) with only that change, dK and dV as `array<atomic<f32>>` added by `atomicAdd` "
        "(benchmarks/abi_variants/attention_f32.wgsl, the seed kernel's float64 reference); no "
        "targets",
        "",
        "| kernel | sizes | ours ms | GB/s | GFLOP/s | copy ms | % of copy | WGSL copy ms | "
        "% of WGSL copy | eager ms | vs eager | compile ms | vs compile | targets |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    for r in results:
        gbs = r.nbytes / r.ours_ms / 1e6
        gfl = r.flops / r.ours_ms / 1e6
        lines.append(
            f"| {r.row.label} | {_dims_text(r.dims)} | {r.ours_ms:.4f} | {gbs:,.0f} | "
            f"{gfl:,.0f} | {r.copy_ms:.4f} | {r.copy_frac:.0%} | {_fmt(r.wgsl_copy_ms, '.4f')} | "
            f"{_fmt(r.wgsl_copy_frac, '.0%')} | {_fmt(r.eager_ms, '.4f')} | "
            f"{_ratio(r.vs_eager)} | {_fmt(r.compile_ms, '.4f')} | {_ratio(r.vs_compile)} | "
            f"{_verdict(r)} |"
        )
    missed = [r for r in results if r.misses]
    lines += [
        "",
        "Targets (issues 13 and 30) missed in this run:" if missed else "Every target met.",
    ]
    lines += [f"- {r.row.label}: {'; '.join(r.misses)}" for r in missed]
    lines += ["", END]
    return "\n".join(lines)


def load_results(path: Path) -> tuple[dict[str, str], list[Result]]:
    """The header and results of a run saved with --json (rows matched to ROWS by label)."""
    data = json.loads(path.read_text())
    rows = {r.label: r for r in ROWS}
    results = []
    for j in data["rows"]:
        res = Result(
            rows[j["label"]],
            j["dims"],
            j["ours_ms"],
            round(j["gb_per_s"] * j["ours_ms"] * 1e6),
            round(j["gflop_per_s"] * j["ours_ms"] * 1e6),
            j["copy_ms"],
            wgsl_copy_ms=j.get("wgsl_copy_ms") or math.nan,
            eager_ms=j["eager_ms"] if j["eager_ms"] is not None else math.nan,
            compile_ms=j["compile_ms"] if j["compile_ms"] is not None else math.nan,
            checked=j["checked"],
            parts_ms=j.get("parts_ms", {}),
            methods_ms=j.get("methods_ms", {}),
        )
        res.judge()
        results.append(res)
    return data["header"], results


def write_docs(path: Path, generated: str, section: str = SECTION) -> None:
    """Replace the generated part of `section` in `path`, or add the section; keep the prose and
    every other section (their generated parts included)."""
    text = path.read_text() if path.exists() else "# Benchmarks\n"
    start = text.find(f"{section}\n")
    if start < 0:
        path.write_text(text.rstrip("\n") + f"\n\n{section}\n\n{generated}\n")
        return
    body = start + len(section) + 1
    nxt = text.find("\n## ", body)
    end = len(text) if nxt < 0 else nxt
    part = text[body:end]
    if BEGIN in part and END in part:
        pattern = re.escape(BEGIN) + ".*?" + re.escape(END)
        part = re.sub(pattern, lambda _m: generated, part, count=1, flags=re.S)
    else:
        part = f"\n{generated}\n{part}"
    path.write_text(text[:body] + part + text[end:])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--reps", type=int, default=50)
    ap.add_argument("--adapter")
    ap.add_argument("--only", nargs="*", default=None, help="row labels or kernel names")
    ap.add_argument("--check", action="store_true", help="compare outputs with the references")
    ap.add_argument("--json", metavar="FILE")
    ap.add_argument("--write-docs", metavar="FILE")
    ap.add_argument(
        "--section", default=SECTION, help=f'the Markdown section --write-docs fills ("{SECTION}")'
    )
    ap.add_argument(
        "--from-json", metavar="FILE", help="render --write-docs from a saved --json run instead"
    )
    args = ap.parse_args()
    if args.from_json:
        if not args.write_docs:
            ap.error("--from-json renders a saved run: give --write-docs FILE")
        header, results = load_results(Path(args.from_json))
        write_docs(Path(args.write_docs), markdown(results, header), args.section)
        return 0
    try:
        import torch

        if not torch.cuda.is_available():
            torch = None
    except ImportError:
        torch = None
    session = Session.open(adapter=args.adapter)
    variants = Session(load_corpus(VARIANTS), session.gpu)
    adapter = session.adapter
    header = {
        "date": datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "device": adapter.label,
        "driver": adapter.driver,
        "torch": torch.__version__ if torch else "absent",
        "copy_gbs": "–",
        "reps": str(args.reps),
        "command": shlex.join(["python", "benchmarks/bench_kernels.py", *sys.argv[1:]]),
    }
    if torch is not None:
        src = torch.empty(64 << 20, device="cuda")
        dst = torch.empty_like(src)
        ms = time_torch_stream(lambda: dst.copy_(src), torch, args.reps)
        header["copy_gbs"] = f"{2 * (256 << 20) / ms / 1e6:,.0f}"
    print(f"adapter: {adapter.label}, driver {adapter.driver}; torch {header['torch']}")
    print(f"copy of 256 MiB: {header['copy_gbs']} GB/s", flush=True)
    peers = torch_peers()
    rows = [
        r for r in ROWS if not args.only or r.label in args.only or set(r.kernels) & set(args.only)
    ]
    hdr = (
        f"{'kernel':<34} {'ours ms':>9} {'GB/s':>7} {'%copy':>6} {'%wgsl':>6} {'eager':>7} "
        f"{'compile':>7}"
    )
    print(hdr)
    results = []
    for row in rows:
        missing = missing_features(row, session, variants)
        if missing:
            print(f"{row.label}: skipped: needs {', '.join(missing)}", file=sys.stderr, flush=True)
            continue
        res = measure(session, row, torch, peers, args.reps, args.check, variants)
        results.append(res)
        gbs = res.nbytes / res.ours_ms / 1e6
        print(
            f"{row.label:<34} {res.ours_ms:>9.4f} {gbs:>7.0f} {res.copy_frac:>6.0%} "
            f"{_fmt(res.wgsl_copy_frac, '>6.0%')} "
            f"{_ratio(res.vs_eager):>7} {_ratio(res.vs_compile):>7}"
            + (f"  [{res.checked}]" if args.check else "")
            + (f"  MISS: {'; '.join(res.misses)}" if res.misses else ""),
            flush=True,
        )
    if args.json:
        data = {"header": header, "rows": [r.to_json() for r in results]}
        Path(args.json).write_text(json.dumps(data, indent=2, default=str))
    if args.write_docs:
        write_docs(Path(args.write_docs), markdown(results, header), args.section)
    return 0


if __name__ == "__main__":
    sys.exit(main())
