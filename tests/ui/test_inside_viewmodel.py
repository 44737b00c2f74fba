"""The footprint picture and the probe table without a terminal: cells, marks, descriptions and
record filters, from hand-made footprints and records (no GPU)."""

from __future__ import annotations

import numpy as np
import pytest

from workbench.viewmodel.footprint import HOLED, OWNED, RACED, owner_colour, picture
from workbench.viewmodel.probes import filter_records, parse_record_filter, record_row, summary
from workbench.workgroups.footprint import HOLE, RACE, OutputFootprint
from workbench.workgroups.probes import ProbeFilter, ProbeRecord, ProbeRun


def _footprint() -> OutputFootprint:
    """4 rows x 8 columns (s, d): rows owned by workgroups 0..3, one race, the last row's tail a hole."""
    owner = np.repeat(np.arange(4), 8).reshape(4, 8)
    owner[1, 0] = RACE
    owner[3, 4:] = HOLE
    return OutputFootprint("out", ("s", "d"), False, owner, {8: [0, 1]})


def test_one_cell_per_element_when_it_fits():
    pic = picture(_footprint(), width=8, height=4)
    assert pic.shape == (4, 8)
    assert pic.kinds[1, 0] == RACED and pic.kinds[3, 5] == HOLED and pic.kinds[2, 2] == OWNED
    assert pic.owners[2, 2] == 2
    assert pic.describe(1, 0) == "s=1 d=0: workgroups 0, 1 (a race)"
    assert pic.describe(3, 7) == "s=3 d=7: no workgroup (a hole)"
    assert pic.describe(0, 3) == "s=0 d=3: workgroup 0"


def test_a_reduced_picture_marks_a_cell_with_any_race_or_hole():
    pic = picture(_footprint(), width=2, height=2)
    assert pic.shape == (2, 2)
    assert pic.kinds[0, 0] == RACED  # rows 0-1, columns 0-3 hold the race
    assert pic.kinds[1, 1] == HOLED  # rows 2-3, columns 4-7 hold the hole
    assert pic.kinds[0, 1] == OWNED and pic.owners[0, 1] == 0
    assert pic.describe(0, 1).startswith("s=0 d=4 … s=1 d=7 (8 elements): workgroups 0, 1")
    assert "s=1 d=0 written by workgroups 0, 1 (a race)" in pic.describe(0, 0)


def test_one_dimensional_outputs_wrap_at_the_width_and_neighbours_differ_in_colour():
    owner = np.arange(10)
    pic = picture(OutputFootprint("x", (), False, owner), width=4, height=10)
    assert pic.layout == (3, 4) and pic.shape == (3, 4)
    assert pic.kinds[2, 3] == HOLED  # past the end is drawn as not written
    assert len({owner_colour(i) for i in range(16)}) == 16


def _run() -> ProbeRun:
    records = (
        ProbeRecord((0, 0, 0), (1, 0, 0), 3, "f32", 1.5, 0),
        ProbeRecord((1, 0, 0), (0, 0, 0), 3, "u32", 7, 1),
        ProbeRecord((1, 0, 0), (0, 0, 0), 4, "vec4<f32>", (1.0, 2.0, 3.0, 4.0), 2),
    )
    return ProbeRun("k", records, 5, 3, ProbeFilter(), (2, 1, 1))


def test_record_filters_keep_tags_and_workgroups():
    run = _run()
    assert [r.order for r in filter_records(run, "")] == [0, 1, 2]
    assert [r.order for r in filter_records(run, "tag=3")] == [0, 1]
    assert [r.order for r in filter_records(run, "wg=1 tag=3,4")] == [1, 2]
    assert [r.order for r in filter_records(run, "wg=1:0:0")] == [1, 2]
    with pytest.raises(ValueError, match="tag=N"):
        parse_record_filter("colour=red")


def test_record_rows_and_the_counts_line():
    run = _run()
    assert record_row(run.records[2]) == ("2", "1,0,0", "0,0,0", "4", "vec4<f32>", "(1, 2, 3, 4)")
    assert summary(run, run.records[:1]) == (
        "1 of 3 records shown (all invocations); 5 dropped past the capacity of 3"
    )
