"""The UI's view model on its own, in milliseconds: no app, no adapter, no Textual.

Form parsing, slice parsing, kernel keys and marks, the per-kernel state's rules for errors and
staleness, the Diff tab's tolerance ratios (against figures worked out by hand), and the one
registry of keys that the bindings, the help and the palette are built from.
"""

from __future__ import annotations

import math
import subprocess
import sys
from types import SimpleNamespace

import numpy as np
import pytest

from workbench.specs.base import Cost, Dim, KernelSpec
from workbench.viewmodel.diff import closest, tolerance_ratio
from workbench.viewmodel.form import ADHOC_DIMS, FormState, default_form, parse_form
from workbench.viewmodel.kernel_state import KernelState, View, error_location, view_of
from workbench.viewmodel.keys import KEYS, bound, commands, help_table, key, palette_help
from workbench.viewmodel.slicing import parse_slice, placeholder
from workbench.viewmodel.status import KernelStatus, kernel_key, kernel_name, status_kind


def _spec(*dims: Dim) -> KernelSpec:
    return SimpleNamespace(dims=dims)  # type: ignore[return-value]


SPEC = _spec(Dim("seq", 512, lo=1, hi=4096, doc="tokens"), Dim("d_ff", 3072, lo=1, hi=65535))


# -- the form --------------------------------------------------------------------------------------
def test_default_form_and_ad_hoc_dims() -> None:
    assert default_form(SPEC) == FormState(dims={"seq": "512", "d_ff": "3072"})
    assert default_form(None).dims == {"n": str(ADHOC_DIMS[0].default)}


def test_parse_form_accepts_separators_and_strips_recipes() -> None:
    state = FormState(dims={"seq": " 1_024 ", "d_ff": "3,072"}, seed="7", recipes={"x": " ones "})
    parsed = parse_form(state, SPEC)
    assert parsed.problems == ()
    assert parsed.dims == {"seq": 1024, "d_ff": 3072} and parsed.seed == 7
    assert parsed.inputs == {"x": "ones"}


def test_parse_form_says_every_problem_on_one_line() -> None:
    state = FormState(dims={"seq": "x", "d_ff": "70000"}, seed="-1")
    problems = parse_form(state, SPEC).problems
    assert problems == (
        "seq: 'x' is not a whole number",
        "d_ff must be in [1, 65,535]",
        "seed: '-1' is not a whole number >= 0",
    )
    assert all("\n" not in p for p in problems)
    assert "tokens" in parse_form(FormState(dims={"seq": "0"}), SPEC).problems[0]


def test_form_key_ignores_blank_recipes_and_spaces() -> None:
    a = FormState(dims={"n": "8"}, seed=" 1 ", recipes={"x": "  ", "y": "ones"})
    b = FormState(dims={"n": "8"}, seed="1", recipes={"y": " ones"})
    assert a.key == b.key
    assert a.key != b.with_recipe("x", "zeros").key


def test_form_fields_by_id() -> None:
    state = FormState(dims={"n": "8"})
    assert state.with_field("dim-n", "9").dims == {"n": "9"}
    assert state.with_field("recipe-x", "arange").recipes == {"x": "arange"}
    assert state.with_field("seed", "3").seed == "3"
    assert state.with_field("special", True).special is True
    assert state.with_field("unknown", "z") is state


@pytest.mark.parametrize(
    ("field_id", "text"),
    [
        ("dim-n", "9"),
        ("recipe-x", "arange"),
        ("seed", "3"),
        ("set-dims-x", "2"),
        ("grid", "4,1"),
        ("override-WG", "64"),
    ],
)
def test_form_text_of_a_field_is_what_with_field_put_there(field_id: str, text: str) -> None:
    state = FormState(dims={"n": "8"})
    assert state.with_field(field_id, text).text_of(field_id) == text


def test_form_text_of_fields_the_form_lacks() -> None:
    state = FormState(dims={"n": "8"})
    assert state.text_of("dim-m") is None  # not one of the kernel's dims
    assert state.text_of("special") is None  # a toggle, not text
    assert state.text_of("recipe-x") == ""  # blank: the spec's inputs


