"""Scans that start from given values (gpuprims._scans.carried_prefix_sum, the scan of a chunk
after the chunks before it, which gpuprims.dask uses): every line along the axis starts from its
initial value, on every route (CPU, the GPU's resident, short and streamed routes, device data).

The reference is NumPy's cumsum of the initial values put before the data along the axis (in
float64 for floats, wrapping 64-bit integers), so an inclusive result is that cumsum without its
first slice and an exclusive one without its last.
"""
import math
import warnings

import numpy as np
import pytest

import gpuprims
from gpuprims import _scans
from gp_testutils import C_SUM, _eps, _spacing, _tiny, assert_float_close, make_data

CASES = [((1,), 0), ((7,), 0), ((65537,), 0), ((1_048_579,), 0), ((37, 53), 0), ((37, 53), 1),
         ((5, 7, 11), 1), ((5, 7, 11), 2), ((3, 40000), 1), ((20000, 3), 0), ((4, 0, 3), 1)]
DTYPES = ["bool", "int8", "int32", "uint8", "uint64", "float16", "float32", "float64"]


def _initial(rng, result_dtype, shape):
    """Random initial values of the result's dtype: large ones for integers (wrap-around)."""
    if result_dtype.kind == "f":
        return (rng.standard_normal(shape) * 100).astype(result_dtype)
    info = np.iinfo(result_dtype)
    return rng.integers(info.min, info.max, shape, dtype=result_dtype, endpoint=True)


def _expected(a, initial, axis, exclusive, result_dtype):
    """NumPy's cumsum of `initial` then `a` along `axis`, as the scan from `initial` returns it;
    floats in float64, with the summation bound as the tolerance."""
    float_result = result_dtype.kind == "f"
    work = np.float64 if float_result else result_dtype
    joined = np.concatenate([initial.astype(work), a.astype(work)], axis=axis)
    with np.errstate(all="ignore"):
        scanned = np.cumsum(joined, axis=axis, dtype=work)
        magnitude = np.cumsum(np.abs(joined), axis=axis) if float_result else None
    keep = [slice(None)] * a.ndim
    keep[axis] = slice(None, -1) if exclusive else slice(1, None)
    keep = tuple(keep)
    if not float_result:
        return scanned[keep], None
    n = a.shape[axis] + 1
    tol = C_SUM * _eps(result_dtype) * math.log2(n + 1) * magnitude[keep]
    return scanned[keep], tol + _spacing(result_dtype, scanned[keep]) + _tiny(result_dtype)


def _check(got, a, initial, axis, exclusive):
    result_dtype = np.cumsum(np.ones(1, a.dtype)).dtype
    expected, tol = _expected(a, initial, axis, exclusive, result_dtype)
    got = got.get() if hasattr(got, "get") and not isinstance(got, np.ndarray) else got
    assert got.dtype == result_dtype and got.shape == a.shape
    what = f"scan from initial values, {a.dtype} {a.shape} axis {axis} exclusive {exclusive}"
    if tol is None:
        assert np.array_equal(got, expected), what
    else:
        assert_float_close(got, expected, tol, what, result_dtype)


def _case(rng, dtype, shape, axis):
    a = make_data(rng, dtype, shape)
    line = list(shape)
    line[axis] = 1
    return a, _initial(rng, np.cumsum(np.ones(1, dtype)).dtype, tuple(line))


def _scan(a, initial, axis, exclusive, device):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # float16 data may overflow, as NumPy's
        return _scans.carried_prefix_sum(a, initial, axis, exclusive=exclusive, device=device)


@pytest.mark.parametrize("exclusive", [False, True])
@pytest.mark.parametrize("shape,axis", CASES)
@pytest.mark.parametrize("dtype", DTYPES)
def test_scan_from_initial_values(device, rng, dtype, shape, axis, exclusive):
    a, initial = _case(rng, dtype, shape, axis)
    _check(_scan(a, initial, axis, exclusive, device), a, initial, axis, exclusive)


