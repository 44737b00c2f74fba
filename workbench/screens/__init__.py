"""Screens of the terminal UI, one per module.

main.py          MainScreen: browser + kernel view; owns the per-kernel loop and its workers
fixtures.py      FixturesScreen: list, replay and open recorded fixtures
check_all.py     CheckAllScreen: every check of every spec'd kernel, one row each
bench.py         BenchScreen: sweep an override or A/B two implementations, on the roofline
help.py          HelpScreen (modal): keys (from the key registry), marks, recipes
adapters.py      AdapterScreen (modal): choose the adapter to run on
save_fixture.py  SaveFixtureScreen (modal): a fixture's name and note
load_npy.py      LoadNpyScreen (modal): fill an input binding from a .npy file
confirm.py       ConfirmScreen (modal): a yes/no question
"""
