"""The kernel browser: a filter box over a tree of files and their kernels, each with its mark.

Marks: ✓ spec'd and compiles, ○ ad hoc (no spec) and compiles, ⚠ needs a feature the adapter
lacks, ✗ a compile or reflection error, ≠ the name of a shipped kernel with another binding
signature, … not checked yet. Files the corpus could not read are listed with ✗ and the reason.
After a kernel's name, its last verdict (`PASS`, `FAIL`…), dimmed once it is stale: the mark
says what the kernel is, the verdict what its last run found.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from rich.style import Style
from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.message import Message
from textual.widgets import Input, Tree
from textual.widgets.tree import TreeNode

from workbench.viewmodel.keys import key
from workbench.viewmodel.status import KINDS, PENDING, KernelStatus, kernel_key, kernel_name
from workbench.wgsl.corpus import Corpus

MARKS = {"spec": "✓", "adhoc": "○", "needs": "⚠", "error": "✗", "mismatch": "≠", "pending": "…"}


class KernelBrowser(Vertical):
    """Filter Input over a Tree of files → kernels."""

    # One component class per mark kind (kernel-browser--spec, …), so themes can recolour them.
    COMPONENT_CLASSES: ClassVar[set[str]] = {f"kernel-browser--{kind}" for kind in KINDS} | {
        "kernel-browser--file",
        "kernel-browser--unreadable",
    }

    DEFAULT_CSS = """
    KernelBrowser > .kernel-browser--spec { color: $text-success; }
    KernelBrowser > .kernel-browser--adhoc { color: $text-primary; }
    KernelBrowser > .kernel-browser--needs { color: $text-warning; }
    KernelBrowser > .kernel-browser--error { color: $text-error; }
    KernelBrowser > .kernel-browser--mismatch { color: $text-accent; }
    KernelBrowser > .kernel-browser--pending { color: $foreground; text-style: dim; }
    KernelBrowser > .kernel-browser--file { text-style: bold; }
    KernelBrowser > .kernel-browser--unreadable { color: $text-error; }
    KernelBrowser { width: 36; border-right: vkey $panel; }
    KernelBrowser #filter { margin: 0 0 0 0; }
    KernelBrowser Tree { height: 1fr; background: transparent; padding: 0; overflow-x: hidden; }
    """

    @dataclass
    class Selected(Message):
        """A kernel was highlighted (cursor moved onto it) or chosen."""

        key: str

    def __init__(self, *, id: str | None = None, blink: bool = True) -> None:
        super().__init__(id=id)
        self._corpus: Corpus | None = None
        self._statuses: dict[str, KernelStatus] = {}
        self._verdicts: dict[str, tuple[str, str]] = {}  # key: (word, mark kind)
        self._leaf_nodes: dict[str, TreeNode[str]] = {}
        self._blink = blink
        self.current: str | None = None

    def compose(self) -> ComposeResult:
        box = Input(placeholder=f"filter kernels  ({key('filter')})", id="filter", compact=True)
        box.cursor_blink = self._blink
        yield box
        tree: Tree[str] = Tree("corpus", id="kernels")
        tree.show_root = False
        tree.guide_depth = 2
        yield tree

    @property
    def kernel_tree(self) -> Tree[str]:
        return self.query_one("#kernels", Tree)

    @property
    def filter_box(self) -> Input:
        return self.query_one("#filter", Input)

    def set_corpus(self, corpus: Corpus, statuses: dict[str, KernelStatus]) -> None:
        self._corpus = corpus
        self._statuses = dict(statuses)
        self._rebuild()

    def set_status(self, key: str, status: KernelStatus) -> None:
        self._statuses[key] = status
        node = self._leaf_nodes.get(key)
        if node is not None and node.data == key:
            node.set_label(self._label(key))

    def set_verdict(self, key: str, verdict: tuple[str, str] | None) -> None:
        """The kernel's last verdict (word, mark kind), or None for none."""
        if verdict == self._verdicts.get(key):
            return
        if verdict is None:
            self._verdicts.pop(key, None)
        else:
            self._verdicts[key] = verdict
        node = self._leaf_nodes.get(key)
        if node is not None and node.data == key:
            node.set_label(self._label(key))

    def status(self, key: str) -> KernelStatus:
        return self._statuses.get(key, PENDING)

    def kernel_keys(self) -> list[str]:
        return [kernel_key(k) for k in self._corpus.kernels] if self._corpus else []

    def _style(self, part: str) -> Style:
        return self.get_component_rich_style(f"kernel-browser--{part}", partial=True)

    def _label(self, key: str) -> Text:
        st = self._statuses.get(key, PENDING)
        text = Text()
        text.append(MARKS[st.kind] + " ", style=self._style(st.kind))
        text.append(kernel_name(key))
        verdict = self._verdicts.get(key)
        if verdict is not None:
            text.append(f"  {verdict[0]}", style=self._style(verdict[1]))
        return text

    def _rebuild(self) -> None:
        tree = self.kernel_tree
        tree.clear()
        self._leaf_nodes = {}
        if self._corpus is None:
            return
        needle = self.query_one("#filter", Input).value.strip().lower()
        files: dict[str, TreeNode[str]] = {}
        for k in self._corpus.kernels:
            key = kernel_key(k)
            if needle and needle not in k.name.lower() and needle not in k.file.lower():
                continue
            parent = files.get(k.file)
            if parent is None:
                parent = tree.root.add(
                    Text(k.file.removesuffix(".wgsl"), style=self._style("file")), expand=True
                )
                files[k.file] = parent
            self._leaf_nodes[key] = parent.add_leaf(self._label(key), data=key)
        for file, why in sorted(self._corpus.problems.items()):
            if needle and needle not in file.lower():
                continue
            bad = self._style("unreadable")
            node = tree.root.add(Text.assemble(("✗ ", bad), file.removesuffix(".wgsl")))
            node.add_leaf(Text(why, style=bad))
        if self.current in self._leaf_nodes:
            self.call_after_refresh(self._reselect, self.current)

    def _reselect(self, key: str) -> None:
        node = self._leaf_nodes.get(key)
        if node is not None:
            self.kernel_tree.move_cursor(node)

    def select(self, key: str) -> None:
        """Move the cursor onto a kernel (clearing a filter that hides it)."""
        if key not in self._leaf_nodes:
            self.query_one("#filter", Input).value = ""
            self._rebuild()
        # Tree lines are laid out on the next refresh; move the cursor after it.
        self.call_after_refresh(self._reselect, key)

    def first_key(self) -> str | None:
        return next(iter(self._leaf_nodes), None)

    @on(Input.Changed, "#filter")
    def _filter(self, event: Input.Changed) -> None:
        event.stop()
        self._rebuild()

    @on(Input.Submitted, "#filter")
    def _filter_done(self, event: Input.Submitted) -> None:
        """Enter in the filter: open the first match (the only one, often) in the list."""
        event.stop()
        matches = list(self._leaf_nodes)
        if not matches:
            self.notify(f"no kernel matches {event.value.strip()!r}", severity="warning")
            return
        self.kernel_tree.focus()
        self.select(matches[0])
        if matches[0] != self.current:
            # Said here, not left to the cursor: in the filtered tree the match can sit on the
            # line the cursor was on, and a cursor that does not move says nothing.
            self.current = matches[0]
            self.post_message(self.Selected(matches[0]))
        if len(matches) > 1:
            self.notify(f"{len(matches)} kernels match: ↑↓ moves between them")

    @on(Tree.NodeHighlighted, "#kernels")
    def _highlighted(self, event: Tree.NodeHighlighted[str]) -> None:
        event.stop()
        key = event.node.data
        if key and key != self.current:
            self.current = key
            self.post_message(self.Selected(key))

    @on(Tree.NodeSelected, "#kernels")
    def _selected(self, event: Tree.NodeSelected[str]) -> None:
        event.stop()
        key = event.node.data
        if key and key != self.current:
            self.current = key
            self.post_message(self.Selected(key))
