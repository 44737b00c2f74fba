"""A corpus: a folder of WGSL files, their preambles and kernel splits, assembled into one module per
kernel with a source map.

Conventions (DESIGN.md): `wgslconfig.toml` may name `[preamble] files` prepended, in order, to every
file matching `auto_inject_into` globs (never into themselves); a file may hold several kernels split
by `// --- KERNEL: <name> ---` lines, the text before the first marker being that file's own preamble;
a file without markers contributes one kernel per `@compute` entry point. A second marker with a
name already used in the file becomes a kernel with a problem, so the first stays usable. A preamble
file's own `@compute` entry points are kernels of that file, compiled with the preambles listed before
it. What a preamble file contributes to other files is its own preamble: the whole file when it has no
markers, and only the text before its first marker when it is kernel-split, so its kernels' bindings
and entry points (`dst`, `n`, ...) never land in, and clash with, the files it is injected into.
Global directives are hoisted, since WGSL wants them before every declaration and a file's text may
follow a preamble: the host writes the `enable`s a module needs at the top (so `enable subgroups;`,
rejected by naga, is never emitted; `enable f16;` only where f16 is used and the adapter has it),
then every other `enable` as written (never dropped: the kernel is listed as needing that feature),
then each distinct `diagnostic(...);` and `requires ...;` of the module; the source map points
each back to its file. Directives and markers are found by the WGSL lexer and parser, so CRLF and
CR line ends read as LF ones do.
"""

from __future__ import annotations

import fnmatch
import os
import re
from collections.abc import Mapping
from contextvars import ContextVar
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

from workbench.errors import CorpusError, ReflectionError, UserError
from workbench.userfiles import files_under, read_text, read_toml
from workbench.wgsl import reflected
from workbench.wgsl import syntax as s
from workbench.wgsl.lexer import column_of, line_of
from workbench.wgsl.parser import directives, parse
from workbench.wgsl.preprocess import directive_line
from workbench.wgsl.printer import print_module
from workbench.wgsl.probes import stub_definitions
from workbench.wgsl.reflect import HOST_ENABLES, EntryPoint, ModuleInfo, enable_feature, reflect
from workbench.wgsl.sourcemap import SourceMap
from workbench.wgsl.variants import (
    Variant,
    expand_variant,
    generate,
    mapped_runs,
    read_templating,
)

SHIPPED = Path(__file__).resolve().parent.parent / "shaders"
_MARKER_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# What ends a line comment or opens and closes a block comment: literal alternatives only.
_COMMENT_EVENTS = re.compile(r"/\*|\*/|//|\n")
MAX_FILE_BYTES = 4 * 1024 * 1024
HOST_LINES = "<workbench>"  # where lines the host appends to a module are said to come from
MAX_CONFIG_BYTES = 1 << 20


# The reflections remembered for the corpus being loaded (`load_corpus` sets it for the load, in
# this thread only): every kernel made meanwhile looks its module up there first, and adds it.
_REMEMBERED: ContextVar[reflected.Remembered | None] = ContextVar("remembered", default=None)


@dataclass(frozen=True)
class Piece:
    """A run of lines from one file that goes into a module."""

    file: str
    first_line: int  # 1-based line in that file
    text: str


