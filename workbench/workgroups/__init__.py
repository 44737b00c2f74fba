"""Inside one dispatch: workgroups stepped one range at a time, who wrote which element (races and
holes), and probe records (printf for WGSL). Everything runs through `Session` on an instrumented
copy of the kernel (`workbench.wgsl.instrument`); the user's file is never changed."""
