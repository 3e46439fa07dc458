"""mmtune from Python: GEMMs through the tuned runtime on NumPy arrays.

    import numpy as np, mmtune
    rt = mmtune.Runtime(db="mmtune.db")            # no db: the analytical defaults
    c = rt.matmul(a, b)                            # float32, float64, bfloat16 (uint16), int8
    rt.lookup(a.shape[0], b.shape[1], a.shape[1], dtype="f32")
    w = rt.pack_weights(b, rows=128)               # B packed once for many rt.matmul(x, w)
    winners = mmtune.tune(["128x768x768"], db="mmtune.db", budget=10)

The library is libmmtune.so (the C API of mmtune/mmtune.h), found through MMTUNE_LIBRARY, next
to an installed package, or on the system's library path; `tune` runs the `mmtune` CLI
(MMTUNE_CLI, next to the install, or PATH). See docs/python.md.
"""

from mmtune._runtime import Error, PackedWeights, Runtime, tune

__all__ = ["Error", "PackedWeights", "Runtime", "tune"]