@dataclass
class Kernel:
    """One kernel of a corpus: its pieces (preambles then body), entry point and reflection."""

    name: str
    file: str
    line: int  # where the kernel's own text starts in its file
    pieces: tuple[Piece, ...]
    entry: str = ""
    problem: str = ""  # a reflection problem that keeps it from running
    # Entry points of the same file that cannot be compiled (e.g. @workgroup_size(0)): left out
    # of this kernel's module, since the compiler validates every entry point of a module.
    without: tuple[str, ...] = ()
    # The reflections remembered for the corpus it was loaded with (`load_corpus`), if any.
    remembered: reflected.Remembered | None = field(
        default_factory=lambda: _REMEMBERED.get(), repr=False, compare=False
    )

    @cached_property
    def text(self) -> str:
        """The module without host-added lines, directives blanked (line numbers kept)."""
        text = "".join(
            _blank_directives(p.text, self._piece_directives[k]) for k, p in enumerate(self.pieces)
        )
        return _blank_functions(text, self.without) if self.without else text

    @cached_property
    def _piece_directives(self) -> tuple[tuple[s.Directive, ...], ...]:
        return tuple(directives(p.text, p.file) for p in self.pieces)

    @cached_property
    def directives(self) -> tuple[tuple[str, int, str], ...]:
        """The distinct `diagnostic`/`requires` directives of the pieces: (file, line, text)."""
        return self._hoisted(("diagnostic", "requires"))

    @cached_property
    def enables(self) -> tuple[tuple[str, int, str], ...]:
        """The distinct `enable`s of the pieces the host does not write itself, as written
        (file, line, text): kept, and their extensions named as needed features."""
        return self._hoisted(("enable",))

    def _hoisted(self, kinds: tuple[str, ...]) -> tuple[tuple[str, int, str], ...]:
        out: dict[str, tuple[str, int, str]] = {}
        for piece, found in zip(self.pieces, self._piece_directives, strict=True):
            for d in found:
                if d.kind not in kinds:
                    continue
                if d.kind == "enable":
                    words = tuple(w for w in d.words if w not in HOST_ENABLES)
                    if not words:
                        continue
                    d = s.Directive(d.span, d.kind, words)
                key = print_module(s.Module("", [d])).strip()
                own = _own_line(piece.text, d.span)
                if d.kind == "enable":
                    written = key
                elif own is not None:
                    written = piece.text[own[0] : own[1]].rstrip(" \t")
                else:
                    written = piece.text[d.span[0] : d.span[1]]
                line = piece.first_line + line_of(piece.text, d.span[0]) - 1
                out.setdefault(key, (piece.file, line, written))
        return tuple(out.values())

    @property
    def enabled_features(self) -> tuple[str, ...]:
        """Features the pieces' `enable`s name beyond the ones the host manages."""
        names: dict[str, None] = {}
        for _, _, text in self.enables:
            for word in text.removeprefix("enable").rstrip(";").split(","):
                names.setdefault(enable_feature(word.strip()), None)
        return tuple(names)

    @cached_property
    def module(self) -> ModuleInfo | None:
        """What reflection found in the module (remembered across runs: `reflected`; its `tree`
        is then None), or None when it cannot be read."""
        text = self.text
        remembered = self.remembered
        info = remembered.get(text, self.file) if remembered is not None else None
        if info is not None:
            return info
        try:
            info = reflect(text, self.file)
        except ReflectionError:
            return None
        if remembered is not None:
            remembered.put(text, self.file, info)
        return info

    @property
    def entry_point(self) -> EntryPoint | None:
        mod = self.module
        return mod.entry_points.get(self.entry) if mod else None

    def runnable_entry_point(self) -> EntryPoint:
        """The entry point, for code that runs the kernel; one UserError line where it has none."""
        ep = self.entry_point
        if ep is None:
            why = f" ({self.problem})" if self.problem else ""
            raise UserError(f"{self.file}:{self.name}: no @compute entry point{why}")
        return ep

    @property
    def deferred(self) -> tuple[str, ...]:
        """What the front end could not work out in the code the entry point reaches, each
        `file:line: why` in the user's files: the kernel still compiles and runs (the compiler
        judges it), and a feature that needs the knowledge says why it cannot act."""
        ep = self.entry_point
        if ep is None:
            return ()
        out = []
        for line, why in ep.deferred:
            file, at = self.locate(line)
            out.append(f"{file}:{at}: {why}")
        return tuple(out)

    @property
    def features(self) -> tuple[str, ...]:
        """Device features the entry point needs, from what it reaches (not the whole module)."""
        ep = self.entry_point
        own = ep.features if ep is not None else self.module.features if self.module else ()
        return own + tuple(f for f in self.enabled_features if f not in own)

    def resolved(self, overrides: Mapping[str, float]) -> EntryPoint | None:
        """The entry point with `overrides` applied: workgroup size and workgroup arrays sized by
        override constants take these values (the pipeline is created with the same ones)."""
        if not overrides:
            return self.entry_point
        try:
            return reflect(self.text, self.file, overrides).entry_points.get(self.entry)
        except ReflectionError:
            return None

    def override_problem(self, overrides: Mapping[str, float]) -> str:
        """Why `resolved(overrides)` has no entry point (e.g. a workgroup size of 0), in words."""
        try:
            mod = reflect(self.text, self.file, overrides)
        except ReflectionError as exc:
            return str(exc)
        line_why = mod.entry_problems.get(self.entry or "")
        if line_why is None:
            return f"the overrides {dict(overrides)} leave no @compute entry point {self.entry}"
        return line_why[1]

    def assemble(self, features: frozenset[str] | set[str] = frozenset()) -> tuple[str, SourceMap]:
        """The module text to compile, with the enables the adapter supports, and its source map."""
        header: list[str] = []
        if self.module and self.module.uses_f16 and "shader-f16" in features:
            header.append("enable f16;\n")
        smap = SourceMap()
        smap.add("<host>", 1, len(header), 1)
        for file, line, text in self.enables + self.directives:
            header.append(text + "\n")
            smap.add(file, line, 1, len(header))
        after = self._map_pieces(smap, len(header) + 1)
        body = self._without_unreached(features) + stub_definitions(self.text, self.file)
        # Lines past the pieces are the host's (instrumentation, probe stubs): they map there.
        smap.add(HOST_LINES, 1, len(header) + body.count("\n") + 1 - after, after)
        return "".join(header) + body, smap

    def _without_unreached(self, features: frozenset[str] | set[str]) -> str:
        """The text, where the adapter lacks `subgroup` and only functions this entry point never
        reaches use it, with every unreached function blanked (lines kept): the compiler
        validates every function of a module, so an unused helper of a shared preamble would
        otherwise refuse even a fill."""
        mod, ep = self.module, self.entry_point
        if "subgroup" in features or mod is None or ep is None:
            return self.text
        if not mod.uses_subgroups or "subgroup" in ep.features:
            return self.text
        return self.reached_text()

    def reached_text(self) -> str:
        """The text with every function the entry point never reaches blanked (lines kept): what
        a run of this kernel can execute."""
        mod, ep = self.module, self.entry_point
        text = self.text
        if mod is None or ep is None:
            return text
        reached = set(ep.functions)
        out, at = [], 0
        for name, (start, end) in sorted(mod.functions.items(), key=lambda kv: kv[1][0]):
            if name not in reached and start >= at:
                out.append(text[at:start])
                out.append("".join(c if c == "\n" else " " for c in text[start:end]))
                at = end
        out.append(text[at:])
        return "".join(out)

    def locate(self, line: int) -> tuple[str, int]:
        """(file, line) of a line of `self.text`, e.g. one that reflection names."""
        smap = SourceMap()
        self._map_pieces(smap, 1)
        return smap.locate(line)

    def position(self, offset: int) -> tuple[str, int, int]:
        """(file, line, column) of a character offset into `self.text`, such as a syntax tree
        node's span start: the user's file even where preambles were put before it."""
        file, line = self.locate(line_of(self.text, offset))
        return file, line, column_of(self.text, offset)

    def _map_pieces(self, smap: SourceMap, line: int) -> int:
        """Map the pieces' lines, `self.text` starting at module line `line`; returns the module
        line after the last piece."""
        for piece in self.pieces:
            n = piece.text.count("\n") + (0 if piece.text.endswith("\n") else 1)
            smap.add(piece.file, piece.first_line, n, line)
            line += n
        return line


