"""Templated corpora, as `workbench.toml` declares them: named variants of template files, and a
generator command for any other templating scheme.

```toml
[variants.binary_add_f32]
file = "binary.wgsl"
defines = { OP_ADD = true, TYPE_F32 = true, WG_SIZE = 256 }

[generate]
command = "python3 gen.py {out}"   # writes .wgsl files into {out}, a cache folder
inputs = ["*.tmpl", "gen.py"]       # re-run when one of these changes
```

A variant is its template expanded with its defines (workbench.wgsl.preprocess); the corpus makes
it a kernel named by the variant (`VARIANT:ENTRY` when it has several entry points), its lines mapped
back to the template. The generator runs in the corpus folder into `.workbench/generated/`, only when
the command or the contents of its inputs changed since its last successful run; its failure is one
line with the last lines it printed.
"""

from __future__ import annotations

import hashlib
import os
import shlex
import shutil
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from workbench.errors import CorpusError
from workbench.userfiles import read_toml
from workbench.wgsl.preprocess import Expanded, TemplateError, define_value, expand

FILE = "workbench.toml"
GENERATED = Path(".workbench") / "generated"
_STAMP = ".inputs-sha256"
GENERATE_TIMEOUT_S = 300
_TAIL_LINES = 5
MAX_CONFIG_BYTES = 1 << 20


@dataclass(frozen=True)
class Variant:
    """One named expansion of a template file."""

    name: str
    file: str  # relative to the corpus folder
    defines: dict[str, str]


@dataclass(frozen=True)
class Generate:
    command: str
    inputs: tuple[str, ...]


def read_templating(root: Path) -> tuple[list[Variant], Generate | None]:
    """The `[variants.*]` and `[generate]` tables of the corpus's workbench.toml."""
    path = root / FILE
    if not os.path.lexists(path):
        return [], None
    data = read_toml(path, CorpusError, MAX_CONFIG_BYTES)
    return _variants(path, root, data.get("variants", {})), _generate(path, data.get("generate"))


def _variants(path: Path, root: Path, table: Any) -> list[Variant]:
    if not isinstance(table, dict):
        raise CorpusError(f"{path}: variants must be tables: [variants.NAME]")
    out = []
    for name, v in table.items():
        at = f"{path}: variants.{name}"
        if not name.isidentifier():
            raise CorpusError(f"{at}: a variant name is a plain name (letters, digits, _)")
        if not isinstance(v, dict):
            raise CorpusError(f'{at}: must be a table: file = "x.wgsl", defines = {{ ... }}')
        unknown = sorted(set(v) - {"file", "defines"})
        if unknown:
            raise CorpusError(f"{at}.{unknown[0]}: unknown key; a variant has file and defines")
        file = v.get("file")
        if not isinstance(file, str) or not file:
            raise CorpusError(f'{at}.file: missing: the template, e.g. file = "binary.wgsl"')
        if not (root / file).resolve().is_relative_to(root.resolve()):
            raise CorpusError(f"{at}.file: {file} is outside the corpus folder")
        defines = v.get("defines", {})
        if not isinstance(defines, dict):
            raise CorpusError(f"{at}.defines: must be a table, e.g. {{ TYPE_F32 = true }}")
        values: dict[str, str] = {}
        for k, d in defines.items():
            try:
                value = define_value(d)
            except TemplateError as exc:
                raise CorpusError(f"{at}.defines.{k}: {exc}") from None
            if value is not None:
                values[k] = value
        out.append(Variant(name, Path(file).as_posix(), values))
    return out


def _generate(path: Path, table: Any) -> Generate | None:
    if table is None:
        return None
    if not isinstance(table, dict):
        raise CorpusError(f"{path}: generate must be a table: [generate] command = ...")
    unknown = sorted(set(table) - {"command", "inputs"})
    if unknown:
        raise CorpusError(f"{path}: generate.{unknown[0]}: unknown key (command, inputs)")
    command, inputs = table.get("command"), table.get("inputs", [])
    if not isinstance(command, str) or "{out}" not in command:
        raise CorpusError(
            f'{path}: generate.command: a command writing into {{out}}, e.g. "python3 gen.py {{out}}"'
        )
    if not isinstance(inputs, list) or not all(isinstance(i, str) for i in inputs):
        raise CorpusError(f'{path}: generate.inputs: a list of globs, e.g. ["*.tmpl"]')
    return Generate(command, tuple(inputs))


def expand_variant(v: Variant, read: Callable[[str], str]) -> Expanded:
    """The variant's text; a template mistake is a TemplateError naming the template's file:line."""
    return expand(v.file, v.defines, read)


def mapped_runs(expanded: Expanded, first_line: int, text: str) -> list[tuple[str, int, str]]:
    """A run of expanded lines (starting at expanded line `first_line`) as runs of template lines:
    (file, first line, text), so a piece of a variant maps back to its templates."""
    out: list[tuple[str, int, str]] = []
    for i, line in enumerate(text.splitlines(keepends=True)):
        file, n = expanded.lines[min(first_line - 1 + i, len(expanded.lines) - 1)]
        if out and out[-1][0] == file and out[-1][1] + out[-1][2].count("\n") == n:
            out[-1] = (file, out[-1][1], out[-1][2] + line)
        else:
            out.append((file, n, line))
    return out


def generate(root: Path, gen: Generate) -> Path:
    """Run the generator when its command or inputs changed; returns its output folder."""
    out = root / GENERATED
    digest = hashlib.sha256(gen.command.encode())
    for pattern in gen.inputs:
        for p in sorted(root.glob(pattern)):
            if p.is_file():
                digest.update(p.relative_to(root).as_posix().encode() + b"\0")
                digest.update(p.read_bytes())
    stamp = out / _STAMP
    if stamp.is_file() and stamp.read_text() == digest.hexdigest():
        return out
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    argv = [a.replace("{out}", str(out)) for a in shlex.split(gen.command)]
    try:
        done = subprocess.run(
            argv, cwd=root, capture_output=True, text=True, timeout=GENERATE_TIMEOUT_S, check=False
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise CorpusError(
            f"{root / FILE}: generate: {gen.command!r} could not run: {exc}"
        ) from None
    if done.returncode != 0:
        tail = (done.stdout + done.stderr).strip().splitlines()[-_TAIL_LINES:]
        raise CorpusError(
            f"{root / FILE}: generate: {gen.command!r} exited with {done.returncode}"
            + (": " + " | ".join(t.strip() for t in tail) if tail else "")
        )
    stamp.write_text(digest.hexdigest())
    return out