# -- the slice box ---------------------------------------------------------------------------------
AXES = ("seq", "head", "row", "col")
SHAPE = (4, 3, 8, 8)


@pytest.mark.parametrize(
    ("text", "lead", "problem"),
    [
        ("", (0, 0), ""),
        ("seq=3 head=1", (3, 1), ""),
        ("2, 1", (2, 1), ""),
        ("head=2", (0, 2), ""),
        ("seq=9", (3, 0), "seq=9 is outside [0, 3]"),
        ("row=1", (0, 0), "no leading axis 'row' (seq, head)"),
        ("1 1 1", (1, 1), "only 2 leading axes"),
        ("seq=a", (0, 0), "'seq=a' is not an index"),
    ],
)
def test_parse_slice(text: str, lead: tuple[int, ...], problem: str) -> None:
    assert parse_slice(text, SHAPE, AXES) == (lead, problem)


def test_two_dimensional_arrays_have_no_slice() -> None:
    assert parse_slice("3", (8, 8), ("r", "c")) == ((), "")
    assert placeholder(("r", "c"), 2) == "(2-D: no slice)"
    assert placeholder(AXES, 4) == "seq=0 head=0"


# -- kernel keys and marks -------------------------------------------------------------------------
def test_kernel_keys_tell_repeated_sections_apart() -> None:
    k = SimpleNamespace(file="a.wgsl", name="f", line=40, problem="")
    assert kernel_key(k) == "a.wgsl:f"
    dup = SimpleNamespace(file="a.wgsl", name="f", line=40, problem="duplicate kernel section f")
    assert kernel_key(dup) == "a.wgsl:f#L40"
    assert kernel_name("a.wgsl:f") == "f"


def test_status_marks() -> None:
    from workbench.session import Status, StatusKind

    assert status_kind(Status(StatusKind.OK), True, False) == KernelStatus("spec")
    assert status_kind(Status(StatusKind.OK), False, False) == KernelStatus("adhoc")
    assert status_kind(Status(StatusKind.OK), False, True).kind == "mismatch"
    needs = Status(StatusKind.NEEDS, missing=("shader-f16",))
    assert status_kind(needs, True, False) == KernelStatus("needs", "needs shader-f16")
    broken = Status(StatusKind.COMPILE_ERROR, detail="a.wgsl:3:1: x\nmore")
    assert status_kind(broken, True, False) == KernelStatus("error", "compile error: a.wgsl:3:1: x")


# -- one kernel's state ----------------------------------------------------------------------------
def _run(median: float | None = None, cost: Cost | None = None) -> SimpleNamespace:
    timing = SimpleNamespace(reps=20, median_ms=median) if median is not None else None
    return SimpleNamespace(timing=timing, case=SimpleNamespace(cost=cost))


def test_a_good_run_clears_a_run_error_and_keeps_bench_medians() -> None:
    st = KernelState(form=FormState())
    st.failed("refused: too big")
    assert st.error == "refused: too big" and st.error_from == "run"
    st.ran(_run(0.5))
    st.ran(_run())
    assert st.error is None and st.medians == [0.5]
    assert st.benches == []  # no cost model: no place on the roofline


def test_benches_with_a_cost_model_are_kept_as_roofline_points() -> None:
    st = KernelState(form=FormState())
    st.ran(_run(2.0, Cost(bytes=4 * 10**6, flops=10**6)))  # 2 GB/s, 0.5 GFLOP/s in 2 ms
    st.ran(_run(1.0, Cost(bytes=4 * 10**6, flops=10**6)))
    first, second = st.benches
    assert first.label == "bench 1" and second.label == "bench 2"
    assert first.gb_s == pytest.approx(2.0) and first.gflop_s == pytest.approx(0.5)
    assert second.gb_s == pytest.approx(4.0) and second.intensity == pytest.approx(0.25)


