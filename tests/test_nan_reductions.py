"""The nan-reductions (nansum, nanprod, nanmin, nanmax, nanmean, nanvar, nanstd, nanargmin,
nanargmax) against NumPy: every dtype (integers and bool are the plain reductions), axis forms,
keepdims, NaN at every lane of a 64-byte vector, at the ends and across the CPU's pieces, slices of
NaNs with NumPy's warnings and errors, NumPy's ties of NaN with +-inf in nanargmin/nanargmax,
views, 0-d and empty inputs, dtype=, thread counts, the quick lane, device-resident inputs and the
forced streaming path."""
import math
import warnings

import numpy as np
import pytest

import gpuprims
from gpuprims import _core
from gpuprims._plan import QUICK_SLOTS
from gp_testutils import (ALL_DTYPES, C_SUM, FLOAT_DTYPES, INT_DTYPES, SMALL_SIZES, assert_float_close,
                          assert_same_kind_of_result, gp_call, make_data, shape_axis_params)
from test_var_std import check as check_moments

cuda = pytest.mark.skipif(not gpuprims.cuda_available(), reason="CUDA not available")

FUNCS = ["nansum", "nanprod", "nanmin", "nanmax", "nanmean", "nanvar", "nanstd", "nanargmin", "nanargmax"]
ARG_FUNCS = ("nanargmin", "nanargmax")
EXACT_FUNCS = ("nanmin", "nanmax") + ARG_FUNCS
# The message of NumPy's warning (or argmin's ValueError) for a slice without numbers.
ALL_NAN_MESSAGE = {"nanmin": "All-NaN slice", "nanmax": "All-NaN slice", "nanmean": "Mean of empty slice",
                   "nanvar": "Degrees of freedom", "nanstd": "Degrees of freedom",
                   "nanargmin": "All-NaN slice", "nanargmax": "All-NaN slice"}

CASES = [((1000,), None), ((1000,), 0), ((37, 53), 0), ((37, 53), 1), ((37, 53), -1), ((37, 53), None),
         ((5, 7, 11), (0, 2)), ((5, 7, 11), (1, 2)), ((5, 7, 11), (-1, 0)), ((3, 40000), 1), ((20000, 3), 0),
         ((2, 3, 4, 5), (1, 3))]


def _data(rng, dtype, shape, func, nan_share=0.2):
    """Random data for `func`, a share of it NaN for float dtypes (products: factors near 1)."""
    a = make_data(rng, dtype, shape, "prod" if func == "nanprod" else "sum")
    if a.dtype.kind == "f" and nan_share:
        a[rng.random(a.shape) < nan_share] = np.nan
    return a


