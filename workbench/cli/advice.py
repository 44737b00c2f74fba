"""How the command line words an error's remedy (`workbench.errors.Advice`) and the error itself."""

from __future__ import annotations

from workbench.errors import Advice, WorkbenchError

ADVICE: dict[Advice, str] = {
    Advice.OTHER_ADAPTER: (
        "choose another adapter with --adapter (`workbench adapters` lists each adapter and its "
        "features)"
    ),
    Advice.RUN_ADHOC: "run it ad hoc with --adhoc",
    Advice.CHANGE_DIMS: "change the dims with --dim",
    Advice.SET_UNIFORM: "set a uniform's fields with --set UNIFORM.FIELD=V",
    Advice.OVERWRITE: "overwrite it with --force",
    Advice.FORCE_TOLERANCE: "give --force-tolerance if you mean it",
    Advice.GIVE_OVERRIDE: "give it with --override NAME=V",
    Advice.SET_GRID: "set the grid with --grid X,Y,Z",
    Advice.LONGER_TIMEOUT: "give it longer with --timeout S",
}


def cli_message(exc: WorkbenchError) -> str:
    """The error's one message, with its remedy in command-line terms."""
    text = str(exc)
    if exc.advice is None:
        return text
    return f"{text}; {ADVICE[exc.advice]}"
