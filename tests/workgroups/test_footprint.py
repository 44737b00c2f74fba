"""Footprints on the real adapter: who wrote which element, races and holes, exact and sampled.

The expected owners come from what each kernel's layout promises (one element per invocation, one
(j, kv_head) slot per dKdV workgroup), never from the footprint code itself."""

from __future__ import annotations

import numpy as np
import pytest

from workbench.session import Session
from workbench.specs.registry import spec_for
from workbench.workgroups.footprint import (
    HOLE,
    RACE,
    SENTINELS,
    FootprintCancelled,
    footprint,
    sentinel_like,
)
from workbench.workgroups.guarded import writable


@pytest.mark.parametrize("kernel", ["embed_lookup", "gelu_inplace"])
def test_elementwise_kernels_have_no_races_and_no_holes(session, kernel):
    case = session.case(kernel, dims=spec_for(kernel).small_dims)
    fp = footprint(session, case)
    (out,) = fp.outputs.values()
    assert fp.ok and not fp.sampled and fp.stepped == case.workgroups
    assert (out.races, out.holes, out.written) == (0, 0, out.elements)
    # 4 elements per invocation (ELEMENTS_PER_INVOCATION), 256 invocations per workgroup: each
    # workgroup owns one block of 1024 elements, in flat order.
    flat = np.arange(out.elements)
    assert np.array_equal(out.owner.reshape(-1), flat // 1024)


def test_dkdv_owns_its_j_kv_head_slots(session):
    dims = spec_for("attention_backward_short_dKdV").small_dims
    case = session.case("attention_backward_short_dKdV", dims=dims)
    fp = footprint(session, case)
    assert fp.ok
    seq, n_kv = dims["seq"], dims["n_kv_heads"]
    j = np.arange(seq)[:, None, None]
    kvh = np.arange(n_kv)[None, :, None]
    # The kernel takes ROWS_PER_WORKGROUP = 2 keys per workgroup, longest first across the kv
    # heads (longest_tile_first): the workgroup of linear id i takes key tile i // n_kv_heads
    # (low keys see the most queries) of kv head i % n_kv_heads.
    assert case.grid == (-(-seq // 2), n_kv, 1)
    want = np.broadcast_to((j // 2) * n_kv + kvh, (seq, n_kv, dims["head_dim"]))
    for name in ("dK", "dV"):
        out = fp.outputs[name]
        assert (out.races, out.holes, out.atomic) == (0, 0, False)
        assert np.array_equal(out.owner, want), name


def test_conv1d_backward_dx_has_no_races_and_no_holes_and_its_sums_are_atomic(session):
    case = session.case("causal_conv1d_bwd", dims=spec_for("causal_conv1d_bwd").small_dims)
    fp = footprint(session, case)
    dx = fp.outputs["dx"]
    assert (dx.races, dx.holes, dx.atomic) == (0, 0, False)
    assert fp.outputs["dweight"].atomic and fp.outputs["dbias"].atomic
    assert fp.ok


def test_embed_backward_grad_table_is_reported_atomic_not_racing(session):
    case = session.case("embed_backward", dims=spec_for("embed_backward").small_dims)
    fp = footprint(session, case)
    table = fp.outputs["grad_table"]
    assert table.atomic and table.races == 0
    js = table.to_json()
    assert js["atomic"] is True and js["race_examples"] == []
    # Repeated tokens: some rows are scattered into by several workgroups, by design.
    tokens = case.inputs["tokens"].reshape(-1)
    assert js["shared"] > 0 or len(set(tokens.tolist())) == len(tokens)
    assert fp.ok


def test_off_by_one_bounds_check_is_a_race_with_the_exact_elements(inside: Session):
    case = inside.case("overlap")
    fp = footprint(inside, case)
    out = fp.outputs["out"]
    assert not fp.ok
    # Workgroup w also writes element 64 (w + 1), the first of workgroup w + 1's range.
    assert out.races == case.workgroups - 1 and out.holes == 0
    js = out.to_json()
    assert [r["index"] for r in js["race_examples"]] == [f"i={64 * k}" for k in range(1, 9)]
    assert [r["workgroups"] for r in js["race_examples"]] == [[k - 1, k] for k in range(1, 9)]
    owner = out.owner.reshape(-1)
    assert np.array_equal(np.flatnonzero(owner == RACE), 64 * np.arange(1, case.workgroups))


def test_a_grid_one_workgroup_short_leaves_the_exact_hole(inside: Session):
    case = inside.case("cover", sizes={"out": 1024 + 64})
    fp = footprint(inside, case)
    out = fp.outputs["out"]
    assert (out.races, out.holes) == (0, 64)
    assert out.to_json()["hole_examples"] == [
        {"first": "i=1024", "last": "i=1087", "count": 64, "flat": [1024, 1087]}
    ]
    assert np.all(out.owner.reshape(-1)[1024:] == HOLE)


def test_above_the_limit_it_samples_and_still_finds_every_hole(inside: Session):
    case = inside.case("cover", sizes={"out": 1024 + 64})
    fp = footprint(inside, case, max_workgroups=4, seed=3)
    assert fp.sampled and fp.stepped == 4 and fp.workgroups == 16
    assert "sampled" in fp.notes[0] and fp.to_json()["sampled"] is True
    out = fp.outputs["out"]
    assert out.holes == 64 and out.hole_ranges() == [(1024, 1087)]


def test_writing_zeros_over_a_zeroed_output_is_still_seen_thanks_to_the_sentinel(inside):
    case = inside.case("zero")
    fp = footprint(inside, case)
    out = fp.outputs["out"]
    assert (out.written, out.holes, out.races) == (out.elements, 0, 0)
    assert "0x7FA5A5A5" in fp.to_json()["sentinel"]


def test_the_sentinel_is_a_signalling_nan(session):
    plan = writable(session.case("gelu_inplace", dims=spec_for("gelu_inplace").small_dims))[0]
    fill = sentinel_like(plan)
    assert np.all(fill.reshape(-1).view(np.uint32) == SENTINELS[4]) and np.all(np.isnan(fill))
    # Quiet bit clear: arithmetic never produces it, so any computed write differs from it.
    assert not SENTINELS[4] & 0x00400000


def test_progress_is_reported_per_dispatch_and_cancel_stops_between_them(inside: Session):
    case = inside.case("overlap")
    heard: list[float] = []
    footprint(inside, case, say=lambda _msg, frac: heard.append(frac))
    assert len(heard) >= 8 and heard == sorted(heard) and heard[-1] < 1.0
    with pytest.raises(FootprintCancelled):
        footprint(inside, case, cancelled=lambda: True)


def test_a_sample_finds_the_races_between_its_own_workgroups(inside: Session):
    case = inside.case("overlap", dims={"n": 4096})  # 64 workgroups
    fp = footprint(inside, case, max_workgroups=16, seed=1)
    out = fp.outputs["out"]
    assert fp.sampled and fp.stepped == 16
    # The sample is a run of 16 consecutive workgroups: 15 neighbouring pairs race inside it.
    assert out.races == 15
    pairs = [r["workgroups"] for r in out.to_json()["race_examples"]]
    first = pairs[0][0]
    assert pairs == [[w, w + 1] for w in range(first, first + 8)]
    assert out.to_json()["race_examples"][0]["index"] == f"i={64 * (first + 1)}"
