"""The workbench's commands in the command palette (ctrl+p): run, bench, gradcheck, check all,
fixtures, adapters, reload, edit, help, and "open kernel …" for every kernel of the corpus.

Textual's own commands (themes, keys, screenshot, quit) stay in the palette beside these.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from textual.command import DiscoveryHit, Hit, Hits, Provider

if TYPE_CHECKING:
    from workbench.app import WorkbenchApp


class WorkbenchCommands(Provider):
    """Every action of the workbench, searchable by name."""

    def _commands(self) -> list[tuple[str, str, Callable[[], object]]]:
        app: WorkbenchApp = self.app  # type: ignore[assignment]
        main = app.main
        cmds: list[tuple[str, str, Callable[[], object]]] = [
            ("Run kernel", "dispatch once and compare with the reference (r)", main.action_run),
            ("Bench kernel", "20 timed dispatches after 2 warm-ups (b)", main.action_bench),
            (
                "Gradient check",
                "finite differences against the backward kernel (g)",
                main.action_gradcheck,
            ),
            (
                "Check all kernels",
                "every check of every spec'd kernel, one row each",
                app.action_check_all,
            ),
            ("Save fixture", "record this case and its outputs (f)", app.action_save_fixture),
            ("Open fixtures", "list and replay recorded fixtures (x)", app.action_open_fixtures),
            ("Switch adapter", "run on another GPU adapter (a)", app.action_switch_adapter),
            ("Reload corpus", "re-read every WGSL file now", app.action_reload),
            ("Edit kernel", "open the kernel's file in $EDITOR at its line (e)", main.action_edit),
            ("Load .npy into an input", "fill an input binding from a file", app.action_load_npy),
            (
                "Toggle assembled module",
                "Source: the file or the module the GPU compiles (m)",
                main.action_toggle_module,
            ),
            ("Help", "keys, marks and recipes (?)", app.action_help),
        ]
        for tab in ("outputs", "diff", "gradients", "timing", "source", "bindings"):
            cmds.append((f"Show {tab.title()} tab", "", lambda tab=tab: main.action_tab(tab)))
        if app.session is not None:
            for k in app.session.corpus.kernels:
                key = f"{k.file}:{k.name}"
                cmds.append(
                    (
                        f"Open kernel {k.name}",
                        k.file,
                        lambda key=key: main.query_one("KernelBrowser").select(key),
                    )
                )
        return cmds

    async def discover(self) -> Hits:
        for name, help_text, callback in self._commands():
            if not name.startswith("Open kernel") and not name.startswith("Show "):
                yield DiscoveryHit(name, callback, help=help_text)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for name, help_text, callback in self._commands():
            score = matcher.match(name)
            if score > 0:
                yield Hit(score, matcher.highlight(name), callback, help=help_text)