def _numpy(func, a, **kwargs):
    """NumPy's result, or the exception it raises, warnings silenced."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        try:
            return getattr(np, func)(a, **kwargs)
        except (ValueError, TypeError) as error:
            return error


def check(func, a, got, **kwargs):
    """gpuprims' `got` against NumPy's answer: its kind of result and dtype; exact for the
    comparisons, integers and bool; float sums and means within a summation bound of the float64
    answer, products within a relative bound, var and std as test_var_std checks them."""
    expected = _numpy(func, a, **kwargs)
    what = f"{func}({kwargs}) of {a.dtype}{a.shape}"
    if func in ("nanvar", "nanstd"):
        check_moments(func, a, got, **kwargs)
        return
    assert_same_kind_of_result(got, expected, src=a, what=what)
    if func in EXACT_FUNCS or expected.dtype.kind in "biu":
        assert np.array_equal(got, expected, equal_nan=True), f"{what}: got {got}, expected {expected}"
        return
    wide = np.asarray(a, np.longdouble)  # exact for every integer dtype where long double is wider
    axis, keepdims = kwargs.get("axis"), kwargs.get("keepdims", False)
    numbers = np.sum(~np.isnan(wide), axis=axis, keepdims=keepdims)
    n = a.size // max(np.size(expected), 1)
    res_dt = expected.dtype
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore", RuntimeWarning)
        ref = getattr(np, func)(wide, axis=axis, keepdims=keepdims).astype(np.float64)
        spacing = np.spacing(np.abs(ref).astype(res_dt)).astype(np.float64)
        tiny = float(np.finfo(res_dt).smallest_subnormal) * 4
        eps = float(np.finfo(np.float32 if res_dt == np.float16 else res_dt).eps)
        if func == "nanprod":
            tol = (4 * math.sqrt(n) + 4) * float(np.finfo(res_dt).eps) * np.abs(ref) + tiny
        else:
            tol = C_SUM * eps * math.log2(n + 1) * np.nansum(np.abs(wide), axis=axis, keepdims=keepdims)
            if func == "nanmean":
                tol = tol / np.maximum(numbers, 1)
            tol = tol + spacing + tiny
        # never less accurate than NumPy's own result (a column sum in NumPy adds row after row)
        numpy_error = np.abs(np.asarray(expected, np.float64) - ref)
        tol = np.fmax(tol, np.where(np.isfinite(numpy_error), numpy_error, 0.0) + spacing)
    assert_float_close(got, ref, tol, what, res_dt)


def _call_or_error(func, a, device, **kwargs):
    try:
        return gp_call(func, a, device, **kwargs)
    except (ValueError, TypeError) as error:
        return error


def check_call(func, a, device, **kwargs):
    """gpuprims.<func>(a, device=device, **kwargs) checked against NumPy, its ValueErrors and
    TypeErrors included."""
    expected = _numpy(func, a, **kwargs)
    got = _call_or_error(func, a, device, **kwargs)
    if isinstance(expected, Exception) or isinstance(got, Exception):
        assert type(got) is type(expected), f"{func}{kwargs}: got {got!r}, NumPy {expected!r}"
        return
    check(func, a, got, **kwargs)


@pytest.mark.parametrize("func", FUNCS)
@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("shape,axis", shape_axis_params(CASES))
def test_matches_numpy(device, rng, func, dtype, shape, axis):
    if func in ARG_FUNCS and isinstance(axis, tuple):
        axis = None
    a = _data(rng, dtype, shape, func)
    check_call(func, a, device, axis=axis)
    if func not in ARG_FUNCS or axis is not None:
        check_call(func, a, device, axis=axis, keepdims=True)


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("position", range(64))
def test_nan_at_every_lane_position(device, rng, dtype, position):
    """One NaN at each lane of the first 64 elements (a 64-byte vector of every dtype and more),
    in rows (contiguous) and columns (strided)."""
    for n in (64, 129):
        a = _data(rng, dtype, n, "nansum", nan_share=0)
        a[position] = np.nan
        for func in FUNCS:
            check_call(func, a, device)
            check_call(func, np.ascontiguousarray(np.stack([a, a[::-1]], axis=1)), device, axis=0)


PIECE = 16384  # the CPU backend's piece (GP_CPU_PIECE)


@pytest.mark.parametrize("func", FUNCS)
@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("where", ["first", "last", "piece-ends", "first-piece", "all-but-last", "none"])
def test_nan_across_pieces(device, rng, func, dtype, where):
    n = 3 * PIECE + 5
    a = _data(rng, dtype, n, func, nan_share=0)
    if where == "first":
        a[0] = np.nan
    elif where == "last":
        a[-1] = np.nan
    elif where == "piece-ends":
        a[[PIECE - 1, PIECE, 2 * PIECE - 1, 2 * PIECE]] = np.nan
    elif where == "first-piece":
        a[:PIECE] = np.nan
    elif where == "all-but-last":
        a[:-1] = np.nan
    check_call(func, a, device)
    check_call(func, a.reshape(1, n), device, axis=1)


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("func", FUNCS)
@pytest.mark.parametrize("shape,axis", shape_axis_params([((4, 9), 1), ((9, 4), 0), ((3, 40000), 1), ((5, 6), None)]))
def test_slices_of_nans(device, rng, func, dtype, shape, axis):
    """A slice without numbers: NaN with NumPy's RuntimeWarning, argmin's ValueError, a sum of 0,
    a product of 1."""
    a = _data(rng, dtype, shape, func, nan_share=0.3)
    if axis is None:
        a[...] = np.nan
    elif axis == 1:
        a[1] = np.nan
    else:
        a[:, 2] = np.nan
    if func in ARG_FUNCS:
        with pytest.raises(ValueError, match="All-NaN slice encountered"):
            gpuprims.__dict__[func](a, axis=axis, device=device)
        return
    if func in ALL_NAN_MESSAGE:
        with pytest.warns(RuntimeWarning, match=ALL_NAN_MESSAGE[func]):
            got = gpuprims.__dict__[func](a, axis=axis, device=device)
    else:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            got = gpuprims.__dict__[func](a, axis=axis, device=device)
        empty = np.asarray(got)[1] if axis == 1 else np.asarray(got)[2] if axis == 0 else got
        assert empty == (0 if func == "nansum" else 1)
    check(func, a, got, axis=axis)


@pytest.mark.parametrize("func", ["nanmin", "nanmax", "nanmean", "nanvar", "nanstd", "nanargmin", "nanargmax"])
@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_no_warning_where_every_slice_has_numbers(device, rng, func, dtype):
    """A NaN the data's own arithmetic makes (inf - inf) is no slice of NaNs: no empty-slice
    warning, only NumPy's own floating-point one (its sum's "invalid value encountered")."""
    a = _data(rng, dtype, (6, 50), func, nan_share=0.3)
    a[:, 0] = 1
    a[2, 1:3] = [np.inf, -np.inf]
    got, got_warnings = _outcome(gpuprims.__dict__[func], a, axis=1, device=device)
    _, numpy_warnings = _outcome(getattr(np, func), a, axis=1)
    assert got_warnings == numpy_warnings
    assert not any("slice" in message for message in got_warnings)
    check(func, a, got, axis=1)


@pytest.mark.parametrize("func", ["nanvar", "nanstd"])
@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_ddof_above_a_slices_numbers(device, rng, func, dtype):
    a = _data(rng, dtype, (4, 30), func, nan_share=0)
    a[1, 1:] = np.nan  # one number: ddof 1 leaves no degree of freedom
    with pytest.warns(RuntimeWarning, match="Degrees of freedom"):
        got = gpuprims.__dict__[func](a, axis=1, ddof=1, device=device)
    check(func, a, got, axis=1, ddof=1)
    with pytest.warns(RuntimeWarning, match="Degrees of freedom"):
        got = gpuprims.__dict__[func](a, axis=1, ddof=30, device=device)  # NumPy's own: ddof above every count
    check(func, a, got, axis=1, ddof=30)


@pytest.mark.parametrize("func", FUNCS)
@pytest.mark.parametrize("dtype", ["bool"] + INT_DTYPES)
def test_integers_are_the_plain_reductions(device, rng, func, dtype):
    a = _data(rng, dtype, (17, 33), func)
    plain = getattr(gpuprims, func[3:])
    for axis in (None, 0):
        got = gp_call(func, a, device, axis=axis)
        assert type(got) is type(plain(a, axis=axis, device=device))
        np.testing.assert_array_equal(got, plain(a, axis=axis, device=device))
        check(func, a, got, axis=axis)


@pytest.mark.parametrize("func", ARG_FUNCS)
@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("values", [[np.nan, np.inf, np.inf], [np.inf, np.nan, 1.0], [np.nan, -np.inf, -np.inf],
                                    [np.nan, np.nan, np.inf, -np.inf], [3.0, 1.0, np.nan, 1.0, 3.0],
                                    [0.0, -0.0, np.nan], [-0.0, 0.0, np.nan], [np.nan, 2.0, 2.0, np.nan]])
def test_ties_and_infinities(device, func, dtype, values):
    """Ties go to the first; a NaN reads as +inf (argmin) or -inf (argmax), as NumPy's."""
    a = np.array(values, dtype)
    check_call(func, a, device)
    check_call(func, a[::-1], device)
    columns = np.stack([a, a[::-1], a], axis=1)
    check_call(func, columns, device, axis=0)
    for rows in (300, 700):  # the CPU's narrow columns, within one block of 512 rows and across two
        tall = np.full((rows, 3), np.nan, dtype)
        tall[-len(a):] = columns
        check_call(func, tall, device, axis=0)
    long = np.full(PIECE + 7, np.nan, dtype)  # the tie in a later CPU piece
    long[-len(a):] = a
    check_call(func, long, device)


