"""hypothesis fuzzing of the command line's value parsers and of pipeline files (issue 27): whatever
a user types after --grid, --dim, --set, --input, --override, --adapter, --ms or --cap, and
whatever a pipeline file's expressions, inits and dims say, the only exception is the tool's own
one-line error (a `WorkbenchError`, or a pipeline's `ExprError`, which its callers word as one),
never a library's (ValueError, OverflowError, RecursionError, AttributeError, ...).

A few hundred examples each in the suite; `pytest -m fuzz` runs many more.
"""

from __future__ import annotations

import contextlib
import tomllib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from workbench.cli.common import milliseconds, parse_grid, parse_pairs
from workbench.cli.step import parse_size
from workbench.errors import WorkbenchError
from workbench.gpu.adapters import choose_adapter
from workbench.gpu.uniforms import set_field
from workbench.pipelines.model import parse as parse_pipeline
from workbench.pipelines.plan import plan
from workbench.recipes import make_input
from workbench.specs import expr
from workbench.units import whole_number
from workbench.wgsl.hazards import else_if_chains, loops_without_small_constant_bound
from workbench.wgsl.reflect import reflect

# A library's warning printed to the terminal is as much a leak as its exception.
pytestmark = [pytest.mark.fuzz, pytest.mark.filterwarnings("error")]

QUICK, DEEP = 200, 3000
SHIPPED_GELU = (
    Path(__file__).resolve().parents[1] / "workbench" / "pipelines" / "gelu.toml"
).read_text()

# Text a user might type: digits of every script, signs, separators, exponents, words.
PIECES = [
    "0", "1", "7", "64", "65535", "4294967296", "99999999999999999999", "²", "٣", "１", "-", "+",
    ".", ",", "_", "e", "e308", "x", "X", "×", " ", "nan", "inf", "=", ":", "{", "}", "(", ")",
    "*", "/", "//", "%", "seq", "d_ff", "min", "max", "cdiv", "ceil", "randn", "randint",
    "uniform", "const", "zeros", "arange", "npy", "\x00", "é", "KiB", "MiB", "GiB",
]  # fmt: skip
typed = st.lists(st.sampled_from(PIECES), max_size=12).map("".join) | st.text(max_size=30)


def run_examples(request: pytest.FixtureRequest, strategy: Any, check: Callable[[Any], None]):
    """`check` over `strategy`: QUICK examples, DEEP under `-m fuzz`."""
    deep = "fuzz" in (request.config.option.markexpr or "")
    config = settings(
        max_examples=DEEP if deep else QUICK,
        deadline=None,
        database=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
    )
    config(given(strategy)(check))()


def test_grid_values_are_three_counts_or_one_line(request):
    def check(text: str) -> None:
        try:
            grid = parse_grid(text)
        except WorkbenchError:
            return
        assert len(grid) == 3 and all(isinstance(v, int) and v >= 0 for v in grid)

    run_examples(request, typed, check)
    for found in ("0_x0", "0x-1", "0x１"):  # examples the fuzzing found, and a fullwidth digit
        check(found)


def test_whole_numbers_are_ascii_digits_only(request):
    def check(text: str) -> None:
        n = whole_number(text)
        digits = text.strip().replace("_", "")
        assert n is None or (digits.isascii() and digits.isdigit() and n == int(digits))

    run_examples(request, typed, check)


@pytest.mark.parametrize("number", [int, float, str])
def test_name_value_pairs_are_parsed_or_one_line(request, number):
    def check(items: list[str]) -> None:
        try:
            out = parse_pairs(items, "--dim", number)
        except WorkbenchError:
            return
        assert all(
            isinstance(v, number) or (number is float and isinstance(v, int)) for v in out.values()
        )

    run_examples(request, st.lists(typed, max_size=3), check)


def test_adapter_selectors_choose_an_adapter_or_say_none_matches(request):
    def check(text: str) -> None:
        with contextlib.suppress(WorkbenchError):
            choose_adapter(text)

    run_examples(request, typed, check)


def test_time_and_size_options_are_checked_or_one_line(request):
    def check(value: float) -> None:
        with contextlib.suppress(WorkbenchError):
            assert 0 <= milliseconds("--ms", value) < 1e7

    run_examples(request, st.floats(allow_nan=True, allow_infinity=True), check)

    def check_size(text: str) -> None:
        with contextlib.suppress(WorkbenchError):
            assert parse_size(text) >= 0

    run_examples(request, typed, check_size)


