"""Writing a kernel's tables into workbench.toml keeps everything else the file holds."""

from __future__ import annotations

import tomllib

from workbench.specs.starter import kernel_block, replace_description

EXISTING = """\
# my corpus
[kernels.other]   # keep me
dims = { n = 4 }
grid = [1]

[kernels.mine]
dims = { n = 8 }
grid = [2]
[kernels.mine.buffers]
x = { shape = ["n"], output = true }

[kernels.after]
grid = [3]
"""
BLOCK = '[kernels.mine]\ndims = { n = 16 }\ngrid = ["ceil(n / 4)"]\n'


def test_replaces_the_kernels_tables_in_place() -> None:
    out = replace_description(EXISTING, "mine", BLOCK)
    data = tomllib.loads(out)
    assert data["kernels"]["mine"] == {"dims": {"n": 16}, "grid": ["ceil(n / 4)"]}
    assert data["kernels"]["other"]["grid"] == [1] and data["kernels"]["after"]["grid"] == [3]
    assert out.startswith("# my corpus\n[kernels.other]   # keep me\n")
    assert out.index("[kernels.other]") < out.index("[kernels.mine]") < out.index("[kernels.after]")


def test_appends_a_new_kernel_and_starts_a_file() -> None:
    out = replace_description(EXISTING, "new", BLOCK.replace("mine", "new"))
    assert out.startswith(EXISTING) and tomllib.loads(out)["kernels"]["new"]["dims"] == {"n": 16}
    assert replace_description("", "mine", BLOCK) == BLOCK
    assert "kernels.mine2" in replace_description(
        EXISTING.replace(".mine", ".mine2"), "mine", BLOCK
    )


def test_kernel_block_round_trips() -> None:
    table = {
        "doc": "x",
        "dims": {"M": 4, "N": {"default": 2, "lo": 0, "hi": 9}},
        "grid": ["ceil(N / 16)", 1, 1],
        "uniforms": {"p": {"scale": 0.5, "n": "M * N"}},
        "buffers": {"y": {"shape": ["M", "N"], "output": True}},
        "reference": {"function": "refs.py:f", "rtol": 1e-5, "atol": 0.0},
    }
    assert tomllib.loads(kernel_block("k", table))["kernels"]["k"] == table