@dataclass
class Corpus:
    """Every kernel found under a folder, and the files that could not be used (with why)."""

    root: Path
    kernels: list[Kernel] = field(default_factory=list)
    problems: dict[str, str] = field(default_factory=dict)  # file -> why it was skipped
    preambles: tuple[str, ...] = ()
    # Files read besides the .wgsl ones and the configs (included templates, a generator's
    # inputs): live reload watches them too.
    watched: list[Path] = field(default_factory=list)

    @property
    def files(self) -> list[str]:
        seen: dict[str, None] = {}
        for k in self.kernels:
            seen.setdefault(k.file, None)
        return list(seen)

    def label(self, kernel: Kernel) -> str:
        """The name that finds `kernel`: its own, or `FILE:NAME` when another file's kernel shares
        it (every entry point called `main`)."""
        same = sum(1 for k in self.kernels if k.name == kernel.name and k.file != kernel.file)
        return f"{kernel.file}:{kernel.name}" if same else kernel.name

    def find(self, name: str) -> Kernel:
        """A kernel by name, or `file.wgsl:name` when two files define the same name."""
        exact = [k for k in self.kernels if k.name == name]
        if len(exact) == 1:
            return exact[0]  # a variant's `VARIANT:ENTRY` is its name
        file, _, kname = name.rpartition(":")
        firsts: dict[str, Kernel] = {}
        for k in self.kernels:
            if k.name == kname and (not file or k.file == file):
                # A later section of the same name in one file is listed as a duplicate; the
                # first one is the kernel that name means.
                firsts.setdefault(k.file, k)
        matches = list(firsts.values())
        if len(matches) == 1:
            return matches[0]
        if not matches:
            close = [k.name for k in self.kernels if kname.lower() in k.name.lower()]
            hint = f"; did you mean {', '.join(sorted(set(close))[:5])}?" if close else ""
            raise UserError(
                f"no kernel named {name!r} in {self.root}{hint} (`workbench list` shows them all)"
            )
        where = ", ".join(f"{k.file}:{k.name}" for k in matches)
        raise UserError(
            f"kernel {name!r} is defined more than once ({where}); name it as FILE:NAME"
        )


