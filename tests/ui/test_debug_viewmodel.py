"""The Debug screen's view model, on a trace written out by hand (the one `workbench debug` gives
for invocation 36 of tests/ui/test_debug.py's kernel: a loop calling a helper twice, then a
division by zero): every move, breakpoints and conditions, locals, watches, the call stack and
the loads and stores, all without the GPU. The invocation picker's text, too."""

from __future__ import annotations

import math

import pytest

from workbench.errors import UserError
from workbench.viewmodel.debug import Pick, TraceView, parse_pick
from workbench.workgroups.debug import MemoryView, Step, Trace

F = "debugme.wgsl"
# (line, col, kind, name, type, value, index, depth, function)
ROWS = [
    (11, 5, "assign", "i", "u32", 36, None, 0, "debugme"),
    (12, 5, "assign", "acc", "f32", 0.0, None, 0, "debugme"),
    (13, 5, "loop", "k", "u32", 0, 0, 0, "debugme"),
    (14, 22, "load", "x[i]", "f32", -0.5, 36, 0, "debugme"),
    (4, 10, "param", "v", "f32", -0.5, None, 1, "scale"),
    (4, 18, "param", "k", "f32", 0.0, None, 1, "scale"),
    (5, 5, "assign", "s", "f32", 1.0, None, 1, "scale"),
    (6, 5, "return", "return", "f32", 1.0, None, 1, "scale"),
    (14, 9, "assign", "acc", "f32", 1.0, None, 0, "debugme"),
    (13, 5, "loop", "k", "u32", 1, 1, 0, "debugme"),
    (14, 22, "load", "x[i]", "f32", -0.5, 36, 0, "debugme"),
    (4, 10, "param", "v", "f32", -0.5, None, 1, "scale"),
    (4, 18, "param", "k", "f32", 1.0, None, 1, "scale"),
    (5, 5, "assign", "s", "f32", 0.5, None, 1, "scale"),
    (6, 5, "return", "return", "f32", 0.25, None, 1, "scale"),
    (14, 9, "assign", "acc", "f32", 1.25, None, 0, "debugme"),
    (13, 5, "loop", "end", "u32", 2, 2, 0, "debugme"),
    (16, 5, "assign", "gap", "f32", 0.0, None, 0, "debugme"),
    (17, 5, "store", "y[i]", "f32", math.inf, 36, 0, "debugme"),
]


def _view() -> TraceView:
    steps = [
        Step(k, F, line, col, kind, name, ty, value, index, depth, (), fn)
        for k, (line, col, kind, name, ty, value, index, depth, fn) in enumerate(ROWS)
    ]
    trace = Trace("debugme", (36, 0, 0), (0, 0, 0), (36, 0, 0), steps, True)
    return TraceView(trace, nonfinite=18)


def test_next_back_first_last_and_their_ends() -> None:
    v = _view()
    assert v.back() == "at the first step" and v.at == 0
    assert v.next() == "next step" and v.at == 1
    assert v.last() == "the last step" and v.at == 18
    assert v.next() == "at the last step" and v.at == 18
    v.first()
    assert v.at == 0
    assert v.where() == "step 0 (last 18) · debugme.wgsl:11:5 in debugme"


def test_over_runs_through_the_call_and_out_leaves_it() -> None:
    v = _view()
    v.at = 3  # the load before the first call
    assert v.over() == "stepped over" and v.at == 8  # acc += scale(...): the caller again
    v.at = 5  # inside scale
    assert v.out() == "out of scale" and v.at == 8
    assert v.out() == "in the entry point: nothing to step out to" and v.at == 8


def test_next_iteration_goes_to_the_enclosing_loops_next_record() -> None:
    v = _view()
    v.at = 3
    assert v.next_iteration() == "next iteration" and v.at == 9
    assert v.next_iteration() == "the loop ended" and v.at == 16
    assert v.next_iteration() == "not inside a loop" and v.at == 16


def test_to_line_and_line_breakpoints_forward_and_back() -> None:
    v = _view()
    assert v.to_line(F, 5) == "ran to line 5" and v.at == 6
    assert v.to_break() == "no breakpoints: set one on a line, or a condition"
    assert v.toggle_breakpoint(F, 14) == "breakpoint at line 14"
    assert v.to_break() == "breakpoint at line 14" and v.at == 8
    assert v.to_break() == "breakpoint at line 14" and v.at == 10
    assert v.to_break(forward=False) == "breakpoint at line 14" and v.at == 8
    v.last()
    assert v.to_break() == "no breakpoint ahead" and v.at == 18
    assert v.toggle_breakpoint(F, 14) == "breakpoint at line 14 removed"


