"""Constructs in WGSL text whose results some adapters change: loops that may run long and long
`else if` chains. The CPU adapter (lavapipe) stops every loop after 65,536 iterations and
miscompiles a chain of about 100 `else if` branches; `workbench.gpu.canaries` measures what each
adapter does, and this module says which kernels could meet it.

Each finder is one pass over the tokens (no backtracking), so it costs what tokenizing costs, and
reads only a loop's header or a chain's keywords: when the WGSL front end's typed tree is there,
the same questions can be asked of its loop and if nodes instead, with these signatures kept.
Text that does not tokenize has no findings (it does not compile either).
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass

from workbench.errors import ReflectionError
from workbench.wgsl.scan import Token, tokenize

# A loop bounded by a literal (or a module-scope const) up to this count cannot reach any measured
# cap (lavapipe: 65,536) however it steps; anything else could.
SMALL_BOUND = 4096
_COMPARISONS = frozenset(["<", "<=", ">", ">=", "!="])
_OPENING, _CLOSING = frozenset("([{"), frozenset(")]}")


@dataclass(frozen=True)
class Site:
    """Where a construct starts (1-based line of the text given) and what it is, in words."""

    line: int
    what: str
    size: int = 0  # an else-if chain's branches


def loops_without_small_constant_bound(source: str, where: str = "<wgsl>") -> list[Site]:
    """Every `loop`, every `while`, and every `for` whose condition is not `i OP BOUND` with BOUND
    a literal or a module-scope const of at most SMALL_BOUND."""
    tokens = _tokens(source, where)
    lines = _line_starts(source)
    consts = _module_consts(tokens)
    out = []
    i = 0
    while i < len(tokens):
        word = tokens[i].text
        line = bisect.bisect_right(lines, tokens[i].offset)
        if word == "loop" and _next(tokens, i) == "{":
            out.append(Site(line, "a loop { } (bounded only by its break)"))
        elif word == "while":
            out.append(Site(line, "a while loop"))
        elif word == "for" and _next(tokens, i) == "(":
            condition, i = _for_condition(tokens, i + 1)
            bound = _small_bound(condition, consts)
            if bound is None:
                text = " ".join(t.text for t in condition) or "nothing"
                out.append(Site(line, f"a for loop bounded by {text}"))
            continue
        i += 1
    return out


def else_if_chains(source: str, at_least: int, where: str = "<wgsl>") -> list[Site]:
    """Every `if` followed by `at_least` or more `else if` branches (nested chains on their own)."""
    tokens = _tokens(source, where)
    lines = _line_starts(source)
    out: list[Site] = []
    # The chain open at each brace depth: where its `if` is, and its `else if` branches so far.
    # A chain ends at the next statement or `if` of its own depth, or at the end of its block.
    chain: dict[int, tuple[int, int]] = {}
    depth = 0

    def close(at: int) -> None:
        start, count = chain.pop(at, (0, 0))
        if count >= at_least:
            line = bisect.bisect_right(lines, start)
            out.append(Site(line, f"an if with {count} else-if branches", count))

    for i, t in enumerate(tokens):
        if t.text == "{":
            depth += 1
        elif t.text == "}":
            close(depth)
            depth -= 1
        elif t.text == "if" and i > 0 and tokens[i - 1].text == "else" and depth in chain:
            start, count = chain[depth]
            chain[depth] = (start, count + 1)
        elif t.text == "if":
            close(depth)
            chain[depth] = (t.offset, 0)
        elif t.text == ";":
            close(depth)
    for at in list(chain):
        close(at)
    return sorted(out, key=lambda s: s.line)


def _tokens(source: str, where: str) -> list[Token]:
    try:
        return tokenize(source, where)
    except ReflectionError:
        return []


def _line_starts(source: str) -> list[int]:
    """Offsets where each line starts; bisect_right over it gives a 1-based line number."""
    starts = [0]
    at = source.find("\n")
    while at >= 0:
        starts.append(at + 1)
        at = source.find("\n", at + 1)
    return starts


def _next(tokens: list[Token], i: int) -> str:
    return tokens[i + 1].text if i + 1 < len(tokens) else ""


def _for_condition(tokens: list[Token], open_at: int) -> tuple[list[Token], int]:
    """The tokens of a `for` header's condition, and the index just past the header's `)`."""
    depth, clause, condition = 0, 0, []
    i = open_at
    while i < len(tokens):
        text = tokens[i].text
        if text in _OPENING:
            depth += 1
            if depth == 1:
                i += 1
                continue
        elif text in _CLOSING:
            depth -= 1
            if depth == 0:
                return condition, i + 1
        elif text == ";" and depth == 1:
            clause += 1
            i += 1
            continue
        if clause == 1:
            condition.append(tokens[i])
        i += 1
    return condition, i


def _small_bound(condition: list[Token], consts: dict[str, int]) -> int | None:
    """BOUND of a condition `NAME OP BOUND` (or `BOUND OP NAME`), when it is at most SMALL_BOUND."""
    words = [t.text for t in condition if t.text not in ("(", ")")]
    if len(words) != 3 or words[1] not in _COMPARISONS:
        return None
    for side in (words[2], words[0]):
        value = consts.get(side, _integer(side))
        if value is not None and 0 <= value <= SMALL_BOUND:
            return value
    return None


def _integer(text: str) -> int | None:
    """A WGSL integer literal's value (`16`, `16u`, `0x10i`), else None."""
    digits = text.rstrip("iu")
    try:
        return int(digits, 16) if digits[:2].lower() == "0x" else int(digits, 10)
    except ValueError:
        return None


def _module_consts(tokens: list[Token]) -> dict[str, int]:
    """Module-scope `const NAME (: TYPE)? = INTEGER;` (an override is not constant: a run sets it)."""
    out: dict[str, int] = {}
    depth = 0
    for i, t in enumerate(tokens):
        if t.text == "{":
            depth += 1
        elif t.text == "}":
            depth -= 1
        elif t.text == "const" and depth == 0 and i + 1 < len(tokens):
            j = i + 2
            while j < len(tokens) and tokens[j].text not in ("=", ";"):
                j += 1
            if j + 2 < len(tokens) and tokens[j].text == "=" and tokens[j + 2].text == ";":
                value = _integer(tokens[j + 1].text)
                if value is not None:
                    out[tokens[i + 1].text] = value
    return out