def load_corpus(path: str | Path | None = None) -> Corpus:
    """Load a folder (default: the shipped shaders). A single .wgsl file is also accepted.
    Reflections are remembered across loads (`reflected`), read once and written once a load."""
    root = Path(path) if path is not None else SHIPPED
    remembered = reflected.Remembered(root.parent if root.suffix == ".wgsl" else root)
    token = _REMEMBERED.set(remembered)
    try:
        corpus = _load_corpus(root)
    finally:
        _REMEMBERED.reset(token)
    remembered.save()
    return corpus


def _load_corpus(root: Path) -> Corpus:
    if not root.exists():
        raise UserError(f"corpus {root} does not exist")
    variants: list[Variant] = []
    watched: list[Path] = []
    if root.is_file():
        # One file: its own kernels only (its folder still gives its preambles).
        if root.suffix != ".wgsl":
            raise UserError(f"{root} is not a .wgsl file or a folder of them")
        files = [root]
        root = root.parent
    else:
        variants, gen = read_templating(root)
        if gen is not None:
            generate(root, gen)
            watched = [p for g in gen.inputs for p in sorted(root.glob(g)) if p.is_file()]
        # Not only regular files: a named pipe or device is listed as refused, not skipped unseen.
        files = files_under(root, ".wgsl")
    preamble_files, globs = _read_config(root)
    corpus = Corpus(root=root, preambles=tuple(preamble_files), watched=watched)
    texts: dict[str, str] = {}
    listed = {p.relative_to(root).as_posix() for p in files}
    for p in files:
        rel = p.relative_to(root).as_posix()
        try:
            texts[rel] = _read_text(p)
        except CorpusError as exc:
            corpus.problems[rel] = str(exc)
    for pre in preamble_files:
        if pre not in texts:
            try:
                texts[pre] = _read_text(root / pre)
            except CorpusError as exc:
                raise CorpusError(f"wgslconfig.toml: preamble {pre}: {exc}") from exc
    templates = {v.file for v in variants}
    for rel, text in texts.items():
        if rel in corpus.problems:
            continue
        if rel in templates:
            continue  # a template of variants is read through them only
        line = directive_line(text)
        if line:
            corpus.problems[rel] = (
                f"{rel}:{line}: a template (preprocessor directives): it needs a variant: "
                f'[variants.NAME] file = "{rel}", defines = {{ ... }} in workbench.toml'
            )
            continue
        if rel in preamble_files:
            # Its own entry points are kernels too, compiled with the preambles listed before it
            # (which it may build on); one read only as another file's preamble is not listed.
            if rel in listed and _entry_names(text, rel):
                earlier = preamble_files[: preamble_files.index(rel)]
                injected = [_preamble_piece(pre, texts[pre]) for pre in earlier]
                corpus.kernels.extend(_split_file(rel, text, injected))
            continue
        injected = [
            _preamble_piece(pre, texts[pre])
            for pre in preamble_files
            if pre != rel and any(_glob_match(rel, g) for g in globs)
        ]
        corpus.kernels.extend(_split_file(rel, text, injected))
    for v in variants:
        _add_variant(corpus, v, preamble_files, globs, texts)
    return corpus