@pytest.mark.parametrize("chunk", [8, 200, 4096])
@pytest.mark.parametrize("exclusive", [False, True])
@pytest.mark.parametrize("shape,axis", [((1009,), 0), ((37, 53), 0), ((37, 53), 1), ((5, 7, 11), 1)])
@pytest.mark.parametrize("dtype", ["int16", "uint32", "float16", "float32", "float64"])
def test_streamed_scan_from_initial_values(monkeypatch, rng, dtype, shape, axis, exclusive, chunk):
    """Tiles of whole slabs, and slabs cut into column blocks: each block's first tile along the
    axis starts from its rows' initial values."""
    if not gpuprims.cuda_available():
        pytest.skip("CUDA not available")
    monkeypatch.setenv("GPUPRIMS_STREAM_MIN_BYTES", "0")
    monkeypatch.setenv("GPUPRIMS_STREAM_CHUNK_BYTES", str(chunk))
    a, initial = _case(rng, dtype, shape, axis)
    _check(_scan(a, initial, axis, exclusive, "cuda"), a, initial, axis, exclusive)


@pytest.mark.parametrize("exclusive", [False, True])
@pytest.mark.parametrize("shape,axis", [((100003,), 0), ((37, 53), 0), ((5, 7, 11), 1)])
@pytest.mark.parametrize("dtype", ["int8", "uint64", "float32"])
def test_device_data_scan_from_initial_values(rng, dtype, shape, axis, exclusive):
    """Device data, with the initial values on the host or on the device."""
    if not gpuprims.cuda_available():
        pytest.skip("CUDA not available")
    a, initial = _case(rng, dtype, shape, axis)
    for given in (initial, gpuprims.to_device(initial)):
        got = _scan(gpuprims.to_device(a), given, axis, exclusive, None)
        assert isinstance(got, gpuprims.DeviceArray)
        _check(got, a, initial, axis, exclusive)


def test_initial_values_count_is_checked(device):
    a = np.ones((4, 5), np.float32)
    with pytest.raises(ValueError, match="initial values"):
        _scans.carried_prefix_sum(a, np.zeros(3, np.float32), 1, device=device)


def test_min_and_max_scans_from_initial_values(device, rng):
    """The core's initial values serve every operator: a running maximum from a given start."""
    from gpuprims import _core
    a = rng.integers(-100, 100, (6, 1000), dtype=np.int16)
    start = rng.integers(-50, 150, 6).astype(np.int64)
    out = np.empty_like(a)
    _core.scan(a, out, -1 if device == "cpu" else 0, 0, a.dtype.num, 6, 1000, 1, False, 3, False, start)
    expected = np.maximum.accumulate(np.concatenate([start[:, None].astype(np.int16), a], axis=1), axis=1)[:, 1:]
    assert np.array_equal(out, expected)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_floating_point_errors_count_the_initial_values(device, dtype):
    """An inf carried in is not an overflow of this scan; an overflow after a finite start is."""
    big = np.finfo(dtype).max
    finite = np.ones(1000, dtype)
    with np.errstate(over="raise", invalid="raise"):
        got = _scans.carried_prefix_sum(finite, np.array([np.inf], dtype), 0, device=device)
        assert np.isposinf(got).all()
        got = _scans.carried_prefix_sum(finite, np.array([np.nan], dtype), 0, device=device)
        assert np.isnan(got).all()
        with pytest.raises(FloatingPointError, match="overflow"):
            _scans.carried_prefix_sum(np.full(1000, big / 4, dtype), np.array([big / 2], dtype), 0, device=device)


@pytest.mark.parametrize("exclusive", [False, True])
@pytest.mark.parametrize("view,axis", [(lambda a: a[0, ::-1], 0), (lambda a: a[:, ::3], 1),
                                       (lambda a: a[::2, :1000].T, 1), (lambda a: a[:50, :500].T, 0)],
                         ids=["reversed", "stepped-rows", "transposed-rows", "transposed-columns"])
def test_views_scan_from_initial_values(device, rng, view, axis, exclusive):
    """Strided views: a line's initial value goes with the line of the view's logical shape."""
    v = view(make_data(rng, "float32", (300, 7001)))
    line = list(v.shape)
    line[axis] = 1
    initial = _initial(rng, np.dtype(np.float32), tuple(line))
    _check(_scan(v, initial, axis, exclusive, device), v, initial, axis, exclusive)
