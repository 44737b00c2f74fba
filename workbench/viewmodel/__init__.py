"""The terminal UI's model: what the screens hold and decide, with no Textual, Rich or wgpu in it.

form.py            the case form as typed, parsed into case arguments or one-line problems
cases.py           a form into a Case through the session (planning, limit refusals)
kernel_state.py    what the main screen remembers per kernel, and the `View` its panes render
jobs.py            every piece of GPU work the UI starts, as a typed job; the runner's GPU lock
feedback.py        why a key cannot act now, in one line
keys.py            every key and command once: bindings, help, palette and rebinding read it
status.py          kernel keys and their marks in the browser
watched.py         the files a corpus depends on, and their stamps (live reload)
baseline.py        this session's runs per kernel, the pinned one, and a run against it
takeaway.py        saving arrays and the Diff tab's tables
describe.py        the current kernel's settings written into workbench.toml (in place)
slicing.py         the Outputs tab's slice box and index parsing
diff.py            the elements nearest to their tolerance, for the Diff tab
heatmap.py         the zoomable heatmap's window, zoom, cursor and what lies under it
footprint.py, probes.py, steps.py   the figures of the Footprint, Probes and Steps views
fixture_places.py  where fixtures are saved and listed from
advice.py, paths.py   an error's remedy in the UI's terms; paths as shown
Unit tests cover these modules in milliseconds (tests/ui/test_viewmodel.py and others).
"""
