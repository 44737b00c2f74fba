"""Pipelines: named chains of dispatches over shared buffers, stepped one dispatch at a time.

A pipeline is data (`*.toml` in this folder, or a user's file; the format is in docs/pipelines.md):
`model` reads a file, `plan` checks it against a corpus and makes it concrete (no GPU),
`stepper` runs it step by step on the GPU with every buffer kept (`snapshots`), `chain` runs it in
float64 to find the first divergence, and `report` steps a whole pipeline for the command line.
"""

from __future__ import annotations

import tomllib
from pathlib import Path

from workbench.errors import UserError
from workbench.pipelines.model import MAX_BYTES, Pipeline, load

SHIPPED = Path(__file__).resolve().parent


def shipped_names() -> list[str]:
    """The names of the pipelines that ship with the workbench."""
    return sorted(p.stem for p in SHIPPED.glob("*.toml"))


def corpus_pipelines(root: Path) -> list[Path]:
    """The pipeline files of a corpus folder: every `*.toml` in its `pipelines/` folder, and the
    `*.toml` files beside its kernels that hold `[[steps]]` (workbench.toml, pyproject.toml and
    the like do not); sorted by path."""
    if not root.is_dir():
        return []
    found = sorted(p for p in (root / "pipelines").glob("*.toml") if p.is_file())
    for p in sorted(root.glob("*.toml")):
        if p.name != "workbench.toml" and p.is_file() and _has_steps(p):
            found.append(p)
    return sorted(found)


def _has_steps(path: Path) -> bool:
    try:
        if path.stat().st_size > MAX_BYTES:
            return False
        with path.open("rb") as f:
            return "steps" in tomllib.load(f)
    except (OSError, tomllib.TOMLDecodeError, UnicodeDecodeError):
        return False


def locate(name_or_path: str) -> Path:
    """A shipped pipeline by name, or a pipeline file by path."""
    path = Path(name_or_path).expanduser()
    if name_or_path.endswith(".toml") or "/" in name_or_path or path.is_file():
        if not path.is_file():
            raise UserError(f"pipeline file {path} does not exist")
        return path
    shipped = SHIPPED / f"{name_or_path}.toml"
    if not shipped.is_file():
        raise UserError(
            f"no pipeline named {name_or_path!r}; shipped pipelines: {', '.join(shipped_names())} "
            "(or give a path to a .toml file)"
        )
    return shipped


def load_pipeline(name_or_path: str) -> Pipeline:
    return load(locate(name_or_path))
