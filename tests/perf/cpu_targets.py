"""The CPU backend against issue 14's targets: time over NumPy's (SciPy's for convolve2d).

A plain script, not a test (pytest does not collect it: no ``test_`` prefix)::

    python tests/perf/cpu_targets.py                # every row, all cores
    python tests/perf/cpu_targets.py --quick        # fewer sizes and dtypes
    python tests/perf/cpu_targets.py --accuracy     # float32 sum error against NumPy's, 2^10 .. 2^26
    python tests/perf/cpu_targets.py --threshold    # call times by thread count (the parallel threshold)
    GPUPRIMS_NUM_THREADS=1 python tests/perf/cpu_targets.py --only reduce

Every time is the best of several samples in this one process; a sample is a loop of calls long
enough to be timed well (at least ~20 ms, or 3 calls).  ``gp/np`` is gpuprims' time
(``device="cpu"``, the public function, Python included) over NumPy's for the same call; the
target column is the issue's bound for the row.  ``gp/memcpy`` is gpuprims' time over a plain copy
of the input's bytes (``numpy.copyto``, one thread) in the same run: near or below 1 a row is bound by
memory bandwidth (a reduction reads the bytes once, a copy reads and writes them), well above 1 by
instructions.  The last lines say the threads and the dispatch the backend used.
"""
import argparse
import os
import sys
import time

import numpy as np

import gpuprims

DTYPES = ("float32", "int32", "float64")
REDUCTIONS = ("sum", "prod", "min", "max", "mean")
# Issue 17's family, each against its NumPy counterpart (issue 17: at most 1.0x NumPy from 2^16 up).
FAMILY = {
    **{name: getattr(np, name) for name in (
        "argmin", "argmax", "any", "all", "count_nonzero", "var", "std", "nansum", "nanprod", "nanmin",
        "nanmax", "nanmean", "nanvar", "nanstd", "nanargmin", "nanargmax", "cumprod", "nancumsum",
        "nancumprod")},
    "cummax": lambda a, axis: np.maximum.accumulate(a.ravel() if axis is None else a, axis=axis or 0),
    "cummin": lambda a, axis: np.minimum.accumulate(a.ravel() if axis is None else a, axis=axis or 0),
    **({name: getattr(np, name) for name in ("cumulative_sum", "cumulative_prod")}
       if hasattr(np, "cumulative_sum") else {}),
}


def best_time(function, min_sample_s=0.02, samples=7):
    """Seconds of one call: the best of `samples` samples of a loop of calls."""
    function()
    start = time.perf_counter()
    function()
    once = time.perf_counter() - start
    loops = max(1, int(min_sample_s / max(once, 1e-7)))
    best = float("inf")
    for _ in range(samples):
        start = time.perf_counter()
        for _ in range(loops):
            function()
        best = min(best, (time.perf_counter() - start) / loops)
    return best


def data(rng, dtype, shape):
    dtype = np.dtype(dtype)
    if dtype.kind == "f":
        return rng.standard_normal(shape).astype(dtype)
    return rng.integers(-1000, 1000, size=shape).astype(dtype)


class Table:
    def __init__(self):
        print(f"{'case':44s} {'size':>9s} {'gp ms':>9s} {'np ms':>9s} {'gp/np':>7s} {'target':>7s} "
              f"{'gp/memcpy':>9s}")

    def row(self, case, size, gp_s, np_s, target, copy_s):
        ratio = gp_s / np_s
        mark = "" if target is None else ("  ok" if ratio <= target else "  MISS")
        target_text = "-" if target is None else f"{target:.2f}"
        print(f"{case:44s} {size:>9s} {gp_s * 1e3:9.4f} {np_s * 1e3:9.4f} {ratio:7.2f} {target_text:>7s} "
              f"{gp_s / copy_s:9.2f}{mark}", flush=True)


def size_label(shape):
    n = int(np.prod(shape))
    exponent = n.bit_length() - 1
    return f"2^{exponent}" if n == 1 << exponent else str(n)


def memcpy_time(a):
    dst = np.empty_like(a)
    return best_time(lambda: np.copyto(dst, a))


def reduce_target(n, threads):
    if n <= 1 << 10:
        return 1.5
    if n >= 1 << 22 and threads >= 16:
        return 0.6
    return 1.0


def scan_target(threads):
    return 0.15 if threads >= 16 else 0.5


