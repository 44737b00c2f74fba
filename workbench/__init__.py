"""workbench: a terminal workbench for WGSL compute kernels.

Layers, bottom up; each imports only from its own layer or below (tests/test_layers.py):
`errors`/`units`/`jsonable` (leaves), `wgsl` (text), `gpu` (wgpu), `specs` (meaning), `closeness`
(what "close" means), `planning` (a Case, pure), `session` (the engine, the only door to the GPU),
`checks`, `fixtures`, `workgroups`, `pipelines` and `bench`, then the command line (`cli`) and the
terminal UI (`app`, `commands`, `messages`, `screens`, `widgets`, and `viewmodel`, its Textual-free
model), which never imports wgpu or `workbench.gpu`.
"""

__version__ = "0.1.0"
