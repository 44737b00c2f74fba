"""Results the user takes away from the terminal UI: a run's arrays as `.npz` (the whole case) or
`.npy` (one buffer), the Diff tab's table as CSV or Markdown, and values copied as text.

Textual-free. Paths are checked before anything is written (`check_path`: the suffix the format
needs, an existing folder) and every write is atomic (a temporary file beside the target, then a
rename), so a failed save never leaves half a file; problems are one-line `UserError`s.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from workbench.errors import UserError
from workbench.safewrite import write_file, write_text
from workbench.viewmodel.diff import Element, closest

if TYPE_CHECKING:
    from workbench.session import Run

CASE = ""  # the save dialog's choice meaning "every array of the case" (else a buffer's key)
WORST_EXPORTED = 12  # elements nearest to (or beyond) tolerance, per output, in an exported table


def case_arrays(run: Run) -> dict[str, np.ndarray]:
    """Every array of a run under a key that says what it is: `inputs.NAME`, `outputs.NAME`
    and, when the run was compared, `reference.NAME` (float64)."""
    arrays = {f"inputs.{n}": a for n, a in run.inputs.items()}
    arrays.update({f"outputs.{n}": a for n, a in run.outputs.items()})
    arrays.update({f"reference.{n}": np.asarray(a) for n, a in (run.reference or {}).items()})
    return arrays


def default_name(run: Run, what: str, suffix: str) -> str:
    """`ffn_swiglu_backward-seq4-d_ff64.npz`, or `…-grad_up.npy` for one buffer."""
    dims = "-".join(f"{k}{v}" for k, v in run.case.dims.items())
    stem = f"{run.case.name}-{dims}" if dims else run.case.name
    if what:
        stem += "-" + what.rpartition(".")[2]
    return stem + suffix


def check_path(text: str, suffixes: Sequence[str], cwd: Path | None = None) -> Path:
    """The path typed, resolved against `cwd`; UserError when empty, without one of `suffixes`,
    a folder, or in a folder that does not exist."""
    text = text.strip()
    if not text:
        raise UserError("give a file name")
    path = Path(text).expanduser()
    if not path.is_absolute():
        path = (cwd or Path.cwd()) / path
    if path.suffix.lower() not in suffixes:
        raise UserError(f"{path.name}: the name must end in {' or '.join(suffixes)}")
    if path.is_dir():
        raise UserError(f"{path} is a folder; give a file name")
    if not path.parent.is_dir():
        raise UserError(f"folder {path.parent} does not exist")
    return path


def save_arrays(path: Path, run: Run, what: str, overwrite: bool = False) -> str:
    """Write the case (`what` == CASE, an `.npz`) or one buffer (`.npy`); what was written.
    An existing file is replaced only with `overwrite` (the user confirmed it)."""
    arrays = case_arrays(run)
    if what == CASE:
        write_file(path, lambda fh: np.savez(fh, allow_pickle=False, **arrays), overwrite=overwrite)
        return f"{len(arrays)} arrays ({', '.join(arrays)})"
    array = arrays[what]
    write_file(path, lambda fh: np.save(fh, array, allow_pickle=False), overwrite=overwrite)
    return f"{what} ({'×'.join(map(str, array.shape))} {array.dtype})"


# -- the Diff tab's table --------------------------------------------------------------------------

DIFF_COLUMNS = (
    "output",
    "verdict",
    "max |Δ|",
    "max rel",
    "max ULP",
    "outside tol",
    "elements",
    "rtol",
    "atol",
    "tolerance from",
)
WORST_COLUMNS = ("output", "where", "got", "reference", "|Δ|", "|Δ| / tolerance")


def diff_tables(run: Run) -> tuple[list[list[str]], list[list[str]]]:
    """(one row per output, the elements nearest to tolerance of every output), as text; the
    figures are the comparison's own (`workbench.closeness`), written in full precision."""
    metrics = []
    worst = []
    for name, c in run.compare.items():
        metrics.append(
            [
                name,
                "ok" if c.ok else "FAIL",
                repr(c.max_abs),
                repr(c.max_rel),
                "" if c.max_ulp is None else str(c.max_ulp),
                str(c.n_bad),
                str(c.n_total),
                repr(c.rtol),
                repr(c.atol),
                c.why or "default",
            ]
        )
        for e in closest(run, name, WORST_EXPORTED):
            worst.append([name, e.where, *_figures(e)])
    return metrics, worst


def _figures(e: Element) -> list[str]:
    """got, reference, |Δ| and |Δ| / tolerance of an element, in full precision."""
    diff = "" if e.abs_diff is None else repr(e.abs_diff)
    return [repr(e.got), repr(e.ref), diff, repr(e.ratio)]


def diff_csv(run: Run) -> str:
    """The two tables as CSV, one after the other with a blank line between; the elements'
    index one column per axis (every output's axes, in order; blank where an output has none)."""
    metrics, _ = diff_tables(run)
    elements = [(name, e) for name in run.compare for e in closest(run, name, WORST_EXPORTED)]
    axes = list(dict.fromkeys(a for _, e in elements for a, _ in e.at))
    header = [WORST_COLUMNS[0], *axes, *WORST_COLUMNS[2:]]
    worst = [[name, *_positions(e, axes), *_figures(e)] for name, e in elements]
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerows([list(DIFF_COLUMNS), *metrics, [], header, *worst])
    return out.getvalue()


def _positions(e: Element, axes: list[str]) -> list[str]:
    at = dict(e.at)
    return [str(at[a]) if a in at else "" for a in axes]


def _md_row(cells: Sequence[str]) -> str:
    return "| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |"


def diff_markdown(run: Run) -> str:
    """The two tables as Markdown, under a heading naming the kernel and its case."""
    metrics, worst = diff_tables(run)
    dims = " ".join(f"{k}={v}" for k, v in run.case.dims.items())
    lines = [f"# {run.case.name} {dims} seed {run.case.seed} on {run.adapter.label}", ""]
    for columns, rows in ((DIFF_COLUMNS, metrics), (WORST_COLUMNS, worst)):
        lines += [_md_row(columns), _md_row(["---"] * len(columns))]
        lines += [_md_row(r) for r in rows]
        lines.append("")
    return "\n".join(lines)


def save_diff(path: Path, run: Run, overwrite: bool = False) -> str:
    """Write the Diff tab's tables (CSV for `.csv`, else Markdown); what was written."""
    text = diff_csv(run) if path.suffix.lower() == ".csv" else diff_markdown(run)
    write_text(path, text, overwrite=overwrite)
    return f"the diff of {len(run.compare)} outputs"


# -- copying ---------------------------------------------------------------------------------------


def value_text(value: np.generic) -> str:
    """A value as its own dtype prints it: the shortest text that reads back to the same value."""
    return str(value.item()) if value.dtype.kind in "iub" else str(value)


def block_text(block: np.ndarray) -> str:
    """A 2-D block of values as tab-separated rows (a spreadsheet pastes it as cells)."""
    return "\n".join("\t".join(value_text(v) for v in row) for row in np.atleast_2d(block))
