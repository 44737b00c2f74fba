"""Fuzzing what a corpus's refs.py returns, and `.npy` headers in inputs and fixture archives: the only
outcomes are a result the tool can use or the tool's own one-line error, never a library's exception.

The reference runs in the corpus's worker process, as it does for the tool: each example is handed
to it as a pickle the reference loads and returns (the tool itself never unpickles anything).
`pytest -m fuzz` runs many more examples (tests/conftest.py).
"""

from __future__ import annotations

import contextlib
import fractions
import io
import pickle
import shutil
import tempfile
import zipfile
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from workbench.errors import UserError
from workbench.fixtures.manifest import FixtureError, load_fixture
from workbench.specs.described import load_descriptions
from workbench.userfiles import read_npy_data, read_npy_header
from workbench.wgsl.corpus import load_corpus

from .corpora import write

pytestmark = pytest.mark.fuzz
FUZZ = settings(deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
SHIPPED = Path(__file__).resolve().parents[2] / "workbench" / "fixtures"
N = 4

SCALE = """
@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> y: array<f32>;

@compute @workgroup_size(64)
fn scale(@builtin(global_invocation_id) id: vec3<u32>) {
    if (id.x < arrayLength(&y)) { y[id.x] = 2.0 * x[id.x]; }
}
"""
SCALE_TOML = f"""
[kernels.scale]
dims = {{ N = {N} }}
grid = ["ceil(N / 64)"]
[kernels.scale.buffers]
x = {{ shape = ["N"], input = "randn:1" }}
y = {{ shape = ["N"], output = true }}
[kernels.scale.reference]
function = "refs.py:scale"
"""
REFS = """
import pickle

def scale(x, *, N):
    with open(__file__[: -len("refs.py")] + "value.pickle", "rb") as fh:
        return pickle.load(fh)
"""


class Odd:
    """An object of the user's own kind, as a reference might return by mistake."""

    def __reduce__(self):
        return (fractions.Fraction, (1, 3))


leaves = (
    st.floats()
    | st.integers(min_value=-(10**30), max_value=10**30)
    | st.booleans()
    | st.none()
    | st.text(max_size=8)
    | st.binary(max_size=8)
    | st.complex_numbers(allow_nan=True)
    | st.just(Odd())
    | st.sets(st.integers(0, 3), max_size=3)
    | hnp.arrays(
        hnp.scalar_dtypes() | st.sampled_from([np.float64, np.float32, np.int32]),
        hnp.array_shapes(min_dims=0, max_dims=3, max_side=5),
    )
)
values = st.recursive(leaves, lambda inner: st.lists(inner, max_size=N + 1), max_leaves=12)
keys = st.sampled_from(["y", "x", "Y", "", "y "]) | st.text(max_size=6) | st.integers(0, 3)
results = st.dictionaries(keys, values, max_size=3) | values


@pytest.fixture(scope="module")
def scale_spec() -> Iterator[tuple[object, Path]]:
    root = Path(tempfile.mkdtemp(prefix="refs-fuzz-"))
    write(root, {"scale.wgsl": SCALE, "workbench.toml": SCALE_TOML, "refs.py": REFS})
    (root / "value.pickle").write_bytes(pickle.dumps({"y": np.zeros(N)}))
    spec = load_descriptions(load_corpus(root))["scale"]
    yield spec, root
    shutil.rmtree(root, ignore_errors=True)


@FUZZ
@given(result=results)
@example(result={"y": "abcd"})
@example(result={"y": [[1.0], [2.0, 3.0], [], [4.0]]})
@example(result={"y": [Odd()] * N})
@example(result={"y": np.full(N, 1 + 2j)})
@example(result={"y": np.full(N, np.nan)})
def test_whatever_refs_py_returns_is_a_result_or_one_line(scale_spec, result) -> None:
    spec, root = scale_spec
    (root / "value.pickle").write_bytes(pickle.dumps(result))
    x = np.arange(N, dtype=np.float32)
    try:
        out = spec.reference({"N": N}, {"x": x})
    except UserError as exc:
        text = str(exc)
        assert "\n" not in text and text.startswith("refs.py:scale "), text
        return
    assert set(out) <= {"y"}
    for arr in out.values():
        assert arr.dtype == np.float64 and arr.shape == (N,)


def _npy(header: str, body: bytes, version: int) -> bytes:
    text = header.encode("latin-1", errors="replace")
    size = (len(text) + 1).to_bytes(2 if version == 1 else 4, "little")
    return b"\x93NUMPY" + bytes([version, 0]) + size + text + b"\n" + body


shapes = st.lists(st.integers(-5, 10**12) | st.sampled_from([0, 1, 8, 512]), max_size=4).map(tuple)
descrs = st.sampled_from(["<f4", "<f8", ">f4", "<i8", "|u1", "|b1", "<c8", "O", "|V8", "<U3", "zz"])
headers = st.fixed_dictionaries(
    {"descr": descrs, "fortran_order": st.booleans(), "shape": shapes}
).map(repr) | st.text(max_size=80)
npy_bytes = (
    st.builds(_npy, headers, st.binary(max_size=300), st.sampled_from([1, 2, 3]))
    | st.binary(max_size=200)
    | st.builds(
        lambda raw, cut, junk: raw[:cut] + junk + raw[cut + len(junk) :],
        st.just(_npy(repr({"descr": "<f4", "fortran_order": False, "shape": (4,)}), bytes(16), 1)),
        st.integers(0, 80),
        st.binary(max_size=8),
    )
)


@FUZZ
@given(raw=npy_bytes)
@example(raw=_npy(repr({"descr": "|u1", "fortran_order": False, "shape": ()}), b"\x00", 1))
@example(raw=_npy(repr({"descr": "<f4", "fortran_order": False, "shape": (0, -1)}), b"", 1))
def test_the_one_npy_reader_raises_only_the_given_error(raw) -> None:
    fh = io.BytesIO(raw)
    try:
        shape, fortran, dtype = read_npy_header(fh, "x.npy", UserError)
        arr = read_npy_data(fh, shape, fortran, dtype, "x.npy", UserError)
    except UserError as exc:
        assert "\n" not in str(exc)
        return
    assert arr.shape == shape and not dtype.hasobject


@pytest.fixture(scope="module")
def fixture_folder() -> Iterator[Path]:
    folder = Path(tempfile.mkdtemp(prefix="npy-fuzz-"))
    text = (SHIPPED / "gelu_inplace_gpt2.toml").read_text(encoding="utf-8")
    # Without the archive's hash, so the fuzzed member's header is read, not refused unread.
    kept = [ln for ln in text.splitlines() if not ln.startswith("arrays_sha256")]
    (folder / "fx.toml").write_text("\n".join(kept).replace("gelu_inplace_gpt2.npz", "fx.npz"))
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


@FUZZ
@given(raw=npy_bytes)
def test_fixture_archive_members_with_any_npy_header_raise_only_fixture_errors(
    fixture_folder, raw
) -> None:
    with np.load(SHIPPED / "gelu_inplace_gpt2.npz") as shipped:
        names = list(shipped.files)
        arrays = {k: shipped[k] for k in names}
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for i, name in enumerate(names):
            member = io.BytesIO()
            np.save(member, arrays[name], allow_pickle=False)
            zf.writestr(f"{name}.npy", raw if i == 0 else member.getvalue())
    (fixture_folder / "fx.npz").write_bytes(buf.getvalue())
    with contextlib.suppress(FixtureError):
        load_fixture(fixture_folder / "fx.toml")
