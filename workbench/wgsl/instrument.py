"""Instrumented copies of a kernel's module: a workgroup guard, probe recording, or both.

The user's file is never changed. The copy edits the kernel's text without moving a line: extra
builtin parameters go at the end of the entry point's parameter list, statements go right after
its opening brace, and replaced probe definitions are blanked; the new declarations are appended
after the user's last line, where the source map names `<workbench>`, so compile errors still name
the user's file and line.

The guard returns at the top of the entry point unless the workgroup's linear id
`wg.x + nwg.x * (wg.y + nwg.y * wg.z)` lies in `[lo, hi)` and `(id & mask) == want`, the four
values of the vec4<u32> uniform `GUARD_NAME`. It depends only on `workgroup_id`, `num_workgroups`
and a uniform, so control flow stays uniform and kernels with `workgroupBarrier` still compile.
New bindings take the entry point's last group, after the highest binding any declaration of the
module uses in it.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

from workbench.errors import ReflectionError
from workbench.wgsl.corpus import Kernel
from workbench.wgsl.probes import (
    LOG_NAME,
    blank_spans,
    find_probes,
    recorder_definitions,
    recorder_prologue,
)
from workbench.wgsl.scan import Token, tokenize

GUARD_NAME = "wb_range"
_VEC3 = "vec3<u32>"


@dataclass(frozen=True)
class EntryParams:
    """How the entry point's body can name three builtins (None: the parameter is absent)."""

    workgroup_id: str | None
    num_workgroups: str | None
    local_invocation_id: str | None
    close_paren: int  # offset of the `)` closing the parameter list
    needs_comma: bool  # whether a new parameter needs a comma before it
    body_open: int  # offset of the `{` opening the body


def entry_params(text: str, entry: str, where: str = "<wgsl>") -> EntryParams:
    """Find the entry point's builtins, direct or as members of a struct parameter."""
    toks = tokenize(text, where)
    start = next(
        (
            i
            for i in range(len(toks) - 2)
            if toks[i].text == "fn" and toks[i + 1].text == entry and toks[i + 2].text == "("
        ),
        None,
    )
    if start is None:
        raise ReflectionError(f"{where}: entry point '{entry}' not found")
    close = _matching(toks, start + 2)
    found: dict[str, str] = {}
    for param in _split_top(toks[start + 3 : close]):
        builtin, name, type_name = _param_parts(param)
        if builtin:
            found[builtin] = name
        elif type_name:
            for member_builtin, member in _struct_builtins(toks, type_name):
                found[member_builtin] = f"{name}.{member}"
    body = close
    while body < len(toks) and toks[body].text != "{":
        body += 1
    if body == len(toks):
        raise ReflectionError(f"{where}: entry point '{entry}' has no body")
    inside = toks[start + 3 : close]
    return EntryParams(
        found.get("workgroup_id"),
        found.get("num_workgroups"),
        found.get("local_invocation_id"),
        toks[close].offset,
        bool(inside) and inside[-1].text != ",",
        toks[body].offset,
    )


def _matching(toks: list[Token], open_at: int) -> int:
    pairs = {"(": ")", "{": "}", "[": "]"}
    close = pairs[toks[open_at].text]
    depth = 0
    for j in range(open_at, len(toks)):
        if toks[j].text == toks[open_at].text:
            depth += 1
        elif toks[j].text == close:
            depth -= 1
            if depth == 0:
                return j
    raise ReflectionError(f"unbalanced '{toks[open_at].text}'")


def _split_top(toks: list[Token]) -> list[list[Token]]:
    out: list[list[Token]] = [[]]
    depth = 0
    for t in toks:
        if t.text in "([<":
            depth += 1
        elif t.text in ")]>":
            depth -= 1
        if t.text == "," and depth == 0:
            out.append([])
        else:
            out[-1].append(t)
    return [p for p in out if p]


def _param_parts(param: list[Token]) -> tuple[str, str, str]:
    """(builtin or "", name, type's first word) of one parameter or struct member."""
    builtin, i = "", 0
    while i < len(param) and param[i].text == "@":
        if i + 3 < len(param) and param[i + 1].text == "builtin" and param[i + 2].text == "(":
            builtin = param[i + 3].text
        i += 2
        if i < len(param) and param[i].text == "(":
            depth = 0
            while i < len(param):
                depth += {"(": 1, ")": -1}.get(param[i].text, 0)
                i += 1
                if depth == 0:
                    break
    name = param[i].text if i < len(param) else ""
    type_name = param[i + 2].text if i + 2 < len(param) else ""
    return builtin, name, type_name


