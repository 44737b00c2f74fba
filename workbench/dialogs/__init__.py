"""Dialogs of the terminal UI (modal screens that ask one thing and return the answer), one per
module; any screen may open one, and none opens a screen.

confirm.py       ConfirmScreen: a yes/no question
adapters.py      AdapterScreen: choose the adapter to run on
save_fixture.py  SaveFixtureScreen: a fixture's name and note
save_path.py     SavePathScreen: where to save arrays or a diff, and which
load_npy.py      LoadNpyScreen: fill an input binding from a .npy file
open_corpus.py   OpenCorpusScreen: another folder (or .wgsl file) to open as the corpus
runs.py          RunsScreen: pick the baseline among this session's runs
ask_line.py      AskLineScreen: a one-line answer, read before it closes (a path, dims, an
                 element to jump to: jump_to_element)
"""