def _add_variant(
    corpus: Corpus, v: Variant, preamble_files: list[str], globs: list[str], texts: dict[str, str]
) -> None:
    """The variant's kernels: named by the variant (`VARIANT:ENTRY` when it has several), their
    lines mapped back to the template files."""

    def read(rel: str) -> str:
        if rel in texts:
            return texts[rel]
        try:
            text = _read_text(corpus.root / rel)
            corpus.watched.append(corpus.root / rel)
            return text
        except CorpusError as exc:
            raise CorpusError(f"{rel}: {exc}") from None

    try:
        expanded = expand_variant(v, read)
    except CorpusError as exc:
        corpus.problems[v.name] = str(exc)
        return
    injected = [
        _preamble_piece(pre, texts[pre])
        for pre in preamble_files
        if pre != v.file and any(_glob_match(v.file, g) for g in globs)
    ]
    kernels = _split_file(v.file, expanded.text, injected)
    for k in kernels:
        k.name = v.name if len(kernels) == 1 else f"{v.name}:{k.name}"
        k.line = expanded.lines[min(k.line, len(expanded.lines)) - 1][1] if expanded.lines else 1
        k.pieces = tuple(
            mapped
            for p in k.pieces
            for mapped in (
                [Piece(*run) for run in mapped_runs(expanded, p.first_line, p.text)]
                if p not in injected
                else [p]
            )
        )
    corpus.kernels.extend(kernels)


def _glob_match(rel: str, pattern: str) -> bool:
    name = rel.rsplit("/", 1)[-1]
    return fnmatch.fnmatchcase(rel, pattern) or fnmatch.fnmatchcase(name, pattern)


def _read_config(root: Path) -> tuple[list[str], list[str]]:
    cfg_path = root / "wgslconfig.toml"
    if not os.path.lexists(cfg_path):
        return [], []
    cfg = read_toml(cfg_path, CorpusError, MAX_CONFIG_BYTES)
    pre = cfg.get("preamble", {})
    if not isinstance(pre, dict):
        raise CorpusError(f"{cfg_path}: [preamble] must be a table")
    files = pre.get("files", [])
    globs = pre.get("auto_inject_into", ["*.wgsl"] if files else [])
    for key, value in (("files", files), ("auto_inject_into", globs)):
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise CorpusError(f"{cfg_path}: [preamble] {key} must be a list of strings")
    for f in files:
        resolved = (root / f).resolve()
        if not resolved.is_relative_to(root.resolve()):
            raise CorpusError(f"{cfg_path}: preamble {f!r} is outside the corpus folder")
    return [Path(f).as_posix() for f in files], list(globs)


def _read_text(path: Path) -> str:
    """A WGSL file's text; the CorpusError says why not, without the path (callers add it)."""
    prefix = f"{path}: "
    return read_text(path, lambda msg: CorpusError(msg.removeprefix(prefix)), MAX_FILE_BYTES)


def _ensure_newline(text: str) -> str:
    return text if text.endswith("\n") or not text else text + "\n"


def _blank_directives(text: str, found: tuple[s.Directive, ...]) -> str:
    """`text` with each directive in `found` (spans in `text`) replaced, lines kept: a directive
    alone on its line becomes a comment saying it was hoisted, one sharing its line, spaces."""
    if not found:
        return text
    out, last = [], 0
    for d in found:
        start, end = d.span
        own = _own_line(text, d.span)
        if own is not None and own[0] >= last:
            line_start, line_end = own
            what = "enable" if d.kind == "enable" else "directive"
            out.append(text[last:line_start])
            out.append(f"// ({what} hoisted by host)")
            last = line_end
        else:
            out.append(text[last:start])
            out.append("".join(c if c == "\n" else " " for c in text[start:end]))
            last = end
    out.append(text[last:])
    return "".join(out)


