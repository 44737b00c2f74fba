"""The terminal UI's model: what the screens hold and decide, with no Textual, Rich or wgpu in it.

`form` (the case form as typed, parsed into case arguments or one-line problems), `kernel_state`
(what the main screen remembers per kernel and the `View` its panes render), `cases` (a form into a
Case through the session), `slicing` (the Outputs tab's slice box), `status` (kernel keys and their
marks), `diff` (elements nearest to tolerance for the Diff tab) and `keys` (every key and command
once: the bindings, the help table and the command palette are built from it). Unit tests cover
these modules in milliseconds (tests/ui/test_viewmodel.py).
"""
