"""Widgets of the terminal UI, one per module; they render what they are given and run nothing.

browser.py       KernelBrowser: filter box over the tree of files and kernels, with marks
verdict_bar.py   VerdictBar: the one-line verdict, or progress while work is in flight
array_view.py    ArrayView: a 2-D window onto an array, formatting only what is visible
source_view.py   SourceView: highlighted WGSL, rendering only the lines on screen
plots.py         heatmaps, histograms and line plots (Rich renderables, not widgets)
roofline_chart.py  RooflineChart: the adapter's two ceilings and timed kernels as points
form/            CaseForm (dims, seed, special values), RecipeGrid (input recipes), Toggle
panes/           the kernel view's tabs: Outputs, Diff, Gradients, Timing, Source, Bindings,
                 each bound to the main screen's reactive `view`
"""