@pytest.mark.parametrize("func", FUNCS)
@pytest.mark.parametrize("dtype", ["float32", "float16", "int16"])
def test_views_and_negative_strides(device, rng, func, dtype):
    base = _data(rng, dtype, (20, 31), func)
    for view, axis in ((base[::-1], 0), (base[:, ::-2], 1), (base.T, 0), (base[3:17:3, 5:], None),
                       (base.T[::-1], None)):
        check_call(func, view, device, axis=axis)


@pytest.mark.parametrize("func", FUNCS)
@pytest.mark.parametrize("dtype", ["float64", "float32", "int32"])
def test_zero_d_and_empty(device, func, dtype):
    for value in (np.nan, 2.5):
        if np.dtype(dtype).kind != "f" and value != value:
            continue
        check_call(func, np.array(value, dtype), device)
    for shape, axis in (((0,), None), ((0, 3), 0), ((0, 3), 1), ((3, 0), 1), ((3, 0), 0)):
        if func in ARG_FUNCS and axis is None and len(shape) > 1:
            continue
        check_call(func, np.zeros(shape, dtype), device, axis=axis)


def _outcome(function, a, **kwargs):
    """The value (or the exception's type) and the warnings' messages of one call."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            value = function(a, **kwargs)
        except Exception as error:  # noqa: BLE001 - the type is the outcome compared
            value = type(error)
    return value, sorted(str(w.message) for w in caught)


@pytest.mark.parametrize("func", FUNCS + ["mean", "var", "std"])
@pytest.mark.parametrize("dtype", ["float64", "float32", "int32", "bool"])
@pytest.mark.parametrize("axis", [0, -1, 1, (0,), (), (0, 1), True, False])
def test_axes_of_small_arrays_as_numpy_reads_them(device, func, dtype, axis):
    """NumPy reduces a 0-d array along axis 0 or -1 in its nan-functions of floats (through
    numpy.sum) but not in numpy.mean and numpy.var, nor for integers (which the nan-functions hand
    to those); mean and var check a bool axis's range before refusing its type; nanargmin checks
    its slices of NaNs along a tuple of axes before refusing the tuple.  Same values, same errors,
    same warnings."""
    for value in (np.nan, 2.5, [2.5, np.nan, 1.0], [2.5, 0.5, 1.0]):
        if np.dtype(dtype).kind != "f" and np.isnan(value).any():
            continue
        a = np.array(value, dtype)
        expected = _outcome(getattr(np, func), a, axis=axis)
        got = _outcome(getattr(gpuprims, func), a, axis=axis, device=device)
        assert got[1] == expected[1], a
        if isinstance(expected[0], type):
            assert got[0] is expected[0], a
        else:  # a sum of three elements: within a few roundings of NumPy's
            assert_same_kind_of_result(got[0], expected[0])
            eps = np.finfo(expected[0].dtype).eps if expected[0].dtype.kind == "f" else 0
            np.testing.assert_allclose(got[0], expected[0], rtol=8 * eps, atol=0)


@pytest.mark.parametrize("func", ["nansum", "nanmax", "nanargmin", "nanmean"])
@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("n", SMALL_SIZES)
def test_sizes(device, rng, func, dtype, n):
    a = _data(rng, dtype, n, func, nan_share=0.1)
    a[0] = 1
    check_call(func, a, device)


@pytest.mark.parametrize("func,dtype", [("nansum", "float64"), ("nansum", "int64"), ("nanprod", "float64"),
                                        ("nansum", "int8"), ("nansum", "bool"), ("nanmean", "float64"),
                                        ("nanmean", "float16"), ("nanvar", "float32"), ("nanstd", "float64"),
                                        ("nanmean", "int64")])
@pytest.mark.parametrize("in_dtype", ["float16", "float32", "float64"])
def test_dtype_argument(device, rng, func, dtype, in_dtype):
    """dtype=: float accumulators in the kernels; integer ones NumPy's own (NaN cast after)."""
    a = _data(rng, in_dtype, (9, 40), func)
    for axis in (None, 1):
        check_call(func, a, device, axis=axis, dtype=np.dtype(dtype))


