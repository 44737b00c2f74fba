"""Every key and command of the app, its screens, dialogs and widgets, declared once.

The screens' BINDINGS, the help screen's key table, the command palette's commands and the hints
in the panes ("press r to run") are all built from `KEYS`, so they cannot disagree. An entry with
no keys is a palette command only; one with no `command` is a key only.

One meaning per key: a key does one thing wherever it works. Where two screens bind the same key
on purpose, for the same thing (escape: cancel, else back; the steppers' next/back/first/last;
`]` the next buffer; `s` the other form of the source), their entries share a `meaning`;
tests/ui/test_keys.py refuses any other key bound to two things. The modal dialogs keep their
conventions (y/n, q closes help) and the cursor keys of the array widgets are theirs.
A new screen takes free keys (or shares a meaning); a new stepper takes `STEP_KEYS`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

# The steppers' one scheme: each has these keys for next, back, first and last: an arrow or
# home/end, and a letter that no other screen uses for anything else (b is bench, e edit, p probe).
NEXT, BACK, FIRST, LAST = "right", "left", "home", "end"
STEP_KEYS = {
    "next": f"n,{NEXT}",
    "back": f"u,{BACK}",  # undo the last step
    "first": f"z,{FIRST}",
    "last": f"l,{LAST}",
}
WG_MANY = 8  # workgroups run by the workgroup stepper's "many" key
# The engine's default warm-up before a timing (gpu.timing.DEFAULT_WARMUP_MS), as the bench key's
# help says it; tests/ui/test_keys.py holds the two equal (the registry imports no engine module).
WARMUP_S = 1.0
# Shared meanings (`Key.meaning`) of keys bound on several screens.
ESCAPE = "cancel the work in flight, else back"
NEXT_BUFFER = "the next buffer"
SOURCE = "the other form of the source"
DIMS = "the dims: where they are set"
RUN = "run what the screen shows (the kernel; the fixtures listed)"
RUN_TO = "run to what the cursor is on (a step; a line)"
DEBUG = "step one invocation line by line (the one the cursor or a question names)"
# Moves of a 2-D cursor: (binding name, keys, action, label).
_ARRAY_MOVES = (
    ("left", "left", "move(0, -1)", "Left"),
    ("right", "right", "move(0, 1)", "Right"),
    ("up", "up", "move(-1, 0)", "Up"),
    ("down", "down", "move(1, 0)", "Down"),
    ("sel_left", "shift+left", "move(0, -1, True)", "Select left"),
    ("sel_right", "shift+right", "move(0, 1, True)", "Select right"),
    ("sel_up", "shift+up", "move(-1, 0, True)", "Select up"),
    ("sel_down", "shift+down", "move(1, 0, True)", "Select down"),
)

TABS = ("outputs", "diff", "gradients", "timing", "source", "bindings", "footprint", "probes")

# How Textual names keys that are shown as something else.
_SHOWN = {
    "question_mark": "?",
    "slash": "/",
    "f1": "F1",
    "f3": "F3",
    "f4": "F4",
    "escape": "esc",
    "f5": "F5",
    "f9": "F9",
    "right_square_bracket": "]",
    "plus": "+",
    "equals_sign": "=",
    "minus": "-",
}


@dataclass(frozen=True)
class Key:
    """One action: its binding id, keys, footer label, palette command and help text."""

    id: str
    keys: str  # Textual key names, comma separated; "" for a palette command without a key
    action: str  # run on the main screen (scope "main") or on the app (scope "app")
    label: str  # the footer's word
    help: str  # one line: what it does
    command: str = ""  # its name in the command palette; "" keeps it out
    scope: str = "main"
    show: bool = True  # in the footer
    listed: bool = True  # in the palette before anything is typed (else found by search)
    meaning: str = ""  # what it shares with the entries of other screens bound to the same key

    @property
    def current(self) -> str:
        """The keys in use: the user's (config `[keys]`) when rebound, else the defaults."""
        return _REBOUND.get(self.id, self.keys)

    @property
    def shown(self) -> str:
        """The keys as the help and the palette show them: `x / F3`."""
        return " / ".join(_SHOWN.get(k, k) for k in self.current.split(",") if k)

    @property
    def display(self) -> str | None:
        """The footer's name for a function key (`F4`; Textual's own is `f4`), else None."""
        first = self.current.split(",")[0]
        return (
            _SHOWN.get(first, first.upper()) if first[:1] == "f" and first[1:].isdigit() else None
        )

    @property
    def first(self) -> str:
        """The first key, as pane hints name it (`r`)."""
        first = self.current.split(",")[0]
        return _SHOWN.get(first, first)