@pytest.mark.parametrize("dtype", ["float32", "int32", "uint32", "float16"])
def test_input_recipes_make_an_array_or_one_line(request, dtype):
    recipe = st.sampled_from(
        ["zeros", "ones", "arange", "randn", "uniform", "randint", "const", "npy", "bogus"]
    ).flatmap(lambda kind: st.lists(typed, max_size=3).map(lambda args: ":".join([kind, *args])))

    def check(text: str) -> None:
        try:
            arr = make_input(text, (3, 4), dtype, 0, "x")
        except WorkbenchError:
            return
        assert arr.shape == (3, 4) and arr.dtype == np.dtype(dtype)

    run_examples(request, recipe, check)


UNIFORM = (
    reflect(
        "struct In { s: f32, v: vec3<u32> }\n"
        "struct P { a: array<vec4<f32>, 3>, m: mat2x3<f32>, inner: In, k: i32 }\n"
        "@group(0) @binding(0) var<uniform> p: P;\n"
        "@group(0) @binding(1) var<storage, read_write> o: array<f32>;\n"
        "@compute @workgroup_size(1) fn f() { o[0] = p.a[0].x + f32(p.k) + p.inner.s; }\n",
        "u.wgsl",
    )
    .bindings["p"]
    .type
)


def test_set_paths_into_a_nested_uniform_set_a_field_or_one_line(request):
    path = st.lists(
        st.sampled_from(["a", "m", "inner", "k", "s", "v", "x", "y", "w", "0", "2", "5", "²", ""]),
        max_size=4,
    )

    def check(parts: list[str]) -> None:
        with contextlib.suppress(WorkbenchError):
            set_field(UNIFORM, None, parts, 1.0, "p")

    run_examples(request, path, check)


def test_pipeline_expressions_evaluate_to_a_bounded_integer_or_one_line(request):
    dims = {"seq": 64, "d_ff": 256}

    def check(text: str) -> None:
        try:
            value = expr.evaluate(text, dims)
        except expr.ExprError:
            return
        assert isinstance(value, int) and abs(value) <= expr.MAX_VALUE

    long = st.integers(1, 4000).map(lambda n: "+".join(["seq"] * n))
    huge = st.integers(1, 399).map(lambda n: "9" * n)
    run_examples(request, typed | long | huge, check)


DEFAULTS = ["256", "0", "-1", "1", "70000", '"seq*2"', '"min(seq)"', '"cdiv(seq, 0)"']


def _quoted(text: str) -> str:
    """`text` as a TOML basic string (the fuzz may hold quotes and backslashes)."""
    return (
        '"'
        + "".join(c if c.isprintable() and c not in '"\\' else f"\\u{ord(c):04x}" for c in text)
        + '"'
    )


def _mutated_gelu(draw: st.DrawFn) -> str:
    """gelu.toml with one dim default, one shape entry and one init replaced by fuzz."""
    text = SHIPPED_GELU.replace("default = 256", f"default = {draw(st.sampled_from(DEFAULTS))}", 1)
    text = text.replace('init = "randn:1"', f"init = {_quoted(draw(typed))}", 1)
    return text.replace(
        '"d_ff"], init = "randn:2"', f'{_quoted(draw(typed))}], init = "randn:2"', 1
    )


def test_pipeline_files_plan_or_say_what_is_wrong_in_one_line(request, session):
    def check(text: str) -> None:
        try:
            data = tomllib.loads(text)
        except tomllib.TOMLDecodeError:
            return
        try:
            plan(parse_pipeline(data, "fuzz.toml"), session, {"seq": 4})
        except WorkbenchError as exc:
            assert "\n" not in str(exc)

    run_examples(request, st.composite(_mutated_gelu)(), check)


def test_the_wgsl_loop_and_chain_finders_take_any_text(request):
    soup = st.lists(
        st.sampled_from(
            ["for", "(", ")", "{", "}", ";", "if", "else", "loop", "while", "i", "<", "<=", "n",
             "16u", "0x10", "99999", "const", "N", "=", "var", ":", "u32", "break", "\n", " "]
        ),
        max_size=60,
    ).map(" ".join)  # fmt: skip

    def check(text: str) -> None:
        for site in loops_without_small_constant_bound(text) + else_if_chains(text, 1):
            assert 1 <= site.line <= text.count("\n") + 1

    run_examples(request, soup | st.text(max_size=80), check)
