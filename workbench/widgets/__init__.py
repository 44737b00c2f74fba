"""Widgets of the terminal UI: kernel browser, case form, array view, plots, panes, verdict bar."""
