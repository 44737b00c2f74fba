"""The wgpu layer: adapters, the device, dispatch, timing, read-back; `limits` and `uniforms` are
the pure parts (limit arithmetic, uniform packing) that case planning uses without a device.
Knows wgpu, not what kernels mean. Above this layer only the session opens a device."""
