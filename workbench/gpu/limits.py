"""An adapter's limits, checked before anything is allocated: pure arithmetic, no device.

Case planning uses these to refuse an oversized case before its (possibly huge) inputs are made,
and the device checks the same rules again just before a dispatch. Workgroup memory is checked
against max-compute-workgroup-storage-size: WebGPU requires that check, but some drivers
(lavapipe) skip it and run an oversized `var<workgroup>` anyway.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from workbench.errors import Advice, LimitError
from workbench.gpu.adapters import AdapterInfo
from workbench.units import fmt_bytes
from workbench.wgsl.reflect import Binding, EntryPoint

# The most workgroups one dispatch may have on any adapter: lavapipe counts them in 32 bits and
# runs the total modulo 2^32 (65535x65535x65535 runs 196,607), and the linear workgroup id a
# kernel rebuilds from num_workgroups is a u32 anyway. Refused everywhere, not only on the CPU.
MAX_TOTAL_WORKGROUPS = (1 << 32) - 1

# WebGPU's default limits, used where an adapter does not report one.
DEFAULT_WORKGROUP_STORAGE = 16384
DEFAULT_UNIFORM_BUFFERS = 12


def fold_grid(grid: Sequence[int], max_per_dim: int) -> tuple[int, int, int]:
    """A 1-D grid over the per-dimension limit folded into 2-D as `flat_id(gid, nwg)` expects."""
    x, y, z = (int(v) for v in grid)
    if x > max_per_dim and y == 1 and z == 1:
        return (max_per_dim, math.ceil(x / max_per_dim), 1)
    return (x, y, z)


def check_workgroup_storage(adapter: AdapterInfo, entry: EntryPoint, kernel: str) -> None:
    """Refuse an entry point whose `var<workgroup>`s exceed max-compute-workgroup-storage-size."""
    cap = adapter.limits.get("max-compute-workgroup-storage-size", DEFAULT_WORKGROUP_STORAGE)
    if entry.workgroup_bytes <= cap:
        return
    big = sorted(entry.workgroup_vars, key=lambda v: -v.footprint)
    names = ", ".join(f"{v.name}: {v.type.text} {v.footprint:,} bytes" for v in big)
    raise LimitError(
        f"{kernel} on {adapter.label}: its workgroup variables need "
        f"{entry.workgroup_bytes:,} bytes ({names}), over the adapter's "
        f"max-compute-workgroup-storage-size of {cap:,} bytes; make the var<workgroup> "
        "arrays smaller, or choose another adapter"
    )


def check_limits(
    adapter: AdapterInfo,
    sized: Sequence[tuple[Binding, int]],
    workgroup_size: Sequence[int],
    grid: Sequence[int],
    kernel: str,
    entry: EntryPoint | None = None,
) -> tuple[int, int, int]:
    """Refuse anything over `adapter`'s limits; returns the grid folded to fit them.

    `sized` holds each binding with its byte size. With `entry`, its workgroup memory is
    checked too.
    """
    lim = adapter.limits
    where = f"{kernel} on {adapter.label}"
    if entry is not None:
        check_workgroup_storage(adapter, entry, kernel)
    for b, nbytes in sized:
        if b.space == "uniform":
            cap_name = "max-uniform-buffer-binding-size"
            cap = lim.get(cap_name, 65536)
        else:
            cap_name = "max-storage-buffer-binding-size"
            cap = lim.get(cap_name, 1 << 27)
        cap = min(cap, lim.get("max-buffer-size", cap))
        if nbytes > cap:
            raise LimitError(
                f"{where}: binding {b.binding} '{b.name}' would need {fmt_bytes(nbytes)} "
                f"({nbytes:,} bytes), over the adapter's {cap_name} of {fmt_bytes(cap)} "
                f"({cap:,} bytes); use smaller dims or another adapter"
            )
    storage = sum(1 for b, _ in sized if b.space == "storage")
    cap = lim.get("max-storage-buffers-per-shader-stage", 8)
    if storage > cap:
        raise LimitError(f"{where}: {storage} storage buffers, over the limit of {cap}")
    uniforms = sum(1 for b, _ in sized if b.space == "uniform")
    cap = lim.get("max-uniform-buffers-per-shader-stage", DEFAULT_UNIFORM_BUFFERS)
    if uniforms > cap:
        raise LimitError(
            f"{where}: {uniforms} uniform buffers, over the adapter's "
            f"max-uniform-buffers-per-shader-stage of {cap}; pack them into one struct"
        )
    wx, wy, wz = workgroup_size
    for axis, v in zip("xyz", workgroup_size, strict=True):
        cap = lim.get(f"max-compute-workgroup-size-{axis}", 256)
        if v > cap:
            raise LimitError(f"{where}: @workgroup_size {axis}={v} is over the limit of {cap}")
    inv = lim.get("max-compute-invocations-per-workgroup", 256)
    if wx * wy * wz > inv:
        raise LimitError(
            f"{where}: {wx * wy * wz} invocations per workgroup, over the limit of {inv}"
        )
    per_dim = lim.get("max-compute-workgroups-per-dimension", 65535)
    if entry is not None and not entry.reads_num_workgroups and grid[0] > per_dim:
        # Folding is only right for a kernel that rebuilds its flat index from num_workgroups;
        # one indexing by global_invocation_id.x would silently skip part of its work.
        raise LimitError(
            f"{where}: grid {'x'.join(map(str, grid))} needs {grid[0]:,} workgroups in x, over "
            f"the adapter's {per_dim:,} per dimension, and the kernel does not read "
            "@builtin(num_workgroups), so folding the grid into 2-D would leave part of its "
            "output unwritten; give a 2-D grid X,Y,Z (the kernel indexing with "
            "workgroup_id.y), read num_workgroups to rebuild the flat index, or use smaller sizes",
            advice=Advice.SET_GRID,
        )
    folded = fold_grid(grid, per_dim)
    if any(v > per_dim for v in folded):
        raise LimitError(
            f"{where}: grid {'x'.join(map(str, grid))} needs more than {per_dim} workgroups "
            "in one dimension even after folding; use smaller dims"
        )
    total = math.prod(folded)
    if total > MAX_TOTAL_WORKGROUPS:
        raise LimitError(
            f"{where}: grid {'x'.join(map(str, folded))} is {total:,} workgroups, over the "
            f"{MAX_TOTAL_WORKGROUPS:,} (2^32 - 1) one dispatch can run correctly (the CPU "
            "adapter runs the count modulo 2^32, e.g. nothing at all for 4096x4096x256); use a "
            "smaller grid or dims"
        )
    return folded
