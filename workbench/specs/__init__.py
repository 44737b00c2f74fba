"""Kernel specs: what each shipped kernel means. See `base.py` for the vocabulary.

Every module in this package (other than `base` and `registry`) that defines `SPECS` contributes
its specs; `registry` collects them by name, and `workbench.planning.match_spec` matches them to
kernels by name and binding signature.
"""
