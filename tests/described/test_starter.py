"""Writing a kernel's tables into workbench.toml edits the file in place: everything else it holds
(comments, order, other kernels) is kept, a description written as an inline table is updated
where it is (never duplicated), and any string, quotes included, stays valid TOML."""

from __future__ import annotations

import tomllib

from workbench.specs.starter import describe_into

EXISTING = """\
# my corpus
[kernels.other]   # keep me
dims = { n = 4 }
grid = [1]

[kernels.mine]
# the dims I settled on
dims = { n = 8 }
grid = [2]
[kernels.mine.buffers]
x = { shape = ["n"], output = true }  # the output

[kernels.after]
grid = [3]
"""

INLINE = """\
# kernels written inline
[kernels]
mine = { doc = "mine", dims = { n = 8 }, grid = [2] }  # one line each
other = { grid = [1] }
"""


def test_updates_the_kernels_table_in_place() -> None:
    table = {"dims": {"n": 16}, "grid": [2], "buffers": {"x": {"shape": ["n"], "output": True}}}
    out = describe_into(EXISTING, "mine", table)
    data = tomllib.loads(out)
    assert data["kernels"]["mine"] == table
    assert data["kernels"]["other"]["grid"] == [1] and data["kernels"]["after"]["grid"] == [3]
    assert out.startswith("# my corpus\n[kernels.other]   # keep me\n")
    assert "# the dims I settled on" in out and "# the output" in out
    assert out.index("[kernels.other]") < out.index("[kernels.mine]") < out.index("[kernels.after]")
    assert out == EXISTING.replace("dims = { n = 8 }\ngrid = [2]", "dims = {n = 16}\ngrid = [2]")


def test_appends_a_new_kernel_and_starts_a_file() -> None:
    table = {"dims": {"n": 16}, "grid": ["ceil(n / 4)"]}
    out = describe_into(EXISTING, "new", table)
    assert out.startswith(EXISTING) and tomllib.loads(out)["kernels"]["new"] == table
    started = describe_into("", "mine", table)
    assert tomllib.loads(started) == {"kernels": {"mine": table}}
    assert "[kernels.mine]" in started


def test_an_inline_description_is_updated_where_it_is() -> None:
    out = describe_into(INLINE, "mine", {"doc": "mine", "dims": {"n": 32}, "grid": [2]})
    data = tomllib.loads(out)  # a duplicate [kernels.mine] would not load
    assert data["kernels"]["mine"] == {"doc": "mine", "dims": {"n": 32}, "grid": [2]}
    assert data["kernels"]["other"] == {"grid": [1]}
    assert out.count("mine =") == 1 and "[kernels.mine]" not in out
    assert "# kernels written inline" in out and "# one line each" in out


def test_a_doc_holding_quotes_and_backslashes_stays_valid() -> None:
    doc = 'y = "x" \\ 2, said the "spec"'
    out = describe_into(EXISTING, "mine", {"doc": doc, "dims": {"n": 8}, "grid": [2]})
    assert tomllib.loads(out)["kernels"]["mine"]["doc"] == doc
    assert tomllib.loads(describe_into("", "q", {"doc": doc}))["kernels"]["q"]["doc"] == doc


def test_a_new_table_round_trips() -> None:
    table = {
        "doc": "x",
        "dims": {"M": 4, "N": {"default": 2, "lo": 0, "hi": 9}},
        "grid": ["ceil(N / 16)", 1, 1],
        "uniforms": {"p": {"scale": 0.5, "n": "M * N"}},
        "buffers": {"y": {"shape": ["M", "N"], "output": True}},
        "reference": {"function": "refs.py:f", "rtol": 1e-5, "atol": 0.0},
    }
    out = describe_into("", "k", table)
    assert tomllib.loads(out)["kernels"]["k"] == table
    assert "[kernels.k.buffers]" in out and 'y = {shape = ["M", "N"], output = true}' in out
