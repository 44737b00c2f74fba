"""The Footprint tab lists the races and holes beside the picture in the command line's words,
from one place (`OutputFootprint.problem_lines`; issue 31, item 10)."""

from __future__ import annotations

import numpy as np

from workbench.widgets.panes.footprint import problems_text
from workbench.workgroups.footprint import HOLE, RACE, OutputFootprint


def _output(atomic: bool = False) -> OutputFootprint:
    owner = np.zeros((4, 8), dtype=np.int64)
    owner[1, :] = 1
    owner[0, 7] = RACE
    owner[3, 2:5] = HOLE
    return OutputFootprint("C", ("rows", "cols"), atomic, owner, {7: [0, 1]})


def test_races_and_holes_are_a_line_each_as_the_cli_prints_them() -> None:
    lines = _output().problem_lines()
    assert lines == [
        "race at rows=0 cols=7: workgroups 0, 1 (a race)",
        "hole rows=3 cols=2 .. rows=3 cols=4 (3 elements)",
    ]
    assert problems_text(_output()).plain == "\n".join(lines)


def test_an_atomic_binding_lists_nothing_and_says_why() -> None:
    assert _output(atomic=True).problem_lines() == []
    assert problems_text(_output(atomic=True)).plain.startswith("atomic: shared by design")
