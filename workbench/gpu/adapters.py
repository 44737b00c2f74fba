"""Adapters: enumerate, describe, and choose one by index, name substring or backend.

The default choice prefers a real GPU over a CPU one and Vulkan/Metal/DX12 over OpenGL, and skips
an adapter already probed and found unable to run compute shaders (an OpenGL 3.3 driver lists but
gives no compute device); choosing never probes by itself, since start-up time matters. The
subgroup size is measured with `@builtin(subgroup_size)`, since `adapter.info` misreports it in
wgpu 0.32 (NOTES-wgpu.md).
"""

from __future__ import annotations

import logging
import os
from collections import deque
from dataclasses import dataclass, field
from functools import cache
from typing import Any

from workbench.errors import Advice, GpuError, UserError
from workbench.units import whole_number

# Features a kernel may need, plus timestamps for timing. The device asks for those the adapter has.
USEFUL_FEATURES = ("shader-f16", "shader-float32-atomic", "subgroup", "timestamp-query")
_TYPE_RANK = {"DiscreteGPU": 0, "IntegratedGPU": 1, "VirtualGPU": 2, "CPU": 3, "Unknown": 4}
_BACKEND_RANK = {"Vulkan": 0, "Metal": 0, "D3D12": 0, "OpenGL": 2, "GL": 2}

# Adapters probed for compute (GpuContext.probe_compute): index -> why it cannot run compute
# shaders, "" when it can. Only a probe fills it.
COMPUTE_PROBES: dict[int, str] = {}


@dataclass(frozen=True)
class AdapterInfo:
    """What the tool shows and reasons about for one adapter."""

    index: int
    name: str
    backend: str
    type: str
    vendor: str
    driver: str
    features: frozenset[str]
    limits: dict[str, int] = field(hash=False, compare=False)

    @property
    def label(self) -> str:
        return f"{self.name} ({self.backend})"

    @property
    def is_cpu(self) -> bool:
        return self.type == "CPU"

    @property
    def useful_features(self) -> tuple[str, ...]:
        """The features the tool asks for (USEFUL_FEATURES) that this adapter has."""
        return tuple(f for f in USEFUL_FEATURES if f in self.features)

    @property
    def features_line(self) -> str:
        """useful_features as the CLI and the adapter dialog show them."""
        return ", ".join(self.useful_features) or "none of " + ", ".join(USEFUL_FEATURES)

    def to_json(self) -> dict[str, Any]:
        return {
            "index": self.index,
            "name": self.name,
            "backend": self.backend,
            "type": self.type,
            "vendor": self.vendor,
            "driver": self.driver,
            "features": sorted(self.features),
            "useful_features": list(self.useful_features),
            "features_line": self.features_line,
            "limits": dict(sorted(self.limits.items())),
        }


def quiet_mesa() -> None:
    """Mesa complains on stderr when XDG_RUNTIME_DIR is unset; give it a private folder."""
    if os.environ.get("XDG_RUNTIME_DIR") and os.path.isdir(os.environ["XDG_RUNTIME_DIR"]):
        return
    path = f"/tmp/workbench-xdg-{os.getuid()}"
    os.makedirs(path, mode=0o700, exist_ok=True)
    os.environ["XDG_RUNTIME_DIR"] = path


# wgpu-native's own log lines (e.g. OpenGL's `indirect-validation error: ...` when an adapter cannot
# run compute): kept here for the tool to word as its own one-line reasons, never printed raw.
LIBRARY_LOG: deque[str] = deque(maxlen=64)


class _KeepLibraryLog(logging.Handler):
    def emit(self, record: logging.LogRecord) -> None:
        LIBRARY_LOG.append(record.getMessage())


def _keep_library_log() -> None:
    """Route the `wgpu` logger into LIBRARY_LOG. Only after `import wgpu`: wgpu creates that logger
    with its own class and asserts it did."""
    log = logging.getLogger("wgpu")
    if not any(isinstance(h, _KeepLibraryLog) for h in log.handlers):
        log.addHandler(_KeepLibraryLog())
        log.propagate = False


@cache
def _raw_adapters() -> tuple[Any, ...]:
    quiet_mesa()
    import wgpu

    _keep_library_log()

    try:
        return tuple(wgpu.gpu.enumerate_adapters_sync())
    except Exception as exc:  # the native library failing to load or enumerate
        raise GpuError(f"could not enumerate GPU adapters: {exc}") from exc


def raw_adapter(index: int) -> Any:
    return _raw_adapters()[index]


@cache
def list_adapters() -> tuple[AdapterInfo, ...]:
    """Every adapter wgpu can see, in enumeration order."""
    out = []
    for i, a in enumerate(_raw_adapters()):
        info = a.info
        out.append(
            AdapterInfo(
                index=i,
                name=str(info.get("device", "") or "unknown"),
                backend=str(info.get("backend_type", "") or "unknown"),
                type=str(info.get("adapter_type", "") or "Unknown"),
                vendor=str(info.get("vendor", "") or ""),
                driver=str(info.get("description", "") or ""),
                features=frozenset(str(f) for f in a.features),
                limits={str(k): int(v) for k, v in a.limits.items()},
            )
        )
    return tuple(out)


def compute_problem(adapter: AdapterInfo) -> str | None:
    """Why `adapter` cannot run compute shaders, if a probe has found out; None otherwise."""
    return COMPUTE_PROBES.get(adapter.index) or None


def _rank(a: AdapterInfo) -> tuple[int, int, int, int]:
    known_bad = 1 if compute_problem(a) else 0
    return (known_bad, _TYPE_RANK.get(a.type, 4), _BACKEND_RANK.get(a.backend, 1), a.index)


def choose_adapter(selector: str | int | None = None) -> AdapterInfo:
    """The adapter `selector` names (index, backend, or name substring), else the best one.

    A backend or name matching several adapters picks the best of them; an adapter a probe found
    unable to run compute shaders comes last (an index always gets the adapter it names).
    """
    adapters = list_adapters()
    if not adapters:
        raise GpuError(
            "no GPU adapter found: install Mesa's Vulkan drivers (apt-get install "
            "mesa-vulkan-drivers) for the CPU adapter, or a GPU driver"
        )
    if selector is None or selector == "":
        env = os.environ.get("WORKBENCH_ADAPTER")
        if env:
            return choose_adapter(env)
        return min(adapters, key=_rank)
    text = str(selector).strip()
    idx = whole_number(text)
    if idx is not None:
        if idx >= len(adapters):
            raise UserError(
                f"adapter index {idx} does not exist; there are {len(adapters)}",
                advice=Advice.OTHER_ADAPTER,
            )
        return adapters[idx]
    low = text.lower()
    aliases = {"gl": "opengl", "dx12": "d3d12", "cpu": "cpu", "gpu": "gpu"}
    low = aliases.get(low, low)
    if low == "gpu":
        matches = [a for a in adapters if not a.is_cpu]
    elif low == "cpu":
        matches = [a for a in adapters if a.is_cpu]
    else:
        matches = [a for a in adapters if a.backend.lower() == low] or [
            a for a in adapters if low in a.name.lower() or low in a.label.lower()
        ]
    if not matches:
        names = "; ".join(f"{a.index}: {a.label}" for a in adapters)
        raise UserError(f"no adapter matches {text!r}; available: {names}")
    return min(matches, key=_rank)
