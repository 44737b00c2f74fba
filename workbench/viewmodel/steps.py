"""The Steps view's figures, with no Textual: the pipelines to choose from (the open corpus's
files, then the shipped ones), the steps as rows (current one marked, verdict, time, what changed,
whether the snapshot is still kept, the first divergence), the buffers at the step being looked at
(with a mark on those that step changed), the memory line, a diff between two steps as lines, and
the dims as the dims dialog shows and reads them. The Steps screen only renders what this
computes."""

from __future__ import annotations

import contextlib
import re
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from pathlib import Path

from workbench.closeness import Comparison
from workbench.errors import UserError
from workbench.pipelines import corpus_pipelines, shipped_names
from workbench.pipelines.stepper import Stepper
from workbench.units import fmt_bytes, fmt_int, fmt_ms, fmt_num, plural, whole_number

MASK = "·····"  # timings in snapshot mode, so pictures do not change from run to run
CHANGED = "●"
CURRENT = "▶"


@dataclass(frozen=True)
class PipelineChoice:
    label: str  # as the list shows it: a shipped name, or the file's path in the corpus
    target: str  # what opens it: the shipped name, or the file's full path


def pipeline_choices(root: Path | None) -> list[PipelineChoice]:
    """The open corpus's pipeline files (`workbench.pipelines.corpus_pipelines`), then the
    shipped pipelines."""
    mine = []
    if root is not None:
        mine = [
            PipelineChoice(p.relative_to(root).as_posix(), str(p)) for p in corpus_pipelines(root)
        ]
    return mine + [PipelineChoice(name, name) for name in shipped_names()]


def dims_text(dims: Mapping[str, int]) -> str:
    """`seq=64 n_heads=4`: the dims as the dims dialog offers them."""
    return " ".join(f"{k}={v}" for k, v in dims.items())


_PAIR = re.compile(r"^([A-Za-z_]\w*)=(\S+)$")


def parse_dims(text: str, known: Collection[str]) -> dict[str, int]:
    """`seq=128 head_dim=0x40` (spaces or commas between) as dims; UserError naming the pair
    that is not NAME=WHOLE_NUMBER or names no dim of the pipeline."""
    out: dict[str, int] = {}
    for item in text.replace(",", " ").split():
        m = _PAIR.match(item)
        if m is None:
            raise UserError(f"{item!r}: write NAME=VALUE, e.g. {next(iter(known), 'n')}=128")
        name, value = m.groups()
        if name not in known:
            raise UserError(f"no dim {name!r}; this pipeline's dims: {', '.join(known) or 'none'}")
        number = whole_number(value)
        if value[:2].lower() in ("0x", "0b", "0o"):
            with contextlib.suppress(ValueError):
                number = int(value, 0)
        if number is None:
            raise UserError(f"{name}={value}: not a whole number (hex: 0x...)")
        out[name] = number
    return out


@dataclass(frozen=True)
class StepRow:
    index: int
    kernel: str
    current: bool  # the last step done (0 is the start: no row)
    verdict: str  # "pass", "fail", "ran", or "" when not run yet
    time: str
    changed: str  # "Q 8,064  K 4,031"
    kept: bool  # its snapshot can still be shown
    diverged: bool  # the first step that left the float64 chain

    @property
    def mark(self) -> str:
        return CURRENT if self.current else ""


@dataclass(frozen=True)
class BufferRow:
    name: str
    shape: str
    dtype: str
    changed: int | None  # elements the step looked at changed here; None: not written by it

    @property
    def mark(self) -> str:
        return CHANGED if self.changed else ""


@dataclass(frozen=True)
class StepsView:
    title: str
    position: int  # steps done
    rows: tuple[StepRow, ...]
    buffers: tuple[BufferRow, ...]
    memory: str
    divergence: str


def steps_view(stepper: Stepper, shown: int, snapshot: bool) -> StepsView:
    """What the screen shows with `shown` the step whose buffers are looked at (0: the start)."""
    records = {r.index: r for r in stepper.records}
    div = stepper.first_divergence
    rows = []
    for step in stepper.steps:
        r = records.get(step.index)
        rows.append(
            StepRow(
                step.index,
                step.name,
                step.index == stepper.position,
                r.verdict if r else "",
                (MASK if snapshot else fmt_ms(r.ms)) if r else "",
                "  ".join(f"{b} {n:,}" for b, n in r.written.items()) if r else "",
                stepper.history.kept(step.index) if r else False,
                div is not None and div.step == step.index,
            )
        )
    written = stepper.changed_at(shown)
    buffers = tuple(
        BufferRow(
            name,
            "×".join(map(str, b.shape)),
            b.dtype,
            written.get(name) if name in written else None,
        )
        for name, b in stepper.plan.buffers.items()
    )
    h = stepper.history
    evicted = f" · cannot show {h.describe_evicted()} (evicted)" if h.evicted else ""
    memory = f"{fmt_bytes(h.kept_bytes)} kept of a {fmt_bytes(h.cap_bytes)} cap{evicted}"
    if not stepper.divergence_checked:
        divergence = ""
    elif div is not None:
        divergence = div.summary()
    elif stepper.position:
        done = f"steps 1–{stepper.position}" if stepper.position > 1 else "step 1"
        divergence = f"no divergence from the float64 chain in {done}"
    else:
        divergence = "no step run yet"
    branch = f" ({stepper.plan.branch})" if stepper.plan.branch else ""
    title = (
        f"{stepper.plan.name}{branch} · step {stepper.position} of {len(stepper.steps)}"
        f" · showing {'the start' if shown == 0 else f'after step {shown}'}"
    )
    return StepsView(title, stepper.position, tuple(rows), buffers, memory, divergence)


def diff_lines(c: Comparison, shown: int = 5) -> list[str]:
    """The same figures as the Diff tab: max |Δ|, max rel, ULP, and the worst elements by name."""
    lines = [c.summary()]
    for m in c.worst[:shown]:
        lines.append(f"  {m.named}: {fmt_num(m.got)} vs {fmt_num(m.ref)}  |Δ| {fmt_num(m.abs_err)}")
    if c.n_bad > shown:
        lines.append(
            f"  … {fmt_int(c.n_bad - shown)} more {plural(c.n_bad - shown, 'element')} differ"
        )
    return lines
