"""var and std against NumPy: every dtype, sizes across the CPU's pieces and the GPU's blocks, axes
(ints, tuples, negative), keepdims, ddof, NaN and inf, views, empty and 0-d inputs, float32 data
with a large mean (within NumPy's own error of the float64 answer), errors, device-resident inputs
and the forced streaming path."""
import math
import warnings

import numpy as np
import pytest

import gpuprims
from gp_testutils import ALL_DTYPES, SMALL_SIZES, assert_float_close, assert_same_kind_of_result, gp_call, make_data, \
    reduced_count, shape_axis_params, stream_params

cuda = pytest.mark.skipif(not gpuprims.cuda_available(), reason="CUDA not available")
FUNCS = ["var", "std"]


def reference(func, a, **kwargs):
    """NumPy's result on the float64 copy of `a` (two passes in float64, whatever dtype= asks for,
    but an inf where NumPy's own result overflows the dtype= asked for), and NumPy's own result."""
    wide = {key: value for key, value in kwargs.items() if key != "dtype"}
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore", RuntimeWarning)
        ref, own = getattr(np, func)(np.asarray(a, np.float64), **wide), getattr(np, func)(a, **kwargs)
        overflow = np.isinf(own) & np.isfinite(ref) & ("dtype" in kwargs)
        return (np.where(overflow, own, ref) if np.any(overflow) else ref), own


