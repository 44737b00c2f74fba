"""Kernel specs: what each shipped kernel means. See `base.py` for the vocabulary.

Every module in this package (other than `base` and `registry`) that defines `SPECS` contributes
its specs; `registry` collects them by name and validates, once, what each declares for the checks
(small dims, special-value rule, saved inputs, determinism, gradient link);
`workbench.planning.match_spec` matches them to kernels by name and binding signature. `described`
parses a corpus's workbench.toml into the same `KernelSpec`s.
"""
