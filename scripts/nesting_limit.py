"""Measure how deep WGSL nesting may go before the native shader compiler kills the process.

    python scripts/nesting_limit.py [--adapter SEL] [--thread]

For each form of nesting (parentheses, array types, calls, indexing, one long operator chain) it
bisects the smallest depth that crashes `create_shader_module` + `create_compute_pipeline`, each try
in its own subprocess (a crash is a signal, not an exception), and prints it beside the bound the
parser enforces (workbench/wgsl/parser.py) and their ratio. `--thread` compiles in a worker thread,
as the terminal UI does. The figures depend on the stack size (`ulimit -s`) and the wgpu version.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys

from workbench.wgsl.parser import MAX_NESTING, MAX_OPERATORS

FORMS = {
    "parentheses": ("nesting", lambda n: "out[0] = " + "(" * n + "1.0" + ")" * n + ";"),
    "array types": (
        "nesting",
        lambda n: "var a: " + "array<" * n + "f32" + ", 1>" * n + "; out[0] = 1.0;",
    ),
    "calls": ("nesting", lambda n: "out[0] = " + "abs(" * n + "1.0" + ")" * n + ";"),
    "indexing": (
        "nesting",
        lambda n: "var a = array<f32, 1>(1.0); out[0] = " + "a[" * n + "0" + "]" * n + ";",
    ),
    "operators": ("operators", lambda n: "out[0] = 1.0" + " + 1.0" * n + ";"),
}

CHILD = """
import sys, threading
import wgpu
from workbench.gpu.adapters import choose_adapter, raw_adapter

src = sys.stdin.read()
def compile_it():
    dev = raw_adapter(choose_adapter(sys.argv[1] or None).index).request_device_sync()
    try:
        m = dev.create_shader_module(code=src)
        dev.create_compute_pipeline(layout="auto", compute={"module": m, "entry_point": "main"})
    except wgpu.GPUError:
        pass  # a refusal is fine: only a crash counts
if sys.argv[2] == "thread":
    t = threading.Thread(target=compile_it)
    t.start()
    t.join()
else:
    compile_it()
"""


def module(body: str) -> str:
    return (
        "@group(0) @binding(0) var<storage, read_write> out: array<f32>;\n"
        f"@compute @workgroup_size(1)\nfn main() {{ {body} }}\n"
    )


def crashes(body: str, adapter: str, thread: bool) -> bool:
    proc = subprocess.run(
        [sys.executable, "-c", CHILD, adapter, "thread" if thread else "main"],
        input=module(body),
        capture_output=True,
        text=True,
        timeout=600,
    )
    return proc.returncode != 0


def first_crash(make, adapter: str, thread: bool, lo: int = 100, hi: int = 200_000) -> int | None:
    """Smallest n that crashes, to within 1%; None when even `hi` compiles."""
    if not crashes(make(hi), adapter, thread):
        return None
    while hi - lo > max(2, lo // 100):
        mid = (lo + hi) // 2
        if crashes(make(mid), adapter, thread):
            hi = mid
        else:
            lo = mid
    return hi


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--adapter", default="", help="adapter selector (default: the default choice)")
    ap.add_argument("--thread", action="store_true", help="compile in a worker thread")
    args = ap.parse_args()
    os.environ.setdefault("XDG_RUNTIME_DIR", "/tmp/workbench-xdg-tests")
    print(
        f"stack limit {os.popen('ulimit -s').read().strip()} KiB, compiling in the "
        f"{'worker' if args.thread else 'main'} thread"
    )
    print(f"{'form':<12} {'crashes at':>11} {'bound':>7} {'ratio':>6}")
    for name, (kind, make) in FORMS.items():
        bound = MAX_NESTING if kind == "nesting" else MAX_OPERATORS
        at = first_crash(make, args.adapter, args.thread)
        shown = f"{at:,}" if at else "> 200,000"
        ratio = f"{at / bound:.1f}x" if at else "-"
        print(f"{name:<12} {shown:>11} {bound:>7,} {ratio:>6}", flush=True)


if __name__ == "__main__":
    main()