def test_a_condition_stops_where_it_becomes_true() -> None:
    v = _view()
    assert v.set_condition("acc > 1.1") == "break when acc > 1.1"
    assert v.to_break() == "acc > 1.1 holds" and v.at == 15  # acc = 1.25
    assert v.to_break() == "no breakpoint ahead"  # it stays true: no new stop
    v.set_condition("isinf(y[i])")
    v.first()
    assert v.to_break() == "isinf(y[i]) holds" and v.at == 18
    with pytest.raises(UserError, match="records no 'nosuch'"):
        v.set_condition("nosuch > 1")
    with pytest.raises(UserError, match="not supported"):
        v.set_condition("max(acc, 1.0) > 2.0")
    assert v.set_condition("") == "condition removed" and v.condition is None


def test_locals_are_the_frames_with_this_steps_marked() -> None:
    v = _view()
    v.at = 8
    shown = [(x.name, x.value, x.changed) for x in v.locals()]
    assert shown == [("i", "36", False), ("acc", "1.0", True), ("k", "0", False)]
    v.at = 13  # inside the second call: only scale's own names
    shown = [(x.name, x.value, x.changed) for x in v.locals()]
    assert shown == [("v", "-0.5", False), ("k", "1.0", False), ("s", "0.5", True)]


def test_watches_evaluate_over_the_values_recorded_so_far() -> None:
    v = _view()
    v.add_watch("acc * 2.0")
    v.add_watch("gap")
    v.at = 8
    assert v.watch_values() == [("acc * 2.0", "2.0"), ("gap", "-")]
    v.at = 15
    assert v.watch_values()[0] == ("acc * 2.0", "2.5")
    v.last()
    assert v.watch_values()[1] == ("gap", "0.0")
    for text in ("acc / gap", "-acc / gap", "gap / gap", "i / 5u", "i % 5u", "i / 0u"):
        v.add_watch(text)
    # WGSL's division: IEEE on floats, truncated on integers, e1 for an integer / 0.
    assert [value for _, value in v.watch_values()[2:]] == ["inf", "-inf", "nan", "7", "1", "36"]
    with pytest.raises(UserError, match="watch"):
        v.add_watch("acc +")
    assert v.add_watch("") == "watches cleared" and v.watch_values() == []


def test_the_call_stack_innermost_first() -> None:
    v = _view()
    v.at = 13
    assert [(f.function, f.line) for f in v.stack()] == [("scale", 5), ("debugme", 14)]
    v.at = 17
    assert [(f.function, f.line) for f in v.stack()] == [("debugme", 16)]


def test_loads_and_stores_up_to_the_step_and_the_nonfinite_step() -> None:
    v = _view()
    v.at = 12
    assert [(x.step, x.name) for x in v.memory(6)] == [(3, "x[i]"), (10, "x[i]")]
    assert v.to_nonfinite() == "the first non-finite value" and v.at == 18
    assert [x.step for x in v.memory(2)] == [10, 18]


def test_the_invocation_picker_reads_ids_and_elements() -> None:
    assert parse_pick("36") == Pick(invocation=(36, 0, 0))
    assert parse_pick(" 1, 2, 3 ") == Pick(invocation=(1, 2, 3))
    assert parse_pick("y[s=1 d=2]") == Pick(element="y[s=1 d=2]")
    assert str(Pick(invocation=(4, 0, 0))) == "4,0,0"
    for bad in ("", "a,b", "1,2", "-1"):
        with pytest.raises(UserError, match="expected X,Y,Z"):
            parse_pick(bad)


def test_workgroup_memory_as_seen_after_the_last_barrier_reached() -> None:
    v = _view()
    v.trace.memory = [
        MemoryView(3, "tile", "f32", [1.0, 2.0]),
        MemoryView(10, "tile", "f32", [3.0, 4.0]),
    ]
    v.at = 2
    assert v.workgroup_memory() == []
    v.at = 9
    assert [(m.step, m.values) for m in v.workgroup_memory()] == [(3, [1.0, 2.0])]
    v.last()
    assert [(m.step, m.values) for m in v.workgroup_memory()] == [(10, [3.0, 4.0])]


def test_a_call_right_after_another_at_the_same_depth_is_its_own_frame() -> None:
    # y = f(g(x)): g's parameter and return, then f's, with no step of the caller between.
    rows = [
        (3, 5, "load", "x[i]", "f32", 2.0, 0, 0, "main"),
        (7, 6, "param", "u", "f32", 2.0, None, 1, "g"),
        (8, 5, "return", "return", "f32", 4.0, None, 1, "g"),
        (11, 6, "param", "v", "f32", 4.0, None, 1, "f"),
        (12, 5, "assign", "w", "f32", 5.0, None, 1, "f"),
    ]
    steps = [
        Step(k, F, line, col, kind, name, ty, value, index, depth, (), fn)
        for k, (line, col, kind, name, ty, value, index, depth, fn) in enumerate(rows)
    ]
    v = TraceView(Trace("k", (0, 0, 0), (0, 0, 0), (0, 0, 0), steps, True))
    v.last()
    assert [x.name for x in v.locals()] == ["v", "w"]
    assert [(f.function, f.line) for f in v.stack()] == [("f", 12), ("main", 3)]
    v.at = 1
    assert [x.name for x in v.locals()] == ["u"]
