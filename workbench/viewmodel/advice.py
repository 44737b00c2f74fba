"""How the terminal UI words an error's remedy (`workbench.errors.Advice`): with its keys and
fields, where the command line names its flags (`workbench/cli/advice.py`)."""

from __future__ import annotations

from workbench.errors import Advice, WorkbenchError
from workbench.viewmodel.keys import key

ADVICE: dict[Advice, str] = {
    Advice.OTHER_ADAPTER: f"press {key('adapter')} to choose another adapter",
    Advice.RUN_ADHOC: "it runs ad hoc here: give it a spec that matches its bindings to check it",
    Advice.CHANGE_DIMS: "make the dims in the form smaller",
    Advice.SET_UNIFORM: "describe the uniform's fields in the corpus's workbench.toml",
    Advice.OVERWRITE: "save it under another name, or answer y to overwrite it",
    Advice.FORCE_TOLERANCE: "use a tolerance at or under the ceiling",
    Advice.GIVE_OVERRIDE: "give it a value in the corpus's workbench.toml (overrides = { NAME = V })",
    Advice.SET_GRID: "describe the kernel's grid in the corpus's workbench.toml",
    Advice.LONGER_TIMEOUT: "make the dims smaller, or give it longer from the command line",
}


def ui_message(exc: WorkbenchError) -> str:
    """The error's message, with its remedy in the UI's terms."""
    text = str(exc)
    if exc.advice is None:
        return text
    return f"{text}; {ADVICE[exc.advice]}"
