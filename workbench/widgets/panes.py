"""The kernel view's tabs: Outputs, Diff, Gradients, Timing, Source and Bindings.

Every pane renders a `View` (what the screen knows about the current kernel: its case, last run,
check report, errors) and never runs anything itself. Large outputs are shown through ArrayView
(only the visible window is formatted); heatmaps and histograms are computed once per output and
slice and cached with the run. In snapshot mode timings are masked so pictures do not change.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.widgets import DataTable, Input, Select, Static

from workbench import closeness
from workbench.closeness import name_index
from workbench.session import Case, Run
from workbench.units import fmt_bytes, fmt_ms, fmt_num, fmt_rate
from workbench.widgets.array_view import ArrayView
from workbench.widgets.plots import heatmap, histogram, legend, line_plot
from workbench.widgets.source_view import SourceView, highlight_lines

MASK = "#.### ms"
_LOCATED = re.compile(r"^(?P<file>[^\n:]+\.wgsl):(?P<line>\d+)(?::(?P<col>\d+))?: ", re.M)


@dataclass
class View:
    """What the panes show for the current kernel."""

    kernel: Any = None  # workbench.wgsl.corpus.Kernel
    case: Case | None = None
    run: Run | None = None
    report: Any = None  # workbench.checks.CheckReport
    error: str | None = None  # the last compile/run error, shown with its location
    stale: str | None = None  # why the results shown are not from the current source
    medians: list[float] = field(default_factory=list)  # of this kernel's benches, oldest first
    snapshot: bool = False
    corpus_root: Any = None
    features: frozenset[str] = frozenset()
    show_module: bool = False

    def ms(self, value: float) -> str:
        return MASK if self.snapshot else fmt_ms(value)


def error_location(message: str) -> tuple[str, int, int] | None:
    """(file, line, column) of a `file.wgsl:LINE:COL: …` diagnostic."""
    m = _LOCATED.search(message or "")
    return (m["file"], int(m["line"]), int(m["col"] or 0)) if m else None


# -- Outputs -----------------------------------------------------------------------------------
class OutputsPane(Vertical):
    """One output (or input) at a time: a 2-D slice table, its stats, heatmap and histogram."""

    DEFAULT_CSS = """
    OutputsPane #out-bar { height: 1; }
    OutputsPane #out-which { width: 28; }
    OutputsPane #out-slice { width: 22; margin-left: 1; }
    OutputsPane #out-stats { height: 1; color: $text-muted; }
    OutputsPane #out-side { width: 34; padding-left: 1; }
    OutputsPane .title { color: $text-muted; height: 1; }
    OutputsPane #out-heat { height: auto; }
    OutputsPane #out-hist { height: 1fr; }
    """

    def __init__(self, *, id: str | None = None, blink: bool = True) -> None:
        super().__init__(id=id)
        self._view = View()
        self._cache: dict[tuple, tuple[Text, Text, Text]] = {}
        self._blink = blink
        self._setting = False

    def compose(self) -> ComposeResult:
        with Horizontal(id="out-bar"):
            yield Select([], id="out-which", compact=True, allow_blank=True, prompt="output")
            box = Input(placeholder="slice", id="out-slice", compact=True)
            box.cursor_blink = self._blink
            yield box
        yield Static(id="out-stats")
        with Horizontal():
            yield ArrayView(id="out-table")
            with Vertical(id="out-side"):
                yield Static(classes="title", id="out-heat-title")
                yield Static(id="out-heat")
                yield Static(id="out-legend")
                yield Static(id="out-hist")

    def show(self, view: View) -> None:
        old_run = self._view.run
        self._view = view
        run = view.run
        select = self.query_one("#out-which", Select)
        if run is None:
            self._cache.clear()
            self._setting = True
            select.set_options([])
            self._setting = False
            self.query_one(ArrayView).clear(
                "no results yet:\n  r     runs this kernel\n  ↑/↓   on the left picks another"
                "\n  enter in a field runs with what you typed\n  ?     explains every key"
                if view.error is None
                else view.error
            )
            for wid in ("#out-stats", "#out-heat-title", "#out-heat", "#out-legend", "#out-hist"):
                self.query_one(wid, Static).update("")
            return
        if run is old_run:
            return
        self._cache.clear()
        options = [(f"{n} (output)", f"out:{n}") for n in run.outputs]
        options += [(f"{n} (input)", f"in:{n}") for n in run.inputs if n not in run.outputs]
        previous = select.value
        self._setting = True
        select.set_options(options)
        values = [v for _, v in options]
        select.value = previous if previous in values else (values[0] if values else Select.BLANK)
        self._setting = False
        self._render_choice()

    @on(Select.Changed, "#out-which")
    def _which(self, event: Select.Changed) -> None:
        event.stop()
        if not self._setting:
            self.query_one("#out-slice", Input).value = ""
            self._render_choice()

    @on(Input.Changed, "#out-slice")
    def _slice(self, event: Input.Changed) -> None:
        event.stop()
        self._render_choice()

    def _choice(self) -> tuple[str, str] | None:
        value = self.query_one("#out-which", Select).value
        if not isinstance(value, str):
            return None
        kind, _, name = value.partition(":")
        return kind, name

    def _render_choice(self) -> None:
        run = self._view.run
        choice = self._choice()
        if run is None or choice is None:
            return
        kind, name = choice
        arr = run.outputs.get(name) if kind == "out" else run.inputs.get(name)
        if arr is None:
            return
        plan = run.case.plan(name)
        axes = plan.axes if len(plan.axes) == arr.ndim else tuple(f"i{k}" for k in range(arr.ndim))
        ref = None
        tol = (0.0, 0.0)
        if kind == "out" and run.reference and name in run.reference:
            ref = np.asarray(run.reference[name]).reshape(arr.shape)
            c = run.compare.get(name)
            if c is not None:
                tol = (c.rtol, c.atol)
        lead, problem = parse_slice(self.query_one("#out-slice", Input).value, arr.shape, axes)
        box = self.query_one("#out-slice", Input)
        box.placeholder = (
            " ".join(f"{a}=0" for a in axes[:-2]) if arr.ndim > 2 else "(2-D: no slice)"
        )
        part = arr[lead] if lead else arr
        ref_part = ref[lead] if (ref is not None and lead) else ref
        table = self.query_one(ArrayView)
        if arr.dtype.names:
            table.clear(f"{name} holds structs ({arr.dtype}); shown in Bindings only")
            return
        table.show(part, ref_part, tol)
        stats = Text()
        stats.append("×".join(map(str, arr.shape)) + f" {arr.dtype}  ", style="bold")
        if part.ndim == 2:
            stats.append(f"rows {axes[-2]} × cols {axes[-1]}  ")
        s = run.stats(name) if kind == "out" else _stats(arr)
        if "min" in s:
            stats.append(
                f"min {fmt_num(s['min'])} max {fmt_num(s['max'])} mean {fmt_num(s['mean'])}"
            )
            if s["nan"] or s["inf"]:
                stats.append(f"  nan {s['nan']:,} inf {s['inf']:,}", style="magenta")
        if problem:
            stats.append(f"  {problem}", style="red")
        self.query_one("#out-stats", Static).update(stats)
        key = (kind, name, lead)
        if key not in self._cache:
            heat = heatmap(part, 32, 8, signed=True)
            fin = part[np.isfinite(part)] if part.dtype.kind == "f" else part
            lo, hi = (float(fin.min()), float(fin.max())) if fin.size else (0.0, 0.0)
            top = max(abs(lo), abs(hi))
            self._cache[key] = (heat, legend(-top, top, True, 20), histogram(arr, 32, 9))
        heat, leg, hist = self._cache[key]
        where = "this slice" if lead else "whole array"
        self.query_one("#out-heat-title", Static).update(f"{where}: max |x| per block")
        self.query_one("#out-heat", Static).update(heat)
        self.query_one("#out-legend", Static).update(leg)
        self.query_one("#out-hist", Static).update(hist)


def parse_slice(
    text: str, shape: tuple[int, ...], axes: tuple[str, ...]
) -> tuple[tuple[int, ...], str]:
    """Leading indices for an N-d array shown as 2-D: `seq=3 head=1` or `3 1`; problems as text."""
    lead = [0] * max(len(shape) - 2, 0)
    if not lead:
        return (), ""
    problem = ""
    positional = 0
    for tok in re.split(r"[\s,]+", text.strip()):
        if not tok:
            continue
        name, sep, value = tok.partition("=")
        try:
            if sep:
                if name not in axes[: len(lead)]:
                    problem = f"no leading axis {name!r} ({', '.join(axes[: len(lead)])})"
                    continue
                k, v = axes.index(name), int(value)
            else:
                k, v = positional, int(name)
                positional += 1
        except ValueError:
            problem = f"{tok!r} is not an index"
            continue
        if k >= len(lead):
            problem = f"only {len(lead)} leading axes"
            continue
        if not 0 <= v < shape[k]:
            problem = f"{axes[k]}={v} is outside [0, {shape[k] - 1}]"
            v = min(max(v, 0), shape[k] - 1)
        lead[k] = v
    return tuple(lead), problem


def _stats(a: np.ndarray) -> dict[str, float | int]:
    from workbench.session import array_stats

    return array_stats(a)


# -- Diff --------------------------------------------------------------------------------------
class DiffPane(Vertical):
    """Metrics per output; for the chosen output, the elements nearest to (or beyond) tolerance
    with their named indices, the tolerance's reason, and a heatmap of |Δ| / tolerance."""

    DEFAULT_CSS = """
    DiffPane #diff-metrics { height: auto; max-height: 6; }
    DiffPane #diff-bar { height: 1; }
    DiffPane #diff-which { width: 30; }
    DiffPane #diff-why { width: 1fr; height: 1; color: $text-muted; margin-left: 1; }
    DiffPane #diff-worst { width: 1fr; }
    DiffPane #diff-side { width: 26; padding-left: 1; }
    DiffPane .title { color: $text-muted; height: auto; }
    """

    WORST = 12

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._run: Run | None = None
        self._setting = False

    def compose(self) -> ComposeResult:
        table = DataTable(id="diff-metrics", cursor_type="row", zebra_stripes=True)
        table.add_columns(
            "output", "verdict", "max |Δ|", "max rel", "max ULP", "outside tol", "rtol", "atol"
        )
        yield table
        with Horizontal(id="diff-bar"):
            yield Select([], id="diff-which", compact=True, allow_blank=True, prompt="output")
            yield Static(id="diff-why")
        with Horizontal():
            worst = DataTable(id="diff-worst", cursor_type="row", zebra_stripes=True)
            worst.add_columns("where", "got", "reference", "|Δ|", "/tol")
            yield worst
            with Vertical(id="diff-side"):
                yield Static(classes="title", id="diff-heat-title")
                yield Static(id="diff-heat")
                yield Static(id="diff-legend")

    def show(self, view: View) -> None:
        run = view.run
        if run is self._run and run is not None:
            return
        self._run = run
        metrics = self.query_one("#diff-metrics", DataTable)
        metrics.clear()
        self.query_one("#diff-worst", DataTable).clear()
        select = self.query_one("#diff-which", Select)
        why = self.query_one("#diff-why", Static)
        if run is None or not run.compare:
            why.update(
                "no comparison yet: press r to run"
                if run is None
                else "ad-hoc kernel: no reference to compare with (give it a spec to check it)"
            )
            self._setting = True
            select.set_options([])
            self._setting = False
            for wid in ("#diff-heat-title", "#diff-heat", "#diff-legend"):
                self.query_one(wid, Static).update("")
            return
        for name, c in run.compare.items():
            verdict = Text("✓ ok", style="green") if c.ok else Text("✗ FAIL", style="bold red")
            metrics.add_row(
                name,
                verdict,
                f"{c.max_abs:.3g}",
                f"{c.max_rel:.3g}",
                "–" if c.max_ulp is None else f"{c.max_ulp:,}",
                f"{c.n_bad:,}/{c.n_total:,}",
                f"{c.rtol:g}",
                f"{c.atol:g}",
            )
        self._setting = True
        names = list(run.compare)
        select.set_options([(n, n) for n in names])
        failing = [n for n, c in run.compare.items() if not c.ok]
        select.value = failing[0] if failing else names[0]
        self._setting = False
        self._chosen()

    @on(Select.Changed, "#diff-which")
    def _which(self, event: Select.Changed) -> None:
        event.stop()
        if not self._setting:
            self._chosen()

    def _chosen(self) -> None:
        run = self._run
        name = self.query_one("#diff-which", Select).value
        if run is None or not isinstance(name, str) or name not in run.compare:
            return
        c = run.compare[name]
        why = self.query_one("#diff-why", Static)
        why.update(Text(f"tolerance: {c.why or 'default'}", no_wrap=True, overflow="ellipsis"))
        why.tooltip = c.why
        worst = self.query_one("#diff-worst", DataTable)
        worst.clear()
        ratio = tolerance_ratio(run, name)
        for row in closest(run, name, self.WORST, ratio):
            worst.add_row(*row)
        shown = ratio.reshape(-1, ratio.shape[-1]) if ratio.ndim > 2 else ratio
        self.query_one("#diff-heat-title", Static).update(
            "|Δ| / tolerance, max per block (1 and above fail)"
        )
        self.query_one("#diff-heat", Static).update(
            heatmap(np.minimum(shown, 1.0), 24, 8, signed=False, scale=1.0)
        )
        self.query_one("#diff-legend", Static).update(legend(0.0, 1.0, False, 16))


