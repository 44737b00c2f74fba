"""How the UI writes a path: relative to the working directory when the path is inside it, else
from `~`, else absolute; so titles stay short and read the same in every checkout."""

from __future__ import annotations

from pathlib import Path


def shown_path(path: str | Path) -> str:
    """`workbench/fixtures`, `~/kernels`, or `/abs/path`."""
    resolved = Path(path).resolve()
    if resolved.is_relative_to(Path.cwd()):
        return str(resolved.relative_to(Path.cwd())) or "."
    home = Path.home()
    return f"~/{resolved.relative_to(home)}" if resolved.is_relative_to(home) else str(resolved)
