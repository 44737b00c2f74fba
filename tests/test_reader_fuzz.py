"""Every reader of user files, fed random bytes, random TOML and random `.npy` headers: the only
exception that may escape is the tool's own (`WorkbenchError`, and `FixtureError` for fixtures),
never a library's (`RecursionError`, `EOFError`, `MemoryError`, `ValueError`, ...)."""

from __future__ import annotations

import contextlib
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from workbench.errors import WorkbenchError
from workbench.fixtures.manifest import FixtureError, load_fixture
from workbench.recipes import make_input
from workbench.safewrite import toml_text
from workbench.userfiles import read_toml
from workbench.wgsl.corpus import load_corpus

SHIPPED = Path(__file__).resolve().parents[1] / "workbench" / "fixtures"
FUZZ = settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)

scalars = st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20)
toml_values = st.recursive(
    scalars.filter(lambda v: v is not None),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=20,
)
toml_docs = st.dictionaries(st.text(min_size=1, max_size=10), toml_values, max_size=6)
deep_toml = st.integers(1, 3000).flatmap(
    lambda n: st.sampled_from(
        ["x = " + "[" * n + "]" * n, "x = " + "{a = " * n + "1" + "}" * n, "[" + "a." * n + "b]"]
    )
)


def doc_text(doc: dict) -> str:
    try:
        return toml_text(doc)
    except (TypeError, ValueError):
        return ""


any_toml = (
    toml_docs.map(doc_text)
    | deep_toml
    | st.text(max_size=300)
    | st.binary(max_size=300).map(lambda b: b.decode("latin-1"))
)


@pytest.fixture(scope="module")
def folder() -> Iterator[Path]:
    path = Path(tempfile.mkdtemp(prefix="reader-fuzz-"))
    yield path
    shutil.rmtree(path, ignore_errors=True)


@FUZZ
@given(text=any_toml)
def test_toml_reader_raises_only_the_given_error(folder, text):
    path = folder / "any.toml"
    path.write_text(text, encoding="utf-8", errors="surrogatepass")
    try:
        read_toml(path, WorkbenchError)
    except WorkbenchError as exc:
        assert "\n" not in str(exc)


@FUZZ
@given(config=any_toml, wgsl=st.binary(max_size=400) | st.text(max_size=400).map(str.encode))
def test_corpus_loading_raises_only_corpus_errors(folder, config, wgsl):
    root = folder / "corpus"
    shutil.rmtree(root, ignore_errors=True)
    root.mkdir()
    (root / "wgslconfig.toml").write_text(config, encoding="utf-8", errors="surrogatepass")
    (root / "k.wgsl").write_bytes(wgsl)
    try:
        corpus = load_corpus(root)
    except WorkbenchError:
        return
    for kernel in corpus.kernels:
        _ = kernel.module, kernel.problem, kernel.entry_point


@FUZZ
@given(manifest=any_toml, npz=st.binary(max_size=600))
def test_fixture_loading_raises_only_fixture_errors(folder, manifest, npz):
    (folder / "fx.toml").write_text(manifest, encoding="utf-8", errors="surrogatepass")
    (folder / "fx.npz").write_bytes(npz)
    with contextlib.suppress(FixtureError):
        load_fixture(folder / "fx.toml")


@FUZZ
@given(data=st.data())
def test_fixture_loading_with_a_damaged_shipped_npz_raises_only_fixture_errors(folder, data):
    raw = (SHIPPED / "gelu_inplace_gpt2.npz").read_bytes()
    cut = data.draw(st.integers(0, len(raw)))
    junk = data.draw(st.binary(max_size=64))
    (folder / "gelu_inplace_gpt2.toml").write_bytes(
        (SHIPPED / "gelu_inplace_gpt2.toml").read_bytes()
    )
    (folder / "gelu_inplace_gpt2.npz").write_bytes(raw[:cut] + junk + raw[cut + len(junk) :])
    with contextlib.suppress(FixtureError):
        load_fixture(folder / "gelu_inplace_gpt2.toml")


shapes = st.lists(st.integers(-5, 10**12) | st.sampled_from([0, 1, 16]), max_size=4).map(tuple)
descrs = st.sampled_from(["<f4", "<f8", "<i8", "|u1", "|b1", "<c8", "O", "|V8", "<U3", "zz", ""])
headers = st.fixed_dictionaries(
    {"descr": descrs, "fortran_order": st.booleans(), "shape": shapes}
).map(repr) | st.text(max_size=80)


@FUZZ
@given(header=headers, body=st.binary(max_size=200), version=st.sampled_from([1, 2, 3]))
def test_npy_inputs_raise_only_user_errors(folder, header, body, version):
    text = header.encode("latin-1", errors="replace")
    size = (len(text) + 1).to_bytes(2 if version == 1 else 4, "little")
    path = folder / "in.npy"
    path.write_bytes(b"\x93NUMPY" + bytes([version, 0]) + size + text + b"\n" + body)
    try:
        arr = make_input(f"npy:{path}", (16,), "float32", 0, "x")
    except WorkbenchError:
        return
    assert arr.shape == (16,) and arr.dtype == np.float32


@FUZZ
@given(raw=st.binary(max_size=200))
def test_npy_inputs_of_random_bytes_raise_only_user_errors(folder, raw):
    path = folder / "raw.npy"
    path.write_bytes(raw)
    with contextlib.suppress(WorkbenchError):
        make_input(f"npy:{path}", (4,), "uint32", 0, "k")
