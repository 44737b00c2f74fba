"""The key registry covers every key: each binding of every screen, dialog and widget has its
entry (so the footer, the help and a `[keys]` rebinding know it), the steppers share one scheme for
next/back/first/last, and a stepper's key rebinds like any other."""

from __future__ import annotations

import importlib
import pkgutil
from collections import defaultdict

import pytest
from textual.binding import Binding

from workbench.commands import bindings
from workbench.session import DEFAULT_WARMUP_MS
from workbench.viewmodel.keys import (
    BACK,
    BY_ID,
    FIRST,
    KEYS,
    LAST,
    NEXT,
    STEP_KEYS,
    WARMUP_S,
    Key,
    help_table,
    key,
    rebind,
)

UI_PACKAGES = ("workbench.screens", "workbench.dialogs", "workbench.widgets")


def _declared() -> dict[str, list[Binding]]:
    """Every class of the UI that declares BINDINGS itself, by qualified name."""
    found: dict[str, list[Binding]] = {}
    for package in UI_PACKAGES:
        root = importlib.import_module(package)
        for info in pkgutil.walk_packages(root.__path__, f"{package}."):
            module = importlib.import_module(info.name)
            for obj in vars(module).values():
                if isinstance(obj, type) and obj.__module__ == info.name:
                    own = obj.__dict__.get("BINDINGS")
                    if own:
                        found[f"{info.name}.{obj.__name__}"] = list(own)
    return found


def test_every_declared_binding_comes_from_the_registry() -> None:
    declared = _declared()
    assert "workbench.screens.workgroup_steps.WorkgroupStepScreen" in declared
    for where, own in declared.items():
        for b in own:
            entry = BY_ID.get(b.id or "")
            assert entry is not None, f"{where}: binding {b.key!r} has no registry entry"
            assert (b.key, b.action) == (entry.keys, entry.action), where


@pytest.mark.parametrize(
    ("scope", "ids"),
    [
        ("steps", ("steps_next", "steps_back", "steps_reset", "steps_end")),
        ("workgroups", ("wg_next", "wg_back", "wg_first", "wg_end")),
        ("debug", ("debug_next", "debug_back", "debug_first", "debug_last")),
    ],
)
def test_the_steppers_share_one_scheme(scope: str, ids: tuple[str, ...]) -> None:
    for binding_id, shared in zip(ids, (NEXT, BACK, FIRST, LAST), strict=True):
        assert shared in BY_ID[binding_id].keys.split(","), binding_id
        assert BY_ID[binding_id].scope == scope
    assert [BY_ID[i].keys for i in ids] == [STEP_KEYS[k] for k in ("next", "back", "first", "last")]
    letters = [BY_ID[i].keys.split(",")[0] for i in ids]
    assert letters == ["n", "u", "z", "l"]


# Scopes whose keys must mean one thing each: the screens and the app (whose keys work on every
# screen). The modal dialogs keep their conventions (y/n, q closes help); the array widgets' cursor
# keys work only where such a widget has the focus.
SCREENS = ("app", "main", "steps", "workgroups", "debug", "fixtures", "bench", "check", "check_all")


def test_one_meaning_per_key_across_screens() -> None:
    by_key: dict[str, list[Key]] = defaultdict(list)
    for k in KEYS:
        if k.scope in SCREENS:
            for name in k.keys.split(","):
                if name:
                    by_key[name].append(k)
    for name, entries in by_key.items():
        if len(entries) == 1:
            continue
        meanings = {k.meaning for k in entries}
        ids = [k.id for k in entries]
        assert len(meanings) == 1 and "" not in meanings, f"{name!r} means several things: {ids}"
    # The overloads a newcomer met: each key now does one thing (d: the dims, on either screen).
    for name, only in {
        "b": ["bench"],
        "e": ["edit"],
        "p": ["probe"],
        "d": ["focus_form", "steps_dims"],
        "m": ["steps_mark"],
        "o": ["footprint"],
        "c": ["check"],
    }.items():
        assert [k.id for k in by_key[name]] == only, name


def test_help_lists_every_screens_keys_and_the_main_footer_the_ones_that_matter() -> None:
    table = help_table()
    for k in KEYS:
        if k.keys:
            assert f"| `{k.shown}` | {k.help} | {k.id} |" in table, k.id
    for wg in ("wg_next", "wg_back", "wg_first", "wg_end", "wg_output", "wg_source"):
        assert f"| {wg} |" in table
    shown = {k.id for k in KEYS if k.scope in ("main", "app") and k.show}
    assert {"step_workgroups", "footprint", "probe", "steps", "check"} <= shown


def test_a_stepper_key_rebinds_in_hints_help_and_bindings() -> None:
    try:
        assert rebind({"wg_next": "j", "steps_next": "j"}) == []
        assert key("wg_next") == "j" and key("steps_next") == "j"
        assert "| `j` | Workgroups: run the next workgroup | wg_next |" in help_table()
        by_id = {b.id: b for b in bindings("workgroups")}
        assert (
            by_id["wg_next"].key == STEP_KEYS["next"]
        )  # Textual applies the keymap over the default
    finally:
        rebind({})


def test_the_bench_key_names_the_engines_warm_up() -> None:
    assert WARMUP_S * 1e3 == DEFAULT_WARMUP_MS
    assert f"after {WARMUP_S:g} s of warm-up" in BY_ID["bench"].help
