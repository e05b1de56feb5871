"""Arrays past 2**31 and 2**32 elements on the GPU (64-bit indexing).

Opt-in: GPUPRIMS_TEST_LARGE=1 and a usable GPU.  Needs about 30 GB of host
RAM and about 20 GB of GPU memory; the references are computed in chunks.
Prints how long each phase took (visible without -s).
"""

import os
import time

import numpy as np
import pytest

import gpuprims

pytestmark = [
    pytest.mark.large,
    pytest.mark.skipif(os.environ.get("GPUPRIMS_TEST_LARGE") != "1",
                       reason="set GPUPRIMS_TEST_LARGE=1 to run the >4 GiB GPU test"),
]

CHUNK = 1 << 26
N_SUM = 2**32 + 5     # int8 elements for sum/max/min (4 GiB)
N_SCAN = 2**31 + 3    # int8 elements for prefix_sum (int64 result: 16 GiB)


def _chunks(n):
    for s in range(0, n, CHUNK):
        yield s, min(n, s + CHUNK)


def test_large_reductions_argmax_prefix_sum_cummax_past_2_31_and_2_32(capsys):
    if not gpuprims.cuda_available():
        pytest.skip("needs a GPU")
    t_start = time.perf_counter()
    times = []

    def lap(label, t0):
        dt = time.perf_counter() - t0
        times.append((label, dt))
        with capsys.disabled():
            print(f"\n[test_large] {label}: {dt:.2f} s", flush=True)

    rng = np.random.default_rng(20240531)

    # ---- reductions over 2**32 + 5 int8 elements (4 GiB) -----------------
    t0 = time.perf_counter()
    n = N_SUM
    a = np.empty(n, dtype=np.int8)
    ref_sum = 0
    for s, e in _chunks(n):
        blk = rng.integers(-100, 101, size=e - s, dtype=np.int8)
        a[s:e] = blk
        ref_sum += int(blk.sum(dtype=np.int64))
    i_max, i_min = n - 2, n // 2 + 5     # unique extremes (at 2**32+3 and 2**31+7)
    ref_sum += 101 - int(a[i_max])
    a[i_max] = 101
    ref_sum += -101 - int(a[i_min])
    a[i_min] = -101
    lap(f"generate {n} int8", t0)

    t0 = time.perf_counter()
    s = gpuprims.sum(a, device="cuda")
    lap("gpuprims.sum", t0)
    assert isinstance(s, np.int64)
    assert int(s) == ref_sum

    t0 = time.perf_counter()
    mx = gpuprims.max(a, device="cuda")
    mn = gpuprims.min(a, device="cuda")
    lap("gpuprims.max + min", t0)
    assert mx.dtype == np.int8 and int(mx) == 101
    assert mn.dtype == np.int8 and int(mn) == -101

    # argmax/argmin: indices past 2**31 and 2**32, the first of tied extremes
    a[n - 1] = 101
    t0 = time.perf_counter()
    imax = gpuprims.argmax(a, device="cuda")
    imin = gpuprims.argmin(a, device="cuda")
    lap("gpuprims.argmax + argmin", t0)
    assert type(imax) is np.intp and int(imax) == i_max > 2**32
    assert int(imin) == i_min > 2**31

    # per-slice reductions where every slice has more than 2**31 elements
    m = (n - 1) // 2                      # 2**31 + 2
    b = a[: 2 * m].reshape(2, m)
    t0 = time.perf_counter()
    rows = gpuprims.sum(b, axis=1, device="cuda")
    rmax = gpuprims.max(b, axis=1, device="cuda")
    lap(f"gpuprims.sum/max axis=1 on (2, {m})", t0)
    ref_rows = [sum(int(b[r, s:e].sum(dtype=np.int64)) for s, e in _chunks(m)) for r in range(2)]
    assert rows.dtype == np.int64 and rows.shape == (2,)
    assert rows.tolist() == ref_rows
    assert rmax.tolist() == [int(b[0].max()), int(b[1].max())]
    assert int(b[1].max()) == 101          # the planted maximum lies in row 1
    t0 = time.perf_counter()
    rarg = gpuprims.argmax(b, axis=1, device="cuda")
    lap(f"gpuprims.argmax axis=1 on (2, {m})", t0)
    assert rarg.tolist() == [int(np.argmax(b[0])), i_max - m] and i_max - m > 2**31
    del a, b

    # ---- prefix_sum over 2**31 + 3 int8 elements -> int64 (16 GiB) --------
    t0 = time.perf_counter()
    n2 = N_SCAN
    x = np.empty(n2, dtype=np.int8)
    for s, e in _chunks(n2):
        x[s:e] = rng.integers(-2, 8, size=e - s, dtype=np.int8)   # total ~ 5.4e9 > 2**32
    lap(f"generate {n2} int8", t0)

    t0 = time.perf_counter()
    inc = gpuprims.prefix_sum(x, device="cuda")
    lap("gpuprims.prefix_sum (inclusive)", t0)
    assert inc.dtype == np.int64 and inc.shape == (n2,)

    idx = np.unique(np.concatenate([
        rng.integers(0, n2, size=5000),
        [0, 1, n2 - 5, n2 - 4, n2 - 3, n2 - 2, n2 - 1],   # n2 - 3 == 2**31
    ]))
    t0 = time.perf_counter()
    carry = 0
    for s, e in _chunks(n2):
        ref = np.cumsum(x[s:e], dtype=np.int64)
        ref += carry
        if not np.array_equal(inc[s:e], ref):
            bad = s + int(np.flatnonzero(inc[s:e] != ref)[0])
            raise AssertionError(f"inclusive scan wrong at {bad}: got {inc[bad]}, "
                                 f"expected {ref[bad - s]}")
        carry = int(ref[-1])
    lap("verify inclusive scan (chunked numpy)", t0)
    total = carry
    if n2 > 2**31:
        assert total > 2**32
    assert int(inc[-1]) == total
    sampled = inc[idx].copy()
    del inc

    t0 = time.perf_counter()
    exc = gpuprims.prefix_sum(x, exclusive=True, device="cuda")
    lap("gpuprims.prefix_sum (exclusive)", t0)
    assert exc.dtype == np.int64 and exc.shape == (n2,)
    assert exc[0] == 0
    assert np.array_equal(exc[idx], sampled - x[idx].astype(np.int64))
    assert int(exc[-1]) == total - int(x[-1])
    del exc

    t0 = time.perf_counter()
    s2 = gpuprims.sum(x, device="cuda")
    lap(f"gpuprims.sum on {n2}", t0)
    assert int(s2) == total

    # ---- cummax over the same 2**31 + 3 int8 elements: a running maximum that rises past 2**31 --
    x[n2 // 3] = 100       # the maximum so far from here on ...
    x[n2 - 2] = 127        # ... and a new one at 2**31 + 1
    t0 = time.perf_counter()
    running = gpuprims.cummax(x, device="cuda")
    lap("gpuprims.cummax", t0)
    assert running.dtype == np.int8 and running.shape == (n2,)
    t0 = time.perf_counter()
    carry = np.int8(-128)
    for s, e in _chunks(n2):
        ref = np.maximum.accumulate(np.maximum(x[s:e], carry))
        if not np.array_equal(running[s:e], ref):
            bad = s + int(np.flatnonzero(running[s:e] != ref)[0])
            raise AssertionError(f"cummax wrong at {bad}: got {running[bad]}, expected {ref[bad - s]}")
        carry = ref[-1]
    lap("verify cummax (chunked numpy)", t0)
    assert running[n2 - 3] == 100 and running[n2 - 2] == 127 and running[-1] == 127
    del running

    with capsys.disabled():
        print(f"\n[test_large] total {time.perf_counter() - t_start:.1f} s: "
              + ", ".join(f"{k}={v:.2f}s" for k, v in times), flush=True)
