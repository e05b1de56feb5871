"""out= on every reduction that returns an array, and initial= on sum, prod, min and max, against
NumPy: shapes, dtypes (out's cast), empty selections, errors, host and device-resident data."""
import itertools
import warnings

import numpy as np
import pytest

import gpuprims
from gp_testutils import check_reduce, make_data

DTYPES = ["bool", "int8", "uint8", "int32", "int64", "uint64", "float16", "float32", "float64"]
AXES = [None, 0, 1, -1, (0, 2)]
cuda = pytest.mark.skipif(not gpuprims.cuda_available(), reason="CUDA not available")


def _check(got, expected, dtype):
    """`expected` up to the float rounding of a different summation order."""
    assert np.shape(got) == np.shape(expected)
    assert np.asarray(got).dtype == np.asarray(expected).dtype
    if np.asarray(expected).dtype.kind == "f":
        rtol = 4e-3 if np.dtype(dtype) == np.float16 or np.asarray(expected).dtype == np.float16 else 1e-5
        np.testing.assert_allclose(np.asarray(got, np.float64), np.asarray(expected, np.float64), rtol=rtol, atol=rtol)
    else:
        np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("func", ["sum", "prod", "min", "max"])
def test_initial(device, rng, func, dtype):
    a = make_data(rng, dtype, (5, 7, 3), "prod" if func == "prod" else "sum")
    initial = {"bool": True, "uint8": 3, "uint64": 3}.get(dtype, -3 if np.dtype(dtype).kind in "iu" else 0.5)
    for axis in AXES:
        for keepdims in (False, True):
            got = getattr(gpuprims, func)(a, axis=axis, keepdims=keepdims, initial=initial, device=device)
            expected = getattr(np, func)(a, axis=axis, keepdims=keepdims, initial=initial)
            assert type(got) is type(expected)
            _check(got, expected, dtype)


@pytest.mark.parametrize("func", ["sum", "prod", "min", "max"])
def test_initial_on_empty_selections(device, func):
    for shape, axis in (((0,), None), ((0, 3), 0), ((3, 0), 1), ((2, 0, 4), (0, 1))):
        a = np.zeros(shape, np.float32)
        got = getattr(gpuprims, func)(a, axis=axis, initial=7, device=device)
        _check(got, getattr(np, func)(a, axis=axis, initial=7), "float32")
    with pytest.raises(ValueError):  # no initial, no identity
        gpuprims.max(np.zeros((3, 0)), axis=1, device=device)


def test_initial_nan_and_conversion(device):
    a = np.array([1.0, np.nan, 2.0])
    assert np.isnan(gpuprims.max(a, initial=5.0, device=device))
    assert gpuprims.max(np.array([1, 2], np.int8), initial=100, device=device) == 100
    assert gpuprims.sum(np.arange(5, dtype=np.int8), initial=1.5, device=device) == np.sum(np.arange(5, dtype=np.int8),
                                                                                            initial=1.5)
    for func, a, initial in (("max", np.array([1], np.uint8), 300), ("min", np.arange(3), np.nan),
                             ("max", np.array([1], np.uint8), -1)):
        with warnings.catch_warnings():  # NumPy 1.26 converts out-of-range ints with a DeprecationWarning
            warnings.simplefilter("ignore", DeprecationWarning)
            try:
                expected = getattr(np, func)(a, initial=initial)
            except (OverflowError, ValueError) as error:  # NumPy 2 refuses them
                with pytest.raises(type(error)):
                    getattr(gpuprims, func)(a, initial=initial, device=device)
            else:
                _check(getattr(gpuprims, func)(a, initial=initial, device=device), expected, a.dtype)
    info = np.iinfo(np.int64)  # integer sums wrap, with initial too
    assert gpuprims.sum(np.array([info.max], np.int64), initial=1, device=device) == info.min


FUNCS = ["sum", "prod", "min", "max", "mean", "var", "std", "any", "all", "argmin", "argmax", "nansum", "nanprod",
         "nanmin", "nanmax", "nanmean", "nanvar", "nanstd", "nanargmin", "nanargmax"]


