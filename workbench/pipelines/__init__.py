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


def locate(name_or_path: str, corpus: Path | None = None) -> Path:
    """A pipeline file by path, or by name: one of `corpus`'s pipeline files (`corpus_pipelines`)
    whose `name` or file name is that, else the shipped pipeline of that name. A name that
    several of the corpus's files go by, or none and no shipped pipeline, is refused with the
    names there are."""
    path = Path(name_or_path).expanduser()
    if name_or_path.endswith(".toml") or "/" in name_or_path or path.is_file():
        if not path.is_file():
            raise UserError(f"pipeline file {path} does not exist")
        return path
    mine = corpus_pipelines(corpus) if corpus is not None else []
    named = [p for p in mine if name_or_path in _names(p)]
    if len(named) > 1:
        files = ", ".join(p.relative_to(corpus).as_posix() for p in named) if corpus else ""
        raise UserError(
            f"{len(named)} pipelines of {corpus} are named {name_or_path!r} ({files}); "
            "give the file's path"
        )
    if named:
        return named[0]
    shipped = SHIPPED / f"{name_or_path}.toml"
    if not shipped.is_file():
        theirs = f"{corpus}'s pipelines: {', '.join(_names(p)[0] for p in mine)}; " if mine else ""
        raise UserError(
            f"no pipeline named {name_or_path!r}; {theirs}shipped pipelines: "
            f"{', '.join(shipped_names())} (or give a path to a .toml file)"
        )
    return shipped


def _names(path: Path) -> tuple[str, ...]:
    """The names a corpus's pipeline file goes by: its `name` (when it gives one), its stem."""
    try:
        if path.stat().st_size <= MAX_BYTES:
            with path.open("rb") as f:
                name = tomllib.load(f).get("name")
            if isinstance(name, str) and name != path.stem:
                return (name, path.stem)
    except (OSError, tomllib.TOMLDecodeError, UnicodeDecodeError):
        pass  # an unreadable file goes by its stem; opening it says what is wrong
    return (path.stem,)


def load_pipeline(name_or_path: str, corpus: Path | None = None) -> Pipeline:
    return load(locate(name_or_path, corpus))
