"""gpuprims quick start: reductions, scans, axes and devices, each next to NumPy.

Runs as written with or without a GPU: without one (or with a CPU-only build)
every call uses the C CPU backend.  Run with ``python examples/quickstart.py``.
"""

import argparse

import numpy as np

import gpuprims

argparse.ArgumentParser(description=__doc__.splitlines()[0]).parse_args()  # --help; no options

print("build info:    ", gpuprims.build_info())
print("CUDA available:", gpuprims.cuda_available())

rng = np.random.default_rng(seed=0)
a = rng.random(100_000, dtype=np.float32)

# Full reductions return NumPy scalars with NumPy's result dtypes.  Floating-point
# results may differ from NumPy's in the last digits (different summation order).
for name, ours, reference in [
    ("sum", gpuprims.sum, np.sum),
    ("max", gpuprims.max, np.max),
    ("mean", gpuprims.mean, np.mean),
]:
    got, expected = ours(a), reference(a)
    print(f"{name:4s} gpuprims={got!r}  numpy={expected!r}  "
          f"close={np.isclose(got, expected, rtol=1e-5)}")

# Inclusive scan: the same as numpy.cumsum.
running = gpuprims.prefix_sum(a)
print("prefix_sum[:4]", running[:4], "numpy", np.cumsum(a)[:4],
      "close:", np.allclose(running, np.cumsum(a), rtol=1e-4))

# Integers follow NumPy exactly: int32 sums to int64.
counts = rng.integers(0, 1000, size=1_000_000, dtype=np.int32)
total = gpuprims.sum(counts)
print("int32 sum:", repr(total), "numpy:", repr(np.sum(counts)), "equal:", total == np.sum(counts))

# device= picks the backend per call; the default (None) is $GPUPRIMS_DEVICE,
# else "cuda" when a GPU is usable, else "cpu".
print("sum on the CPU backend:", gpuprims.sum(a, device="cpu"))
if gpuprims.cuda_available():
    print("sum on the GPU:        ", gpuprims.sum(a, device="cuda"))

# axis and keepdims work as in NumPy.
m = np.arange(12, dtype=np.int64).reshape(3, 4)
print("matrix:\n", m)
print("sum over axis 0:          ", gpuprims.sum(m, axis=0))
print("max over axis 1, keepdims:\n", gpuprims.max(m, axis=1, keepdims=True))
print("mean over axes (0, 1):    ", gpuprims.mean(m, axis=(0, 1)))
print("row-wise prefix_sum:\n", gpuprims.prefix_sum(m, axis=1))
print("row-wise exclusive scan:\n", gpuprims.prefix_sum(m, axis=1, exclusive=True))
