"""The sign of a zero result, as NumPy gives it.

NumPy's sums start from +0.0 (``add.reduce`` folds its identity in), so a sum, a nan-sum or a mean
of negative zeros is +0.0, while ``cumsum`` starts from the first element (a scan of -0.0 is -0.0)
and ``nancumsum`` reads a NaN as +0.0.  Equal under ``==``, these differ under ``signbit`` and
under division (1 / -0.0 is -inf).
"""
import numpy as np
import pytest

import gpuprims

FLOATS = ["float16", "float32", "float64"]
# one element, one vector, several pieces, several threads' share
SIZES = [1, 7, 300, 5003, (1 << 17) + 1]


def _zeros(dtype, n, nan_every=0, first_nan=0):
    a = np.full(n, -0.0, dtype=dtype)
    if nan_every:
        a[first_nan::nan_every] = np.nan
    return a


def _assert_same_signs(got, expected):
    got, expected = np.asarray(got), np.asarray(expected)
    assert got.shape == expected.shape
    np.testing.assert_array_equal(np.signbit(got), np.signbit(expected))
    np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("name", ["sum", "nansum", "mean", "nanmean"])
def test_reductions_of_negative_zeros(device, name, dtype, n):
    # NaNs from the second element on: a slice of NaNs alone gives a NaN, whose sign means nothing
    a = _zeros(dtype, n, nan_every=3 if name.startswith("nan") else 0, first_nan=1)
    _assert_same_signs(getattr(gpuprims, name)(a, device=device), getattr(np, name)(a))


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shape", [(3, 5), (300, 70), (70, 300)])
@pytest.mark.parametrize("axis", [0, 1])
@pytest.mark.parametrize("name", ["sum", "nansum", "mean"])
def test_axis_reductions_of_negative_zeros(device, name, dtype, shape, axis):
    a = np.full(shape, -0.0, dtype=dtype)
    if name == "nansum":
        a[::2, ::3] = np.nan
    _assert_same_signs(getattr(gpuprims, name)(a, axis=axis, device=device), getattr(np, name)(a, axis=axis))


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("n", SIZES)
def test_scans_keep_the_first_elements_sign(device, dtype, n):
    a = _zeros(dtype, n)
    _assert_same_signs(gpuprims.cumsum(a, device=device), np.cumsum(a))
    _assert_same_signs(gpuprims.prefix_sum(a, device=device), np.cumsum(a))


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("n", SIZES)
def test_nancumsum_reads_nan_as_positive_zero(device, dtype, n):
    for nan_every in (1, 2, 3):
        a = _zeros(dtype, n, nan_every)
        _assert_same_signs(gpuprims.nancumsum(a, device=device), np.nancumsum(a))


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("axis", [0, 1])
def test_axis_scans_of_negative_zeros(device, dtype, axis):
    a = np.full((70, 300), -0.0, dtype=dtype)
    _assert_same_signs(gpuprims.cumsum(a, axis=axis, device=device), np.cumsum(a, axis=axis))
    a[::2, ::3] = np.nan
    _assert_same_signs(gpuprims.nancumsum(a, axis=axis, device=device), np.nancumsum(a, axis=axis))


