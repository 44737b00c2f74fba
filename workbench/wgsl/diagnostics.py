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


_NAGA_SCALAR = re.compile(r"\[\d+\] \(of type Scalar\(Scalar \{ kind: (\w+), width: (\d+) \}\)\)")
_KIND = {"Float": "f", "Uint": "u", "Sint": "i", "Bool": "bool"}


def _headline(raw: str) -> str:
    """The one sentence that says what is wrong, with backticks turned into quotes.

    naga's validation errors lead with a generic "Entry point main at Compute is invalid" and put
    the cause in `= …` notes; the last note is the most specific, so it leads and the generic
    sentence follows in parentheses. Parse errors are specific already; their notes are advice.
    """
    text = raw.strip()
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    for idx, ln in enumerate(lines):
        m = _HEADLINE.search(ln)
        if not m:
            continue
        msg = m.group(1).rstrip(":")
        notes = [t[1:].strip() for t in lines[idx + 1 :] if t.startswith("= ")]
        if notes and msg.endswith("is invalid"):
            msg = f"{_plain_types(notes[-1])} ({msg})"
        return msg.replace("`", "'")
    meaningful = [
        ln
        for ln in lines
        if not ln.startswith(("Validation Error", "Caused by", "In wgpu", "┌", "│", "="))
    ]
    return (meaningful[-1] if meaningful else text or "compile error").replace("`", "'")


def _plain_types(note: str) -> str:
    """naga's `[2] (of type Scalar(Scalar { kind: Float, width: 4 }))` as `f32`."""

    def scalar(m: re.Match[str]) -> str:
        kind = _KIND.get(m.group(1), m.group(1))
        return kind if kind == "bool" else f"{kind}{int(m.group(2)) * 8}"

    return _NAGA_SCALAR.sub(scalar, note)