def _np_call(func, a, axis, out=None, keepdims=False):
    kwargs = {} if out is None else {"out": out}
    return getattr(np, func)(a, axis=axis, keepdims=keepdims, **kwargs)


@pytest.mark.parametrize("out_dtype", ["float64", "float32", "int64", "int32", "bool"])
@pytest.mark.parametrize("func", FUNCS)
def test_out_is_written_and_returned(device, rng, func, out_dtype):
    a = make_data(rng, "float32", (6, 9))
    a[2, 3] = np.nan if func.startswith("nan") else a[2, 3]
    if func.endswith(("argmin", "argmax")) and out_dtype.startswith("float"):
        out_dtype = "int64"
    if func in ("std", "nanmean", "nanvar", "nanstd") and not out_dtype.startswith("float"):
        # NumPy's sqrt cannot write it; the nan-moments of float input want a float out
        with pytest.raises(TypeError):
            getattr(gpuprims, func)(a, out=np.empty((), out_dtype), device=device)
        return
    for axis, keepdims in ((None, False), (0, False), (1, True), (None, True)):
        expected_shape = np.shape(_np_call(func, a, axis, keepdims=keepdims))
        out = np.full(expected_shape, 99, out_dtype)
        got = getattr(gpuprims, func)(a, axis=axis, out=out, keepdims=keepdims, device=device)
        assert got is out
        reference = np.empty_like(out)
        _np_call(func, a, axis, out=reference, keepdims=keepdims)
        _check(out, reference, "float32")


def test_out_of_the_results_own_layout_is_written_directly(device, rng):
    a = make_data(rng, "float64", (64, 33))
    out = np.empty(33)
    assert gpuprims.sum(a, axis=0, out=out, device=device) is out
    np.testing.assert_allclose(out, np.sum(a, axis=0), rtol=1e-12)
    strided = np.empty((33, 2))[:, 0]  # not contiguous: the result is cast into it
    assert gpuprims.max(a, axis=0, out=strided, device=device) is strided
    np.testing.assert_array_equal(strided, np.max(a, axis=0))


def test_out_with_initial_and_on_empty_input(device):
    a = np.arange(12, dtype=np.int32).reshape(3, 4)
    out = np.empty(4, np.int16)
    assert gpuprims.sum(a, axis=0, out=out, initial=10, device=device) is out
    np.testing.assert_array_equal(out, np.sum(a, axis=0, initial=10))
    out = np.empty(3)
    assert gpuprims.sum(np.zeros((3, 0)), axis=1, out=out, device=device) is out
    np.testing.assert_array_equal(out, 0)
    out = np.empty((), np.float64)
    with pytest.warns(RuntimeWarning):
        assert gpuprims.mean(np.zeros(0), out=out, device=device) is out
    assert np.isnan(out)


def test_out_errors_like_numpy(device):
    a = np.ones((3, 4), np.float32)
    with pytest.raises(ValueError):
        gpuprims.sum(a, axis=0, out=np.empty((1, 4)), device=device)  # keepdims' shape without keepdims
    with pytest.raises(ValueError):
        gpuprims.sum(a, out=np.empty(1), device=device)  # a full reduction's out is 0-d
    with pytest.raises(TypeError):
        gpuprims.sum(a, axis=0, out=[0, 0, 0, 0], device=device)
    for dtype in ("float64", "uint64"):
        with pytest.raises(TypeError):
            gpuprims.argmax(a, axis=0, out=np.empty(4, dtype), device=device)
    for function in (gpuprims.argmax, gpuprims.nanargmin):  # NumPy checks the shape before the dtype
        with pytest.raises(ValueError):
            function(a, axis=0, out=np.empty(3, "float64"), device=device)
    readonly = np.empty(4)
    readonly.flags.writeable = False
    with pytest.raises(ValueError):
        gpuprims.max(a, axis=0, out=readonly, device=device)


