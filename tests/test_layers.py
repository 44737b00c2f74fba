"""The import contract: every module of `workbench` imports only from its own layer or below, the
terminal UI never touches wgpu or `workbench.gpu`, and only the session opens the GPU.

Layers, bottom up (docs: README's layout section, /work/shared/DESIGN.md):
leaves (errors, units, JSON) < wgsl < gpu < specs < closeness < case planning < session
< checks / fixtures / pipelines < cli / UI.
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
    "workbench.screens": 8,
    "workbench.widgets": 8,
    "workbench.keys_in_order": 8,
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
