"""Maps lines of an assembled module back to the file and line they came from."""

from __future__ import annotations

from bisect import bisect_right
from dataclasses import dataclass, field


@dataclass
class SourceMap:
    """Runs of consecutive module lines, each from one file starting at a given line."""

    starts: list[int] = field(default_factory=list)  # module line where each run starts
    runs: list[tuple[str, int, int]] = field(default_factory=list)  # (file, first_line, n_lines)

    def add(self, file: str, first_line: int, n_lines: int, module_line: int) -> None:
        if n_lines > 0:
            self.starts.append(module_line)
            self.runs.append((file, first_line, n_lines))

    def module_line(self, file: str, line: int) -> int | None:
        """The first module line that came from `file`'s `line` (`locate`'s inverse); None if
        none did."""
        for start, (f, first, n) in zip(self.starts, self.runs, strict=True):
            if f == file and first <= line < first + n:
                return start + line - first
        return None

    def locate(self, module_line: int) -> tuple[str, int]:
        """(file, line) for a 1-based module line; lines past the end map to the last file."""
        k = bisect_right(self.starts, module_line) - 1
        if k < 0:
            return ("<host>", module_line)
        file, first, n = self.runs[k]
        return file, first + min(module_line - self.starts[k], max(n - 1, 0))
