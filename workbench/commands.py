"""The workbench's bindings and its commands in the command palette (ctrl+p), both built from the
one registry of keys (`workbench.viewmodel.keys`), plus "Open kernel …" for every kernel.

Textual's own commands (themes, keys, screenshot, quit) stay in the palette beside these.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING, Any

from textual.binding import Binding, BindingType
from textual.command import DiscoveryHit, Hit, Hits, Provider

from workbench.viewmodel.keys import Key, bound, commands, palette_help
from workbench.viewmodel.status import kernel_key

if TYPE_CHECKING:
    from workbench.app import WorkbenchApp


def bindings(scope: str) -> list[BindingType]:
    """The Textual bindings of one scope ("main", "steps", "fixtures": a screen; "app": the app)."""
    return [
        Binding(
            k.keys,
            k.action,
            k.label,
            show=k.show,
            key_display=k.display,
            id=k.id,
            tooltip=k.help,
        )
        for k in bound(scope)
    ]


class WorkbenchCommands(Provider):
    """Every action of the workbench, searchable by name."""

    def _callback(self, entry: Key) -> Callable[[], Any]:
        app: WorkbenchApp = self.app  # type: ignore[assignment]
        target = app.main if entry.scope == "main" else app
        return partial(target.run_action, entry.action)

    def _commands(self) -> list[tuple[str, str, Callable[[], Any], bool]]:
        """(name, help, callback, listed before anything is typed) of every command."""
        app: WorkbenchApp = self.app  # type: ignore[assignment]
        cmds = [(k.command, palette_help(k), self._callback(k), k.listed) for k in commands()]
        if app.session is not None:
            for k in app.session.corpus.kernels:
                select = partial(app.main.browser.select, kernel_key(k))
                cmds.append((f"Open kernel {k.name}", k.file, select, False))
        return cmds

    async def discover(self) -> Hits:
        for name, help_text, callback, listed in self._commands():
            if listed:
                yield DiscoveryHit(name, callback, help=help_text)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for name, help_text, callback, _ in self._commands():
            score = matcher.match(name)
            if score > 0:
                yield Hit(score, matcher.highlight(name), callback, help=help_text)