def _struct_builtins(toks: list[Token], type_name: str) -> list[tuple[str, str]]:
    for i in range(len(toks) - 2):
        if toks[i].text == "struct" and toks[i + 1].text == type_name and toks[i + 2].text == "{":
            close = _matching(toks, i + 2)
            members = _split_top(toks[i + 3 : close])
            return [(b, n) for b, n, _ in (_param_parts(m) for m in members) if b]
    return []


def free_binding(kernel: Kernel) -> tuple[int, int]:
    """(group, binding) of the first binding slot after everything the module declares in the
    entry point's last group (group 0 for an entry point without bindings)."""
    ep = kernel.entry_point
    module = kernel.module
    group = max((b.group for b in ep.bindings), default=0) if ep else 0
    used = [b.binding for b in module.bindings.values() if b.group == group] if module else []
    return group, max(used, default=-1) + 1


@dataclass
class InstrumentedKernel(Kernel):
    """A kernel whose text carries the edits and the appended declarations of an instrumentation.

    `appended` is what follows the user's last line; `guard` and `probes` say what was added and
    `bindings_added` names the new bindings with their (group, binding).
    """

    edited: str = ""
    appended: str = ""
    guard: bool = False
    probes: tuple[str, ...] = ()
    bindings_added: tuple[tuple[str, int, int], ...] = ()

    @cached_property
    def text(self) -> str:
        return self.edited + self.appended


def instrument(kernel: Kernel, guard: bool = False, probes: bool = False) -> InstrumentedKernel:
    """An instrumented copy of `kernel`: the workgroup guard and/or probe recording.

    `probes` needs a kernel that calls at least one probe function (callers check `probe_calls`).
    """
    text = kernel.text
    if not text.endswith("\n"):
        text += "\n"
    ep = entry_params(text, kernel.entry, kernel.file)
    group, binding = free_binding(kernel)
    extra_params: list[str] = []

    def builtin(name: str, present: str | None, fresh: str) -> str:
        if present:
            return present
        extra_params.append(f"@builtin({name}) {fresh}: {_VEC3}")
        return fresh

    wg = builtin("workgroup_id", ep.workgroup_id, "wb_wg")
    nwg = builtin("num_workgroups", ep.num_workgroups, "wb_nwg")
    statements, appended, added = "", [], []
    if guard:
        statements += f" if (!wb_selected({wg}, {nwg})) {{ return; }}"
        appended.append(_guard_definitions(group, binding))
        added.append((GUARD_NAME, group, binding))
        binding += 1
    used: tuple[str, ...] = ()
    if probes:
        lid = builtin("local_invocation_id", ep.local_invocation_id, "wb_lid")
        statements += recorder_prologue(wg, nwg, lid)
        use = find_probes(tokenize(text, kernel.file))
        used = use.calls
        appended.append(recorder_definitions(group, binding))
        added.append((LOG_NAME, group, binding))
        # Blanking keeps every offset, so the entry point's offsets found above stay valid.
        text = blank_spans(text, use.definitions)
    params = ""
    if extra_params:
        params = (", " if ep.needs_comma else "") + ", ".join(extra_params)
    edited = (
        text[: ep.close_paren]
        + params
        + text[ep.close_paren : ep.body_open + 1]
        + statements
        + text[ep.body_open + 1 :]
    )
    return InstrumentedKernel(
        name=kernel.name,
        file=kernel.file,
        line=kernel.line,
        pieces=kernel.pieces,
        entry=kernel.entry,
        problem=kernel.problem,
        edited=edited,
        appended="".join(appended),
        guard=guard,
        probes=used,
        bindings_added=tuple(added),
    )


def probe_calls(kernel: Kernel) -> tuple[str, ...]:
    """The probe functions `kernel` calls (empty when it calls none)."""
    return find_probes(tokenize(kernel.text, kernel.file)).calls


def _guard_definitions(group: int, binding: int) -> str:
    return f"""// workbench: run only the workgroups selected by {GUARD_NAME} (lo, hi, mask, want)
@group({group}) @binding({binding}) var<uniform> {GUARD_NAME}: vec4<u32>;
fn wb_selected(wg: vec3<u32>, nwg: vec3<u32>) -> bool {{
    let id = wg.x + nwg.x * (wg.y + nwg.y * wg.z);
    return id >= {GUARD_NAME}.x && id < {GUARD_NAME}.y && (id & {GUARD_NAME}.z) == {GUARD_NAME}.w;
}}
"""
