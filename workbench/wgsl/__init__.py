"""The text layer: the WGSL front end (lexer, parser, printer, resolver and type checker with
const-expression evaluation), reflection, corpus loading, preambles, kernel split, instrumentation,
source maps and error mapping. Knows WGSL text, not GPUs."""
