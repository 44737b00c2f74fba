"""Shared fixtures: one real-adapter session per test run (lavapipe on CI machines, never a mock)."""

from __future__ import annotations

import os

import pytest

os.environ.setdefault("XDG_RUNTIME_DIR", "/tmp/workbench-xdg-tests")
os.makedirs(os.environ["XDG_RUNTIME_DIR"], mode=0o700, exist_ok=True)

from workbench.session import Session  # noqa: E402


@pytest.fixture(scope="session")
def session() -> Session:
    """The default adapter with the shipped corpus."""
    return Session.open()
