"""Issue 18's reproducibility check: many runs of each float scan and sum on the same input give the
same bits (the suite's tests do 13 runs at smaller sizes).

A plain script, not a test (pytest does not collect it)::

    python tests/perf/reproducible_scans.py [--runs 100] [--sizes 20,26,28] [--host-sizes 20,26]

For float32 and float64 and each size 2^k: ``prefix_sum`` of a device-resident vector, ``cumsum``
along each axis and ``sum`` along each axis of a device-resident 2-D array of the same elements,
``sum`` and ``mean`` of the vector; then ``prefix_sum`` of a host vector on the forced streaming
path (``GPUPRIMS_STREAM_MIN_BYTES=0``).  Each row says how many runs differ from the first, bit
for bit; every row should say 0.  Device results are compared on the device through CuPy where it
is importable, else on the host.  Needs a CUDA device.
"""
import argparse
import os
import time

import numpy as np

import gpuprims

try:
    import cupy
except ImportError:  # pragma: no cover - compared on the host instead
    cupy = None


def as_bytes(result):
    """The result's bytes, as an array of one kind: on the device where CuPy can see it."""
    if isinstance(result, np.ndarray) or np.isscalar(result):
        return np.ascontiguousarray(result).view(np.uint8)
    if cupy is not None:
        return cupy.ascontiguousarray(cupy.asarray(result)).view(cupy.uint8)
    return np.ascontiguousarray(result.get()).view(np.uint8)


def differing_runs(call, runs):
    """How many of `runs` calls give other bits than the first."""
    first = as_bytes(call()).copy()
    xp = np if isinstance(first, np.ndarray) else cupy
    return sum(not bool(xp.array_equal(as_bytes(call()), first)) for _ in range(runs - 1))


def square(n):
    """A 2-D shape of n = 2^k elements, as square as a power of two allows."""
    rows = 1 << (n.bit_length() - 1) // 2
    return rows, n // rows


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=100)
    parser.add_argument("--sizes", default="20,26,28", help="log2 sizes of the device-resident cases")
    parser.add_argument("--host-sizes", default="20,26", help="log2 sizes of the streamed host cases")
    args = parser.parse_args()
    if not gpuprims.cuda_available():
        raise SystemExit("needs a CUDA device")
    rng = np.random.default_rng(18)
    start = time.perf_counter()
    print(f"{'case':<44} {'runs':>5} {'differ':>6}")

    def report(name, call):
        print(f"{name:<44} {args.runs:>5} {differing_runs(call, args.runs):>6}   "
              f"({time.perf_counter() - start:.0f} s)", flush=True)

    for dtype in ("float32", "float64"):
        for k in map(int, args.sizes.split(",")):
            vector = gpuprims.to_device(rng.standard_normal(2**k).astype(dtype))
            matrix = vector.reshape(*square(2**k))
            shape = "x".join(map(str, matrix.shape))
            report(f"prefix_sum {dtype} 2^{k}", lambda: gpuprims.prefix_sum(vector))
            for axis in (0, 1):
                report(f"cumsum(axis={axis}) {dtype} {shape}", lambda: gpuprims.cumsum(matrix, axis=axis))
                report(f"sum(axis={axis}) {dtype} {shape}", lambda: gpuprims.sum(matrix, axis=axis))
            report(f"sum {dtype} 2^{k}", lambda: gpuprims.sum(vector))
            report(f"mean {dtype} 2^{k}", lambda: gpuprims.mean(vector))
            del vector, matrix
        os.environ["GPUPRIMS_STREAM_MIN_BYTES"] = "0"  # host arrays take the streaming path
        try:
            for k in map(int, args.host_sizes.split(",")):
                host = rng.standard_normal(2**k).astype(dtype)
                report(f"prefix_sum {dtype} 2^{k}, host, streamed",
                       lambda: gpuprims.prefix_sum(host, device="cuda"))
        finally:
            del os.environ["GPUPRIMS_STREAM_MIN_BYTES"]


if __name__ == "__main__":
    main()
