"""The verdict bar: one line saying where the current kernel stands, or a run's progress.

States: not run yet (with the keys to press), running (a progress bar, the step, and how to
cancel), a verdict (PASS/FAIL per output with the figures that matter), an error (compile error
with its location), and stale (results from before the last edit, with the reason). Every colour
comes from a component class (`verdict-bar--pass`, `--fail`, `--stale`, …), so themes and the
app's stylesheet can restyle them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import ClassVar

from rich.style import Style
from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.widgets import ProgressBar, Static

from workbench.checks import CheckReport
from workbench.closeness import Comparison
from workbench.session import Run
from workbench.units import fmt_err, fmt_int, fmt_ms
from workbench.viewmodel.jobs import GRADCHECK, Work
from workbench.viewmodel.kernel_state import MASK
from workbench.viewmodel.keys import key

StyleOf = Callable[[str], Style]


def verdict_text(
    style: StyleOf,
    run: Run | None,
    error: str | None,
    stale: str | None,
    snapshot: bool,
    grad: bool,
    report: CheckReport | None,
    last: Work | None = None,
    cancelled: Work | None = None,
) -> Text:
    """The line for a finished (or failed) run and the last gradient check if there was one,
    led by the last thing done (`last`: a gradient check leads with its result; `cancelled`:
    the kind of work cancelled since); `style` gives the style of a part (`pass`, `fail`…)."""
    text = Text(no_wrap=True, overflow="ellipsis")
    if cancelled is not None and not error:
        text.append(" CANCELLED ", style=style("stale"))
        text.append(f" {cancelled.noun}; ", style=style("stale-reason"))
        if run is not None:
            text.append("the results shown are from before  ", style=style("hint"))
    grads = _grad_text(style, report) if not error else None
    if grads is not None and last is GRADCHECK and cancelled is None:
        text.append_text(grads)
        if run is None:
            text.append(f"   {key('run')}", style=style("name"))
            text.append(" runs the kernel itself", style=style("hint"))
            return text
        text.append("   last run: ", style=style("hint"))
        grads = None
    text.append_text(_run_text(style, run, error, stale, snapshot, grad))
    if grads is not None:
        text.append("  ")
        text.append_text(grads)
    return text


def _grad_text(style: StyleOf, report: CheckReport | None) -> Text | None:
    """`gradients ✓ 2 ok` for the last gradient check; None if there was none."""
    results = [r for r in (report.results if report else ()) if r.kind == "grad"]
    if not results:
        return None
    text = Text("gradients ", style=style("name"))
    bad = sum(1 for r in results if not r.ok)
    if bad:
        text.append(f"✗ {bad}/{len(results)} fail", style=style("bad"))
    else:
        text.append(f"✓ {len(results)} ok", style=style("good"))
    return text


def _run_text(
    style: StyleOf,
    run: Run | None,
    error: str | None,
    stale: str | None,
    snapshot: bool,
    grad: bool,
) -> Text:
    text = Text()
    if stale:
        text.append(" STALE ", style=style("stale"))
        text.append(f" {stale} ", style=style("stale-reason"))
    if error and not stale:
        text.append("✗ ", style=style("bad"))
        text.append(error.split("\n", 1)[0], style=style("error"))
        return text
    if run is None:
        if not stale:
            hints = [("run", "run"), ("bench", "bench")] + ([("gradcheck", "gradcheck")] * grad)
            text.append("not run yet: ", style=style("hint"))
            for key_id, word in hints:
                text.append(key(key_id), style=style("name"))
                text.append(f" {word}  ", style=style("hint"))
            text.append("enter", style=style("name"))
            text.append(" in a field runs it too", style=style("hint"))
        return text
    if run.ok is None and run.case.spec is None:
        text.append("○ ran ad hoc ", style=style("adhoc"))
        text.append("(no spec, no reference)  ", style=style("hint"))
    elif run.ok is None:  # described, as the header says, with no reference to compare with
        text.append(f"○ {run.verdict.word} ", style=style("adhoc"))
        text.append("(spec'd, no reference: add one in workbench.toml)  ", style=style("hint"))
    elif run.ok:
        text.append(" PASS ", style=style("pass"))
        text.append(" ")
    else:
        # FAIL, or what was missing (NO_WORK, EMPTY, NOTHING_COMPARED): never a pass.
        text.append(f" {run.verdict.word} ", style=style("fail"))
        text.append(" ")
    if run.unwritten_note:
        text.append(f"{run.unwritten_note}  ", style=style("bad"))
    for name, c in run.compare.items():
        text.append(*(("✓ ", style("good")) if c.ok else ("✗ ", style("bad"))))
        text.append(f"{name} ", style=style("name"))
        if c.ok:
            text.append(f"|Δ| {fmt_err(c.max_abs)}  ", style=style("hint"))
        else:
            text.append_text(_failed_text(style, c))
    if run.timing and run.timing.reps:
        text.append("median " + (MASK if snapshot else fmt_ms(run.timing.median_ms)))
    else:
        text.append("wall " + (MASK if snapshot else fmt_ms(run.wall_s * 1e3)), style=style("hint"))
    return text


def _failed_text(style: StyleOf, c: Comparison) -> Text:
    """A failed output: how many elements are outside tolerance, NaN/Inf where the reference
    differs first (a small max|Δ| over the finite elements must not read as a pass)."""
    text = Text(f"FAIL {fmt_int(c.n_bad)}/{fmt_int(c.n_total)} outside tol", style=style("bad"))
    if c.n_nonfinite_mismatch:
        text.append(f", {c.nonfinite_text()}", style=style("bad"))
        text.append(f"; max|Δ| of the finite {fmt_err(c.max_abs)}  ")
    else:
        text.append(f", max|Δ| {fmt_err(c.max_abs)}  ")
    return text


def _lines(bar: VerdictBar, text: Text | str, width: int) -> int:
    """How many lines `text` takes wrapped at `width`."""
    if width <= 0:
        return 1
    rich = Text(text) if isinstance(text, str) else text
    return len(rich.wrap(bar.app.console, width))


class VerdictBar(Horizontal):
    """A one-line verdict, or a progress bar and message while GPU work is in flight."""

    PARTS: tuple[str, ...] = (
        "pass",
        "fail",
        "stale",
        "stale-reason",
        "error",
        "adhoc",
        "good",
        "bad",
        "name",
    )
    PARTS += ("hint", "busy")
    COMPONENT_CLASSES: ClassVar[set[str]] = {f"verdict-bar--{part}" for part in PARTS}

    DEFAULT_CSS = """
    VerdictBar { height: auto; margin: 0 0 0 0; }
    VerdictBar #verdict { width: 1fr; height: auto; }
    VerdictBar #progress { width: 32; display: none; }
    VerdictBar.-busy #progress { display: block; }
    VerdictBar #progress Bar { width: 20; }
    VerdictBar > .verdict-bar--pass { background: $success; color: $background; text-style: bold; }
    VerdictBar > .verdict-bar--fail { background: $error; color: $foreground; text-style: bold; }
    VerdictBar > .verdict-bar--stale { background: $warning; color: $background; text-style: bold; }
    VerdictBar > .verdict-bar--stale-reason { color: $text-warning; }
    VerdictBar > .verdict-bar--error { color: $text-error; }
    VerdictBar > .verdict-bar--adhoc { color: $text-primary; text-style: bold; }
    VerdictBar > .verdict-bar--good { color: $text-success; }
    VerdictBar > .verdict-bar--bad { color: $text-error; text-style: bold; }
    VerdictBar > .verdict-bar--name { text-style: bold; }
    VerdictBar > .verdict-bar--hint { text-style: dim; }
    VerdictBar > .verdict-bar--busy { color: $text-warning; }
    """

    def compose(self) -> ComposeResult:
        yield Static(self._text, id="verdict")
        yield ProgressBar(total=1.0, show_eta=False, id="progress")

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        # What the line says, kept so that a verdict arriving before the children are mounted (the
        # session can open before the screen finishes composing) is shown once they are.
        self._text: Text | str = ""

    def _style(self, part: str) -> Style:
        return self.get_component_rich_style(f"verdict-bar--{part}", partial=True)

    def show_verdict(
        self,
        run: Run | None,
        error: str | None,
        stale: str | None,
        snapshot: bool,
        grad: bool = False,
        report: CheckReport | None = None,
        last: Work | None = None,
        cancelled: Work | None = None,
    ) -> None:
        """Where the kernel stands: the last thing done, its last run's verdict, an error, or
        what to press."""
        self.show(
            verdict_text(self._style, run, error, stale, snapshot, grad, report, last, cancelled)
        )

    def show(self, text: Text | str) -> None:
        self.remove_class("-busy")
        self._text = text
        # The text wraps rather than being cut; a layout pass only when its height changes (they
        # are costly mid-run on a CPU adapter, where progress lines follow each other fast).
        for line in self.query("#verdict").results(Static):
            lines = _lines(self, text, line.size.width)
            line.update(text, layout=lines != line.size.height)

    def busy(self, message: str, fraction: float | None) -> None:
        """Show work in flight; `fraction` None means indeterminate."""
        for bar in self.query("#progress").results(ProgressBar):
            if fraction is None:
                bar.update(total=None)
            else:
                bar.update(total=1.0, progress=max(0.0, min(1.0, fraction)))
        line = Text()
        line.append("⏳ ", style=self._style("busy"))
        line.append(message)
        line.append(f"   {key('cancel')} cancels", style=self._style("hint"))
        self.show(line)
        self.add_class("-busy")
