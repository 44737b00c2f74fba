"""Fuzzing the WGSL lexer, reflection and corpus loader with hypothesis: random text, WGSL-ish token
soup, and mutations and truncations of the shipped shaders. Whatever the input, `tokenize`/`reflect`
raise nothing but ReflectionError and `load_corpus` nothing but CorpusError; the kernels it returns
assemble, and planning an ad-hoc case for them (host only) raises nothing but WorkbenchError.
Example counts stay modest so the suite stays fast."""

from __future__ import annotations

import contextlib
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from workbench.errors import CorpusError, ReflectionError, WorkbenchError
from workbench.session import Session
from workbench.wgsl.corpus import SHIPPED, load_corpus
from workbench.wgsl.lexer import tokenize
from workbench.wgsl.reflect import reflect

SHIPPED_FILES = {p.name: p.read_text(encoding="utf-8") for p in sorted(SHIPPED.glob("*.wgsl"))}
SHIPPED_CONFIG = (SHIPPED / "wgslconfig.toml").read_text(encoding="utf-8")

# Pieces of WGSL that stress the parser: declarations, templates, attributes, comments, literals.
FRAGMENTS = [
    "fn", "var", "let", "const", "override", "struct", "alias", "enable f16;", "requires", ";", ",",
    ":", "=", "(", ")", "{", "}", "<", ">", ">>", ">=", "[", "]", "@", "@group(0)", "@binding(1)",
    "@compute", "@workgroup_size(", "@workgroup_size(64)", "@id(0)", "@align(16)", "@size(8)",
    "<storage, read_write>", "<uniform>", "<workgroup>", "array<", "array<f32>", "array<u32, 4>",
    "atomic<", "atomic<u32>", "vec3<", "vec4<f32>", "vec2h", "mat3x3<f32>", "mat2x2f", "ptr<",
    "f16", "f32", "u32", "i32", "bool", "1.5h", "0x1p4", "0x", "1e", "1e999", "99999999999",
    "-", "<<", "/*", "*/", "//", "\n", " ", "\t", '"', "é", "// --- KERNEL: k ---\n",
    "subgroupAdd", "WG", "flat_id", "x", "main", "S", "n",
]  # fmt: skip
EXCEPTION_SETTINGS = settings(
    max_examples=150,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow],
)


def _check_reflect(text: str) -> None:
    with contextlib.suppress(ReflectionError):
        tokenize(text, "fuzz.wgsl")
    try:
        info = reflect(text, "fuzz.wgsl")
    except ReflectionError:
        return
    # What reflection returns must be usable: layouts and features compute without raising.
    for b in info.bindings.values():
        _ = (b.fixed_size, b.element_stride, b.signature, b.type.align(), b.type.size())
    for ep in info.entry_points.values():
        assert all(v >= 1 for v in ep.workgroup_size)
    _ = info.features


@st.composite
def mutated_shader(draw: st.DrawFn) -> str:
    """A shipped shader, truncated, with slices deleted, fragments inserted or lines moved."""
    text = SHIPPED_FILES[draw(st.sampled_from(sorted(SHIPPED_FILES)))]
    for _ in range(draw(st.integers(1, 4))):
        op = draw(st.sampled_from(["truncate", "delete", "insert", "lines"]))
        i = draw(st.integers(0, len(text)))
        if op == "truncate":
            text = text[:i]
        elif op == "delete":
            text = text[:i] + text[i + draw(st.integers(1, 40)) :]
        elif op == "insert":
            text = text[:i] + draw(st.sampled_from(FRAGMENTS)) + text[i:]
        else:
            lines = text.split("\n")
            a = draw(st.integers(0, len(lines) - 1))
            b = draw(st.integers(0, len(lines) - 1))
            lines[a], lines[b] = lines[b], lines[a]
            text = "\n".join(lines)
    return text


NUMBERS = [
    "0", "1", "3", "64u", "256", "-1", "1.5", "2.0", "1e999", "-1e999", "0x1p99999", "0x40",
    "99999999999999999999999", "4294967296", "1.5h", "0.0",
]  # fmt: skip
SCALAR_TYPES = ["f32", "u32", "i32", "f16", "bool"]


NAMES = ["C0", "C1", "O"]
# Built once: hypothesis strategies are costly to construct inside every draw.
EXPRS = st.recursive(
    st.sampled_from(NUMBERS + NAMES),
    lambda inner: st.one_of(
        st.tuples(inner, st.sampled_from([*"+-*/%&|^<>", "<<", ">>"]), inner).map(" ".join),
        inner.map(lambda e: f"({e})"),
        inner.map(lambda e: f"-{e}"),
        st.tuples(st.sampled_from(["u32", "i32", "f32", "max"]), inner).map(
            lambda t: f"{t[0]}({t[1]})"
        ),
    ),
    max_leaves=5,
)
# Types, valid and not: vectors, matrices and atomics of anything, arrays of any length.
TYPES = st.recursive(
    st.sampled_from([*SCALAR_TYPES, "S0", "S1", "vec3f", "vec2h", "mat2x2f", "vec5f"]),
    lambda inner: st.one_of(
        st.tuples(
            st.sampled_from(["vec2", "vec3", "vec4", "atomic", "mat3x3", "mat2x4"]), inner
        ).map(lambda t: f"{t[0]}<{t[1]}>"),
        inner.map(lambda t: f"array<{t}>"),
        st.tuples(inner, EXPRS).map(lambda t: f"array<{t[0]}, {t[1]}>"),
    ),
    max_leaves=3,
)
MEMBER_ATTRS = st.one_of(
    st.just(""), EXPRS.map(lambda e: f"@align({e}) "), EXPRS.map(lambda e: f"@size({e}) ")
)
SPACES = st.sampled_from(["storage, read", "storage, read_write", "storage", "uniform"])


