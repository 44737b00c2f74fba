"""A kernel of one's own in the terminal UI: an ad-hoc tiled matmul given its uniform fields, grid
and an input on its read_write buffer in the form, then described into workbench.toml by the
describe command (keeping what the file held), after which it is a described kernel."""

from __future__ import annotations

import tomllib
from pathlib import Path

import numpy as np

from tests.described.corpora import MATMUL, write
from workbench.app import WorkbenchApp
from workbench.specs.described import load_descriptions
from workbench.wgsl.corpus import load_corpus
from workbench.widgets.browser import KernelBrowser

from .conftest import SIZE, press_settled, run_async, settle, type_into, verdict

M, N, K = 20, 40, 24
KEEP = "# my notes stay\n# and this one\n"


@run_async
async def test_adhoc_uniforms_grid_and_inout_then_describe(tmp_path: Path) -> None:
    root = write(tmp_path, {"matmul.wgsl": MATMUL})
    app = WorkbenchApp(corpus=root, snapshot=True, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert app.main.query_one("#set-dims-x").placeholder == "0"
        await type_into(pilot, "#dim-n", str(K * N))  # every binding holds n: the largest
        for lane, value in zip("xyz", (M, N, K), strict=True):
            await type_into(pilot, f"#set-dims-{lane}", str(value))
        await type_into(pilot, "#grid", "3,2,1")
        await type_into(pilot, "#recipe-C", "ones")
        app.main.query_one(KernelBrowser).kernel_tree.focus()
        await press_settled(pilot, "r")
        run = app.main.current_run()
        assert run is not None and run.grid == (3, 2, 1)
        case = run.case
        assert case.uniforms["dims"][:3] == [M, N, K] and case.plan("C").role == "inout"
        a = case.inputs["A"].astype(np.float64)[: M * K].reshape(M, K)
        b = case.inputs["B"].astype(np.float64)[: K * N].reshape(K, N)
        c = run.outputs["C"][: M * N].reshape(M, N)
        np.testing.assert_allclose(c, a @ b, rtol=1e-5, atol=1e-5)

        (root / "workbench.toml").write_text(KEEP, encoding="utf-8")
        app.main.query_one(KernelBrowser).kernel_tree.focus()
        await app.main.run_action("describe")
        await settle(pilot)
        assert app.main.spec_of(app.main.kernel())[0] is not None
        text = (root / "workbench.toml").read_text(encoding="utf-8")
        assert text.startswith(KEEP)
        table = tomllib.loads(text)["kernels"]["matmul"]
        # The uniform's lanes are dims named after them, with the values typed; the grid, which
        # no expression of them gives, as it ran; C keeps the contents it was given.
        assert table["grid"] == [3, 2, 1]
        assert table["uniforms"]["dims"] == ["dims_x", "dims_y", "dims_z", "dims_w"]
        assert {k: table["dims"][k] for k in ("dims_x", "dims_y", "dims_z", "n")} == {
            "dims_x": M,
            "dims_y": N,
            "dims_z": K,
            "n": K * N,
        }
        assert table["buffers"]["C"] == {"shape": ["n"], "role": "inout", "input": "ones"}
        # The form keeps the uniform's fields, now as dims, editable; the header and the verdict
        # bar (after the re-run on the description) both say it is described.
        assert app.main.query_one("#dim-dims_x").value == str(M)
        assert "spec'd" in str(app.main.query_one("#kv-title").render())
        assert "ad hoc" not in verdict(app) and "spec'd" in verdict(app)
    spec = load_descriptions(load_corpus(root))["matmul"]
    assert spec.grid(spec.resolve_dims()) == (3, 2, 1) and spec.outputs == ("C",)
