"""Every buffer's contents after each step, copy-on-write, under a memory cap.

State k (the contents after step k; 0 is the start) shares every array it did not change with
state k - 1, so a step costs only the buffers it changed. When the arrays kept for steps 1..K
exceed the cap, the oldest states go first (never the latest, which the next step needs) and the
history remembers which steps can no longer be shown. The starting contents are the pipeline's
inputs and are always kept; they do not count against the cap.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from workbench.errors import UserError
from workbench.units import fmt_bytes

DEFAULT_CAP = 256 << 20


@dataclass
class History:
    initial: dict[str, np.ndarray]
    cap_bytes: int = DEFAULT_CAP
    _states: dict[int, dict[str, np.ndarray]] = field(default_factory=dict)
    evicted: list[int] = field(default_factory=list)  # steps dropped since the last reset

    def __post_init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        self._states = {0: dict(self.initial)}
        self.evicted = []

    @property
    def latest(self) -> int:
        return max(self._states)

    def kept(self, step: int) -> bool:
        return step in self._states

    def state(self, step: int) -> dict[str, np.ndarray]:
        """The contents after `step`; refused with the reason when the cap evicted it."""
        if step in self._states:
            return self._states[step]
        if step in self.evicted:
            raise UserError(
                f"step {step} can no longer be shown: the memory cap of {fmt_bytes(self.cap_bytes)} "
                f"evicted {self.describe_evicted()}; raise the cap or reset and step again"
            )
        raise UserError(f"step {step} has not run (steps run so far: 0 to {self.latest})")

    def record(self, step: int, changed: dict[str, np.ndarray]) -> list[int]:
        """Keep the state after `step` (the previous one with `changed` replaced); returns the
        steps this evicted."""
        self._states[step] = {**self._states[self.latest], **changed}
        return self.enforce()

    def truncate(self, step: int) -> None:
        """Forget the states after `step` (stepping back discards them: stepping forward runs
        the kernels again)."""
        for k in [k for k in self._states if k > step]:
            del self._states[k]
        self.evicted = [k for k in self.evicted if k <= step]

    def set_cap(self, cap_bytes: int) -> list[int]:
        if cap_bytes < 0:
            raise UserError(f"the memory cap must be >= 0 bytes, got {cap_bytes}")
        self.cap_bytes = cap_bytes
        return self.enforce()

    def enforce(self) -> list[int]:
        dropped = []
        while self.kept_bytes > self.cap_bytes:
            candidates = sorted(k for k in self._states if 0 < k < self.latest)
            if not candidates:
                break
            del self._states[candidates[0]]
            self.evicted.append(candidates[0])
            dropped.append(candidates[0])
        return dropped

    @property
    def kept_bytes(self) -> int:
        """Bytes of the arrays the kept states hold beyond the starting contents."""
        start = {id(a) for a in self.initial.values()}
        seen: dict[int, int] = {}
        for k, state in self._states.items():
            if k == 0:
                continue
            for a in state.values():
                if id(a) not in start:
                    seen[id(a)] = a.nbytes
        return sum(seen.values())

    def describe_evicted(self) -> str:
        """`steps 1–3, 5` for the steps the cap dropped."""
        steps = sorted(self.evicted)
        if not steps:
            return "no steps"
        runs, first, last = [], steps[0], steps[0]
        for k in steps[1:]:
            if k == last + 1:
                last = k
                continue
            runs.append((first, last))
            first = last = k
        runs.append((first, last))
        text = ", ".join(f"{a}" if a == b else f"{a}–{b}" for a, b in runs)
        return ("step " if len(steps) == 1 else "steps ") + text
