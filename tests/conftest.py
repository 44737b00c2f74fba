"""Shared fixtures: one real-adapter session per test run (lavapipe on CI machines, never a mock), and
a guard that no test lets raw library output (wgpu-native's log, Mesa's complaints) reach a terminal."""

from __future__ import annotations

import os
import re
import tempfile
from collections.abc import Iterator

import pytest

os.environ.setdefault("XDG_RUNTIME_DIR", "/tmp/workbench-xdg-tests")
os.makedirs(os.environ["XDG_RUNTIME_DIR"], mode=0o700, exist_ok=True)
# The user's own configuration and remembered state (theme, keymap, last kernel) must not reach
# the tests: point workbench at a folder of this run's own, empty unless a test writes there.
os.environ["WORKBENCH_CONFIG"] = os.path.join(
    tempfile.mkdtemp(prefix="workbench-config-"), "config.toml"
)
os.environ["XDG_STATE_HOME"] = tempfile.mkdtemp(prefix="workbench-state-")

# The adapters' measured limits (workbench.gpu.canaries) are cached per run, not in the user's cache.
os.environ["XDG_CACHE_HOME"] = tempfile.mkdtemp(prefix="workbench-cache-")
# Mesa's shader cache (lavapipe compiles each pipeline with LLVM: up to 20 s for an instrumented
# kernel) is shared by the workers of one run, so the same module is compiled once per run, not
# once per worker; the results are the same, only the compile is skipped.
_RUN = os.environ.get("PYTEST_XDIST_TESTRUNUID")
os.environ["MESA_SHADER_CACHE_DIR"] = (
    os.path.join(tempfile.gettempdir(), f"workbench-mesa-{_RUN}")
    if _RUN
    else os.path.join(os.environ["XDG_CACHE_HOME"], "mesa")
)

from hypothesis import settings  # noqa: E402

from workbench.gc_policy import tune_for_ui  # noqa: E402
from workbench.session import Session  # noqa: E402

# The suite is mostly the terminal UI's tests: its collector runs as the app's does, whether or not
# a test starts an app (the CLI's tests make as many objects, through the same engine).
tune_for_ui()

# `pytest -m fuzz` runs the fuzz tests (marked `fuzz`) with many more examples than the suite does.
settings.register_profile("fuzz", max_examples=5000)


def pytest_configure(config: pytest.Config) -> None:
    if "fuzz" in (config.option.markexpr or ""):
        settings.load_profile("fuzz")


# What wgpu-native and Mesa print when their output is not kept from the terminal.
RAW_LIBRARY_OUTPUT = re.compile(
    r"indirect-validation|wgpu_core|wgpu_hal|wgpu-native|XDG_RUNTIME_DIR is invalid"
    r"|not a conformant vulkan implementation"
)


def raw_library_lines(text: str) -> list[str]:
    """The lines of `text` that are a library's own output rather than the tool's."""
    return [ln for ln in text.splitlines() if RAW_LIBRARY_OUTPUT.search(ln)]


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo) -> Iterator[None]:
    """Fail a passing test whose captured stdout/stderr (what it did not read itself) holds raw
    library output."""
    report = yield
    if report.when == "call" and report.passed:
        leaked = [
            ln
            for _, key, text in item._report_sections
            if key in ("stdout", "stderr")
            for ln in raw_library_lines(text)
        ]
        if leaked:
            report.outcome = "failed"
            report.longrepr = "raw library output reached the terminal:\n" + "\n".join(leaked)
    return report


@pytest.fixture(scope="session")
def session() -> Session:
    """The default adapter with the shipped corpus."""
    return Session.open()