@pytest.mark.parametrize("func", FUNCS)
def test_out_that_is_no_array_is_a_typeerror(device, func):
    """An out= that is not an array: TypeError before anything is computed, as NumPy's reductions
    (not the AttributeError of NumPy's nanmean, nanvar and nanstd, nor an empty min's ValueError)."""
    for a in (np.ones(3), np.zeros(0)):
        for out in ([0.0], 0.0, "x"):
            with pytest.raises(TypeError), warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)  # an empty mean's
                getattr(gpuprims, func)(a, out=out, device=device)


def test_quick_lane_leaves_out_and_initial_alone():
    a = np.arange(64, dtype=np.float32)
    gpuprims.sum(a, device="cpu")
    gpuprims.sum(a, device="cpu")  # replayed by the lane from now on
    assert gpuprims.sum(a, initial=1, device="cpu") == np.sum(a) + 1
    out = np.empty((), np.float32)
    assert gpuprims.sum(a, out=out, device="cpu") is out and out == np.sum(a)


@cuda
def test_device_resident_out_and_initial(rng):
    a = make_data(rng, "float32", (40, 30))
    d = gpuprims.to_device(a)
    out = gpuprims.to_device(np.zeros(30, np.float32))
    assert gpuprims.sum(d, axis=0, out=out) is out
    check_reduce("sum", a, out.get(), axis=0)  # a bound on the summation's error (columns may cancel)
    got = gpuprims.max(d, axis=1, initial=0.5)
    assert isinstance(got, gpuprims.DeviceArray)
    np.testing.assert_array_equal(got.get(), np.max(a, axis=1, initial=0.5))
    with pytest.raises(TypeError):
        gpuprims.sum(d, axis=0, out=np.zeros(30, np.float32))  # a host out for device data


@pytest.mark.parametrize("func", ["nansum", "nanprod", "nanmin", "nanmax"])
def test_initial_of_the_nan_functions(device, rng, func):
    a = make_data(rng, "float64", (6, 5), "prod" if func == "nanprod" else "sum")
    a[1, :] = np.nan
    a[3, 2] = np.nan
    for axis in (None, 0, 1):
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # initial fills the slice of NaNs: no All-NaN warning
            got = getattr(gpuprims, func)(a, axis=axis, initial=0.25, device=device)
        _check(got, getattr(np, func)(a, axis=axis, initial=0.25), "float64")
    _check(getattr(gpuprims, func)(np.zeros(0), initial=3.0, device=device), getattr(np, func)(np.zeros(0), initial=3.0),
           "float64")


@pytest.mark.parametrize("func", ["sum", "prod", "nansum", "nanprod", "min", "max", "nanmin", "nanmax"])
def test_initial_in_a_narrow_result_dtype(device, func):
    """initial= is folded in the result's dtype, as NumPy reduces in it: a narrow integer result wraps,
    a bool sum stays a logical or, and a Python int out of the dtype's range is NumPy 2's OverflowError."""
    a = np.array([[100, 100, 3], [100, 27, 0]], np.int8)
    dtypes = ("int8", "int16", "uint8", "bool") if func.endswith(("sum", "prod")) else (None,)
    for dtype, initial, (axis, keepdims) in itertools.product(dtypes, (100, 10, 1, 0, -2**40),
                                                            ((None, False), (1, False), (0, True))):
        kwargs = {"axis": axis, "keepdims": keepdims, "initial": initial}
        if dtype is not None:
            kwargs["dtype"] = dtype
        with warnings.catch_warnings():  # NumPy 1.26 converts out-of-range ints with a DeprecationWarning
            warnings.simplefilter("ignore", DeprecationWarning)
            try:
                expected = getattr(np, func)(a, **kwargs)
            except OverflowError:  # NumPy 2 refuses them
                with pytest.raises(OverflowError):
                    getattr(gpuprims, func)(a, device=device, **kwargs)
                continue
            got = getattr(gpuprims, func)(a, device=device, **kwargs)
            assert type(got) is type(expected)
            _check(got, expected, a.dtype)
            out, reference = np.full(np.shape(expected), 99, np.int64), np.empty(np.shape(expected), np.int64)
            assert getattr(gpuprims, func)(a, out=out, device=device, **kwargs) is out
            getattr(np, func)(a, out=reference, **kwargs)
            _check(out, reference, a.dtype)


