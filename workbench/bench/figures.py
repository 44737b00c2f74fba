"""A timed kernel on the roofline: its rates from the spec's cost model and how far from each ceiling.

Pure arithmetic over a cost (bytes, FLOPs), a median time and a measured roofline; no GPU.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from workbench.units import fmt_percent, fmt_rate


@dataclass(frozen=True)
class Figures:
    """GB/s, GFLOP/s, arithmetic intensity, and the fraction of each ceiling (when one is known)."""

    bytes: int
    flops: int
    median_ms: float
    bandwidth_gb_s: float | None = None  # the adapter's measured ceilings
    peak_gflop_s: float | None = None

    @property
    def gb_per_s(self) -> float:
        return self.bytes / (self.median_ms / 1e3) / 1e9 if self.median_ms > 0 else math.nan

    @property
    def gflop_per_s(self) -> float:
        return self.flops / (self.median_ms / 1e3) / 1e9 if self.median_ms > 0 else math.nan

    @property
    def intensity(self) -> float:
        """FLOP per byte moved."""
        return self.flops / self.bytes if self.bytes > 0 else math.inf

    @property
    def frac_bandwidth(self) -> float | None:
        return self.gb_per_s / self.bandwidth_gb_s if self.bandwidth_gb_s else None

    @property
    def frac_compute(self) -> float | None:
        return self.gflop_per_s / self.peak_gflop_s if self.peak_gflop_s else None

    @property
    def binds(self) -> str | None:
        """Which ceiling limits a kernel of this intensity: "memory" left of the ridge, else "compute"."""
        if not (self.bandwidth_gb_s and self.peak_gflop_s):
            return None
        return "memory" if self.intensity < self.peak_gflop_s / self.bandwidth_gb_s else "compute"

    @property
    def frac_roof(self) -> float | None:
        """The fraction of the binding ceiling reached: how much headroom there is."""
        if self.binds == "memory":
            return self.frac_bandwidth
        if self.binds == "compute":
            return self.frac_compute
        return None

    def summary(self) -> str:
        parts = [fmt_rate(self.gb_per_s, "B")]
        # A zero rate (no flops in the cost model) is `—`, with no fraction of a ceiling beside it.
        if self.frac_bandwidth:
            of = fmt_rate(self.bandwidth_gb_s, "B")
            parts[-1] += f" ({fmt_percent(self.frac_bandwidth)} of {of})"
        parts.append(fmt_rate(self.gflop_per_s, "FLOP"))
        if self.frac_compute:
            of = fmt_rate(self.peak_gflop_s, "FLOP")
            parts[-1] += f" ({fmt_percent(self.frac_compute)} of {of})"
        parts.append(f"{self.intensity:.3g} FLOP/B")
        roof = self.frac_roof
        if self.binds and roof is not None:
            parts.append(f"{self.binds}-bound, at {fmt_percent(roof)} of that ceiling")
        return "  ".join(parts)

    def to_json(self) -> dict[str, Any]:
        return {
            "bytes": self.bytes,
            "flops": self.flops,
            "gb_per_s": self.gb_per_s,
            "gflop_per_s": self.gflop_per_s,
            "intensity_flop_per_byte": self.intensity,
            "bandwidth_ceiling_gb_s": self.bandwidth_gb_s,
            "compute_ceiling_gflop_s": self.peak_gflop_s,
            "frac_bandwidth": self.frac_bandwidth,
            "frac_compute": self.frac_compute,
            "binds": self.binds,
            "frac_roof": self.frac_roof,
        }
