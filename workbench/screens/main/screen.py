"""The main screen: kernel browser on the left, the current kernel's view on the right.

It owns the loop: pick a kernel (`selection`), edit its dims and inputs, planned as you type
(`case_form`), run / bench / gradcheck / footprint / probe it as jobs cancellable with escape
(`work`), show it against a pinned run (`baseline`), and take results away (`takeaway`). Each of
those is a class of its own module owning its state; this one puts them together, lays the screen
out, and sets its one reactive `view`, which the verdict and every pane render.

Each kernel keeps its own `KernelState` (view model) while you browse. Messages up, attributes
down: jobs and workers report back with typed results and messages, the handlers turn them into
state changes, and the screen then sets `view`.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import ClassVar

from rich.text import Text
from textual import events, on
from textual.app import ComposeResult
from textual.binding import BindingType
from textual.containers import Horizontal, Vertical
from textual.reactive import reactive
from textual.widgets import Input, Static, TabbedContent, TabPane

from workbench.commands import bindings
from workbench.screens.main.baseline import BaselineControl
from workbench.screens.main.case_form import CaseFormControl
from workbench.screens.main.selection import KernelSelection
from workbench.screens.main.takeaway import Takeaway
from workbench.screens.main.work import KernelWork
from workbench.viewmodel.kernel_state import View, list_verdict, view_of
from workbench.widgets.baseline_bar import BaselineBar
from workbench.widgets.browser import KernelBrowser
from workbench.widgets.detail_line import DetailLine
from workbench.widgets.form.case_form import CaseForm
from workbench.widgets.key_footer import KeyFooter
from workbench.widgets.panes.bindings import BindingsPane
from workbench.widgets.panes.diff import DiffPane
from workbench.widgets.panes.footprint import FootprintPane
from workbench.widgets.panes.gradients import GradientsPane
from workbench.widgets.panes.outputs import OutputsPane
from workbench.widgets.panes.probes import ProbesPane
from workbench.widgets.panes.source import SourcePane
from workbench.widgets.panes.timing import TimingPane
from workbench.widgets.verdict_bar import VerdictBar

# Below this many columns the kernel list starts hidden (ctrl+b shows it): the kernel view needs
# the width more than the list does once a kernel is open.
NARROW_BELOW = 100
WIDE_FROM = 120


class MainScreen(KernelSelection, CaseFormControl, KernelWork, BaselineControl, Takeaway):
    """Browser + kernel view + footer."""

    BINDINGS: ClassVar[list[BindingType]] = bindings("main")
    # Focus goes where the screen puts it (the kernel list, or nowhere while the list is hidden),
    # never to the first field by default: the footer and the status line name keys (`r run`)
    # that a field would take as text. The focused region is lit, and `d` goes to the dims.
    AUTO_FOCUS: ClassVar[str | None] = None
    # Classes the stylesheet lays the screen out by: -narrow, -medium or -wide.
    # (Textual declares it an instance attribute; a class-wide constant here.)
    HORIZONTAL_BREAKPOINTS: ClassVar[list[tuple[int, str]]] = [  # type: ignore[misc]
        (0, "-narrow"),
        (NARROW_BELOW, "-medium"),
        (WIDE_FROM, "-wide"),
    ]

    view: reactive[View] = reactive(View, init=False)
    sidebar: reactive[bool] = reactive(True, init=False)

    def __init__(self) -> None:
        super().__init__()
        self.show_module = False
        self._on_mount_calls: list[tuple[Callable[..., object], tuple[object, ...]]] = []
        self._narrow: bool | None = None

    # -- layout --------------------------------------------------------------------------------
    def compose(self) -> ComposeResult:
        blink = not self.wb.snapshot
        yield Static(id="topbar")
        with Horizontal(id="body"):
            yield KernelBrowser(id="browser", blink=blink)
            with Vertical(id="kernel-view", classes="-empty"):
                yield Static(id="kv-title")
                # One line; hovered, the whole doc (the Bindings tab shows it whole too).
                yield DetailLine(id="kv-doc", focusable=False)
                yield CaseForm(id="form", blink=blink)
                yield VerdictBar(id="verdict-bar")
                yield BaselineBar(id="baseline").data_bind(MainScreen.view)
                with TabbedContent(id="tabs", initial="tab-outputs"):
                    with TabPane("Outputs", id="tab-outputs"):
                        yield OutputsPane(id="outputs", blink=blink).data_bind(MainScreen.view)
                    with TabPane("Diff", id="tab-diff"):
                        yield DiffPane(id="diff").data_bind(MainScreen.view)
                    with TabPane("Gradients", id="tab-gradients"):
                        yield GradientsPane(id="gradients").data_bind(MainScreen.view)
                    with TabPane("Timing", id="tab-timing"):
                        yield TimingPane(id="timing").data_bind(MainScreen.view)
                    with TabPane("Source", id="tab-source"):
                        yield SourcePane(id="source").data_bind(MainScreen.view)
                    with TabPane("Bindings", id="tab-bindings"):
                        yield BindingsPane(id="bindings").data_bind(MainScreen.view)
                    with TabPane("Footprint", id="tab-footprint"):
                        yield FootprintPane(id="footprint").data_bind(MainScreen.view)
                    with TabPane("Probes", id="tab-probes"):
                        yield ProbesPane(id="probes").data_bind(MainScreen.view)
        yield KeyFooter()

    def once_mounted(self, callback: Callable[..., object], *args: object) -> None:
        """Call `callback` now if the screen is mounted, else once it is: a small corpus can be
        read, and the adapter opened, before the screen has composed its widgets."""
        if self.is_mounted:
            self.call_later(callback, *args)
        else:
            self._on_mount_calls.append((callback, args))

    def on_mount(self) -> None:
        for callback, args in self._on_mount_calls:
            self.call_later(callback, *args)
        self._on_mount_calls.clear()
        self.update_topbar()
        if self.wb.session is None:
            self._say_title(Text("loading the corpus…", style="dim"))
        self.browser.kernel_tree.focus()

    # -- what the app tells us -----------------------------------------------------------------
    def fatal(self, message: str) -> None:
        """The corpus or the adapter could not be opened: say so where the view would be."""
        self.update_topbar()
        self._say_title(Text("✗ cannot start", style="bold red"))
        text = Text(message, style="red")
        text.append(
            "\n\nfix it: the corpus is read again when a file of it changes; `workbench adapters` "
            "lists the adapters this machine has",
            style="default",
        )
        self._say_doc(text)
        self.query_one("#kv-doc").add_class("-fatal")

    def switching_adapter(self) -> None:
        """The app opens another adapter: say so where the verdict goes."""
        self.verdict_bar.busy("opening the adapter…", None)

    def starting_again(self) -> None:
        """A file changed after a start that failed: the app opens the corpus again."""
        self.query_one("#kv-doc").remove_class("-fatal")
        self._say_doc(Text(""))
        self._say_title(Text("a file changed: reading the corpus again…", style="dim"))
        self.update_topbar()

    # -- the view ------------------------------------------------------------------------------
    def refresh_view(self) -> None:
        """Set the view from the current kernel's state: the verdict and every pane follow."""
        session = self.wb.session
        st = self.current_state()
        if st is not None and self.current is not None:
            self.browser.set_verdict(self.current, list_verdict(st))
        baseline = self.baseline_of(self.current or "", st.run if st else None)
        self.view = view_of(
            st,
            self.kernel(),
            snapshot=self.wb.snapshot,
            corpus_root=Path(session.corpus.root) if session else None,
            features=session.adapter.features if session else frozenset(),
            show_module=self.show_module,
            roofline=session.measured_roofline() if session else None,
            baseline=baseline,
            cpu=session.on_cpu if session else False,
        )

    def watch_view(self, view: View) -> None:
        if not self.busy:
            self.verdict_bar.show_verdict(
                view.run,
                view.error,
                view.stale,
                view.snapshot,
                view.gradient_check,
                view.report,
                view.last,
                view.cancelled,
            )

    # -- focus, the kernel list, the tabs --------------------------------------------------------
    def action_leave_field(self) -> None:
        if self.app.focused is self.browser.kernel_tree:
            self.notify("nothing is running: esc cancels work in flight, or leaves a field")
        self.sidebar = True
        self.browser.kernel_tree.focus()

    def action_filter(self) -> None:
        self.sidebar = True
        self.browser.filter_box.focus()

    def on_resize(self, event: events.Resize) -> None:
        narrow = event.size.width < NARROW_BELOW
        if narrow != self._narrow:  # crossing the threshold resets what ctrl+b chose
            self._narrow = narrow
            self.sidebar = not narrow

    def action_toggle_sidebar(self) -> None:
        self.sidebar = not self.sidebar
        if self.sidebar:
            self.browser.kernel_tree.focus()

    def watch_sidebar(self, shown: bool) -> None:
        self.set_class(not shown, "-sidebar-hidden")
        if not shown and self.browser.has_focus_within:
            # On to the open kernel's first field; before a kernel is open, nowhere (the keys
            # still reach the screen), so that focus does not land on a field about to go.
            fields = self.form.query(Input) if self.current_state() else None
            self.set_focus(fields.first() if fields else None)

    def action_tab(self, name: str) -> None:
        self.tabs.active = f"tab-{name}"

    @on(TabbedContent.TabActivated)
    def _tab_changed(self, event: TabbedContent.TabActivated) -> None:
        if event.pane.id == "tab-timing":
            self.query_one(TimingPane).redraw()
        elif event.pane.id == "tab-source":
            self.call_after_refresh(self.query_one(SourcePane).scroll_to_target)
        elif event.pane.id == "tab-footprint" and not isinstance(self.app.focused, Input):
            # The picture takes the focus, so the arrows move its cursor, not the tabs.
            self.call_after_refresh(self.query_one(FootprintPane).take_focus)

    def action_toggle_module(self) -> None:
        self.show_module = not self.show_module
        self.tabs.active = "tab-source"  # where the switch shows
        self.refresh_view()

    # -- the app's screens -------------------------------------------------------------------------
    def action_adapter(self) -> None:
        self.wb.action_switch_adapter()

    def action_fixtures(self) -> None:
        self.wb.action_open_fixtures()
