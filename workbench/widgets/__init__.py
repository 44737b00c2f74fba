"""Widgets of the terminal UI, one per module; they render what they are given and run nothing.

browser.py          KernelBrowser: filter box over the tree of files and kernels, with marks
verdict_bar.py      VerdictBar: the one-line verdict, or progress while work is in flight
baseline_bar.py     BaselineBar: the run against the pinned baseline
detail_line.py      DetailLine: one line, the whole text when hovered or focused
array_view.py       ArrayView: a 2-D window onto an array, formatting only what is visible
buffer_view.py      BufferView: a pipeline buffer between steps
footprint_picture.py  FootprintPicture: which workgroup wrote which element
zoom_heatmap.py     ZoomHeatmap: a 2-D array as a heatmap to zoom into, the value under the cursor
source_view.py      SourceView: highlighted WGSL, rendering only the lines on screen
step_list.py, step_buffers.py   the Steps screen's steps and buffers
plots.py            heatmaps, histograms and line plots (Rich renderables, not widgets)
roofline_chart.py   RooflineChart: the adapter's two ceilings and timed kernels as points
key_footer.py       KeyFooter: Textual's footer, the keys that matter first
form/               CaseForm (dims, seed, special values), RecipeGrid (input recipes), Toggle
panes/              the kernel view's tabs (Outputs, Diff, Gradients, Timing, Source, Bindings,
                    Footprint, Probes), each bound to the main screen's reactive `view`
"""