def test_same_bits_for_one_and_two_threads(rng):
    threads = gpuprims.get_num_threads()
    a = _data(rng, "float32", (3, 5 * PIECE + 3), "nansum", nan_share=0.1)
    columns = np.ascontiguousarray(a.T)
    try:
        results = []
        for count in (1, 2):
            gpuprims.set_num_threads(count)
            results.append([gp_call(func, x, "cpu", axis=axis) for func in FUNCS
                            for x, axis in ((a, 1), (a, None), (columns, 0))])
    finally:
        gpuprims.set_num_threads(threads)
    for one, two in zip(*results):
        assert np.array_equal(one, two, equal_nan=True)
        assert np.asarray(one).tobytes() == np.asarray(two).tobytes()


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_every_instruction_set_gives_the_same_bits(rng, dtype):
    """The baseline, AVX2 and AVX-512 loops agree bit for bit (those this CPU runs); var and std
    too, whose loops the NaN-skipping moments share (their tails once added other lanes per
    instruction set)."""
    best = gpuprims._core.cpu_info()["isa"]
    order = ["baseline", "avx2", "avx512"]
    a = _data(rng, dtype, (5, 2 * PIECE + 77), "nansum", nan_share=0.2)
    a[1] = np.nan
    a[2, :PIECE + 3] = np.nan
    a[3, 7] = np.inf
    a[4, 9] = -np.inf
    calls = [(func, x, axis) for func in FUNCS + ["var", "std"] for x, axis in ((a, 1), (np.ascontiguousarray(a.T), 0))
             if func not in ARG_FUNCS]
    calls += [(func, _data(rng, dtype, n, func, nan_share=0), None) for func in ("var", "nanmean") for n in (3, 13, 77)]
    calls += [(func, x, axis) for func in ARG_FUNCS for x, axis in ((a[[0, 3, 4]], 1), (a[[0, 3, 4]].T.copy(), 0))]
    results = {}
    try:
        for name in order[:order.index(best) + 1]:
            gpuprims._core._set_cpu_isa(name)
            results[name] = [np.asarray(gp_call(func, x, "cpu", axis=axis)).tobytes() for func, x, axis in calls]
    finally:
        gpuprims._core._set_cpu_isa(best)
    for name, got in results.items():
        for (func, _, axis), base, vector in zip(calls, results["baseline"], got):
            assert base == vector, f"{func}(axis={axis}): {name} differs from the baseline"


