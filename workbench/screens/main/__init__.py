"""The main screen (`MainScreen`), one module per concern: `selection` (the kernel shown and the
browser's marks), `case_form` (the form, planned as you type), `work` (GPU jobs on the kernel),
`baseline` (pinned runs), `takeaway` (saving, exporting, describing); `base` holds what they
share and `screen` puts them together and lays the screen out."""

from workbench.screens.main.screen import MainScreen

__all__ = ["MainScreen"]