def _own_line(text: str, span: s.Span) -> tuple[int, int] | None:
    """The line's [start, end) when the directive at `span` is alone on its line (a trailing
    comment allowed), else None."""
    start, end = span
    line_start = text.rfind("\n", 0, start) + 1
    line_end = _line_end(text, end)
    after = text[end:line_end].strip()
    if text[line_start:start].strip() or (after and not after.startswith("//")):
        return None
    return line_start, line_end


def _line_end(text: str, at: int) -> int:
    """Offset of the line break (CR, LF or CRLF) ending the line `at` is on, or of the end."""
    lf = text.find("\n", at)
    lf = len(text) if lf < 0 else lf
    cr = text.find("\r", at, lf)
    return lf if cr < 0 else cr


def marker_name(line: str) -> str | None:
    """The NAME of a `// --- KERNEL: NAME ---` line (any line end, spaces and tabs around the
    parts), else None."""
    body = line.rstrip("\r\n").strip(" \t")
    if not body.startswith("//"):
        return None
    body = body[2:].strip(" \t")
    if not (body.startswith("---") and body.endswith("---") and len(body) >= 6):
        return None
    body = body[3:-3].strip(" \t")
    if not body.startswith("KERNEL:"):
        return None
    name = body[7:].strip(" \t")
    return name if _MARKER_NAME.fullmatch(name) else None


def _markers(lines: list[str]) -> list[tuple[int, str]]:
    """(line index, kernel name) of each `// --- KERNEL: name ---` line not inside a block comment."""
    commented = _starts_in_block_comment(lines)
    return [
        (i, name)
        for i, ln in enumerate(lines)
        if not commented[i] and "KERNEL:" in ln and (name := marker_name(ln)) is not None
    ]


def _preamble_piece(rel: str, text: str) -> Piece:
    """What a preamble file gives the files it is injected into: the text before its first marker
    (all of it when it has none)."""
    lines = _ensure_newline(text).splitlines(keepends=True)
    markers = _markers(lines)
    return Piece(rel, 1, "".join(lines[: markers[0][0]] if markers else lines))


def _split_file(rel: str, text: str, injected: list[Piece]) -> list[Kernel]:
    text = _ensure_newline(text)
    lines = text.splitlines(keepends=True)
    markers = _markers(lines)
    if not markers:
        return _plain_file_kernels(rel, text, injected)
    local = Piece(rel, 1, "".join(lines[: markers[0][0]]))
    kernels = []
    first_at: dict[str, int] = {}
    for idx, (start, name) in enumerate(markers):
        end = markers[idx + 1][0] if idx + 1 < len(markers) else len(lines)
        body = Piece(rel, start + 1, "".join(lines[start:end]))
        pieces = (*injected, *([local] if local.text else []), body)
        kernel = Kernel(name=name, file=rel, line=start + 1, pieces=pieces)
        if name in first_at:
            kernel.problem = f"duplicate kernel section '{name}' (first at line {first_at[name]})"
        else:
            first_at[name] = start + 1
            _pick_entry(kernel, preferred=name)
        kernels.append(kernel)
    return kernels


def _starts_in_block_comment(lines: list[str]) -> list[bool]:
    """For each line, whether it begins inside a (nested) block comment: a marker line there is
    commented out, e.g. a whole kernel section disabled with `/* ... */`."""
    text = "".join(lines)
    if "/*" not in text:
        return [False] * len(lines)  # no block comment (most files): no walk over every line
    starts_inside: set[int] = set()  # 0-based numbers of the lines that start inside a comment
    depth, line, in_line_comment = 0, 0, False
    for m in _COMMENT_EVENTS.finditer(text):
        event = m.group()
        if event == "\n":
            line += 1
            in_line_comment = False
            if depth:
                starts_inside.add(line)
        elif in_line_comment:
            continue
        elif event == "//" and depth == 0:
            in_line_comment = True
        elif event == "/*":
            depth += 1
        elif event == "*/" and depth:
            depth -= 1
    return [i in starts_inside for i in range(len(lines))]


