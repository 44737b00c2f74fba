"""Typed keys handled in the order they were typed, each against the focus the keys before it left.

Textual sends a key read from the terminal to the widget that has the focus *when the key is read*.
A key that widget does not use itself (tab, escape, a binding's key) then travels up the DOM, one
message queue per node, and only when it reaches the app does its binding run (tab moves the
focus). Meanwhile the keys typed after it are already being sent to the widget that had the focus
before: typed quickly, or read in a burst after the UI was busy (planning a case on a CPU adapter
holds the cores), `64`, tab ×5, `arange` put `64arange` in the first field and nothing in the
fifth, and a key meant for a field can land on the kernel list and fire a command.

`KeysInOrder` holds each key read from the terminal until the key before it has been handled all
the way: by a priority binding at once, or by every node it travels through, the app included,
and until what that handler queued on the app has run. A binding's action moves the focus on the
app's queue (`Widget.focus` is deferred): the key after `d` or escape must wait for that move, or
it goes to the widget the focus is leaving. A handler that has not finished after HOLD_LIMIT_S (one
waiting for a dialog to close) lets the keys behind it through, so the keyboard never freezes.
"""

from __future__ import annotations

import asyncio
import time
from collections import deque
from contextlib import suppress
from typing import Any

from textual import events
from textual.app import App
from textual.dom import DOMNode
from textual.message_pump import MessagePump

# Long: on a CPU adapter planning a case can starve the UI's event loop for seconds, and a key
# let through early lands in the wrong place; no handler waits this long for anything else.
HOLD_LIMIT_S = 30.0
_POLL_S = 0.05


async def _through(node: MessagePump) -> None:
    """Return once `node` has handled what was queued for it before this call (or is closed)."""
    done = asyncio.Event()
    if not node.call_later(done.set):
        return
    give_up = time.monotonic() + HOLD_LIMIT_S
    while not done.is_set() and node.is_running and time.monotonic() < give_up:
        with suppress(TimeoutError):
            await asyncio.wait_for(done.wait(), _POLL_S)


def key_path(node: DOMNode) -> list[DOMNode]:
    """The node and its ancestors up to its screen: the queues a bubbling key goes through."""
    path = [node]
    while path[-1].parent is not None and path[-1] is not node.screen:
        path.append(path[-1].parent)
    return [n for n in path if n is not node.app]


class KeysInOrder(App[Any]):
    """An app whose keys from the terminal are handled one after the other (see the module)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._held_keys: deque[events.Key] = deque()
        self._key_in_flight = False
        self._key_follower: asyncio.Task[None] | None = None

    @property
    def keys_pending(self) -> bool:
        """A key read from the terminal is still on its way, or waiting behind one."""
        return self._key_in_flight or bool(self._held_keys)

    async def on_event(self, event: events.Event) -> None:
        if not isinstance(event, events.Key) or event.is_forwarded:
            await super().on_event(event)
            return
        if self._key_in_flight:
            self._held_keys.append(event)
        else:
            await self._route(event)

    async def _route(self, event: events.Key) -> None:
        self._key_in_flight = True
        target = self.focused or self.screen
        await super().on_event(event)
        if event.is_forwarded:
            # Follow it in a task: the app's own queue must keep running, since a key that bubbles
            # all the way ends its journey here, at the app's bindings.
            self._key_follower = asyncio.create_task(self._follow(key_path(target)))
        elif not self.call_later(self._next_key):  # after what a priority binding queued
            self._key_in_flight = False

    async def _follow(self, path: list[DOMNode]) -> None:
        for node in path:
            await _through(node)
        # The key, if it bubbled up to the app, is on the app's queue now: once the app has
        # handled it, the focus move its binding queued there (`Widget.focus` is deferred) is
        # ahead of the next key.
        await _through(self)
        if not self.call_later(self._next_key):
            self._key_in_flight = False

    async def _next_key(self) -> None:
        if self._held_keys:
            await self._route(self._held_keys.popleft())
        else:
            self._key_in_flight = False