KEYS: tuple[Key, ...] = (
    Key(
        "run",
        "r",
        "run",
        "Run",
        "run once and compare with the reference (enter in a field does too)",
        "Run kernel",
        meaning=RUN,
    ),
    Key(
        "focus_form",
        "d",
        "focus_form",
        "Dims",
        "jump to the dims form: its first field, text selected (esc goes back to the kernels)",
        "Edit dims",
        meaning=DIMS,
    ),
    Key(
        "check",
        "c",
        "check",
        "Check",
        "check: compare, evidence, gradients, special values, determinism (as `workbench "
        "check`), with progress; escape cancels",
        "Check kernel (every check)",
    ),
    Key(
        "bench",
        "b",
        "bench",
        "Bench",
        "bench: timed dispatches for 100 ms (`bench_ms` in the configuration) after "
        f"{WARMUP_S:g} s of warm-up (`warmup_ms`; escape cancels), on the adapter's roofline",
        "Bench kernel",
    ),
    Key(
        "gradcheck",
        "g",
        "gradcheck",
        "Grads",
        "gradient check: finite differences against the backward kernel",
        "Gradient check",
    ),
    Key(
        "step_workgroups",
        "w",
        "step_workgroups",
        "Workgroups",
        "step the dispatch one workgroup at a time, buffers kept between steps",
        "Step by workgroup",
    ),
    Key(
        "footprint",
        "o",
        "footprint",
        "Footprint",
        "who wrote which element: races and holes (Footprint tab)",
        "Footprint: races and holes",
    ),
    Key(
        "probe",
        "p",
        "probe",
        "Probe",
        "run the kernel's wb_probe calls and show their records (Probes tab)",
        "Run probes",
    ),
    Key(
        "debug",
        "i",
        "debug",
        "Debug",
        "step one invocation line by line with the GPU's values: invocation 0,0,0, or on the "
        "Diff tab the highlighted element's writer, on the Footprint tab the element under the "
        "cursor's, on the Probes tab the highlighted record's invocation",
        "Debug an invocation",
        show=False,
        meaning=DEBUG,
    ),
    Key(
        "steps",
        "f4",
        # The app's action, bound on the kernel screen so its footer shows it.
        "app.steps",
        "Steps",
        "step a pipeline one dispatch at a time, every buffer kept",
        "Step a pipeline",
    ),
    Key(
        "bench_variants",
        "B",
        "bench_variants",
        "Variants",
        "sweep an override constant, or A/B against another implementation (checked, then timed)",
        "Bench variants (sweep, A/B)",
    ),
    Key(
        "save_fixture",
        "f",
        "save_fixture",
        "Save fixture",
        "save this case and its outputs as a fixture",
        "Save fixture",
    ),
    Key(
        "pin",
        "P",
        "pin",
        "Pin",
        "pin the run on screen as the baseline: every re-run shows its outputs' diff and its "
        "timing against it",
        "Pin run as baseline",
        show=False,
    ),
    Key(
        "unpin",
        "U",
        "unpin",
        "Unpin",
        "unpin the baseline",
        "Unpin baseline",
        show=False,
    ),
    Key(
        "runs",
        "H",
        "runs",
        "Runs",
        "this session's last runs of the kernel: pick one as the baseline",
        "Pick baseline from recent runs",
        show=False,
    ),
    Key(
        "save_arrays",
        "S",
        "save_arrays",
        "Save arrays",
        "save the run's inputs, outputs and reference (.npz), or one buffer (.npy)",
        "Save arrays (.npz / .npy)",
        show=False,
    ),
    Key(
        "copy",
        "y",
        "copy",
        "Copy",
        "Outputs tab: copy the value under the cursor, or the selection (shift+arrows)",
        "Copy value or selection",
        show=False,
    ),
    Key(
        "jump",
        "j",
        "jump",
        "Jump",
        "Outputs tab: jump to an element by named index (s=17 h=3 d=40) or flat index",
        "Jump to index",
        show=False,
    ),
    Key(
        "heatmap",
        "h",
        "heatmap",
        "Heatmap",
        "Outputs tab: a 2-D output (or slice) as a heatmap beside the table, to zoom into (+ and -, "
        "0 the whole array), the value under its cursor below it; h again closes it",
        "Heatmap of the output (zoomable)",
        show=False,
    ),
    Key(
        "export_diff",
        "E",
        "export_diff",
        "Export diff",
        "write the Diff tab's tables (every output, the worst elements) to a .csv or .md file",
        "Export diff table (CSV / Markdown)",
        show=False,
    ),
    Key(
        "edit",
        "e",
        "edit",
        "Edit",
        "open the kernel's file in $EDITOR at its line; the view reloads on save",
        "Edit kernel",
    ),
    Key(
        "adapter", "a", "adapter", "Adapter", "switch adapter: run on another GPU", "Switch adapter"
    ),
    Key(
        "fixtures",
        "x,f3",
        "fixtures",
        "Fixtures",
        "fixtures: list, replay, open in the kernel view",
        "Open fixtures",
    ),
    Key(
        "toggle_module",
        "s",
        "toggle_module",
        "Module",
        "Source tab: the file, or the assembled module the GPU compiles",
        "Toggle assembled module",
        show=False,
        meaning=SOURCE,
    ),
    Key(
        "next_footprint_output",
        "right_square_bracket",
        "next_footprint_output",
        "Next binding",
        "Footprint tab: show the next read_write binding",
        show=False,
        meaning=NEXT_BUFFER,
    ),
    Key("cancel", "escape", "cancel", "Cancel run", "cancel the run in flight", meaning=ESCAPE),
    Key(
        "leave_field",
        "escape",
        "leave_field",
        "Back to kernels",
        "leave a field: back to the kernel list",
        show=False,
        meaning=ESCAPE,
    ),
    Key(
        "sidebar",
        "ctrl+b",
        "toggle_sidebar",
        "Kernels",
        "show or hide the kernel list (hidden at first below 100 columns)",
        "Toggle kernel list",
    ),
    Key(
        "filter",
        "slash",
        "filter",
        "Filter",
        "filter the kernels by name or file",
        "Filter kernels",
        show=False,
    ),
    *(
        Key(
            f"tab_{name}",
            str(i + 1),
            f"tab('{name}')",
            name.title(),
            f"the {name.title()} tab",
            f"Show {name.title()} tab",
            show=False,
            listed=False,
        )
        for i, name in enumerate(TABS)
    ),
    Key(
        "check_all",
        "",
        "check_all",
        "",
        "every check of every spec'd kernel, one row each",
        "Check all kernels",
    ),
    Key("reload", "", "reload", "", "re-read every WGSL file now", "Reload corpus", scope="app"),
    Key(
        "open_corpus",
        "",
        "open_corpus",
        "",
        "open another folder of .wgsl files (or one file) as the corpus, on the same adapter",
        "Open corpus…",
        scope="app",
    ),
    Key(
        "describe",
        "",
        "describe",
        "",
        "write this kernel's settings (dims, sizes, uniforms, grid, recipes) into the corpus's "
        "workbench.toml, keeping the rest of the file",
        "Describe kernel in workbench.toml",
    ),
    Key(
        "load_npy",
        "",
        "load_npy",
        "",
        "fill an input binding from a .npy file",
        "Load .npy into an input",
    ),
    Key(
        "steps_next",
        STEP_KEYS["next"],
        "next",
        "Next",
        "Steps: run the next step",
        scope="steps",
        meaning="next",
    ),
    Key(
        "steps_back",
        STEP_KEYS["back"],
        "back",
        "Back",
        "Steps: undo the last step (its buffers restored on the GPU)",
        scope="steps",
        meaning="back",
    ),
    Key(
        "steps_run_to",
        "t",
        "run_to",
        "Run to here",
        "Steps: step forward or back to the highlighted step (enter does too)",
        scope="steps",
        meaning=RUN_TO,
    ),
    Key(
        "steps_end",
        STEP_KEYS["last"],
        "end",
        "End",
        "Steps: run to the last step",
        scope="steps",
        meaning="last",
    ),
    Key(
        "steps_reset",
        STEP_KEYS["first"],
        "reset",
        "Reset",
        "Steps: back to the start",
        scope="steps",
        meaning="first",
    ),
    Key(
        "steps_mark",
        "m",
        "mark",
        "Mark",
        "Steps: mark the highlighted step for a diff",
        scope="steps",
    ),
    Key(
        "steps_diff",
        "v",
        "diff",
        "Diff",
        "Steps: the highlighted buffer, marked step versus highlighted step",
        scope="steps",
    ),
    Key(
        "steps_close",
        "escape",
        "close",
        "Close",
        "Steps: back to the kernels",
        scope="steps",
        meaning=ESCAPE,
    ),
    Key(
        "steps_kernel",
        "k",
        "open_kernel",
        "Kernel view",
        "Steps: the highlighted step in the kernel view, its buffers before it ran as the inputs",
        scope="steps",
    ),
    Key(
        "steps_dims",
        "d",
        "set_dims",
        "Dims",
        "Steps: set the pipeline's dims (NAME=VALUE ...) and plan it again",
        scope="steps",
        show=False,  # the footer is full; help lists it
        meaning=DIMS,
    ),
    Key(
        "steps_open",
        "ctrl+o",
        "open_file",
        "Open file",
        "Steps: open a pipeline file by its path",
        scope="steps",
        show=False,  # the footer is full; help lists it
    ),
    Key(
        "fixtures_replay_all",
        "r",
        "replay_all",
        "Replay all",
        "Fixtures: replay every fixture listed",
        scope="fixtures",
        meaning=RUN,
    ),
    Key(
        "fixtures_replay_selected",
        "space",
        "replay_selected",
        "Replay this",
        "Fixtures: replay the highlighted fixture",
        scope="fixtures",
    ),
    Key(
        "fixtures_open",
        "enter",
        "open",
        "Open in kernel view",
        "Fixtures: open the highlighted fixture's case and run in the kernel view",
        scope="fixtures",
    ),
    Key(
        "fixtures_back",
        "escape",
        "back",
        "Cancel / back",
        "Fixtures: cancel the replay after the fixture in progress, else back to the kernels",
        scope="fixtures",
        meaning=ESCAPE,
    ),
    # The workgroup stepper: the steppers' one scheme (`STEP_KEYS`), plus many at once, the next
    # buffer and the instrumented source.
    Key(
        "wg_next",
        STEP_KEYS["next"],
        "step(1)",
        "Next workgroup",
        "Workgroups: run the next workgroup",
        scope="workgroups",
        meaning="next",
    ),
    Key(
        "wg_next_many",
        "N,shift+right",
        f"step({WG_MANY})",
        f"Next {WG_MANY}",
        f"Workgroups: run the next {WG_MANY} workgroups",
        scope="workgroups",
    ),
    Key(
        "wg_back",
        STEP_KEYS["back"],
        "back",
        "Back",
        "Workgroups: undo the last step (the buffers before it)",
        scope="workgroups",
        meaning="back",
    ),
    Key(
        "wg_first",
        STEP_KEYS["first"],
        "to_start",
        "Start",
        "Workgroups: back to the start (as far as the kept steps go)",
        scope="workgroups",
        meaning="first",
    ),
    Key(
        "wg_end",
        STEP_KEYS["last"],
        "to_end",
        "To the end",
        "Workgroups: run every workgroup left",
        scope="workgroups",
        meaning="last",
    ),
    Key(
        "wg_output",
        "right_square_bracket",
        "next_output",
        "Next buffer",
        "Workgroups: show the next buffer",
        scope="workgroups",
        meaning=NEXT_BUFFER,
    ),
    Key(
        "wg_source",
        "s",
        "source",
        "Instrumented source",
        "Workgroups: the instrumented module (the guard, and where it was put)",
        scope="workgroups",
        meaning=SOURCE,
    ),
    Key(
        "wg_close",
        "escape",
        "close",
        "Close",
        "Workgroups: back to the kernel",
        scope="workgroups",
        meaning=ESCAPE,
    ),
    # The debugger: the steppers' one scheme by statement (STEP_KEYS), then over, out, loop, to
    # the cursor's line, breakpoints and watches, on keys no other screen uses for anything else.
    Key(
        "debug_next",
        STEP_KEYS["next"],
        "move('next')",
        "Step",
        "Debug: the next statement",
        scope="debug",
        meaning="next",
    ),
    Key(
        "debug_back",
        STEP_KEYS["back"],
        "move('back')",
        "Back",
        "Debug: one statement back",
        scope="debug",
        meaning="back",
    ),
    Key(
        "debug_first",
        STEP_KEYS["first"],
        "move('first')",
        "First",
        "Debug: the first step",
        scope="debug",
        show=False,
        meaning="first",
    ),
    Key(
        "debug_last",
        STEP_KEYS["last"],
        "move('last')",
        "Last",
        "Debug: the last step",
        scope="debug",
        show=False,
        meaning="last",
    ),
    Key(
        "debug_over",
        "O",
        "move('over')",
        "Over",
        "Debug: step over a call (the next step in this function or its caller)",
        scope="debug",
    ),
    Key(
        "debug_out",
        "A",
        "move('out')",
        "Out",
        "Debug: step out of this function",
        scope="debug",
    ),
    Key(
        "debug_loop",
        "L",
        "move('next_iteration')",
        "Loop",
        "Debug: the next iteration of the enclosing loop (or its end)",
        scope="debug",
    ),
    Key(
        "debug_to_cursor",
        "t",
        "to_cursor",
        "To line",
        "Debug: run to the line under the cursor (up/down move it)",
        scope="debug",
        meaning=RUN_TO,
    ),
    Key(
        "debug_continue",
        "G,f5",
        "move('to_break')",
        "Continue",
        "Debug: run to the next breakpoint (a line, or where the condition becomes true)",
        scope="debug",
    ),
    Key(
        "debug_reverse",
        "R",
        "reverse",
        "Reverse",
        "Debug: back to the previous breakpoint",
        scope="debug",
        show=False,
    ),
    Key(
        "debug_breakpoint",
        "f9",
        "breakpoint",
        "Breakpoint",
        "Debug: set or clear a breakpoint on the line under the cursor",
        scope="debug",
    ),
    Key(
        "debug_condition",
        "W",
        "ask('condition')",
        "Break when",
        "Debug: break where a condition becomes true (acc > 1e6, isnan(x)); empty removes it",
        scope="debug",
    ),
    Key(
        "debug_watch",
        "X",
        "ask('watch')",
        "Watch",
        "Debug: watch an expression over the recorded values; empty clears the watches",
        scope="debug",
    ),
    Key(
        "debug_pick",
        "i",
        "ask('pick')",
        "Invocation",
        "Debug: trace another invocation (X,Y,Z), or the last writer of an element (y[36])",
        scope="debug",
        meaning=DEBUG,
    ),
    Key(
        "debug_nonfinite",
        "F",
        "nonfinite",
        "First non-finite",
        "Debug: trace the first invocation to make a NaN or infinity, at that step",
        scope="debug",
    ),
    Key(
        "debug_cursor_up",
        "up",
        "cursor(-1)",
        "Up",
        "Debug: the cursor up a line",
        scope="debug",
        show=False,
    ),
    Key(
        "debug_cursor_down",
        "down",
        "cursor(1)",
        "Down",
        "Debug: the cursor down a line",
        scope="debug",
        show=False,
    ),
    Key(
        "debug_close",
        "escape",
        "close",
        "Close",
        "Debug: back to the kernel",
        scope="debug",
        meaning=ESCAPE,
    ),
    # Screens and dialogs with one or two keys.
    Key(
        "leave_bench",
        "escape",
        "leave",
        "Cancel / back",
        "Bench: cancel the bench in flight, else back",
        scope="bench",
        meaning=ESCAPE,
    ),
    Key(
        "leave_check",
        "escape",
        "leave",
        "Cancel / back",
        "Check: cancel the checks at their next step, else back",
        scope="check",
        meaning=ESCAPE,
    ),
    Key(
        "leave_check_all",
        "escape",
        "leave",
        "Cancel / back",
        "Check all: cancel between kernels, else back",
        scope="check_all",
        meaning=ESCAPE,
    ),
    Key(
        "close_help",
        "escape,q,question_mark,f1",
        "dismiss",
        "Close",
        "Help: close it",
        scope="help",
    ),
    Key("confirm_yes", "y", "answer(True)", "Yes", "a question: yes", scope="confirm"),
    Key("confirm_no", "escape,n", "answer(False)", "No", "a question: no", scope="confirm"),
    Key(
        "close_dialog",
        "escape",
        "dismiss_none",
        "Back",
        "a dialog: close it, changing nothing",
        scope="dialog",
    ),
    # The zoomable heatmap's own keys (while it has the focus); its arrows are below.
    Key(
        "heatmap.zoom_in",
        "plus,equals_sign",
        "zoom(1)",
        "Zoom in",
        "the heatmap: zoom in around the cursor (down to one element a cell)",
        scope="heatmap",
    ),
    Key(
        "heatmap.zoom_out",
        "minus",
        "zoom(-1)",
        "Zoom out",
        "the heatmap: zoom out (up to the whole array)",
        scope="heatmap",
    ),
    Key(
        "heatmap.whole",
        "0",
        "whole",
        "Whole",
        "the heatmap: the whole array again",
        scope="heatmap",
    ),
    Key(
        "heatmap.pick",
        "enter",
        "pick",
        "In the table",
        "the heatmap: show the element under the cursor in the table",
        scope="heatmap",
    ),
    # Cursor keys of the Outputs array, the footprint picture and the heatmap (not in the footer).
    *(
        Key(
            f"{widget}.{name}",
            keys,
            action,
            label,
            f"{what}: {label.lower()}",
            scope=widget,
            show=False,
        )
        for widget, what, moves in (
            ("array", "the array", _ARRAY_MOVES),
            ("footprint", "the footprint", _ARRAY_MOVES[:4]),
            ("heatmap", "the heatmap", _ARRAY_MOVES[:4]),
        )
        for name, keys, action, label in moves
    ),
    Key("quit", "q", "quit", "Quit", "quit", scope="app"),
    Key(
        "help",
        "question_mark,f1",
        "help",
        "Help",
        "keys, marks and recipes (this help)",
        "Help",
        scope="app",
    ),
)