def _learned(name, a, device=None):
    return _core.quick(QUICK_SLOTS[name], a, device) is not NotImplemented


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64", "int32"])
@pytest.mark.parametrize("func", ["nansum", "nanprod", "nanmin", "nanmax", "nanargmin", "nanargmax"])
def test_quick_lane_keeps_the_nan_rule(rng, func, dtype):
    """The lane replays a nan-function with its NaN rule, never as the plain function, nor the
    plain function as the nan-function, whichever taught it first; and its all-NaN warnings and
    errors still come."""
    plain = func[3:]
    a = _data(rng, dtype, 97, func, nan_share=0)
    if a.dtype.kind == "f":
        a[5] = np.nan
    for first, second in ((plain, func), (func, plain)):
        for name in (first, second, first, second):
            if name == func:
                check_call(func, a, "cpu")
            else:  # the plain function: NaN wins
                np.testing.assert_array_equal(gp_call(plain, a, "cpu"), getattr(np, plain)(a))
        # integer nanargmin/nanargmax are argmin/argmax, whose lane answers them
        assert _learned(plain, a, "cpu") and (_learned(func, a, "cpu") or (func in ARG_FUNCS and a.dtype.kind != "f"))
    if a.dtype.kind == "f":
        nans = np.full(33, np.nan, dtype)
        for _ in range(2):
            if func in ARG_FUNCS:
                with pytest.raises(ValueError, match="All-NaN"):
                    getattr(gpuprims, func)(nans, device="cpu")
            elif func in ALL_NAN_MESSAGE:
                with pytest.warns(RuntimeWarning, match="All-NaN"):
                    assert np.isnan(getattr(gpuprims, func)(nans, device="cpu"))


@cuda
@pytest.mark.parametrize("func", FUNCS)
@pytest.mark.parametrize("dtype", ["float16", "float32", "float64", "int32"])
def test_device_resident(rng, func, dtype):
    a = _data(rng, dtype, (37, 53), func)
    a[:, 0] = 1  # every slice has a number
    d = gpuprims.to_device(a)
    for axis in (None, 0, 1):
        got = gp_call(func, d, None, axis=axis)
        assert isinstance(got, gpuprims.DeviceArray)
        host = gp_call(func, a, "cuda", axis=axis)
        check(func, a, host, axis=axis)
        np.testing.assert_array_equal(got.get(), np.asarray(host))
    if a.dtype.kind == "f":
        a[3] = np.nan
        d = gpuprims.to_device(a)
        if func in ARG_FUNCS:
            with pytest.raises(ValueError, match="All-NaN"):
                getattr(gpuprims, func)(d, axis=1)
        elif func in ALL_NAN_MESSAGE:
            with pytest.warns(RuntimeWarning, match=ALL_NAN_MESSAGE[func]):
                got = getattr(gpuprims, func)(d, axis=1)
            assert isinstance(got, gpuprims.DeviceArray) and np.isnan(got.get()[3])


@cuda
@pytest.mark.parametrize("chunk", [8, 200, 4096])
@pytest.mark.parametrize("shape,axis", shape_axis_params([((1009,), None), ((37, 53), 0), ((37, 53), 1),
                                                          ((5, 7, 11), (0, 2))]))
@pytest.mark.parametrize("func", FUNCS)
@pytest.mark.parametrize("dtype", ["float16", "float32", "float64", "int16"])
def test_streamed(monkeypatch, rng, func, dtype, shape, axis, chunk):
    if func in ARG_FUNCS and isinstance(axis, tuple):
        axis = None
    a = _data(rng, dtype, shape, func, nan_share=0.3)
    if a.dtype.kind == "f":
        a.reshape(-1)[:len(a.reshape(-1)) // 3] = np.nan  # whole tiles of NaNs
    monkeypatch.setenv("GPUPRIMS_STREAM_MIN_BYTES", "0")
    monkeypatch.setenv("GPUPRIMS_STREAM_CHUNK_BYTES", str(chunk))
    check_call(func, a, "cuda", axis=axis)
