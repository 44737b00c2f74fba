"""Screens of the terminal UI: the main screen, modals and the check-all report."""