def layouts(rng, dtype, exponent, axes):
    """(label, array, axis, memcpy seconds) cases of 2^exponent elements: flat (axis None) and, when
    `axes`, a square-ish 2-D array along each axis and a tall one of 4 columns along its columns."""
    n = 1 << exponent
    flat = data(rng, dtype, n)
    cases = [("", flat, None, memcpy_time(flat))]
    if axes:
        side = 1 << (exponent // 2)
        square = data(rng, dtype, (side, n // side))
        copy_s = memcpy_time(square)
        cases += [(f" {side}x{n // side} axis={axis}", square, axis, copy_s) for axis in (0, 1)]
        if n >= 64:
            tall = data(rng, dtype, (n // 4, 4))
            cases.append((f" {n // 4}x4 axis=0", tall, 0, copy_s))
    return cases


def run_cases(table, rng, dtypes, exponents, ops, target, axes_from):
    """A row per op, dtype, size and layout: gpuprims.<op> against numpy.<op> (or `ops[op]`, where
    `ops` maps names to NumPy's functions)."""
    for dtype in dtypes:
        for exponent in exponents:
            cases = layouts(rng, dtype, exponent, exponent >= axes_from)
            for op in ops:
                reference = ops[op] if isinstance(ops, dict) else getattr(np, op)
                for label, a, axis, copy_s in cases:
                    with np.errstate(all="ignore"):  # products over- and underflow, as NumPy's
                        gp_s = best_time(lambda: getattr(gpuprims, op)(a, axis=axis, device="cpu"))
                        np_s = best_time(lambda: reference(a, axis=axis))
                    table.row(f"{op} {dtype}{label}", size_label(a.shape), gp_s, np_s, target(exponent), copy_s)


def run_reductions(table, rng, dtypes, exponents, threads):
    run_cases(table, rng, dtypes, exponents, REDUCTIONS, lambda e: reduce_target(1 << e, threads), 16)


def run_scans(table, rng, dtypes, exponents, threads):
    run_cases(table, rng, dtypes, exponents, ("cumsum",), lambda e: scan_target(threads), 0)


def run_family(table, rng, dtypes, exponents):
    run_cases(table, rng, dtypes, exponents, FAMILY, lambda e: 1.0, 16)


def run_convolutions(table, rng, dtypes):
    try:
        from scipy import signal
    except ImportError:
        signal = None
    for dtype in dtypes:
        a, v = data(rng, dtype, 1 << 20), data(rng, dtype, 7)
        gp_s = best_time(lambda: gpuprims.convolve(a, v, "same", device="cpu"))
        np_s = best_time(lambda: np.convolve(a, v, "same"))
        table.row(f"convolve {dtype} 7 taps same", "2^20", gp_s, np_s, 0.3, memcpy_time(a))
        if signal is None:
            continue
        image, mask = data(rng, dtype, (1024, 1024)), data(rng, dtype, (5, 5))
        gp_s = best_time(lambda: gpuprims.convolve2d(image, mask, "same", device="cpu"))
        sp_s = best_time(lambda: signal.convolve2d(image, mask, "same"), samples=3)
        table.row(f"convolve2d {dtype} 5x5 same (vs SciPy)", "1024^2", gp_s, sp_s, 0.05, memcpy_time(image))


def run_transposes(table, rng, dtypes):
    for dtype in dtypes:
        a = data(rng, dtype, (4096, 4096))
        gp_s = best_time(lambda: gpuprims.transpose(a, device="cpu"))
        np_s = best_time(lambda: np.ascontiguousarray(a.T))
        table.row(f"transpose {dtype}", "4096^2", gp_s, np_s, 0.25 if dtype == "float32" else None, memcpy_time(a))
        tall = data(rng, dtype, (1 << 20, 3))  # a dense side of 3: a deinterleave
        gp_s = best_time(lambda: gpuprims.transpose(tall, device="cpu"))
        np_s = best_time(lambda: np.ascontiguousarray(tall.T))
        table.row(f"transpose {dtype} (2^20, 3)", "3*2^20", gp_s, np_s, 1.0, memcpy_time(tall))


def run_small_calls(table, rng, dtypes):
    for dtype in dtypes:
        a = data(rng, dtype, 64)
        for op in ("sum", "max", "cumsum"):
            gp_s = best_time(lambda: getattr(gpuprims, op)(a, device="cpu"), min_sample_s=0.05, samples=15)
            np_s = best_time(lambda: getattr(np, op)(a), min_sample_s=0.05, samples=15)
            table.row(f"{op} {dtype} 64 elements", "64", gp_s, np_s, 1.5, memcpy_time(a))


def run_accuracy(exponents, arrays):
    """The float32 sum error against a float64 reference (numpy.sum(a, dtype=float64) of the same
    float32 data), gpuprims against NumPy's pairwise sum: mean |error| over `arrays` arrays per size,
    and how many arrays gpuprims was further from the reference than NumPy."""
    print(f"{'data':8s} {'size':>6s} {'gpuprims |err|':>15s} {'NumPy |err|':>13s} {'NumPy/gp':>9s} {'gp worse':>9s}")
    for kind in ("uniform", "normal"):
        rng = np.random.default_rng(26)
        for exponent in exponents:
            ours = numpys = 0.0
            worse = 0
            for _ in range(arrays):
                n = 1 << exponent
                a = (rng.random(n, dtype=np.float32) if kind == "uniform"
                     else rng.standard_normal(n, dtype=np.float32))
                exact = np.sum(a, dtype=np.float64)
                gp_error = abs(float(gpuprims.sum(a, device="cpu")) - exact)
                np_error = abs(float(np.sum(a)) - exact)
                ours, numpys, worse = ours + gp_error, numpys + np_error, worse + (gp_error > np_error)
            ratio = f"{numpys / ours:9.1f}" if ours > 0 else f"{'inf':>9s}"
            print(f"{kind:8s} {'2^' + str(exponent):>6s} {ours / arrays:15.3e} {numpys / arrays:13.3e} {ratio} "
                  f"{worse:>5d}/{arrays}", flush=True)


def run_threshold(exponents):
    """Public-call times (us) of sum and max by thread count, to check the parallel threshold
    (GP_CPU_PART_BYTES in csrc/cpu/parallel.h: two threads from 128 KiB on the 2-core machine)."""
    counts = sorted({1, 2, 4, 8, 16, gpuprims.get_num_threads()} & set(range(1, gpuprims.get_num_threads() + 1)))
    print(f"{'case':16s} {'size':>6s} " + " ".join(f"{str(c) + ' thr':>9s}" for c in counts))
    rng = np.random.default_rng(12)
    before = gpuprims.get_num_threads()
    for dtype in ("float32", "int32"):
        for op in ("sum", "max", "cumsum"):
            for exponent in exponents:
                a = data(rng, dtype, 1 << exponent)
                row = []
                for count in counts:
                    gpuprims.set_num_threads(count)
                    row.append(best_time(lambda: getattr(gpuprims, op)(a, device="cpu"), min_sample_s=0.01, samples=9))
                print(f"{op + ' ' + dtype:16s} {'2^' + str(exponent):>6s} " + " ".join(f"{t * 1e6:9.2f}" for t in row),
                      flush=True)
    gpuprims.set_num_threads(before)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="float32 only, sizes 2^10, 2^16, 2^22")
    parser.add_argument("--only", default="reduce,scan,family,convolve,transpose,small",
                        help="comma list of reduce, scan, family (issue 17's functions), convolve, "
                             "transpose, small")
    parser.add_argument("--dtypes", default=",".join(DTYPES))
    parser.add_argument("--sizes", default=None, help="comma list of power-of-two exponents")
    parser.add_argument("--threshold", action="store_true",
                        help="print sum/max/cumsum call times by thread count, 2^12 .. 2^20, instead")
    parser.add_argument("--accuracy", action="store_true",
                        help="print the float32 sum accuracy table (2^10 .. 2^26) instead of timings")
    args = parser.parse_args(argv)
    dtypes = args.dtypes.split(",")
    exponents = [10, 16, 20, 22, 24]
    if args.quick:
        dtypes, exponents = ["float32"], [10, 16, 22]
    if args.sizes:
        exponents = [int(x) for x in args.sizes.split(",")]
    only = set(args.only.split(","))
    if args.accuracy:
        run_accuracy(range(10, 27, 2), 10)
        return
    if args.threshold:
        run_threshold(range(12, 21))
        return
    threads = gpuprims.get_num_threads() if hasattr(gpuprims, "get_num_threads") else 1
    rng = np.random.default_rng(14)
    table = Table()
    if "reduce" in only:
        run_reductions(table, rng, dtypes, exponents, threads)
    if "scan" in only:
        run_scans(table, rng, dtypes, [e for e in exponents if e >= 16], threads)
    if "family" in only:
        run_family(table, rng, dtypes, [e for e in exponents if e >= 16])
    if "convolve" in only:
        run_convolutions(table, rng, dtypes)
    if "transpose" in only:
        run_transposes(table, rng, dtypes)
    if "small" in only:
        run_small_calls(table, rng, dtypes)
    info = gpuprims._core.cpu_info() if hasattr(gpuprims._core, "cpu_info") else {}
    print(f"\nthreads {threads}, cores usable {len(os.sched_getaffinity(0))}, cpu backend {info}, "
          f"numpy {np.__version__}, python {sys.version.split()[0]}")


if __name__ == "__main__":
    main()
