"""workbench: a terminal workbench for WGSL compute kernels.

Layers, bottom up (DESIGN.md): `wgsl` (text), `gpu` (wgpu), `specs` (meaning), `checks`, `session`,
`fixtures`, then the terminal UI (`app`, `screens`, `widgets`) and the command line (`cli`).
"""

__version__ = "0.1.0"