def test_a_compile_error_keeps_results_marked_stale_until_the_source_compiles() -> None:
    st = KernelState(form=FormState())
    st.compile_failed("a.wgsl:3:9: error: no\n  detail")  # nothing ran yet: nothing is stale
    assert st.stale is None and st.error_from == "source"
    st.ran(_run())
    st.compile_failed("a.wgsl:3:9: error: no\n  detail")
    assert st.stale == "results from before the last edit: a.wgsl:3:9: error: no"
    assert st.run is not None
    st.source_fine(KernelStatus("error"))  # still failing: the error stays
    assert st.error is not None
    st.source_fine(KernelStatus("spec"))
    assert st.error is None
    st.failed("device lost")
    st.source_fine(KernelStatus("spec"))  # a run's error is not the source's to clear
    assert st.error == "device lost"


def test_a_plan_for_an_older_form_is_dropped() -> None:
    st = KernelState(form=FormState(dims={"n": "8"}))
    old = st.form.key
    st.form = st.form.with_dim("n", "9")
    assert not st.plan_done(old, object(), ())  # type: ignore[arg-type]
    assert st.case is None and not st.planned
    assert st.plan_done(st.form.key, None, ("refused: too big",))
    assert st.planned and st.problems == ("refused: too big",)


def test_results_from_another_adapter_are_stale() -> None:
    st = KernelState(form=FormState(), case=object(), case_key=())  # type: ignore[arg-type]
    st.ran_elsewhere("adapter A")
    assert st.case is None and st.stale is None  # nothing had run
    st.ran(_run())
    st.ran_elsewhere("adapter A")
    assert st.stale == "ran on adapter A"


def test_view_of_a_state_and_masked_timings() -> None:
    st = KernelState(form=FormState(), error="a.wgsl:12:5: error: bad")
    st.medians.append(1.0)
    view = view_of(st, None, snapshot=True)
    assert view.error_location == ("a.wgsl", 12, 5) and view.medians == (1.0,)
    assert view.ms(1.234) == "#.### ms"
    assert View().ms(1.5).endswith("ms") and View().ms(1.5) != "#.### ms"
    assert error_location("no location here") is None


# -- the Diff tab's figures ------------------------------------------------------------------------
def _diff_run(got: list[float], ref: list[float], rtol: float, atol: float) -> SimpleNamespace:
    plan = SimpleNamespace(axes=("i",))
    outputs = {"y": np.array(got, dtype=np.float32)}
    return SimpleNamespace(
        compare={"y": SimpleNamespace(rtol=rtol, atol=atol)},
        outputs=outputs,
        observed=outputs.__getitem__,  # no packed output: as it is
        reference={"y": np.array(ref, dtype=np.float64)},
        case=SimpleNamespace(plan=lambda _name: plan),
    )


def test_tolerance_ratio_by_hand() -> None:
    # tolerance = 0.5 + 0.25 |ref|: 1.0 at ref 2 and 0.5 at ref 0.
    run = _diff_run(
        [2.5, 1.0, math.nan, math.inf, math.nan], [2.0, 0.0, math.nan, 1.0, 1.0], 0.25, 0.5
    )
    ratio = tolerance_ratio(run, "y")
    np.testing.assert_allclose(ratio[:3], [0.5, 2.0, 0.0])
    assert np.isinf(ratio[3]) and np.isinf(ratio[4])  # NaN/Inf where the reference is finite
    worst = closest(run, "y", 3)
    assert [e.where for e in worst] == ["i=3", "i=4", "i=1"]
    assert worst[0].abs_diff is None and worst[2].abs_diff == pytest.approx(1.0)


def test_zero_tolerance_fails_any_difference() -> None:
    run = _diff_run([1.0, 2.0], [1.0, 2.5], 0.0, 0.0)
    ratio = tolerance_ratio(run, "y")
    assert ratio[0] == 0.0 and np.isinf(ratio[1])


