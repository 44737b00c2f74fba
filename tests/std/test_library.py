"""Each reference of the library (`std:`) against an independent computation: loops in pure Python
over small sizes (math module only), or closed forms. Each test also plants a bug in the loop
version and shows the comparison catches it, so no test can pass by comparing a thing with itself.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import pytest

from workbench.specs.std import LIBRARY, StdError, lookup

RNG = np.random.default_rng(29)


def close(a: object, b: object) -> bool:
    return bool(np.allclose(np.asarray(a, float), np.asarray(b, float), rtol=1e-12, atol=1e-12))


def agree(got: np.ndarray, loops: Callable[[bool], object]) -> None:
    """`got` equals the loop computation, and does not equal it with the planted bug."""
    assert close(got, loops(False))
    assert not close(got, loops(True))


def r(*shape: int) -> np.ndarray:
    return RNG.standard_normal(shape)


def sigmoid(v: float) -> float:
    return 1.0 / (1.0 + math.exp(-v))


UNARY_SCALAR: dict[str, Callable[[float], float]] = {
    "silu": lambda v: v * sigmoid(v),
    "gelu": lambda v: 0.5 * v * (1 + math.tanh(math.sqrt(2 / math.pi) * (v + 0.044715 * v**3))),
    "gelu_erf": lambda v: 0.5 * v * (1 + math.erf(v / math.sqrt(2))),
    "relu": lambda v: max(v, 0.0),
    "tanh": math.tanh,
    "sigmoid": sigmoid,
    "elu": lambda v: v if v > 0 else math.exp(v) - 1,
    "hardswish": lambda v: v * min(1.0, max(0.0, (v + 3) / 6)),
    "sqr": lambda v: v * v,
    "neg": lambda v: -v,
    "abs": abs,
}


@pytest.mark.parametrize("op", sorted(UNARY_SCALAR))
def test_unary_ops(op: str) -> None:
    x = r(3, 5) * 2
    f = UNARY_SCALAR[op]
    agree(
        lookup(f"std:{op}")(x=x)["y"],
        lambda bug: [
            [f(v) + (1e-3 if bug and i == j == 1 else 0) for j, v in enumerate(row)]
            for i, row in enumerate(x.tolist())
        ],
    )


def test_binary_broadcasts_by_tiling_as_ggml() -> None:
    a, b = r(2, 4, 6), r(1, 2, 3)  # each of b's sizes divides a's: index i reads i mod size

    def loops(bug: bool) -> list:
        out = np.empty(a.shape).tolist()
        for i in range(2):
            for j in range(4):
                for k in range(6):
                    # the bug: numpy-style repeat of each element instead of tiling
                    kk = k // 2 if bug else k % 3
                    out[i][j][k] = a[i, j, k] * b[0, j % 2, kk]
        return out

    agree(LIBRARY["mul"](a=a, b=b)["y"], loops)
    with pytest.raises(StdError, match="does not tile"):
        LIBRARY["add"](a=a, b=r(1, 3, 6))


def test_matmul_transposed_accumulating_and_grouped_batches() -> None:
    a, b, c = r(2, 3, 4), r(4, 5, 4), r(4, 3, 5)  # b: 4 batches, a: 2 (each serves 2)

    def loops(bug: bool) -> list:
        y = np.zeros((4, 3, 5)).tolist()
        for n in range(4):
            na = n % 2 if bug else n // 2
            for i in range(3):
                for j in range(5):
                    acc = sum(a[na, i, k] * b[n, j, k] for k in range(4))
                    y[n][i][j] = 2.0 * acc + 0.5 * c[n, i, j]
        return y

    got = LIBRARY["matmul"](a=a, b=b, c=c, transpose_b=True, alpha=2.0, beta=0.5)["y"]
    agree(got, loops)
    at = np.swapaxes(a, 1, 2).copy()
    assert close(
        LIBRARY["matmul"](a=at, b=b, c=c, transpose_a=True, transpose_b=True, alpha=2.0, beta=0.5)[
            "y"
        ],
        loops(False),
    )


def test_softmax_with_scale_mask_and_alibi() -> None:
    x, mask = r(1, 4, 2, 5), r(2, 5)
    slopes = [2 ** (-8 * (h + 1) / 4) for h in range(4)]  # ALiBi, max_bias 8, 4 heads

    def loops(bug: bool) -> list:
        out = np.zeros(x.shape).tolist()
        for h in range(4):
            for i in range(2):
                z = [0.5 * x[0, h, i, j] + (1 if bug else slopes[h]) * mask[i, j] for j in range(5)]
                top = max(z)
                e = [math.exp(v - top) for v in z]
                out[0][h][i] = [v / sum(e) for v in e]
        return out

    agree(LIBRARY["softmax"](x=x, mask=mask, scale=0.5, max_bias=8.0)["y"], loops)


def _rms_loops(x: np.ndarray, w: np.ndarray, eps: float, bug: bool) -> list:
    out = []
    for row in x.tolist():
        ms = sum(v * v for v in row) / (len(row) - (1 if bug else 0))
        out.append([v / math.sqrt(ms + eps) * w[j] for j, v in enumerate(row)])
    return out


def test_rms_norm_forward() -> None:
    x, w = r(3, 8), r(8)
    agree(
        LIBRARY["rms_norm"](x=x, eps=1e-5, weight=w)["y"], lambda bug: _rms_loops(x, w, 1e-5, bug)
    )


def numeric_grad(f: Callable[[np.ndarray], float], x: np.ndarray) -> np.ndarray:
    g = np.zeros_like(x)
    for i in np.ndindex(*x.shape):
        h = 1e-6
        xp, xm = x.copy(), x.copy()
        xp[i] += h
        xm[i] -= h
        g[i] = (f(xp) - f(xm)) / (2 * h)
    return g


@pytest.mark.parametrize("name", ["rms_norm", "layer_norm"])
def test_norm_backward_is_the_derivative_of_the_forward(name: str) -> None:
    x, dy, w = r(2, 6), r(2, 6), r(6)
    fwd = LIBRARY[name]
    num = numeric_grad(lambda v: float(np.sum(dy * fwd(x=v, eps=1e-5, weight=w)["y"])), x)
    got = LIBRARY[f"{name}_back"](x=x, dy=dy, eps=1e-5, weight=w)["dx"]
    assert np.allclose(got, num, rtol=1e-6, atol=1e-7)
    assert not np.allclose(LIBRARY[f"{name}_back"](x=x, dy=dy, eps=1e-5)["dx"], num, atol=1e-3)


def test_layer_norm_forward_and_weight_grads() -> None:
    x, dy = r(3, 7), r(3, 7)

    def loops(bug: bool) -> list:
        out = []
        for row in x.tolist():
            mu = sum(row) / len(row)
            var = sum((v - mu) ** 2 for v in row) / (len(row) - (1 if bug else 0))
            out.append([(v - mu) / math.sqrt(var + 1e-5) for v in row])
        return out

    agree(LIBRARY["layer_norm"](x=x, eps=1e-5)["y"], loops)
    back = LIBRARY["layer_norm_back"](x=x, dy=dy, eps=1e-5)
    assert close(back["dbias"], dy.sum(axis=0))
    assert close(back["dweight"], (dy * np.asarray(loops(False))).sum(axis=0))


@pytest.mark.parametrize("mode", ["normal", "neox"])
def test_rope_modes_with_partial_rotation(mode: str) -> None:
    x, pos = r(1, 3, 2, 8), np.array([0.0, 5.0, 17.0])
    n_dims, base, fscale = 6, 500.0, 0.5

    def loops(bug: bool) -> list:
        y = x.copy()
        for t in range(3):
            for h in range(2):
                for i in range(n_dims // 2):
                    theta = fscale * pos[t] * base ** (-2 * i / n_dims)
                    if bug:
                        theta = -theta
                    a, b = (2 * i, 2 * i + 1) if mode == "normal" else (i, i + n_dims // 2)
                    x0, x1 = x[0, t, h, a], x[0, t, h, b]
                    y[0, t, h, a] = x0 * math.cos(theta) - x1 * math.sin(theta)
                    y[0, t, h, b] = x0 * math.sin(theta) + x1 * math.cos(theta)
        return y.tolist()

    got = LIBRARY["rope"](
        x=x, pos=pos, n_dims=n_dims, mode=mode, freq_base=base, freq_scale=fscale
    )["y"]
    agree(got, loops)
    back = LIBRARY["rope_back"](
        x=got, pos=pos, n_dims=n_dims, mode=mode, freq_base=base, freq_scale=fscale
    )["y"]
    assert close(back, x)  # a rotation's inverse is its transpose
    other = "neox" if mode == "normal" else "normal"
    assert not close(
        LIBRARY["rope"](x=x, pos=pos, n_dims=n_dims, mode=other, freq_base=base, freq_scale=fscale)[
            "y"
        ],
        got,
    )


def test_rope_yarn_ramp_and_attn_factor() -> None:
    x, pos = r(1, 2, 1, 8), np.array([3.0, 9.0])
    lo, hi, ext, fs = 1.0, 3.0, 1.0, 0.25
    m = 2.0 * (1 + 0.1 * math.log(1 / fs))

    def loops(bug: bool) -> list:
        y = x.copy()
        for t in range(2):
            for i in range(4):
                extrap = pos[t] * 10000.0 ** (-2 * i / 8)
                ramp = 1 - min(1.0, max(0.0, (i - lo) / (hi - lo)))
                mix = (0 if bug else ramp) * ext
                theta = fs * extrap * (1 - mix) + extrap * mix
                x0, x1 = x[0, t, 0, 2 * i], x[0, t, 0, 2 * i + 1]
                y[0, t, 0, 2 * i] = m * (x0 * math.cos(theta) - x1 * math.sin(theta))
                y[0, t, 0, 2 * i + 1] = m * (x0 * math.sin(theta) + x1 * math.cos(theta))
        return y.tolist()

    agree(
        LIBRARY["rope"](
            x=x, pos=pos, freq_scale=fs, ext_factor=ext, attn_factor=2.0, corr_dims=(lo, hi)
        )["y"],
        loops,
    )


def test_get_rows_and_set_rows() -> None:
    table, idx = r(6, 4), np.array([5.0, 0.0, 5.0, 2.0])
    agree(
        LIBRARY["get_rows"](table=table, idx=idx)["y"],
        lambda bug: [
            table[int(i) - (1 if bug and k == 3 else 0)].tolist() for k, i in enumerate(idx)
        ],
    )
    batched = r(2, 5, 3)
    bidx = np.array([[4, 0], [1, 1]])
    got = LIBRARY["get_rows"](table=batched, idx=bidx)["y"]
    agree(
        got,
        lambda bug: [
            [batched[0 if bug else b, bidx[b, k]].tolist() for k in range(2)] for b in range(2)
        ],
    )
    dst, src = r(5, 3), r(2, 3)
    sidx = np.array([3, 1])

    def loops(bug: bool) -> list:
        y = dst.tolist()
        for k, i in enumerate(sidx):
            y[int(i) if not bug else int(i) - 1] = src[k].tolist()
        return y

    agree(LIBRARY["set_rows"](dst=dst, src=src, idx=sidx)["y"], loops)
    with pytest.raises(StdError, match="outside"):
        LIBRARY["get_rows"](table=table, idx=np.array([6]))


def test_cast_to_f16_rounds_to_nearest_even() -> None:
    # 1 + 2^-11 lies halfway between 1 and the next f16 (1 + 2^-10): even rounding gives 1.
    x = np.array([1 + 2**-11, 1 + 3 * 2**-11, 65520.0, 1e-8])
    agree(
        LIBRARY["cpy_f16"](x=x)["y"],
        lambda bug: [1.0 + (2**-10 if bug else 0), 1 + 2**-9, math.inf, 0.0],
    )
    assert close(LIBRARY["cpy_f32"](x=np.array([0.1]))["y"], [0.10000000149011612])


def test_reductions() -> None:
    x = np.array([[1.0, 7.0, 7.0, -2.0], [0.5, -3.0, 9.0, 9.0]])
    agree(LIBRARY["argmax"](x=x)["y"], lambda bug: [2.0 if bug else 1.0, 2.0])
    agree(
        LIBRARY["cumsum"](x=x)["y"],
        lambda bug: [[sum(row[: j + (0 if bug else 1)]) for j in range(4)] for row in x.tolist()],
    )
    agree(LIBRARY["sum_rows"](x=x)["y"], lambda bug: [13.0, 15.5 + bug])
    agree(LIBRARY["mean"](x=x)["y"], lambda bug: [13.0 / (3 if bug else 4), 15.5 / 4])
    agree(LIBRARY["sum"](x=x)["y"], lambda bug: [28.5 + bug])


def _conv1d_loops(x, w, stride, pad, dil, depthwise, bug):
    c_in, n = x.shape
    k = w.shape[-1]
    n_out = (n + 2 * pad - dil * (k - 1) - 1) // stride + 1
    out = []
    for o in range(w.shape[0]):
        row = []
        for t in range(n_out):
            acc = 0.0
            for c in [o] if depthwise else range(c_in):
                for j in range(k):
                    i = t * stride + j * dil - pad + (1 if bug else 0)
                    if 0 <= i < n:
                        acc += x[c, i] * (w[o, j] if depthwise else w[o, c, j])
            row.append(acc)
        out.append(row)
    return out


@pytest.mark.parametrize("stride,pad,dil", [(1, 0, 1), (2, 2, 1), (1, 3, 2)])
def test_conv1d_full_and_depthwise(stride: int, pad: int, dil: int) -> None:
    x, w, wd = r(3, 11), r(4, 3, 3), r(3, 3)
    kw = {"stride": stride, "padding": pad, "dilation": dil}
    agree(
        LIBRARY["conv1d"](x=x, w=w, **kw)["y"],
        lambda bug: _conv1d_loops(x, w, stride, pad, dil, False, bug),
    )
    agree(
        LIBRARY["conv1d_dw"](x=x, w=wd, **kw)["y"],
        lambda bug: _conv1d_loops(x, wd, stride, pad, dil, True, bug),
    )


def test_conv2d_full_and_depthwise() -> None:
    x, w, wd = r(1, 2, 5, 6), r(3, 2, 3, 2), r(2, 3, 2)

    def loops(weights: np.ndarray, depthwise: bool, bug: bool) -> list:
        ho, wo = 5 + 2 - 2 * 2, 6 + 2 - 2 * 1  # pad 1, dilation 2: n + 2 - 2 * (k - 1)
        y = np.zeros((1, weights.shape[0], ho, wo))
        for o in range(weights.shape[0]):
            for i in range(ho):
                for j in range(wo):
                    acc = 0.0
                    for c in [o] if depthwise else range(2):
                        for p in range(3):
                            for q in range(2):
                                a, b = i + 2 * p - 1, j + 2 * q - 1
                                if bug:
                                    a, b = b, a
                                if 0 <= a < 5 and 0 <= b < 6:
                                    wv = weights[o, p, q] if depthwise else weights[o, c, p, q]
                                    acc += x[0, c, a, b] * wv
                    y[0, o, i, j] = acc
        return y.tolist()

    agree(LIBRARY["conv2d"](x=x, w=w, padding=1, dilation=2)["y"], lambda bug: loops(w, False, bug))
    agree(
        LIBRARY["conv2d_dw"](x=x, w=wd, padding=1, dilation=2)["y"],
        lambda bug: loops(wd, True, bug),
    )


def test_flash_attention_gqa_mask_softcap_and_layout() -> None:
    q, k, v, mask = r(1, 4, 3, 5), r(1, 2, 6, 5), r(1, 2, 6, 2), r(3, 6)

    def loops(bug: bool) -> list:
        y = np.zeros((1, 3, 4, 2))  # [batch, query, head, dv]
        for h in range(4):
            kv = h % 2 if bug else h // 2
            for i in range(3):
                s = []
                for j in range(6):
                    dot = 0.3 * sum(q[0, h, i, d] * k[0, kv, j, d] for d in range(5))
                    s.append(2.0 * math.tanh(dot / 2.0) + mask[i, j])
                top = max(s)
                e = [math.exp(v_ - top) for v_ in s]
                for d in range(2):
                    y[0, i, h, d] = sum(e[j] * v[0, kv, j, d] for j in range(6)) / sum(e)
        return y.tolist()

    got = LIBRARY["flash_attn"](q=q, k=k, v=v, mask=mask, scale=0.3, softcap=2.0, layout="bshd")
    agree(got["y"], loops)


def test_flash_attention_causal_matches_an_infinite_mask() -> None:
    q, k, v = r(1, 2, 4, 3), r(1, 2, 4, 3), r(1, 2, 4, 3)
    tri = np.where(np.arange(4)[None, :] > np.arange(4)[:, None], -np.inf, 0.0)
    causal = LIBRARY["flash_attn"](q=q, k=k, v=v, causal=True)
    assert close(causal["y"], LIBRARY["flash_attn"](q=q, k=k, v=v, mask=tri)["y"])
    assert not close(causal["y"], LIBRARY["flash_attn"](q=q, k=k, v=v)["y"])
    s = np.einsum("bhqd,bhkd->bhqk", q, k) / math.sqrt(3) + tri
    assert close(causal["lse"], np.log(np.exp(s).sum(-1)))


def test_every_entry_is_documented_and_unknown_names_are_one_error() -> None:
    for entry in LIBRARY.values():
        assert entry.doc, entry.name
        assert entry.outputs
    with pytest.raises(StdError, match="not in the reference library"):
        lookup("std:rmsnorm")
