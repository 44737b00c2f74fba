"""The verdict bar: one line saying where the current kernel stands, or a run's progress.

States: not run yet (with the keys to press), running (a progress bar, the step, and how to
cancel), a verdict (PASS/FAIL per output with the figures that matter), an error (compile error
with its location), and stale (results from before the last edit, with the reason).
"""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.widgets import ProgressBar, Static

from workbench.checks import CheckReport
from workbench.session import Run
from workbench.units import fmt_ms
from workbench.viewmodel.kernel_state import MASK
from workbench.viewmodel.keys import key


def verdict_text(
    run: Run | None,
    error: str | None,
    stale: str | None,
    snapshot: bool,
    grad: bool = False,
    report: CheckReport | None = None,
) -> Text:
    """The line for a finished (or failed) run, and the last gradient check if there was one."""
    text = _run_text(run, error, stale, snapshot, grad)
    results = [r for r in (report.results if report else ()) if r.kind == "grad"]
    if results and not error:
        bad = sum(1 for r in results if not r.ok)
        text.append("  gradients ", style="bold")
        if bad:
            text.append(f"✗ {bad}/{len(results)} fail", style="bold red")
        else:
            text.append(f"✓ {len(results)} ok", style="green")
    return text


def _run_text(
    run: Run | None, error: str | None, stale: str | None, snapshot: bool, grad: bool
) -> Text:
    text = Text(no_wrap=True, overflow="ellipsis")
    if stale:
        text.append(" STALE ", style="bold black on yellow")
        text.append(f" {stale} ", style="yellow")
    if error and not stale:
        text.append("✗ ", style="bold red")
        text.append(error.split("\n", 1)[0], style="red")
        return text
    if run is None:
        if not stale:
            text.append("not run yet: ", style="dim")
            text.append(key("run"), style="bold")
            text.append(" run  ", style="dim")
            text.append(key("bench"), style="bold")
            text.append(" bench  ", style="dim")
            if grad:
                text.append(key("gradcheck"), style="bold")
                text.append(" gradcheck  ", style="dim")
            text.append("enter", style="bold")
            text.append(" in a field runs it too", style="dim")
        return text
    if run.ok is None:
        text.append("○ ran ad hoc ", style="bold cyan")
        text.append("(no spec, no reference)  ", style="dim")
    elif run.ok:
        text.append(" PASS ", style="bold black on green")
        text.append(" ")
    else:
        text.append(" FAIL ", style="bold white on red")
        text.append(" ")
    for name, c in run.compare.items():
        mark = ("✓ ", "green") if c.ok else ("✗ ", "bold red")
        text.append(mark[0], style=mark[1])
        text.append(f"{name} ", style="bold")
        if c.ok:
            text.append(f"|Δ| {c.max_abs:.2g}  ", style="dim")
        else:
            text.append(f"{c.n_bad:,}/{c.n_total:,} outside tol, max|Δ| {c.max_abs:.2g}  ")
    if run.timing and run.timing.reps:
        text.append("median " + (MASK if snapshot else fmt_ms(run.timing.median_ms)))
    else:
        text.append("wall " + (MASK if snapshot else fmt_ms(run.wall_s * 1e3)), style="dim")
    return text


class VerdictBar(Horizontal):
    """A one-line verdict, or a progress bar and message while GPU work is in flight."""

    DEFAULT_CSS = """
    VerdictBar { height: 1; margin: 0 0 0 0; }
    VerdictBar #verdict { width: 1fr; }
    VerdictBar #progress { width: 32; display: none; }
    VerdictBar.-busy #progress { display: block; }
    VerdictBar #progress Bar { width: 20; }
    """

    def compose(self) -> ComposeResult:
        yield Static(id="verdict")
        yield ProgressBar(total=1.0, show_eta=False, id="progress")

    def show(self, text: Text | str) -> None:
        self.remove_class("-busy")
        # One line of fixed height: no layout pass needed (they are costly mid-run on a CPU adapter).
        self.query_one("#verdict", Static).update(text, layout=False)

    def busy(self, message: str, fraction: float | None) -> None:
        """Show work in flight; `fraction` None means indeterminate."""
        self.add_class("-busy")
        bar = self.query_one("#progress", ProgressBar)
        if fraction is None:
            bar.update(total=None)
        else:
            bar.update(total=1.0, progress=max(0.0, min(1.0, fraction)))
        line = Text(no_wrap=True, overflow="ellipsis")
        line.append("⏳ ", style="yellow")
        line.append(message)
        line.append("   esc cancels", style="dim")
        self.query_one("#verdict", Static).update(line, layout=False)
