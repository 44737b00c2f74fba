"""Every remedy the engine can attach to an error (`Advice`) is worded by the command line (with
its flags) and by the terminal UI (with its keys), and the engine's own text names neither."""

from __future__ import annotations

import pytest

from workbench.cli.advice import ADVICE as CLI
from workbench.cli.advice import cli_message
from workbench.errors import Advice, UserError
from workbench.viewmodel.advice import ADVICE as UI
from workbench.viewmodel.advice import ui_message


@pytest.mark.parametrize("advice", list(Advice))
def test_each_advice_is_worded_by_both_front_ends(advice: Advice) -> None:
    exc = UserError("something is wrong", advice=advice)
    assert cli_message(exc) == f"something is wrong; {CLI[advice]}"
    assert ui_message(exc) == f"something is wrong; {UI[advice]}"
    assert "--" in CLI[advice] or "workbench " in CLI[advice]
    assert "--" not in UI[advice]


def test_an_error_without_advice_is_its_message() -> None:
    exc = UserError("plain")
    assert cli_message(exc) == ui_message(exc) == "plain"