@pytest.mark.parametrize("func", ["sum", "prod", "nansum", "nanprod", "min", "max", "nanmin", "nanmax", "mean"])
def test_out_sets_the_loop_dtype(device, func):
    """Without dtype=, NumPy's reductions compute in the promotion of out's dtype and the input's:
    int64 sums into a float64 out do not wrap around, int8's `initial` is an int64 or a float
    there, and float32 means into a float64 out are summed in float64."""
    big = np.array([[1, 2**62, 2**62], [2**40, 2**40, 3]], np.int64)
    small = np.array([[100, 100, 3], [100, 27, 0]], np.int8)
    floats = np.random.default_rng(7).random((3, 1001), np.float32)
    cases = [(big, np.float64, {}), (small, np.float64, {"initial": 1.5}), (small, np.int64, {"initial": -2**40}),
             (small[:0], np.int64, {"initial": 2**40}), (floats, np.float64, {})]
    for a, out_dtype, extra in cases:
        if func == "mean":
            extra = {}
        for axis in (None, 0, 1):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)  # an empty mean's; prod's float overflow
                try:
                    shape = np.shape(getattr(np, func)(a.astype(out_dtype), axis=axis, **extra))
                except ValueError:  # an empty selection's min without initial
                    continue
                expected, out = np.full(shape, 99, out_dtype), np.full(shape, 99, out_dtype)
                getattr(np, func)(a, axis=axis, out=expected, **extra)
                assert getattr(gpuprims, func)(a, axis=axis, out=out, device=device, **extra) is out
            np.testing.assert_allclose(out, expected, rtol=1e-13, atol=0, err_msg=f"{a.dtype} {axis} {extra}")


@pytest.mark.parametrize("func", ["sum", "prod", "min", "max", "argmin", "argmax", "nansum", "nanmax"])
def test_out_overlapping_the_input(device, func):
    """An out= that overlaps the input (one of its rows) gets NumPy's result: the reduction of the
    input as it was before (NumPy buffers the result)."""
    for shape, axis, row in (((4, 4), 1, 3), ((4, 4), 1, 0), ((300, 300), 1, -1), ((300, 300), 1, 150),
                             ((300, 300), 0, -1), ((300, 300), 0, 0)):
        base = (np.arange(shape[0] * shape[1]) * 5 % 17 + 1).astype(np.int64).reshape(shape)
        expected = base.copy()
        expected[row] = getattr(np, func)(base, axis=axis)
        a = base.copy()
        out = a[row]
        assert getattr(gpuprims, func)(a, axis=axis, out=out, device=device) is out
        np.testing.assert_array_equal(a, expected)
    if not func.startswith("arg"):  # no axis reduced: out= the input itself
        a = np.arange(12.0).reshape(3, 4)
        assert getattr(gpuprims, func)(a, axis=(), out=a, device=device) is a
        np.testing.assert_array_equal(a, np.arange(12.0).reshape(3, 4))


@cuda
@pytest.mark.parametrize("func", ["sum", "argmax"])
def test_device_resident_out_overlapping_the_input(func):
    base = (np.arange(300 * 300) * 5 % 17 + 1).astype(np.int64).reshape(300, 300)
    expected = base.copy()
    expected[-1] = getattr(np, func)(base, axis=1)
    d = gpuprims.to_device(base)
    last_row = gpuprims.DeviceArray(d, d.ptr + 299 * 300 * d.itemsize, (300,), d.dtype, (d.itemsize,), d.device_index)
    assert getattr(gpuprims, func)(d, axis=1, out=last_row) is last_row
    np.testing.assert_array_equal(d.get(), expected)