# -- keys, help and palette from one registry ------------------------------------------------------
def test_every_key_is_declared_once_and_shown_everywhere() -> None:
    ids = [k.id for k in KEYS]
    assert len(ids) == len(set(ids))
    table = help_table()
    for k in KEYS:
        if k.keys:
            assert f"| `{k.shown}` | {k.help} | {k.id} |" in table
    names = [k.command for k in commands()]
    assert len(names) == len(set(names)) and "Run kernel" in names and "Check all kernels" in names
    run = next(k for k in commands() if k.id == "run")
    assert palette_help(run).endswith("(r)")
    assert key("help") == "?" and key("fixtures") == "x"
    assert {k.id for k in bound("app")} == {"help", "quit"}
    # F4 is the app's action, bound on the kernel screen so that its footer shows it.
    assert next(k for k in bound("main") if k.id == "steps").action == "app.steps"


def test_bindings_are_built_from_the_registry() -> None:
    from workbench.commands import bindings
    from workbench.screens.fixtures import FixturesScreen
    from workbench.screens.main import MainScreen
    from workbench.screens.steps import StepsScreen

    for screen, scope in (
        (MainScreen, "main"),
        (StepsScreen, "steps"),
        (FixturesScreen, "fixtures"),
    ):
        assert [b.id for b in screen.BINDINGS] == [k.id for k in bound(scope)]
    assert "| `space` | Fixtures: replay the highlighted fixture | fixtures_replay_selected |" in (
        help_table()
    )
    assert [(b.key, b.action) for b in bindings("main")] == [
        (k.keys, k.action) for k in bound("main")
    ]


def test_the_view_model_imports_neither_textual_nor_rich_nor_wgpu() -> None:
    code = (
        "import sys, pkgutil, importlib, workbench.viewmodel as vm\n"
        "for m in pkgutil.iter_modules(vm.__path__):\n"
        "    importlib.import_module(f'workbench.viewmodel.{m.name}')\n"
        "bad = sorted(n for n in sys.modules if n.split('.')[0] in ('textual', 'rich', 'wgpu'))\n"
        "assert not bad, bad\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_every_advice_is_worded_for_the_ui_without_flags() -> None:
    from workbench.errors import Advice, LimitError, WorkbenchError
    from workbench.viewmodel.advice import ADVICE, ui_message

    assert set(ADVICE) == set(Advice)
    assert not [text for text in ADVICE.values() if "--" in text]
    assert ui_message(WorkbenchError("no such kernel")) == "no such kernel"
    refused = LimitError("needs 9 GiB of 4 GiB", advice=Advice.OTHER_ADAPTER)
    assert ui_message(refused) == "needs 9 GiB of 4 GiB; press a to choose another adapter"


def test_uniform_fields_take_numbers_as_the_command_line_does() -> None:
    """A uniform field holds a float, or an integer in hex as a u32 bit pattern is written
    (`--set params.value=0x01020304`); anything else is one problem naming the field."""
    state = FormState(sets={"params.eps": "1e-5", "dims.w": "0x01020304", "params.k": "1_000"})
    parsed = parse_form(state, None)
    assert parsed.problems == ()
    assert parsed.sets == {"params.eps": 1e-5, "dims.w": 0x01020304, "params.k": 1000}
    bad = parse_form(FormState(sets={"params.eps": "0xZZ"}), None)
    assert bad.problems == ("params.eps: '0xZZ' is not a number (hex: 0x...)",)


def test_the_kernel_view_says_what_the_front_end_left_to_the_compiler(tmp_path) -> None:
    from workbench.wgsl.corpus import load_corpus

    calls = "".join(f"    out[{i}] = f32(dot4U8Packed({i}u, 1u));\n" for i in range(5))
    (tmp_path / "k.wgsl").write_text(
        "@group(0) @binding(0) var<storage, read_write> out: array<f32>;\n"
        "@compute @workgroup_size(1)\nfn k() {\n" + calls + "}\n",
        encoding="utf-8",
    )
    kernel = load_corpus(tmp_path).find("k")
    note = "left to the compiler: k.wgsl:{}: no rule for the builtin 'dot4U8Packed'"
    assert View(kernel=kernel).deferred == (
        note.format(4),
        note.format(5),
        note.format(6),
        "(and 2 more left to the compiler)",
    )
    assert View().deferred == ()
