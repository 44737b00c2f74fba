"""The wgpu layer: adapters, the device, uniform packing, dispatch, timing, read-back.
Knows wgpu, not what kernels mean."""
