"""Probe calls in WGSL text: `wb_probe(tag, value)` and its typed siblings, printf for kernels.

A kernel may call `wb_probe(tag: u32, value: f32)`, `wb_probe_u32`, `wb_probe_i32` and
`wb_probe_vec4`. Outside the workbench a user keeps the two lines of `NOOP_DEFINITIONS` in their own
preamble so their file still compiles elsewhere; the workbench blanks those definitions and writes
its own: no-ops for ordinary runs (`stub_definitions`), recorders for a probe run
(`recorder_definitions`). A module that calls none of them is never touched.

A record is `RECORD_WORDS` u32 words: workgroup id (x, y, z, 0), local id (x, y, z, 0), tag, kind,
order, 0, and the value's bits in up to four words. The log starts with a `HEADER_WORDS` header:
the atomic count of records attempted, the filter mode (`FILTER_ALL`, `FILTER_WORKGROUP`,
`FILTER_INVOCATION`), the linear workgroup id and the local id the filter keeps.
"""

from __future__ import annotations

from dataclasses import dataclass

from workbench.errors import ReflectionError
from workbench.wgsl import syntax as s
from workbench.wgsl.parser import parse

KINDS = ("f32", "u32", "i32", "vec4<f32>")  # a record's kind word indexes this
PROBE_FUNCTIONS = dict(
    zip(("wb_probe", "wb_probe_u32", "wb_probe_i32", "wb_probe_vec4"), KINDS, strict=True)
)
_NOOP = {name: f"fn {name}(tag: u32, value: {kind}) {{}}" for name, kind in PROBE_FUNCTIONS.items()}
NOOP_DEFINITIONS = f"{_NOOP['wb_probe']} {_NOOP['wb_probe_u32']}\n{_NOOP['wb_probe_i32']} {_NOOP['wb_probe_vec4']}\n"
LOG_NAME = "wb_probe_log"
HEADER_WORDS = 8
RECORD_WORDS = 16
FILTER_ALL, FILTER_WORKGROUP, FILTER_INVOCATION = 0, 1, 2


@dataclass(frozen=True)
class ProbeUse:
    """Where a module calls and defines probe functions."""

    calls: tuple[str, ...]  # names called, in first-call order
    defined: tuple[str, ...]  # names the module defines itself
    definitions: tuple[tuple[int, int], ...]  # character spans of `fn wb_probe... { ... }`


def find_probes(tree: s.Module) -> ProbeUse:
    calls: list[tuple[int, str]] = []
    defined, spans = [], []
    for d in tree.decls:
        if isinstance(d, s.Function) and d.name in PROBE_FUNCTIONS:
            defined.append(d.name)
            spans.append(d.span)
            continue
        calls += [
            (n.span[0], n.callee.name)
            for n in s.walk(d)
            if isinstance(n, s.Call) and n.callee.name in PROBE_FUNCTIONS
        ]
    order: dict[str, None] = {}
    for _, name in sorted(calls):
        order.setdefault(name, None)
    return ProbeUse(tuple(order), tuple(defined), tuple(spans))


def blank_spans(text: str, spans: tuple[tuple[int, int], ...]) -> str:
    """`text` with each span replaced by spaces, newlines kept, so every line keeps its number."""
    out, last = [], 0
    for start, end in spans:
        out.append(text[last:start])
        out.append("".join(c if c == "\n" else " " for c in text[start:end]))
        last = end
    out.append(text[last:])
    return "".join(out)


def stub_definitions(text: str, where: str = "<wgsl>") -> str:
    """No-op definitions of the probe functions `text` calls but does not define ("" when none):
    an ordinary run of a kernel that calls probes compiles and records nothing."""
    if "wb_probe" not in text:
        return ""
    try:
        use = find_probes(parse(text, where))
    except ReflectionError:
        return ""  # the compiler says what is wrong with the module
    missing = [name for name in use.calls if name not in use.defined]
    if not missing:
        return ""
    lines = [_NOOP[name] + "\n" for name in missing]
    return "// workbench: probes are no-ops outside a probe run\n" + "".join(lines)


def recorder_definitions(group: int, binding: int) -> str:
    """The log binding, the invocation's ids and the recording functions, at (group, binding)."""
    return f"""// workbench: probe recording (a probe run only)
struct WbProbeRecord {{ wg: vec4<u32>, lid: vec4<u32>, info: vec4<u32>, value: vec4<u32> }}
struct WbProbeLog {{ next: atomic<u32>, mode: u32, wg: u32, pad: u32, lid: vec4<u32>, records: array<WbProbeRecord> }}
@group({group}) @binding({binding}) var<storage, read_write> {LOG_NAME}: WbProbeLog;
var<private> wb_probe_wg: vec3<u32>;
var<private> wb_probe_nwg: vec3<u32>;
var<private> wb_probe_lid: vec3<u32>;
fn wb_probe_record(tag: u32, kind: u32, value: vec4<u32>) {{
    let mode = {LOG_NAME}.mode;
    let wg = wb_probe_wg.x + wb_probe_nwg.x * (wb_probe_wg.y + wb_probe_nwg.y * wb_probe_wg.z);
    if (mode >= {FILTER_WORKGROUP}u && wg != {LOG_NAME}.wg) {{ return; }}
    if (mode == {FILTER_INVOCATION}u && any(wb_probe_lid != {LOG_NAME}.lid.xyz)) {{ return; }}
    let slot = atomicAdd(&{LOG_NAME}.next, 1u);
    if (slot < arrayLength(&{LOG_NAME}.records)) {{
        {LOG_NAME}.records[slot] = WbProbeRecord(vec4<u32>(wb_probe_wg, 0u),
            vec4<u32>(wb_probe_lid, 0u), vec4<u32>(tag, kind, slot, 0u), value);
    }}
}}
fn wb_probe(tag: u32, value: f32) {{ wb_probe_record(tag, 0u, vec4<u32>(bitcast<u32>(value), 0u, 0u, 0u)); }}
fn wb_probe_u32(tag: u32, value: u32) {{ wb_probe_record(tag, 1u, vec4<u32>(value, 0u, 0u, 0u)); }}
fn wb_probe_i32(tag: u32, value: i32) {{ wb_probe_record(tag, 2u, vec4<u32>(bitcast<u32>(value), 0u, 0u, 0u)); }}
fn wb_probe_vec4(tag: u32, value: vec4<f32>) {{ wb_probe_record(tag, 3u, bitcast<vec4<u32>>(value)); }}
"""


def recorder_prologue(workgroup_id: str, num_workgroups: str, local_id: str) -> str:
    """Statements at the top of the entry point that keep the invocation's ids for the recorder."""
    return (
        f" wb_probe_wg = {workgroup_id}; wb_probe_nwg = {num_workgroups};"
        f" wb_probe_lid = {local_id};"
    )