def check(func, a, got, **kwargs):
    """Same kind of result as NumPy's; values within a few float64 roundings per element (scaled by
    log2 n, and by the data's spread around its first elements) and one rounding to the result
    dtype of the float64 reference; the reference's own error on a near-constant slice (the
    square of a rounding of its mean) besides; or at least as close as NumPy's own result (whose
    dtype= may compute in float32)."""
    ref, expected = reference(func, a, **kwargs)
    what = f"{func}({kwargs})"
    assert_same_kind_of_result(got, expected, src=a, what=what)
    n = max(a.size // max(np.size(expected), 1), 1)
    res_dt = np.asarray(expected).dtype
    ulp = np.spacing(np.abs(np.asarray(ref, np.float64)).astype(res_dt)).astype(np.float64)
    finite = np.abs(np.asarray(a, np.float64))
    eps, largest = np.finfo(np.float64).eps, float(np.max(finite[np.isfinite(finite)], initial=0.0))
    tol = 256 * eps * math.log2(n + 1) * np.abs(ref) + ulp + 256 * (eps * largest) ** (1 if func == "std" else 2)
    with np.errstate(invalid="ignore"):
        numpy_error = np.abs(np.asarray(expected, np.float64) - np.asarray(ref, np.float64))
    tol = np.fmax(tol, np.where(np.isfinite(numpy_error), numpy_error, 0.0) + ulp)
    assert_float_close(got, ref, tol, what, res_dt=res_dt)


@pytest.mark.parametrize("n", SMALL_SIZES + [16384, 16385, 3 * 16384 + 5, 1_000_003])
@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("func", FUNCS)
def test_flat(device, rng, func, dtype, n):
    a = make_data(rng, dtype, n)
    for ddof in (0, 1):
        if n > ddof:
            check(func, a, gp_call(func, a, device, ddof=ddof), ddof=ddof)


@pytest.mark.parametrize("n", [1000, 65537, 1_000_003])
@pytest.mark.parametrize("func", FUNCS)
def test_float32_large_mean_within_numpys_error(device, rng, func, n):
    """float32 data of mean 1000 and unit spread: at least as close to the float64 answer as NumPy's
    own float32 result (or within one float32 ulp of it), whole and along each axis."""
    a = (1000 + rng.standard_normal(n)).astype(np.float32)
    for data, axis in ((a, None), (a[: n - n % 8].reshape(-1, 8), 0), (a[: n - n % 8].reshape(8, -1), 1)):
        ref, numpy_own = reference(func, data, axis=axis)
        got = gp_call(func, data, device, axis=axis)
        assert np.asarray(got).dtype == np.float32
        allowed = np.maximum(np.abs(numpy_own.astype(np.float64) - ref), np.spacing(np.float32(ref)))
        assert np.all(np.abs(np.asarray(got, np.float64) - ref) <= allowed), (got, numpy_own, ref)


@pytest.mark.parametrize("func", FUNCS)
def test_float64_far_from_zero(device, rng, func):
    """A mean of 1e8 with unit spread: the shifted sums and the pairwise combination keep the
    float64 result to about 1e-8 relative (naive sums of squares would lose every digit)."""
    a = 1e8 + rng.standard_normal(300_007)
    for axis, data in ((None, a), (1, a[:300_000].reshape(3, -1)), (0, a[:300_000].reshape(-1, 30))):
        ref, _ = reference(func, data, axis=axis)
        got = gp_call(func, data, device, axis=axis)
        assert np.allclose(got, ref, rtol=1e-7, atol=0), (got, ref)


@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("func", FUNCS)
def test_constant_data_is_exactly_zero(device, func, dtype):
    for shape, axis in (((70001,), None), ((33, 257), 0), ((257, 33), 1)):
        a = np.full(shape, 7 if dtype != "bool" else True, dtype)
        got = gp_call(func, a, device, axis=axis)
        assert np.all(np.asarray(got) == 0), got


AXIS_CASES = [((3, 5, 7), 0), ((3, 5, 7), 1), ((3, 5, 7), 2), ((3, 5, 7), -1), ((3, 5, 7), None),
              ((3, 5, 7), (0, 2)), ((3, 5, 7), (1, 2)), ((3, 5, 7), (-3, -2)), ((1000, 3), 0), ((3, 1000), 1),
              ((257, 129), 0), ((129, 257), 1), ((1, 7, 1), 1), ((5, 1), 1), ((40000, 2), 0), ((2, 40000), 1),
              ((33, 1, 65), 0), ((3, 2100, 5), 1), ((3, 2100, 5), (0, 2)), ((1100, 1030), 0)]


@pytest.mark.parametrize("shape,axis", shape_axis_params(AXIS_CASES))
@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("func", FUNCS)
def test_axis_keepdims_ddof(device, rng, func, dtype, shape, axis):
    a = make_data(rng, dtype, shape)
    if a.dtype.kind == "f":
        a.flat[rng.integers(0, a.size, size=a.size // 97 + 1)] = np.nan  # NaNs in some slices
        a.flat[rng.integers(0, a.size, size=2)] = np.inf
    for keepdims in (False, True):
        for ddof in (0, 1, 0.5):
            if reduced_count(shape, axis) > ddof:
                check(func, a, gp_call(func, a, device, axis=axis, keepdims=keepdims, ddof=ddof),
                      axis=axis, keepdims=keepdims, ddof=ddof)


@pytest.mark.parametrize("func", FUNCS)
def test_dtype_argument(device, rng, func):
    ints = make_data(rng, "int16", (300, 7))
    for dtype in ("float32", "float16", np.float64, "f8"):
        check(func, ints, gp_call(func, ints, device, dtype=dtype), dtype=dtype)
    halves = make_data(rng, "float16", 5000)
    check(func, halves, gp_call(func, halves, device, dtype="float32"), dtype="float32")
    small = np.arange(12, dtype=np.int32).reshape(3, 4)  # an integer dtype: NumPy's own computation
    for axis in (None, 0):
        try:
            expected = getattr(np, func)(small, axis=axis, dtype=np.int32)
        except TypeError:  # numpy.std cannot write an array's square roots as int32
            with pytest.raises(TypeError):
                gp_call(func, small, device, axis=axis, dtype=np.int32)
            continue
        got = gp_call(func, small, device, axis=axis, dtype=np.int32)
        assert_same_kind_of_result(got, expected, src=small)
        assert np.array_equal(got, expected)
    with pytest.raises(TypeError):
        gp_call(func, ints, device, dtype="complex64")
    with pytest.raises(TypeError):
        gp_call(func, ints, device, dtype="not a dtype")


@pytest.mark.parametrize("func", FUNCS)
def test_ddof_at_or_above_the_count_like_numpy(device, func):
    """N - ddof <= 0: NumPy's inf (NaN for a constant slice) with its RuntimeWarning."""
    for a, axis, ddof in ((np.array([1.0, 2.0]), None, 2), (np.array([1.0, 1.0]), None, 2),
                          (np.arange(6.0).reshape(2, 3), 0, 2), (np.arange(6, dtype=np.int8).reshape(2, 3), 1, 7.5)):
        with pytest.warns(RuntimeWarning, match="Degrees of freedom <= 0 for slice"):
            got = getattr(gpuprims, func)(a, axis=axis, ddof=ddof, device=device)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            expected = getattr(np, func)(a, axis=axis, ddof=ddof)
        assert_same_kind_of_result(got, expected, src=a)
        assert np.array_equal(got, expected, equal_nan=True)


@pytest.mark.parametrize("func", FUNCS + ["nanvar", "nanstd"])
def test_slices_of_one_element_not_finite_like_numpy(device, func):
    """A slice of one NaN or inf, along any axis (columns too): NumPy's x - mean is NaN, with its
    RuntimeWarning for an inf, where a finite x gives 0."""
    for a, axis in ((np.array([[np.nan, 1.0]]), 0), (np.array([[np.inf, 1.0]], np.float32), 0),
                    (np.ones((3, 1, 4)) * np.array([1, 1, 1, np.nan]), 1), (np.array([[-np.inf], [2.0]]), 1),
                    (np.array([[-np.inf, np.nan, 3.0]], np.float16), 0), (np.array([np.inf]), None)):
        for ddof in (0, 0.5):
            with warnings.catch_warnings(record=True) as numpy_warned:
                warnings.simplefilter("always")
                expected = getattr(np, func)(a, axis=axis, ddof=ddof)
            with warnings.catch_warnings(record=True) as warned:
                warnings.simplefilter("always")
                got = getattr(gpuprims, func)(a, axis=axis, ddof=ddof, device=device)
            assert [str(w.message) for w in warned] == [str(w.message) for w in numpy_warned]
            assert_same_kind_of_result(got, expected, src=a)
            assert np.array_equal(got, expected, equal_nan=True)


@pytest.mark.parametrize("func", FUNCS)
def test_empty_zero_dim_and_errors_like_numpy(device, func):
    for shape, axis in (((0,), None), ((3, 0), 1), ((0, 4), 0), ((0, 4), 1)):
        a = np.zeros(shape, np.float32)
        with warnings.catch_warnings(record=True) as numpy_warned:
            warnings.simplefilter("always")
            expected = getattr(np, func)(a, axis=axis)
        with warnings.catch_warnings(record=True) as warned:
            warnings.simplefilter("always")
            got = getattr(gpuprims, func)(a, axis=axis, device=device)
        assert bool(warned) == bool(numpy_warned)
        assert_same_kind_of_result(got, expected, src=a)
        assert np.array_equal(got, expected, equal_nan=True)
    for obj in (np.array(3.5), 2, [2, 9, 9, 1], [[1, 5], [5, 0]], True):
        a = np.asarray(obj)
        for axis in (None, -1) if a.ndim else (None,):
            for keepdims in (False, True):
                check(func, a, gp_call(func, obj, device, axis=axis, keepdims=keepdims), axis=axis,
                      keepdims=keepdims)
    a = np.arange(12.0).reshape(3, 4)
    with pytest.raises(np.exceptions.AxisError):
        gp_call(func, a, device, axis=2)
    with pytest.raises(np.exceptions.AxisError):
        gp_call(func, np.array(1.0), device, axis=0)
    with pytest.raises(TypeError):
        gp_call(func, a.astype(np.complex64), device)


@pytest.mark.parametrize("dtype", ["int16", "float32", "float64", "uint8", "float16"])
@pytest.mark.parametrize("func", FUNCS)
def test_views_and_strides(device, rng, func, dtype):
    base = make_data(rng, dtype, (40, 31))
    line = make_data(rng, dtype, 3001)
    for view in (line[::2], line[::-1], line[-2::-7], base.T, base[::-1, ::-2], base[3:30:2, 1:25:3],
                 np.asfortranarray(base), np.broadcast_to(base[0], (50, 31))):
        for axis in (None, 0, -1):
            check(func, view, gp_call(func, view, device, axis=axis), axis=axis)
    swapped = base.astype(base.dtype.newbyteorder())
    check(func, swapped, gp_call(func, swapped, device, axis=1), axis=1)


@cuda
@pytest.mark.parametrize("dtype", ["bool", "int8", "int64", "uint32", "float16", "float32", "float64"])
@pytest.mark.parametrize("func", FUNCS)
def test_device_resident(rng, func, dtype):
    a = make_data(rng, dtype, (300, 257))
    d = gpuprims.to_device(a)

    def tolerance(result_dtype):
        # float32 and float16 results are rounded from double; float64 keeps the one pass's own
        # rounding in double (its pairing differs from NumPy's two passes): ~n eps at worst
        return 2 * np.finfo(result_dtype).eps if result_dtype != np.float64 else 300 * np.finfo(np.float64).eps

    for axis in (None, 0, 1, (0, 1)):
        for keepdims in (False, True):
            got = getattr(gpuprims, func)(d, axis=axis, keepdims=keepdims, ddof=1)
            assert isinstance(got, gpuprims.DeviceArray)
            ref, expected = reference(func, a, axis=axis, keepdims=keepdims, ddof=1)
            assert got.dtype == np.asarray(expected).dtype and got.shape == np.shape(expected)
            assert np.allclose(got.get(), ref, rtol=tolerance(got.dtype), atol=0)
    view = d.transpose((1, 0))  # a strided device view: made contiguous on the device first
    ref, _ = reference(func, a.T, axis=1)
    got = getattr(gpuprims, func)(view, axis=1)
    assert np.allclose(got.get(), ref, rtol=tolerance(got.dtype))
    with pytest.warns(RuntimeWarning, match="Degrees of freedom"):
        assert isinstance(getattr(gpuprims, func)(d, axis=0, ddof=300), gpuprims.DeviceArray)


@cuda
@pytest.mark.parametrize("shape,axis,chunk", stream_params())
@pytest.mark.parametrize("dtype", ["int8", "uint64", "float16", "float32", "float64"])
@pytest.mark.parametrize("func", FUNCS)
def test_streamed(monkeypatch, rng, func, dtype, shape, axis, chunk):
    """Streaming forced on small arrays, cut into tiles of a few bytes: the running moments of cut
    columns are combined tile by tile."""
    a = make_data(rng, dtype, shape)
    if a.dtype.kind == "f":
        a = (a + 1000).astype(dtype)
    monkeypatch.setenv("GPUPRIMS_STREAM_MIN_BYTES", "0")
    monkeypatch.setenv("GPUPRIMS_STREAM_CHUNK_BYTES", str(chunk))
    assert gpuprims.explain(getattr(gpuprims, func), a, axis=axis, device="cuda")["route"] == "cuda-streamed"
    check(func, a, gp_call(func, a, "cuda", axis=axis, ddof=1), axis=axis, ddof=1)


@cuda
@pytest.mark.parametrize("func", FUNCS)
def test_streamed_under_device_cap(monkeypatch, rng, func):
    a = (1000 + make_data(rng, "float32", (1 << 20) + 7)).astype(np.float32)
    monkeypatch.setenv("GPUPRIMS_MAX_DEVICE_BYTES", str(1 << 20))
    check(func, a, gp_call(func, a, "cuda"))
