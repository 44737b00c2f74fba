"""The kernel view's tabs, one pane per module: Outputs, Diff, Gradients, Timing, Source, Bindings.

Each pane has a `view` reactive (a `workbench.viewmodel.kernel_state.View`) bound to the main
screen's, renders it when it changes and never runs anything itself.
"""
