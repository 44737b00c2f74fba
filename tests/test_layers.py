"""The import contract: every module of `workbench` imports only from its own layer or below, the
terminal UI never touches wgpu or `workbench.gpu`, and only the session opens the GPU.

Layers, bottom up (docs: README's layout section, /work/shared/DESIGN.md):
leaves (errors, units, JSON) < wgsl < gpu < specs < closeness < case planning < session
< checks / fixtures / pipelines < cli / UI.
Within the UI, screens do not import each other and the key registry imports no workbench
module; nowhere do modules import each other round a cycle at import time.
The imports are read with `ast` from the source (every `import` and `from … import`, at module
level or inside functions), so a lazy import inside a function counts like any other.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "workbench"

# Module prefix -> layer rank. The longest matching prefix wins; a module matching none fails the
# test, so every new module is placed on purpose.
LAYERS: dict[str, int] = {
    "workbench.errors": 0,
    "workbench.units": 0,
    "workbench.interrupts": 0,
    "workbench.jsonable": 0,
    "workbench.wgsl": 1,
    "workbench.gpu": 2,
    "workbench.specs": 3,
    "workbench.closeness": 4,
    "workbench.verdicts": 4,
    "workbench.written": 0,
    "workbench.recipes": 0,
    "workbench.userfiles": 0,
    "workbench.safewrite": 0,
    "workbench.config": 0,
    "workbench.planning": 5,
    "workbench.session": 6,
    "workbench.checks": 7,
    "workbench.fixtures": 7,
    "workbench.pipelines": 7,
    "workbench.stepping": 7,
    "workbench.workgroups": 7,
    "workbench.bench": 7,
    "workbench.cli": 8,
    "workbench.app": 8,
    "workbench.commands": 8,
    "workbench.dialogs": 8,
    "workbench.jobs": 8,
    "workbench.screens": 8,
    "workbench.widgets": 8,
    "workbench.keys_in_order": 8,
    "workbench.gc_policy": 8,
    "workbench.viewmodel": 8,
    "workbench.messages": 8,
    "workbench.__main__": 8,
    "workbench.pytest_plugin": 8,
}
LAYER_NAMES = {
    0: "leaves",
    1: "wgsl",
    2: "gpu",
    3: "specs",
    4: "closeness",
    5: "case planning",
    6: "session",
    7: "checks/fixtures/pipelines",
    8: "cli/UI",
}
# The terminal UI: renders what the session returns, never touches the GPU itself.
UI = (
    "workbench.app",
    "workbench.commands",
    "workbench.dialogs",
    "workbench.jobs",
    "workbench.screens",
    "workbench.widgets",
    "workbench.keys_in_order",
    "workbench.viewmodel",
    "workbench.messages",
)
GPU = ("wgpu", "workbench.gpu")
# The device itself (wgpu, GpuContext): only the gpu layer and the session reach it.
DOOR = ("wgpu", "workbench.gpu.device")
DOOR_KEEPERS = ("workbench.gpu", "workbench.session")


@dataclass(frozen=True)
class Import:
    module: str  # the importing module
    target: str  # the module imported (for `from a import b`: `a.b` when that is a module)
    line: int


def _under(name: str, prefixes: tuple[str, ...]) -> bool:
    return any(name == p or name.startswith(p + ".") for p in prefixes)


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def _is_module(name: str) -> bool:
    rel = Path(*name.split("."))
    return (PACKAGE.parent / rel).with_suffix(".py").exists() or (
        PACKAGE.parent / rel / "__init__.py"
    ).exists()


def imports_of(module: str, source: str, is_package: bool = False) -> list[Import]:
    """Every import in `source` (the text of `module`), resolved to absolute module names."""
    package = module if is_package else module.rpartition(".")[0]
    out = []
    for node in ast.walk(ast.parse(source, module)):
        if isinstance(node, ast.Import):
            out += [Import(module, a.name, node.lineno) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                base = ".".join([*anchor, base] if base else anchor)
            for a in node.names:
                full = f"{base}.{a.name}"
                out.append(Import(module, full if _is_module(full) else base, node.lineno))
    return out


def layer_of(name: str) -> int | None:
    best = max((p for p in LAYERS if _under(name, (p,))), key=len, default=None)
    return LAYERS[best] if best is not None else None


def violations(modules: list[tuple[str, str, bool]]) -> list[str]:
    """One line per broken rule, `module:line imports target (why)`, for (name, source, is
    package) triples."""
    problems = []
    for module, source, is_package in modules:
        if module == "workbench":
            continue
        own = layer_of(module)
        if own is None:
            problems.append(f"{module}: not in any layer; add it to LAYERS in tests/test_layers.py")
            continue
        for imp in imports_of(module, source, is_package):
            where = f"{module}:{imp.line} imports {imp.target}"
            if _under(module, UI) and _under(imp.target, GPU):
                problems.append(f"{where} (the UI reaches the GPU only through the session)")
            elif _under(imp.target, DOOR) and not _under(module, DOOR_KEEPERS):
                problems.append(f"{where} (only the session opens the GPU)")
            if not imp.target.startswith("workbench.") or imp.target == "workbench":
                continue
            theirs = layer_of(imp.target)
            if theirs is not None and theirs > own:
                problems.append(
                    f"{where} ({LAYER_NAMES[own]} may not import {LAYER_NAMES[theirs]}, "
                    "a layer above it)"
                )
    return problems


def package_modules() -> list[tuple[str, str, bool]]:
    return [
        (_module_name(p), p.read_text(encoding="utf-8"), p.name == "__init__.py")
        for p in sorted(PACKAGE.rglob("*.py"))
    ]


def test_every_module_imports_only_its_layer_or_below() -> None:
    problems = violations(package_modules())
    assert not problems, "import contract broken:\n" + "\n".join(problems)


def test_the_contract_sees_lazy_relative_and_from_imports() -> None:
    """The checker itself: a UI module importing the GPU lazily inside a function, and an engine
    module importing the session through a relative import, are each reported."""
    ui = "def f():\n    from workbench.gpu import device\n    import wgpu\n"
    found = violations([("workbench.widgets.probe", ui, False)])
    assert found == [
        "workbench.widgets.probe:2 imports workbench.gpu.device "
        "(the UI reaches the GPU only through the session)",
        "workbench.widgets.probe:3 imports wgpu (the UI reaches the GPU only through the session)",
    ]
    found = violations([("workbench.specs.probe", "from ..session import Session\n", False)])
    assert found == [
        "workbench.specs.probe:1 imports workbench.session "
        "(specs may not import session, a layer above it)"
    ]
    found = violations([("workbench.checks.probe", "from workbench.gpu.device import X\n", False)])
    assert found == [
        "workbench.checks.probe:1 imports workbench.gpu.device (only the session opens the GPU)"
    ]
    assert violations([("workbench.newthing", "", False)]) == [
        "workbench.newthing: not in any layer; add it to LAYERS in tests/test_layers.py"
    ]


# -- within the UI ---------------------------------------------------------------------------------
SCREENS = "workbench.screens"
REGISTRY = "workbench.viewmodel.keys"


def _screen_of(name: str) -> str | None:
    """The screen a module belongs to (`workbench.screens.main` for main/…), None outside."""
    parts = name.split(".")
    return ".".join(parts[:3]) if _under(name, (SCREENS,)) and len(parts) > 2 else None


def ui_violations(modules: list[tuple[str, str, bool]]) -> list[str]:
    """Screens import no other screen (one asks the app for another with a message); the key
    registry imports no workbench module at all (the footer, help and keymap read it)."""
    problems = []
    for module, source, is_package in modules:
        for imp in imports_of(module, source, is_package):
            where = f"{module}:{imp.line} imports {imp.target}"
            mine, theirs = _screen_of(module), _screen_of(imp.target)
            if mine and theirs and mine != theirs:
                problems.append(f"{where} (screens do not import each other)")
            if module == REGISTRY and imp.target.startswith("workbench"):
                problems.append(f"{where} (the key registry imports no workbench module)")
    return problems


def test_screens_stay_apart_and_the_registry_stands_alone() -> None:
    problems = ui_violations(package_modules())
    assert not problems, "UI contract broken:\n" + "\n".join(problems)


def runtime_imports(module: str, source: str, is_package: bool) -> set[str]:
    """The modules importing `module` runs: module-level imports outside `if TYPE_CHECKING:`
    (an import inside a function runs later, and breaks no cycle), and for `from P import x`,
    P itself (whose namespace is read, whatever x is)."""
    found: set[str] = set()

    def visit(body: list[ast.stmt]) -> None:
        for node in body:
            if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
                visit(node.orelse)
            elif isinstance(node, ast.Import | ast.ImportFrom):
                found.update(i.target for i in imports_of(module, ast.unparse(node), is_package))
                if isinstance(node, ast.ImportFrom) and node.module and not node.level:
                    found.add(node.module)
            elif isinstance(node, ast.If | ast.Try | ast.With):
                visit(node.body)
                visit(getattr(node, "orelse", []))
                visit(getattr(node, "finalbody", []))
                for handler in getattr(node, "handlers", []):
                    visit(handler.body)

    visit(ast.parse(source, module).body)
    return found - {module}


def import_cycles(modules: list[tuple[str, str, bool]]) -> list[list[str]]:
    """Every set of modules that import each other at import time (Tarjan's strongly connected
    components of more than one module)."""
    names = {m for m, _, _ in modules}
    graph = {m: runtime_imports(m, s, p) & names for m, s, p in modules}
    order: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    cycles: list[list[str]] = []

    def connect(v: str) -> None:
        order[v] = low[v] = len(order)
        stack.append(v)
        for w in sorted(graph[v]):
            if w not in order:
                connect(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], order[w])
        if low[v] == order[v]:
            component = []
            while True:
                w = stack.pop()
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                cycles.append(sorted(component))

    for v in sorted(graph):
        if v not in order:
            connect(v)
    return cycles


def test_no_module_imports_itself_round_a_cycle() -> None:
    cycles = import_cycles(package_modules())
    assert not cycles, "runtime import cycles:\n" + "\n".join(" <-> ".join(c) for c in cycles)


def test_the_ui_rules_and_the_cycle_finder_see_what_they_must() -> None:
    """The checkers themselves: a screen importing another, the registry importing the session,
    a package and its module importing each other (not a lazy or TYPE_CHECKING import)."""
    found = ui_violations(
        [
            ("workbench.screens.bench", "from workbench.screens.main.base import X\n", False),
            ("workbench.screens.main.work", "from workbench.screens.main.base import X\n", False),
            ("workbench.viewmodel.keys", "from workbench.session import X\n", False),
        ]
    )
    assert found == [
        "workbench.screens.bench:1 imports workbench.screens.main.base "
        "(screens do not import each other)",
        "workbench.viewmodel.keys:1 imports workbench.session "
        "(the key registry imports no workbench module)",
    ]
    package = ("workbench.fake", "from workbench.fake.model import Pipeline\n", True)
    model = ("workbench.fake.model", "from workbench.fake import exprs\n", False)
    lazy = ("workbench.fake.model", "def f():\n    from workbench.fake import exprs\n", False)
    typed = (
        "workbench.fake.model",
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from workbench.fake import x\n",
        False,
    )
    assert import_cycles([package, model]) == [["workbench.fake", "workbench.fake.model"]]
    assert import_cycles([package, lazy]) == [] and import_cycles([package, typed]) == []