BY_ID = {k.id: k for k in KEYS}
# Binding id -> keys chosen by the user (`rebind`); the app hands the same map to Textual.
_REBOUND: dict[str, str] = {}


def rebind(keymap: Mapping[str, str]) -> list[str]:
    """Use the user's keys for these binding ids, so the footer, help, palette and hints all name
    them; returns the ids that name no action (the rest still apply)."""
    _REBOUND.clear()
    _REBOUND.update({i: k for i, k in keymap.items() if i in BY_ID and BY_ID[i].keys})
    return [i for i in keymap if i not in _REBOUND]


def keymap() -> dict[str, str]:
    """The rebound keys, binding id -> Textual key names (for `App.set_keymap`)."""
    return dict(_REBOUND)


def key(key_id: str) -> str:
    """The key that does `key_id`, as hints name it: `key("run")` is `r`."""
    return BY_ID[key_id].first


def bound(scope: str) -> tuple[Key, ...]:
    """The entries of one scope that have keys (a screen's or the app's bindings)."""
    return tuple(k for k in KEYS if k.scope == scope and k.keys)


def commands() -> tuple[Key, ...]:
    """The entries shown in the command palette, in order."""
    return tuple(k for k in KEYS if k.command)


def palette_help(entry: Key) -> str:
    """The palette's line under a command: what it does, and its key when it has one."""
    return f"{entry.help} ({entry.shown})" if entry.keys else entry.help


# Always in the footer, leftmost, in this order: whatever else the width leaves out, these stay
# (the kernel list's key too: below 100 columns the list starts hidden).
FOOTER_FIRST = ("help", "quit", "sidebar")


def footer_rank(action: str, enabled: bool) -> int:
    """Where a footer key goes: `FOOTER_FIRST`, then the keys that work now, then the greyed-out
    ones (the footer is cut at the right edge, so its order is its priority)."""
    first = [BY_ID[i].action for i in FOOTER_FIRST]
    if action in first:
        return first.index(action)
    return len(first) + (0 if enabled else 1)


def help_table() -> str:
    """The help screen's Markdown table of keys: one row per binding with its id (the name that
    rebinds it in the configuration's `[keys]`), then Textual's palette."""
    own = [f"| `{k.shown}` | {k.help} | {k.id} |" for k in KEYS if k.current]
    palette = "| `ctrl+p` | every command above and more, themes included | |"
    return "\n".join(["| key | does | id |", "|---|---|---|", *own, palette])
