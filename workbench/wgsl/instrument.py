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
from workbench.wgsl import syntax as s
from workbench.wgsl.corpus import Kernel
from workbench.wgsl.lexer import tokenize
from workbench.wgsl.parser import parse
from workbench.wgsl.probes import (
    LOG_NAME,
    blank_spans,
    find_probes,
    recorder_definitions,
    recorder_prologue,
)

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
    return entry_params_of(parse(text, where), entry, where)


def entry_params_of(tree: s.Module, entry: str, where: str = "<wgsl>") -> EntryParams:
    fn = next((f for f in tree.functions() if f.name == entry), None)
    if fn is None:
        raise ReflectionError(f"{where}: entry point '{entry}' not found")
    structs = {d.name: d for d in tree.decls if isinstance(d, s.Struct)}
    found: dict[str, str] = {}
    for p in fn.params:
        builtin = builtin_of(p.attrs)
        if builtin:
            found[builtin] = p.name
        elif isinstance(p.type, s.Ident) and p.type.name in structs:
            for m in structs[p.type.name].members:
                member_builtin = builtin_of(m.attrs)
                if member_builtin:
                    found[member_builtin] = f"{p.name}.{m.name}"
    close = fn.params_span[1] - 1
    after_last = tree.text[fn.params[-1].span[1] : close] if fn.params else ""
    return EntryParams(
        found.get("workgroup_id"),
        found.get("num_workgroups"),
        found.get("local_invocation_id"),
        close,
        bool(fn.params) and "," not in _code(after_last),
        fn.body.span[0],
    )


def _code(text: str) -> str:
    """`text` (between a parameter and `)`) without its comments."""
    try:
        return "".join(t.text for t in tokenize(text))
    except ReflectionError:
        return text


def builtin_of(attrs: tuple[s.Attribute, ...]) -> str:
    for a in attrs:
        if a.name == "builtin" and a.args and isinstance(a.args[0], s.Ident):
            return a.args[0].name
    return ""


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
    tree = parse(text, kernel.file)
    ep = entry_params_of(tree, kernel.entry, kernel.file)
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
        use = find_probes(tree)
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
    return find_probes(parse(kernel.text, kernel.file)).calls


def _guard_definitions(group: int, binding: int) -> str:
    return f"""// workbench: run only the workgroups selected by {GUARD_NAME} (lo, hi, mask, want)
@group({group}) @binding({binding}) var<uniform> {GUARD_NAME}: vec4<u32>;
fn wb_selected(wg: vec3<u32>, nwg: vec3<u32>) -> bool {{
    let id = wg.x + nwg.x * (wg.y + nwg.y * wg.z);
    return id >= {GUARD_NAME}.x && id < {GUARD_NAME}.y && (id & {GUARD_NAME}.z) == {GUARD_NAME}.w;
}}
"""
