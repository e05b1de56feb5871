"""any, all and count_nonzero against NumPy: every dtype, sizes, axis forms, keepdims, NaN and -0.0,
views, empty and 0-d inputs, result types, device-resident inputs and the forced streaming path."""
import numpy as np
import pytest

import gpuprims
from gp_testutils import ALL_DTYPES, FLOAT_DTYPES, SMALL_SIZES, assert_same_kind_of_result, gp_call, stream_params

cuda = pytest.mark.skipif(not gpuprims.cuda_available(), reason="CUDA not available")
FUNCS = ["any", "all", "count_nonzero"]


def check(func, a, got, axis=None, keepdims=False):
    expected = getattr(np, func)(a, axis=axis, keepdims=keepdims)
    if isinstance(expected, int):  # count_nonzero(axis=None) before NumPy 2.3
        assert type(got) is int, type(got)
    else:
        assert_same_kind_of_result(got, expected, src=a, what=f"{func}(axis={axis!r}, keepdims={keepdims})")
    assert np.array_equal(got, expected), (func, axis, np.asarray(got).ravel()[:8], np.asarray(expected).ravel()[:8])


def sparse(rng, dtype, shape, density):
    """Zeros with nonzero elements at `density` (floats: some -0.0 zeros and NaN nonzeros)."""
    dt = np.dtype(dtype)
    a = np.zeros(shape, dt)
    hit = rng.random(shape) < density
    a[hit] = 1 if dt.kind == "b" else 3
    if dt.kind == "f":
        a[~hit & (rng.random(shape) < 0.3)] = -0.0
        a[hit & (rng.random(shape) < 0.3)] = np.nan
    return a


def dense_but_one(dtype, shape, at):
    a = np.ones(shape, dtype)
    a.flat[at] = 0
    return a


@pytest.mark.parametrize("n", SMALL_SIZES + [16384, 16385, 3 * 16384 + 5, 1_000_003])
@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("func", FUNCS)
def test_flat(device, rng, func, dtype, n):
    cases = [sparse(rng, dtype, n, d) for d in (0.0, 1.0 / n, 0.5, 1.0)]
    cases += [dense_but_one(dtype, n, at) for at in (0, n // 2, n - 1)]
    for a in cases:
        check(func, a, gp_call(func, a, device))


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("func", FUNCS)
def test_nan_is_true_negative_zero_is_false(device, func, dtype):
    for values in ([np.nan], [-0.0], [0.0, -0.0], [np.nan, -0.0, 0.0], [np.inf, -np.inf], [1e-40, 0.0]):
        a = np.array(values, dtype)
        check(func, a, gp_call(func, a, device))
        b = np.tile(a[:, None], (1, 37))
        check(func, b, gp_call(func, b, device, axis=0), 0)


AXIS_CASES = [((3, 5, 7), None), ((3, 5, 7), 0), ((3, 5, 7), 1), ((3, 5, 7), 2), ((3, 5, 7), -1),
              ((3, 5, 7), (0, 2)), ((3, 5, 7), (0, 1, 2)), ((3, 5, 7), ()), ((1000, 3), 0), ((3, 1000), 1),
              ((257, 1030), 0), ((300, 257), 1), ((2, 3, 4, 5), (1, 3)), ((5, 1), 0), ((40000, 2), 0)]


@pytest.mark.parametrize("shape,axis", AXIS_CASES, ids=[f"{'x'.join(map(str, s))}-ax{a}".replace(" ", "")
                                                        for s, a in AXIS_CASES])
@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("func", FUNCS)
def test_axis_forms_and_keepdims(device, rng, func, dtype, shape, axis):
    for density in (0.002, 0.5, 0.998):
        a = sparse(rng, dtype, shape, density)
        for keepdims in (False, True):
            check(func, a, gp_call(func, a, device, axis=axis, keepdims=keepdims), axis, keepdims)


@pytest.mark.parametrize("dtype", ["int16", "float32", "uint64", "bool"])
@pytest.mark.parametrize("func", FUNCS)
def test_views(device, rng, func, dtype):
    base = sparse(rng, dtype, (40, 31), 0.3)
    for view in (base[::-1, ::-2], base.T, base[3:30:2, 1:25:3], np.broadcast_to(base[0], (50, 31))):
        for axis in (None, 0, 1, (0, 1)):
            check(func, view, gp_call(func, view, device, axis=axis), axis)


@pytest.mark.parametrize("func", FUNCS)
def test_empty_zero_dim_and_lists(device, func):
    for shape, axis in (((0,), None), ((3, 0), 1), ((3, 0), 0), ((0, 4), (0, 1)), ((2, 0, 3), ())):
        a = np.zeros(shape, np.float32)
        for keepdims in (False, True):
            check(func, a, gp_call(func, a, device, axis=axis, keepdims=keepdims), axis, keepdims)
    for obj in (np.array(0.0), np.array(-3, np.int8), [0, 2, 0], [[True, False]], 5.5):
        for axis in (None, 0, -1):
            check(func, np.asarray(obj), gp_call(func, obj, device, axis=axis), axis)
    with pytest.raises(np.exceptions.AxisError):
        gp_call(func, np.ones((2, 3)), device, axis=2)
    with pytest.raises(TypeError):
        gp_call(func, np.ones((2, 3)), device, axis=1.0)


@cuda
@pytest.mark.parametrize("dtype", ["bool", "int8", "uint64", "float16", "float32"])
@pytest.mark.parametrize("func", FUNCS)
def test_device_resident(rng, func, dtype):
    a = sparse(rng, dtype, (300, 257), 0.01)
    d = gpuprims.to_device(a)
    for axis in (None, 0, 1, (0, 1)):
        got = getattr(gpuprims, func)(d, axis=axis)
        expected = getattr(np, func)(a, axis=axis)
        assert isinstance(got, gpuprims.DeviceArray) and got.dtype == np.asarray(expected).dtype
        assert np.array_equal(got.get(), expected)


@cuda
@pytest.mark.parametrize("shape,axis,chunk", stream_params([((1009,), None), ((37, 53), 0), ((37, 53), 1), ((5, 7, 11), (0, 2)),
                                                           ((3, 40000), 1), ((20000, 3), 0)]))
@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("func", FUNCS)
def test_streamed(monkeypatch, rng, func, dtype, shape, axis, chunk):
    a = sparse(rng, dtype, shape, 0.01)
    monkeypatch.setenv("GPUPRIMS_STREAM_MIN_BYTES", "0")
    monkeypatch.setenv("GPUPRIMS_STREAM_CHUNK_BYTES", str(chunk))
    assert gpuprims.explain(getattr(gpuprims, func), a, axis=axis, device="cuda")["route"] == "cuda-streamed"
    check(func, a, gp_call(func, a, "cuda", axis=axis), axis)