def _plain_file_kernels(rel: str, text: str, injected: list[Piece]) -> list[Kernel]:
    pieces = (*injected, Piece(rel, 1, text))
    probe = Kernel(name=Path(rel).stem, file=rel, line=1, pieces=pieces)
    mod = probe.module
    if mod is None:
        probe.problem = _reflection_problem(probe)
        return [probe]
    if not mod.entry_points and not mod.entry_problems:
        probe.problem = "no @compute entry point"
        return [probe]
    own = set(_entry_names(text, rel))
    found = [(ep.name, ep.line, "") for ep in mod.entry_points.values()]
    found += [(name, line, why) for name, (line, why) in mod.entry_problems.items()]
    kernels = []
    offset = sum(p.text.count("\n") for p in injected)
    for name, line, why in sorted(found, key=lambda f: f[1]):
        if own and name not in own:
            continue  # an entry point that lives in a preamble is not this file's kernel
        kernel = Kernel(name=name, file=rel, line=line - offset, pieces=pieces)
        kernel.without = tuple(mod.entry_problems)
        if why:
            kernel.problem = _located(kernel, line, why)
        else:
            kernel.entry = name
        kernels.append(kernel)
    return kernels


def _blank_functions(text: str, names: tuple[str, ...]) -> str:
    """`text` with the named functions (attributes, header and body) turned into spaces, line
    breaks kept so every other line keeps its number."""
    try:
        tree = parse(text)
    except ReflectionError:
        return text
    spans = [f.span for f in tree.functions() if f.name in names]
    for a, b in reversed(spans):
        text = text[:a] + "".join(c if c == "\n" else " " for c in text[a:b]) + text[b:]
    return text


def _located(kernel: Kernel, line: int, why: str) -> str:
    """`why` prefixed with the user's file:line of module line `line`."""
    file, at = kernel.locate(line)
    return f"{file}:{at}: {why}"


def _entry_names(text: str, rel: str) -> list[str]:
    """Names of the `@compute` functions written in this text itself (not in its preambles)."""
    try:
        tree = parse(text, rel)
    except ReflectionError:
        return []
    return [f.name for f in tree.functions() if f.attr("compute") is not None]


def _own_entry_names(kernel: Kernel, mod: ModuleInfo) -> list[str]:
    """The `@compute` functions written in the kernel's last piece (its own text), in source
    order: those that start after the pieces before it."""
    before = len(
        "".join(
            _blank_directives(p.text, d)
            for p, d in zip(kernel.pieces[:-1], kernel._piece_directives, strict=False)
        )
    )
    return [
        name
        for name, (start, _) in mod.functions.items()
        if start >= before and (name in mod.entry_points or name in mod.entry_problems)
    ]


def _pick_entry(kernel: Kernel, preferred: str) -> None:
    mod = kernel.module
    if mod is None:
        kernel.problem = _reflection_problem(kernel)
        return
    bad = mod.entry_problems
    own = [n for n in _own_entry_names(kernel, mod) if n in mod.entry_points or n in bad]
    if preferred in bad or (preferred not in mod.entry_points and len(own) == 1 and own[0] in bad):
        line, why = bad[preferred if preferred in bad else own[0]]
        kernel.problem = _located(kernel, line, why)
    elif preferred in mod.entry_points:
        kernel.entry = preferred
    elif len(own) == 1:
        kernel.entry = own[0]
    elif not own:
        kernel.problem = f"kernel section '{preferred}' has no @compute entry point"
    else:
        kernel.problem = (
            f"kernel section '{preferred}' has {len(own)} @compute entry points "
            f"({', '.join(own)}) and none is named '{preferred}'"
        )


def _reflection_problem(kernel: Kernel) -> str:
    """The reflection error with its line mapped from module lines to the user's file."""
    try:
        reflect(kernel.text, kernel.file)
    except ReflectionError as exc:
        msg = str(exc)
        m = re.match(r"^[^:]*:(\d+): (.*)$", msg, re.S)
        if m:
            file, line = kernel.locate(int(m.group(1)))
            return f"{file}:{line}: {m.group(2)}"
        return msg
    return "unknown reflection problem"
