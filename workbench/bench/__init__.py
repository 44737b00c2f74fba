"""Timing a developer can trust: budgeted benchmarks placed on the adapter's measured roofline,
sweeps of override constants, and interleaved A/B of two implementations. Everything goes through
`Session`, so the command line and the terminal UI show the same figures."""
