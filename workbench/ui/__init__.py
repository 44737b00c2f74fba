"""Behaviour of the terminal UI as a whole that is neither a screen nor a widget (the order in
which typed keys are handled)."""
