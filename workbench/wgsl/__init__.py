"""The text layer: corpus loading, preambles, kernel split, reflection, source maps, error mapping.
Knows WGSL text, not GPUs."""