@st.composite
def declared_modules(draw: st.DrawFn) -> str:
    """Modules built from declarations: consts, an override, structs with @align/@size, bindings
    with computed @group/@binding, and an entry point with a computed @workgroup_size."""
    lines = [f"const C{k} = {draw(EXPRS)};" for k in range(draw(st.integers(0, 2)))]
    if draw(st.booleans()):
        lines.append(f"override O: u32 = {draw(EXPRS)};")
    for k in range(draw(st.integers(0, 2))):
        members = [
            f"{draw(MEMBER_ATTRS)}m{m}: {draw(TYPES)}" for m in range(draw(st.integers(1, 3)))
        ]
        lines.append(f"struct S{k} {{ {', '.join(members)} }}")
    uses = []
    for k in range(draw(st.integers(0, 4))):
        group, binding, space = draw(EXPRS), draw(EXPRS), draw(SPACES)
        lines.append(f"@group({group}) @binding({binding}) var<{space}> b{k}: {draw(TYPES)};")
        uses.append(f"_ = b{k};")
    size = ", ".join(draw(EXPRS) for _ in range(draw(st.integers(1, 3))))
    lines.append(f"@compute @workgroup_size({size})\nfn main() {{ {' '.join(uses)} }}")
    return "\n".join(lines) + "\n"


@EXCEPTION_SETTINGS
@given(declared_modules())
def test_generated_declarations_only_raise_reflection_errors(text):
    _check_reflect(text)


@settings(
    max_examples=40,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(text=declared_modules(), n=st.sampled_from([0, 3, 1024]))
def test_planning_generated_kernels_only_raises_workbench_errors(session, text, n):
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "gen.wgsl").write_text(text, encoding="utf-8")
        sess = Session(load_corpus(tmp), session.gpu)
        for k in sess.corpus.kernels:
            if k.problem:
                continue
            try:
                case = sess.case(k, dims={"n": n}, adhoc=True)
            except WorkbenchError:
                continue
            for p in case.bindings:
                assert p.nbytes >= 0


@EXCEPTION_SETTINGS
@given(st.text(max_size=300))
def test_random_text_only_raises_reflection_errors(text):
    _check_reflect(text)


@EXCEPTION_SETTINGS
@given(st.lists(st.sampled_from(FRAGMENTS), max_size=60).map(" ".join))
def test_wgsl_token_soup_only_raises_reflection_errors(text):
    _check_reflect(text)


@EXCEPTION_SETTINGS
@given(mutated_shader())
def test_mutated_shipped_shaders_only_raise_reflection_errors(text):
    _check_reflect(text)


@settings(
    max_examples=30,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(
    files=st.lists(mutated_shader(), min_size=1, max_size=3),
    config=st.sampled_from(
        [
            None,
            SHIPPED_CONFIG,
            '[preamble]\nfiles = ["00_shared.wgsl"]\nauto_inject_into = ["k1*"]\n',
            "[preamble\nfiles = [",
            '[preamble]\nfiles = ["nope.wgsl"]\n',
            "preamble = 1\n",
        ]
    ),
    mutate_preamble=st.booleans(),
    preamble=mutated_shader(),
    n=st.sampled_from([0, 1, 300]),
)
def test_load_corpus_on_mutated_folders_only_raises_corpus_errors(
    session, files, config, mutate_preamble, preamble, n
):
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        for i, text in enumerate(files):
            (root / f"k{i}.wgsl").write_text(text, encoding="utf-8")
        if config is not None:
            (root / "wgslconfig.toml").write_text(config, encoding="utf-8")
            shared = preamble if mutate_preamble else SHIPPED_FILES["00_shared.wgsl"]
            (root / "00_shared.wgsl").write_text(shared, encoding="utf-8")
        try:
            corpus = load_corpus(root)
        except CorpusError:
            return
        sess = Session(corpus, session.gpu)
        for k in corpus.kernels:
            text, smap = k.assemble(frozenset(session.adapter.features))
            assert smap.locate(max(1, text.count("\n")))[0] in {
                "<host>",
                *corpus.files,
                "00_shared.wgsl",
            }
            _ = k.features
            if k.problem:
                continue
            with contextlib.suppress(WorkbenchError):
                sess.case(k, dims={"n": n}, adhoc=True)