def tolerance_ratio(run: Run, name: str) -> np.ndarray:
    """|got - ref| / (atol + rtol |ref|) per element; a non-finite mismatch counts as inf."""
    c = run.compare[name]
    return closeness.tolerance_ratio(run.outputs[name], run.reference[name], c.rtol, c.atol)


def closest(run: Run, name: str, count: int, ratio: np.ndarray | None = None) -> list[tuple]:
    """The `count` elements nearest to (or furthest beyond) tolerance, worst first."""
    ratio = (tolerance_ratio(run, name) if ratio is None else ratio).ravel()
    if ratio.size == 0:
        return []
    k = min(count, ratio.size)
    top = np.argpartition(-ratio, k - 1)[:k]
    top = top[np.argsort(-ratio[top], kind="stable")]
    got = run.outputs[name].ravel()
    ref = np.asarray(run.reference[name]).ravel()
    axes = run.case.plan(name).axes
    shape = run.outputs[name].shape
    rows = []
    for flat in top:
        idx = tuple(int(v) for v in np.unravel_index(int(flat), shape))
        r = float(ratio[flat])
        style = "bold red" if r > 1 else ("yellow" if r > 0.5 else "")
        g, f = float(got[flat]), float(ref[flat])
        rows.append(
            (
                name_index(idx, axes),
                f"{g:.7g}",
                f"{f:.7g}",
                f"{abs(g - f):.2g}" if np.isfinite(g) and np.isfinite(f) else "–",
                Text("inf" if not np.isfinite(r) else f"{r:.2f}", style=style),
            )
        )
    return rows