@pytest.mark.parametrize("dtype", FLOATS)
def test_cumulative_sum_with_its_initial_zero(device, dtype):
    a = _zeros(dtype, 300)
    _assert_same_signs(gpuprims.cumulative_sum(a, include_initial=True, device=device),
                       np.concatenate([np.zeros(1, dtype), np.cumsum(a)]))


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("name", ["min", "max", "nanmin", "nanmax"])
def test_min_and_max_keep_negative_zeros(device, name, dtype, n):
    """A -0.0 that is the extreme (all zeros negative, beside larger or smaller numbers, or NaNs for
    the nan-functions) is returned as -0.0, flat and along each axis, as NumPy returns it."""
    a = _zeros(dtype, n, nan_every=3 if name.startswith("nan") else 0, first_nan=1)
    _assert_same_signs(getattr(gpuprims, name)(a, device=device), getattr(np, name)(a))
    b = a.copy()
    b[n // 2:] = 1.0 if name.endswith("min") else -1.0
    if n > 1:  # the zeros beside larger numbers (min) or smaller ones (max)
        _assert_same_signs(getattr(gpuprims, name)(b, device=device), getattr(np, name)(b))
    rows = np.stack([a, a])
    for axis in (0, 1):
        _assert_same_signs(getattr(gpuprims, name)(rows, axis=axis, device=device), getattr(np, name)(rows, axis=axis))


def _ties_of_zeros(rng, dtype, n, name):
    """Zeros of both signs among values the scan never picks: cummax and cummin tie on most
    elements, and the outputs at the others show the sign of the running extreme."""
    a = np.where(rng.random(n) < 0.5, -0.0, 0.0).astype(dtype)
    a[rng.random(n) < 0.3] = -1.0 if name == "cummax" else 1.0
    return a


def _accumulate(name, a, axis=-1):
    return (np.maximum if name == "cummax" else np.minimum).accumulate(a, axis=axis)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("n", SIZES + [2**20 + 3])
@pytest.mark.parametrize("name", ["cummax", "cummin"])
def test_extreme_scans_keep_the_tied_zeros_sign(device, rng, name, dtype, n):
    """A tie goes to the later element, as in NumPy's float32 and float64 accumulate
    (np.maximum.accumulate([-0.0, 0.0, -0.0]) is [-0.0, 0.0, -0.0]), and to the earlier in its
    float16 one ([-0.0, -0.0, -0.0]), however the scan groups a thread's, a tile's or a CPU
    thread's piece's elements.  (The CPU backend's lanes gave float32's ties to the earlier
    element from 16 elements on, and float16's to the later.)"""
    a = _ties_of_zeros(rng, dtype, n, name)
    _assert_same_signs(getattr(gpuprims, name)(a, device=device), _accumulate(name, a))


AXIS_CASES = [((300, 70), 0), ((70, 300), 1), ((4096, 4), 0), ((3, 9000), 1), ((2, 3000, 5), 1)]


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("name", ["cummax", "cummin"])
def test_extreme_axis_scans_keep_the_tied_zeros_sign(device, rng, name, dtype):
    """Along rows and along columns, wide and narrow (the GPU's column and short-row kernels)."""
    for shape, axis in AXIS_CASES:
        a = _ties_of_zeros(rng, dtype, shape, name)
        _assert_same_signs(getattr(gpuprims, name)(a, axis=axis, device=device), _accumulate(name, a, axis))


@pytest.mark.skipif(not gpuprims.cuda_available(), reason="CUDA not available")
@pytest.mark.parametrize("name", ["cummax", "cummin"])
def test_extreme_scans_of_long_device_rows_keep_the_tied_zeros_sign(rng, name):
    """Rows past the pipelined tile scan's threshold on Hopper (2 x 6 x 132 tiles of 9216 float32,
    test_scan.py's LONG_ROWS), whose reduce warps fold each lane's elements before the scan."""
    for dtype, shape in (("float32", (2, 2**25 + 3)), ("float16", (2**26 + 5,))):
        a = _ties_of_zeros(rng, dtype, shape, name)
        _assert_same_signs(getattr(gpuprims, name)(gpuprims.to_device(a), axis=-1).get(), _accumulate(name, a))


@pytest.mark.parametrize("name", ["cummax", "cummin"])
def test_extreme_scans_tie_rules_on_every_instruction_set(rng, name):
    """The CPU backend's vector loops of each instruction set this CPU runs (test_cpu_backend's
    isas): flat, along rows and along columns, wide and narrow."""
    order = ["baseline", "avx2", "avx512"]
    best = gpuprims._core.cpu_info()["isa"]
    try:
        for isa in order[:order.index(best) + 1]:
            gpuprims._core._set_cpu_isa(isa)
            for dtype in FLOATS:
                for shape, axis in [((5003,), -1)] + AXIS_CASES:
                    a = _ties_of_zeros(rng, dtype, shape, name)
                    _assert_same_signs(getattr(gpuprims, name)(a, axis=axis, device="cpu"), _accumulate(name, a, axis))
    finally:
        gpuprims._core._set_cpu_isa(best)
