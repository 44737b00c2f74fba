"""Float64 NumPy references, written from the mathematics (seeds, public definitions), never
transliterated from the WGSL. No wgpu here: these run anywhere."""