# -- Gradients ---------------------------------------------------------------------------------
class GradientsPane(VerticalScroll):
    """Gradient check results: every CheckResult as a title line and a table."""

    DEFAULT_CSS = """
    GradientsPane .result-title { height: auto; margin-top: 1; }
    GradientsPane DataTable { height: auto; max-height: 16; }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._report: Any = None
        self._intro: str = ""

    def compose(self) -> ComposeResult:
        yield Static(id="grad-intro")

    async def show(self, view: View) -> None:
        spec = view.case.spec if view.case else None
        if spec is None and view.kernel is not None:
            from workbench.specs.registry import spec_for

            spec = spec_for(view.kernel.name)
        if view.report is None:
            intro = (
                "press g to check gradients: the analytic gradients this backward kernel computes "
                "against central finite differences of its float64 forward"
                if spec is not None and spec.gradient is not None
                else "no gradient check: this kernel has no forward/backward link in its spec"
            )
        else:
            intro = ""
        if view.report is self._report and intro == self._intro:
            return
        self._report, self._intro = view.report, intro
        await self.remove_children(".result")
        intro_widget = self.query_one("#grad-intro", Static)
        intro_widget.update(intro)
        intro_widget.display = bool(intro)
        if view.report is None:
            return
        widgets = []
        for res in getattr(view.report, "results", ()):
            title = Text()
            title.append("✓ " if res.ok else "✗ ", style="green" if res.ok else "bold red")
            title.append(f"{res.kind}: ", style="bold")
            title.append(res.summary)
            widgets.append(Static(title, classes="result result-title"))
            if res.columns:
                table = DataTable(classes="result", zebra_stripes=True, cursor_type="row")
                table.add_columns(*res.columns)
                for row in res.rows:
                    table.add_row(*row)
                widgets.append(table)
        if not widgets:
            widgets.append(Static("the check returned no results", classes="result"))
        await self.mount_all(widgets)


# -- Timing ------------------------------------------------------------------------------------
class TimingPane(Vertical):
    """Median, spread, throughput from the cost model, and plots of the recent benches."""

    DEFAULT_CSS = """
    TimingPane #time-figures { height: auto; }
    TimingPane #time-plots { height: 1fr; }
    TimingPane #time-plots Static { width: 1fr; }
    """

    def compose(self) -> ComposeResult:
        yield Static(id="time-figures")
        with Horizontal(id="time-plots"):
            yield Static(id="time-history")
            yield Static(id="time-samples")

    def show(self, view: View) -> None:
        run = view.run
        fig = Text()
        history = self.query_one("#time-history", Static)
        samples = self.query_one("#time-samples", Static)
        case = view.case or (run.case if run else None)
        cost = case.cost if case else None
        if cost is not None:
            fig.append("cost model: ", style="bold")
            fig.append(f"{fmt_bytes(cost.bytes)} moved, {cost.flops:,} flops per dispatch\n")
        t = run.timing if run else None
        if run is None or t is None or not t.reps:
            fig.append("not timed yet: press b to bench (20 timed dispatches after 2 warm-ups)")
            if run is not None:
                fig.append(
                    f"\nthe last run took {view.ms(run.wall_s * 1e3)} in all (compile, upload, "
                    "dispatch, read-back, reference)"
                )
            history.update("")
            samples.update("")
            self.query_one("#time-figures", Static).update(fig)
            return
        fig.append("median ", style="bold")
        fig.append(view.ms(t.median_ms))
        fig.append(f"   p10 {view.ms(t.p10_ms)}   p90 {view.ms(t.p90_ms)}   ")
        fig.append(f"{t.reps} reps after {t.warmup} warm-ups, {_method(t.method)}\n")
        tp = run.throughput()
        if tp is not None:
            if view.snapshot:
                fig.append("throughput #.## GB/s   #.## GFLOP/s (masked)")
            else:
                fig.append("throughput ", style="bold")
                fig.append(
                    f"{fmt_rate(tp['gb_per_s'], 'B')}   {fmt_rate(tp['gflop_per_s'], 'FLOP')}"
                )
        self.query_one("#time-figures", Static).update(fig)
        if view.snapshot:
            history.update(Text("plots of timings are masked in snapshot mode", style="dim"))
            samples.update("")
            return
        width = max((self.size.width - 4) // 2, 30)
        height = max(self.size.height - 4, 8)
        history.update(
            Text("median of each bench (ms)\n", style="dim")
            + line_plot(view.medians[-20:], width, height - 1)
        )
        samples.update(
            Text("each dispatch of the last bench (ms)\n", style="dim")
            + line_plot(list(t.samples_ms), width, height - 1)
        )


def _method(method: str) -> str:
    return "GPU timestamps" if method == "timestamp" else "host wall clock (no timestamps)"


# -- Source ------------------------------------------------------------------------------------
class SourcePane(Vertical):
    """The kernel's file, highlighted, scrolled to the kernel; compile errors marked at their line."""

    DEFAULT_CSS = """
    SourcePane #src-head { height: auto; }
    SourcePane #src-code { height: 1fr; }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._shown: tuple | None = None
        self._target = 1

    def compose(self) -> ComposeResult:
        yield Static(id="src-head")
        yield SourceView(id="src-code")

    def show(self, view: View) -> None:
        k = view.kernel
        if k is None:
            return
        loc = error_location(view.error) if view.error else None
        key = (id(k), view.error, view.show_module)
        if key == self._shown:
            return
        self._shown = key
        head = Text()
        if view.show_module:
            code, smap = k.assemble(view.features)
            title = (
                f"assembled module of {k.name} (preambles + file preamble + kernel), m: the file"
            )
            first, marked = 1, set()
            target = 1
            if loc:
                # Find the module line that maps back to the error's file and line.
                for mline in range(1, code.count("\n") + 2):
                    if smap.locate(mline) == (loc[0], loc[1]):
                        marked, target = {mline}, mline
                        break
        else:
            file = loc[0] if loc else k.file
            try:
                code = (view.corpus_root / file).read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError, TypeError):
                code = k.pieces[-1].text if k.pieces else ""
                file = k.file
            title = f"{file}  (kernel at line {k.line}; m: the assembled module)"
            first = 1
            marked = {loc[1]} if loc else set()
            target = loc[1] if loc else k.line
        head.append(title, style="bold")
        if view.error:
            head.append("\n")
            head.append(view.error.split("\n", 1)[0], style="bold red")
        self.query_one("#src-head", Static).update(head)
        self.query_one(SourceView).show(highlight_lines(code, first, marked))
        self._target = target
        self.call_after_refresh(self.scroll_to_target)

    def scroll_to_target(self) -> None:
        """Bring the kernel (or the error) into view; called again when the tab is shown."""
        self.query_one(SourceView).scroll_to(0, max(self._target - 4, 0), animate=False)


# -- Bindings ----------------------------------------------------------------------------------
class BindingsPane(Vertical):
    """The reflected bindings with the case's shapes, roles and bytes."""

    DEFAULT_CSS = """
    BindingsPane #bind-table { height: auto; max-height: 100%; }
    BindingsPane #bind-notes { height: auto; color: $text-muted; margin-top: 1; }
    """

    def compose(self) -> ComposeResult:
        table = DataTable(id="bind-table", zebra_stripes=True, cursor_type="row")
        table.add_columns("g/b", "name", "role", "WGSL type", "shape", "dtype", "bytes", "contents")
        yield table
        yield Static(id="bind-notes")

    def show(self, view: View) -> None:
        table = self.query_one("#bind-table", DataTable)
        table.clear()
        notes = self.query_one("#bind-notes", Static)
        case = view.case
        if case is None:
            ep = view.kernel.entry_point if view.kernel is not None else None
            for b in ep.bindings if ep else ():
                table.add_row(
                    f"{b.group}/{b.binding}", b.name, b.space, b.type.text, "", "", "", ""
                )
            notes.update("sizes appear once the dims are valid")
            return
        for p in case.bindings:
            b = p.binding
            value = case.uniforms.get(p.name) if p.role == "uniform" else None
            table.add_row(
                f"{b.group}/{b.binding}",
                p.name,
                p.role,
                b.type.text,
                "×".join(map(str, p.shape)) if p.shape else "–",
                p.dtype or "–",
                fmt_bytes(p.nbytes),
                _short(value) if value is not None else p.source.replace("spec generator", "spec"),
            )
        text = Text()
        if case.spec is not None:
            text.append("spec: ", style="bold")
            text.append(case.spec.doc or case.spec.name)
        else:
            text.append("ad hoc: every runtime-sized array holds n elements; no reference")
        for note in case.notes:
            text.append(f"\nnote: {note}")
        notes.update(text)


def _short(value: Any) -> str:
    if isinstance(value, dict):
        return ", ".join(f"{k}={_short(v)}" for k, v in value.items())
    if isinstance(value, (list, tuple)):
        return "(" + ", ".join(_short(v) for v in value) + ")"
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)
