"""Compile errors mapped back to the user's files.

naga's messages carry the location as `┌─ wgsl:LINE:COL` (parse errors) or `┌─ :LINE:COL`
(validation errors) in module lines; this turns them into `file.wgsl:31:9: message`, followed by the
offending source line and a caret, so an error inside a preamble names the preamble.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from workbench.wgsl.sourcemap import SourceMap

_LOCATION = re.compile(r"┌─\s*(?:wgsl)?:(\d+):(\d+)")
_HEADLINE = re.compile(r"(?:Shader '[^']*' parsing error|Shader validation error|error):\s*(.+)")


@dataclass(frozen=True)
class Diagnostic:
    """One compile error in user terms."""

    file: str
    line: int  # 1-based, in `file`; 0 when the compiler gave no location
    column: int
    message: str
    source_line: str = ""

    def render(self) -> str:
        """`file:line:col: message` plus the source line and a caret (when located)."""
        if not self.line:
            return f"{self.file}: {self.message}"
        head = f"{self.file}:{self.line}:{self.column}: {self.message}"
        if not self.source_line:
            return head
        gutter = f"{self.line} | "
        # naga counts columns in characters; keep the line's tabs so the caret lines up under them.
        before = self.source_line[: max(self.column - 1, 0)]
        pad = "".join("\t" if c == "\t" else " " for c in before)
        caret = " " * len(gutter) + pad + " " * (self.column - 1 - len(before)) + "^"
        return f"{head}\n{gutter}{self.source_line.rstrip()}\n{caret}"


def map_compile_error(raw: str, module_text: str, smap: SourceMap, default_file: str) -> Diagnostic:
    """Turn a wgpu/naga error text for `module_text` into a located diagnostic."""
    message = _headline(raw)
    loc = _LOCATION.search(raw)
    if not loc:
        return Diagnostic(default_file, 0, 0, message)
    mline, col = int(loc.group(1)), int(loc.group(2))
    file, line = smap.locate(mline)
    lines = module_text.splitlines()
    src = lines[mline - 1] if 0 < mline <= len(lines) else ""
    return Diagnostic(file, line, col, message, src)


def _headline(raw: str) -> str:
    """The one sentence that says what is wrong, with backticks turned into quotes."""
    text = raw.strip()
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    for ln in lines:
        m = _HEADLINE.search(ln)
        if m:
            msg = m.group(1)
            # Validation errors put the cause on the following lines; keep the most specific one.
            idx = lines.index(ln)
            tail = [t for t in lines[idx + 1 :] if not t.startswith(("┌", "│", "=", "^"))]
            tail = [t for t in tail if not re.match(r"^\d+\s*│", t)]
            if msg.endswith(("Function", "Entry point", "Type")) or msg.startswith("Function"):
                msg = " ".join([msg, *tail[:2]])
            return msg.replace("`", "'").rstrip(":")
    meaningful = [
        ln
        for ln in lines
        if not ln.startswith(("Validation Error", "Caused by", "In wgpu", "┌", "│", "="))
    ]
    return (meaningful[-1] if meaningful else text or "compile error").replace("`", "'")
