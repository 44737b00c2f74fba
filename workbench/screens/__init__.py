"""Screens of the terminal UI, one per module (a package for the main screen); screens do not
import each other: one asks the app for another with a message (`workbench.messages.Open…`).
Dialogs (modal questions) are in `workbench.dialogs`.

main/             MainScreen: browser + kernel view; one module per concern (selection, case form,
                  GPU work, baseline, takeaway)
fixtures.py       FixturesScreen: list, replay and open recorded fixtures
check.py          CheckScreen: every check of one kernel, shown as `workbench check` prints it
check_all.py      CheckAllScreen: every check of every spec'd kernel, one row each
bench.py          BenchScreen: sweep an override or A/B two implementations, on the roofline
steps.py          StepsScreen: step a pipeline one dispatch at a time
workgroup_steps.py  WorkgroupStepScreen: step one dispatch a few workgroups at a time
help.py           HelpScreen (modal): keys (from the key registry), marks, recipes
"""
