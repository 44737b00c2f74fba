"""Canary kernels: an adapter's known result-changing limits, measured once and remembered.

Some adapters run a kernel and return a different result than its WGSL says, without an error.
Two such limits are known on the CPU adapter (lavapipe) and measured here on any adapter:

- loops stop early: one invocation counts the iterations of a loop bounded by a uniform of
  LOOP_ITERATIONS (200,000); lavapipe returns 65,535, and a loop that should never end "finishes".
- long `else if` chains miscompile: CHAIN_BRANCHES invocations each take one branch of one chain
  and write that branch's value; on lavapipe the elements from about 79 on are wrong.

Each measurement is two tiny dispatches (milliseconds after the compile). Results are kept per
adapter name, backend and driver in `$XDG_CACHE_HOME/workbench/canaries.json` (default
`~/.cache/workbench`), so each adapter and driver version is measured once per machine; a cache
that cannot be read or written is measured again, never an error.
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from workbench.errors import WorkbenchError
from workbench.gpu.adapters import AdapterInfo
from workbench.gpu.device import BufferPlan, GpuContext
from workbench.safewrite import write_text
from workbench.units import fmt_int
from workbench.wgsl.reflect import reflect
from workbench.wgsl.sourcemap import SourceMap

# Bump when a canary changes, so older cached answers are measured again.
VERSION = 1
LOOP_ITERATIONS = 200_000
CHAIN_BRANCHES = 128

# The accumulator keeps the compiler from replacing the loop by its trip count.
_LOOP = """
@group(0) @binding(0) var<storage, read_write> out: array<u32>;
@group(0) @binding(1) var<uniform> iters: vec4<u32>;
@compute @workgroup_size(1)
fn canary_loop() {
    var count = 0u;
    var acc = iters.y;
    for (var i = 0u; i < iters.x; i++) {
        acc = acc * 1664525u + 1013904223u;
        count += 1u;
    }
    out[0] = count;
    out[1] = acc;
}
"""


def _branch_value(k: int) -> int:
    return 3 * k + 7


_CHAIN = (
    "@group(0) @binding(0) var<storage, read_write> out: array<u32>;\n"
    "@compute @workgroup_size(64)\n"
    "fn canary_chain(@builtin(global_invocation_id) gid: vec3<u32>) {\n"
    "    let i = gid.x;\n"
    "    var v = 0u;\n"
    f"    if (i == 0u) {{ v = {_branch_value(0)}u; }}\n"
    + "".join(
        f"    else if (i == {k}u) {{ v = {_branch_value(k)}u; }}\n"
        for k in range(1, CHAIN_BRANCHES)
    )
    + "    out[i] = v;\n}\n"
)


@dataclass(frozen=True)
class Canaries:
    """What the canaries found on one adapter; None where the adapter ran the canary right."""

    loop_iterations: int | None = None  # loops stop after this many iterations
    else_if_branches: int | None = None  # an else-if chain goes wrong from this branch on
    problem: str | None = None  # why the canaries could not run (then nothing is known)

    def lines(self) -> list[str]:
        """Each limit found, in words (empty when none)."""
        out = []
        if self.loop_iterations is not None:
            out.append(
                f"loops stop after {fmt_int(self.loop_iterations)} iterations (a loop of "
                f"{fmt_int(LOOP_ITERATIONS)} ran {fmt_int(self.loop_iterations)}), without an error"
            )
        if self.else_if_branches is not None:
            out.append(
                f"an if with {fmt_int(self.else_if_branches)} or more else-if branches computes "
                f"wrong values from that branch on (measured in a chain of {CHAIN_BRANCHES - 1})"
            )
        return out

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def cache_path() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "workbench" / "canaries.json"


def _key(adapter: AdapterInfo) -> str:
    return f"v{VERSION}|{adapter.name}|{adapter.backend}|{adapter.driver}"


# What this process already knows, by cache key: the file is read once per adapter.
KNOWN: dict[str, Canaries] = {}  # public: a test replaces it to start as a fresh process would


def canaries(ctx: GpuContext) -> Canaries:
    """The canaries' findings for `ctx`'s adapter: from the cache, else measured and cached."""
    key = _key(ctx.adapter)
    if key in KNOWN:
        return KNOWN[key]
    cached = _read_cache().get(key)
    found = None
    if isinstance(cached, dict):
        try:
            found = Canaries(**cached)
        except TypeError:
            found = None  # an older or hand-edited entry: measure again
    if found is None:
        try:
            found = measure(ctx)
        except WorkbenchError as exc:
            # A run must not fail because its warning could not be measured; nothing is cached.
            found = Canaries(problem=str(exc).splitlines()[0])
        else:
            _write_cache(key, found)
    KNOWN[key] = found
    return found


def measure(ctx: GpuContext) -> Canaries:
    """Run both canaries on `ctx` (no cache)."""
    iters = np.array([LOOP_ITERATIONS, 1, 0, 0], np.uint32).tobytes()
    loop = _run(ctx, _LOOP, "canary_loop", 2, (1, 1, 1), iters)
    ran = int(loop[0])
    chain = _run(ctx, _CHAIN, "canary_chain", CHAIN_BRANCHES, (CHAIN_BRANCHES // 64, 1, 1), None)
    expected = np.array([_branch_value(k) for k in range(CHAIN_BRANCHES)], np.uint32)
    wrong = np.flatnonzero(chain != expected)
    return Canaries(
        loop_iterations=ran if ran < LOOP_ITERATIONS else None,
        else_if_branches=int(wrong[0]) if wrong.size else None,
    )


def _run(
    ctx: GpuContext,
    text: str,
    entry: str,
    words: int,
    grid: tuple[int, int, int],
    uniform: bytes | None,
) -> NDArray[np.uint32]:
    bindings = reflect(text, f"canary:{entry}").entry_points[entry].bindings
    program = ctx.compile(text, SourceMap(), entry, bindings, f"canary:{entry}")
    plans = [BufferPlan(bindings[0], words * 4, None, True)]
    if uniform is not None:
        plans.append(BufferPlan(bindings[1], len(uniform), uniform))
    result = ctx.dispatch(program, plans, grid)
    return np.frombuffer(result.outputs[bindings[0].name], np.uint32).copy()


def _read_cache() -> dict[str, Any]:
    try:
        data = json.loads(cache_path().read_text(encoding="utf-8"))
    except (OSError, ValueError, UnicodeDecodeError):
        return {}
    return data if isinstance(data, dict) else {}


def _write_cache(key: str, found: Canaries) -> None:
    """Add `found` to the cache, through the one writer (a temporary file renamed into place)."""
    path = cache_path()
    data = _read_cache() | {key: found.to_json()}
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        write_text(path, json.dumps(data, indent=1, sort_keys=True), overwrite=True)
    except (OSError, WorkbenchError):
        return  # an unwritable cache only means measuring again next time
