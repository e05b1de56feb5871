"""cumprod, cummax, cummin, nancumsum, nancumprod, cumulative_sum and cumulative_prod, and out= on
every scan, against NumPy on every path: the CPU backend, the GPU's short path, device-resident
data (results stay on the device) and the forced streaming path (GPU cases skip without one).
Float results are compared with float64 references; integer, bool, min and max results exactly."""
import math
import warnings

import numpy as np
import pytest

import gpuprims
from gpuprims import _plan
from gp_testutils import (ALL_DTYPES, FLOAT_DTYPES, INT_DTYPES, _eps, _spacing, _tiny, assert_exact,
                          assert_float_close, make_data)

OPS = ["cumprod", "cummax", "cummin", "nancumsum", "nancumprod"]
NUMPY = {"cumprod": np.cumprod, "cummax": np.maximum.accumulate, "cummin": np.minimum.accumulate,
         "nancumsum": np.nancumsum, "nancumprod": np.nancumprod, "cumsum": np.cumsum}
PATHS = ["cpu", "cuda", "resident", "streamed"]


@pytest.fixture(params=PATHS)
def path(request, monkeypatch):
    """Where a call runs: the CPU backend, the GPU short path, on device-resident data, or the GPU
    streaming path (forced, in tiles of 200 input bytes, which cut rows and carry values)."""
    if request.param != "cpu" and not gpuprims.cuda_available():
        pytest.skip("CUDA not available")
    if request.param == "streamed":
        monkeypatch.setenv("GPUPRIMS_STREAM_MIN_BYTES", "0")
        monkeypatch.setenv("GPUPRIMS_STREAM_CHUNK_BYTES", "200")
    return request.param


def call(path, name, a, *args, **kwargs):
    """gpuprims.<name>(a, ...) on `path`, the result on the host (a resident call's result checked
    to be a DeviceArray), the input checked to be unchanged."""
    before = a.copy()
    if path == "resident":
        result = getattr(gpuprims, name)(gpuprims.to_device(a), *args, **kwargs)
        assert isinstance(result, gpuprims.DeviceArray)
        result = result.get()
    else:
        result = getattr(gpuprims, name)(a, *args, device="cpu" if path == "cpu" else "cuda", **kwargs)
    assert np.array_equal(a, before, equal_nan=True)
    return result


def numpy_scan(name, a, axis=None, dtype=None):
    if name in ("cummax", "cummin"):  # a 0-d input is scanned as 1-d, as cumsum does
        return NUMPY[name](a.ravel() if axis is None or a.ndim == 0 else a, axis=0 if axis is None else axis)
    return NUMPY[name](a, axis=axis, dtype=dtype)


def check(name, a, got, axis=None, dtype=None):
    """`got` against NumPy's result for gpuprims.<name>(a, axis, dtype)."""
    expected = numpy_scan(name, a, axis, dtype)
    assert type(got) is np.ndarray and got.flags.c_contiguous
    assert got.dtype == expected.dtype and got.shape == expected.shape, (got.dtype, got.shape, expected.dtype)
    if expected.dtype.kind != "f" or name in ("cummax", "cummin"):
        assert_exact(got, expected, name) if expected.dtype.kind != "f" else \
            np.testing.assert_array_equal(got, expected)
        return
    x = np.asarray(a, dtype=np.float64)
    if axis is None:
        x, axis = x.ravel(), 0
    if name.startswith("nan"):
        x = np.where(np.isnan(x), 0.0 if name == "nancumsum" else 1.0, x)
    n = x.shape[axis] if x.ndim else 1
    res = expected.dtype
    acc_eps = _eps(np.float32) if res == np.float16 else _eps(res)
    with np.errstate(all="ignore"):
        if name.endswith("sum"):
            ref = np.cumsum(x, axis=axis)
            err = 2 * acc_eps * math.log2(n + 1) * np.cumsum(np.abs(x), axis=axis)
        else:
            ref = np.cumprod(x, axis=axis)
            err = (8 * math.sqrt(n) + 8) * acc_eps * np.abs(ref)
        if not np.can_cast(a.dtype, res, "safe"):
            err = err + _eps(res) * np.abs(ref)
        assert_float_close(got, ref, err + _spacing(res, ref) + _tiny(res), name, res)


def data(rng, name, dtype, shape):
    return make_data(rng, dtype, shape, "prod" if name.endswith("prod") else "minmax")


@pytest.mark.skipif(not gpuprims.cuda_available(), reason="CUDA not available")
@pytest.mark.parametrize("name,dtype,shape", [("cumsum", "float32", (2**24 + 3,)),
                                              ("nancumsum", "float32", (2, 2**24 + 1)),
                                              ("cumsum", "float64", (2**24 + 5,)),
                                              ("cumprod", "float32", (2**24 + 3,)),
                                              ("cumprod", "int32", (2**24 + 1,)),
                                              ("cummin", "int64", (2**23 + 1,)),
                                              ("nancumprod", "float64", (2**23 + 3,))], ids=str)
def test_long_device_rows_give_the_same_bits_every_run(rng, name, dtype, shape):
    """Device rows of the pipelined tile scan on Hopper (past 2 x 6 x 132 tiles of 9216 float32 or
    4608 float64): a tile folds the totals of the groups just before its own from their tiles'
    aggregates and takes the prefix from before them out of the group state, whichever tiles had
    finished; every path must give the bits of the one left fold, in every run."""
    if name.endswith("prod") and dtype.startswith("float"):  # a product that stays within range
        a = np.exp(rng.normal(0.0, 1e-3, size=shape)).astype(dtype)
        a.reshape(-1)[rng.integers(a.size, size=50)] *= -1
    else:
        a = data(rng, name, dtype, shape)
    if name.startswith("nan"):
        a.reshape(-1)[rng.integers(a.size, size=50)] = np.nan
    resident = gpuprims.to_device(a)
    first = getattr(gpuprims, name)(resident, axis=-1).get()
    check(name, a, first, axis=-1)
    for _ in range(12):
        assert getattr(gpuprims, name)(resident, axis=-1).get().tobytes() == first.tobytes()


@pytest.mark.parametrize("n", [1, 2, 7, 33, 257, 4097, 16385, 65537])
@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("name", OPS)
def test_sizes(path, rng, name, dtype, n):
    a = data(rng, name, dtype, n)
    check(name, a, call(path, name, a), None)


SHAPES = [((3, 5, 7), 0), ((3, 5, 7), 1), ((3, 5, 7), -1), ((3, 5, 7), None), ((1000, 3), 0), ((3, 1000), 1),
          ((257, 129), 0), ((257, 129), 1), ((2, 4099), 1), ((4099, 2), 0), ((1, 7, 1), 1), ((), None), ((), 0)]


@pytest.mark.parametrize("shape,axis", SHAPES, ids=[f"{s}-{a}" for s, a in SHAPES])
@pytest.mark.parametrize("dtype", ["bool", "int8", "int32", "uint64", "float16", "float32", "float64"])
@pytest.mark.parametrize("name", OPS)
def test_axes(path, rng, name, dtype, shape, axis):
    a = data(rng, name, dtype, shape)
    check(name, a, call(path, name, a, axis), axis)


@pytest.mark.parametrize("width", [2, 3, 5, 8, 15, 16])
@pytest.mark.parametrize("rows", [511, 512, 513, 1537])
@pytest.mark.parametrize("dtype", ["int16", "float32", "float64"])
@pytest.mark.parametrize("name", OPS + ["cumsum"])
def test_narrow_columns(path, rng, name, dtype, rows, width):
    """Columns narrower than 16, which the CPU backend scans 512 rows at a time: row counts around
    that block, two outer indices, and a NaN in one column of the second's last block."""
    a = data(rng, name, dtype, (2, rows, width))
    if a.dtype.kind == "f":
        a[1, rows - 2, width // 2] = np.nan
    check(name, a, call(path, name, a, 1), 1)


@pytest.mark.parametrize("width", range(2, 16))
@pytest.mark.parametrize("dtype", ["int8", "uint32", "int64", "float16", "float32", "float64"])
@pytest.mark.parametrize("name", ["cumsum", "cummax", "nancumprod"])
def test_narrow_widths(rng, name, dtype, width):
    """Every width of the CPU's narrow loop (one or two vectors a row) with row counts around the
    rows a vector spans and its 512-row blocks, inclusive and exclusive (prefix_sum), on the CPU."""
    for rows in (1, 3, 7, 511, 1031):
        a = data(rng, name, dtype, (2, rows, width))
        if a.dtype.kind == "f":
            a[0, rows // 2, width - 1] = np.nan
        check(name, a, call("cpu", name, a, 1), 1)
        if name == "cumsum":
            got, inclusive = gpuprims.prefix_sum(a, axis=1, exclusive=True, device="cpu"), call("cpu", name, a, 1)
            np.testing.assert_array_equal(got[:, 0], np.zeros_like(got[:, 0]))
            if got.dtype.kind != "f":
                np.testing.assert_array_equal(got[:, 1:], inclusive[:, :-1])
            else:  # a block's first output is its offset, the one before it the running value: not the same bits
                bound = 16 * rows * _eps(np.float32 if got.dtype == np.float16 else got.dtype) * np.nanmax(np.abs(a))
                np.testing.assert_allclose(got[:, 1:], inclusive[:, :-1], rtol=_eps(got.dtype), atol=bound)


@pytest.mark.parametrize("threads", [1, 2, 7])
@pytest.mark.parametrize("width", [2, 4])
@pytest.mark.parametrize("dtype", ["int8", "uint16", "int32", "int64", "uint64"])
@pytest.mark.parametrize("name", ["cumsum", "cumprod", "cummin", "cummax"])
def test_narrow_integer_rows_a_vector(rng, name, dtype, width, threads):
    """Integer columns 2 or 4 wide, which the CPU scans several rows a vector: enough rows for every
    thread count to share the 512-row blocks, a tail of rows that fills no vector, inclusive and
    exclusive, against NumPy."""
    before = gpuprims.get_num_threads()
    gpuprims.set_num_threads(threads)
    try:
        for rows in (5, 40003):
            a = data(rng, name, dtype, (rows, width))
            check(name, a, call("cpu", name, a, 0), 0)
            if name == "cumsum":
                got = gpuprims.prefix_sum(a, axis=0, exclusive=True, device="cpu")
                assert_exact(got, np.concatenate([np.zeros_like(got[:1]), np.cumsum(a, 0)[:-1]]), name)
    finally:
        gpuprims.set_num_threads(before)


def with_nans(rng, dtype, n, where):
    a = make_data(rng, dtype, n, "prod")
    positions = {"first": [0], "last": [n - 1], "every": np.arange(n), "some": rng.integers(0, n, max(1, n // 50)),
                 "lane": np.arange(n)[np.arange(n) % 32 == 5]}[where]
    a[positions] = np.nan
    return a


@pytest.mark.parametrize("where", ["first", "last", "every", "some", "lane"])
@pytest.mark.parametrize("n", [5, 300, 5000, 70001])
@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("name", OPS)
def test_nan_positions(path, rng, name, dtype, n, where):
    a = with_nans(rng, dtype, n, where)
    check(name, a, call(path, name, a), None)
    b = a.reshape(5, -1) if n % 5 == 0 else a[: n - n % 5].reshape(5, -1)
    check(name, b, call(path, name, b, 0), 0)


def test_nan_made_by_the_sums_is_kept(path):
    a = np.array([np.inf, -np.inf, np.nan, 1.0, np.nan])
    check("nancumsum", a, call(path, "nancumsum", a))
    np.testing.assert_array_equal(call(path, "nancumsum", a), [np.inf, np.nan, np.nan, np.nan, np.nan])


@pytest.mark.parametrize("dtype,arg", [("int8", "int8"), ("int32", "float32"), ("float32", "float64"),
                                        ("float64", "float32"), ("bool", "bool"), ("int16", "bool"),
                                        ("float32", "int64"), ("uint8", "uint16"), ("float16", None)])
@pytest.mark.parametrize("name", ["cumprod", "nancumsum", "nancumprod"])
def test_dtype_argument(path, rng, name, dtype, arg):
    a = data(rng, name, dtype, (37, 11))
    if dtype[0] == "f":
        a[3, 4] = np.nan
    if path == "resident" and name.startswith("nan") and dtype[0] == "f" and arg in ("int64", "bool"):
        with pytest.raises(TypeError):
            call(path, name, a, 1, arg)
        return
    check(name, a, call(path, name, a, 1, arg), 1, arg)


def test_integer_products_wrap(path, rng):
    a = np.full(200, 3, np.int64)
    assert_exact(call(path, "cumprod", a), np.cumprod(a), "cumprod int64")
    b = np.array([2] * 70, np.uint8)
    assert_exact(call(path, "cumprod", b), np.cumprod(b), "cumprod uint8")


@pytest.mark.parametrize("dtype", INT_DTYPES + ["bool"])
def test_min_max_extremes(path, rng, dtype):
    """Every integer width's extremes: the identities, signed and unsigned compares."""
    info = np.iinfo(dtype) if dtype != "bool" else None
    values = [True, False] if info is None else [info.min, info.max, 0, info.min + 1, info.max - 1]
    a = np.array(values * 50, dtype)[rng.permutation(len(values) * 50)]
    for name in ("cummax", "cummin"):
        check(name, a, call(path, name, a))


@pytest.mark.parametrize("shape,axis", [((0,), None), ((3, 0), 1), ((0, 4), 0), ((2, 0, 3), None)])
@pytest.mark.parametrize("name", OPS)
def test_empty(path, name, shape, axis):
    a = np.zeros(shape, np.float32)
    got = call(path, name, a, axis)
    assert got.shape == numpy_scan(name, a, axis).shape and got.dtype == numpy_scan(name, a, axis).dtype


# ---- cumulative_sum and cumulative_prod (NumPy >= 2.1) ------------------------------------------------

CUMULATIVE = [((7,), None), ((7,), 0), ((), None), ((4, 5), 0), ((4, 5), 1), ((4, 5), -1), ((3, 4, 5), 1),
              ((0,), None), ((3, 0), 1), ((3, 0), 0)]


def numpy_cumulative(name, a, axis, dtype=None, include_initial=False):
    x = np.asarray(a).reshape(-1) if np.ndim(a) == 0 else a
    kind = "sum" if name == "cumulative_sum" else "prod"
    scanned = (np.cumsum if kind == "sum" else np.cumprod)(x, axis=0 if axis is None else axis, dtype=dtype)
    if not include_initial:
        return scanned
    axis = 0 if axis is None else axis % scanned.ndim
    first = np.full(scanned.shape[:axis] + (1,) + scanned.shape[axis + 1:], 0 if kind == "sum" else 1,
                    scanned.dtype)
    return np.concatenate([first, scanned], axis=axis)


@pytest.mark.parametrize("include_initial", [False, True])
@pytest.mark.parametrize("shape,axis", CUMULATIVE, ids=[f"{s}-{a}" for s, a in CUMULATIVE])
@pytest.mark.parametrize("dtype", ["int8", "bool", "float32", "uint32"])
@pytest.mark.parametrize("name", ["cumulative_sum", "cumulative_prod"])
def test_cumulative(path, rng, name, dtype, shape, axis, include_initial):
    a = make_data(rng, dtype, shape, "prod")
    got = call(path, name, a, axis=axis, include_initial=include_initial)
    expected = numpy_cumulative(name, a, axis, include_initial=include_initial)
    assert got.dtype == expected.dtype and got.shape == expected.shape
    if expected.dtype.kind != "f":
        np.testing.assert_array_equal(got, expected)
    else:  # float32 running values round at their own magnitude, which cancellation leaves above the result's
        magnitude = numpy_cumulative(name, np.abs(a.astype(np.float64)), axis, include_initial=include_initial)
        error = np.abs(got.astype(np.float64) - expected.astype(np.float64))
        assert np.all(error <= 1e-5 * np.abs(expected.astype(np.float64)) + 4 * np.finfo(np.float32).eps * magnitude)
    if hasattr(np, "cumulative_sum"):  # NumPy >= 2.1: the same as NumPy itself
        numpy_result = getattr(np, name)(a, axis=axis, include_initial=include_initial)
        assert numpy_result.dtype == got.dtype and numpy_result.shape == got.shape


def test_cumulative_rules():
    with pytest.raises(ValueError, match="axis"):
        gpuprims.cumulative_sum(np.ones((2, 3)))
    with pytest.raises(TypeError):
        gpuprims.cumulative_sum(np.ones(3), 0)  # axis is keyword-only
    with pytest.raises(ValueError):  # include_initial is a truth value: an array's is ambiguous
        gpuprims.cumulative_prod(np.ones(3), include_initial=np.array([True, False]))
    np.testing.assert_array_equal(gpuprims.cumulative_sum(np.arange(4), dtype=np.float32, include_initial=True),
                                  [0, 0, 1, 3, 6])


@pytest.mark.parametrize("include_initial", [True, False, 1, 0, None, "yes", "", 2.5, [], [0], np.bool_(True)],
                         ids=repr)
@pytest.mark.parametrize("name", ["cumulative_sum", "cumulative_prod"])
def test_include_initial_is_read_as_a_truth_value(path, name, include_initial):
    a = np.arange(1, 5, dtype=np.int32)
    got = call(path, name, a, include_initial=include_initial)
    np.testing.assert_array_equal(got, numpy_cumulative(name, a, None, include_initial=bool(include_initial)))
    if hasattr(np, "cumulative_sum"):  # NumPy >= 2.1 itself
        np.testing.assert_array_equal(got, getattr(np, name)(a, include_initial=include_initial))


@pytest.mark.skipif(not hasattr(np, "cumulative_sum"), reason="NumPy >= 2.1 has the cumulative functions")
@pytest.mark.parametrize("name", ["cumulative_sum", "cumulative_prod"])
@pytest.mark.parametrize("axis", [(0,), (-1,), (1,), (0, 1), (), [0], (True,)])
def test_cumulative_axis_tuples_as_numpy(name, axis):
    """NumPy's cumulative functions take a tuple of one axis (a 0-d array read as 1-d): each
    checked against the dimensions (AxisError), then more than one refused (ValueError)."""
    for a in (np.array(2.5), np.arange(1, 4), np.arange(1, 7).reshape(2, 3)):
        try:
            expected = getattr(np, name)(a, axis=axis)
        except Exception as error:  # noqa: BLE001 - the same type is expected
            with pytest.raises(type(error)):
                getattr(gpuprims, name)(a, axis=axis, device="cpu")
            continue
        got = getattr(gpuprims, name)(a, axis=axis, device="cpu")
        assert got.dtype == expected.dtype
        np.testing.assert_array_equal(got, expected)


# ---- out= ----------------------------------------------------------------------------------------------

SCANS = ["cumsum", "prefix_sum", "cumprod", "cummax", "cummin", "nancumsum", "nancumprod"]


def host_out(path, shape, dtype):
    return gpuprims.empty_pinned(shape, dtype) if path == "streamed" else np.empty(shape, dtype)


@pytest.mark.parametrize("out_dtype", ["same", "float64", "int16"])
@pytest.mark.parametrize("name", SCANS)
def test_out(path, rng, name, out_dtype):
    a = data(rng, name if name in OPS else "cumsum", "int32", (40, 30))
    numpy_name = "cumsum" if name == "prefix_sum" else name
    dtype = numpy_scan(numpy_name, a, 1).dtype if out_dtype == "same" else np.dtype(out_dtype)
    expected = NUMPY[numpy_name](a, axis=1, out=np.empty(a.shape, dtype))  # out's dtype joins the loop's
    if path == "resident":
        out = gpuprims.to_device(np.zeros((40, 30), dtype))
        result = getattr(gpuprims, name)(gpuprims.to_device(a), axis=1, out=out)
        assert result is out
        got = out.get()
    else:
        out = host_out(path, (40, 30), dtype)
        result = getattr(gpuprims, name)(a, axis=1, out=out, device="cpu" if path == "cpu" else "cuda")
        assert result is out
        got = out
    if dtype.kind == "f":  # the backends' float scans associate otherwise than NumPy's loop
        np.testing.assert_allclose(got, expected, rtol=a.shape[1] * np.finfo(dtype).eps)
    else:
        np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("name", ["cumsum", "cumprod", "nancumsum", "nancumprod", "cumulative_sum"])
def test_out_sets_the_loop_dtype(path, name):
    """Without dtype=, NumPy's accumulate computes in the promotion of out's dtype and the input's:
    int64 sums and products into a float64 out do not wrap around."""
    a = np.array([[1, 2**62, 2**62, 5], [2**40, 2**40, 3, 2**40]], np.int64)
    kwargs = {"include_initial": True} if name == "cumulative_sum" else {}
    shape = (2, 5) if kwargs else a.shape
    expected = np.zeros(shape)  # cumulative_sum's (NumPy >= 2.1) is cumsum's after the initial 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # the float products overflow
        getattr(np, "cumsum" if kwargs else name)(a, axis=1, out=expected[:, 1:] if kwargs else expected)
        if path == "resident":
            out = gpuprims.to_device(np.full(shape, 99.0))
            assert getattr(gpuprims, name)(gpuprims.to_device(a), axis=1, out=out, **kwargs) is out
            got = out.get()
        else:
            got = host_out(path, shape, np.float64)
            device = "cpu" if path == "cpu" else "cuda"
            assert getattr(gpuprims, name)(a, axis=1, out=got, device=device, **kwargs) is got
    np.testing.assert_allclose(got, expected, rtol=1e-15, atol=0)


def test_out_into_a_strided_view_and_in_place(path, rng):
    if path == "resident":
        pytest.skip("host views")
    device = "cpu" if path == "cpu" else "cuda"
    a = make_data(rng, "float64", (20, 8), "prod")
    base = np.zeros((20, 16))
    view = base[:, ::2]
    assert gpuprims.cumprod(a, axis=0, out=view, device=device) is view
    check("cumprod", a, np.ascontiguousarray(view), 0)
    b = a.copy()
    assert gpuprims.cummax(b, axis=1, out=b, device=device) is b
    np.testing.assert_array_equal(b, np.maximum.accumulate(a, axis=1))


def test_out_errors(path):
    a = np.arange(12, dtype=np.int32).reshape(3, 4)
    device = "cpu" if path == "cpu" else "cuda"
    source = gpuprims.to_device(a) if path == "resident" else a
    kw = {} if path == "resident" else {"device": device}
    for name in SCANS:
        fn = getattr(gpuprims, name)
        with pytest.raises(ValueError):
            fn(source, axis=1, out=np.empty((4, 3)) if path != "resident" else gpuprims.to_device(np.empty((4, 3))),
               **kw)
        with pytest.raises(TypeError):
            fn(source, axis=1, out=[[0] * 4] * 3, **kw)
        with pytest.raises(TypeError):
            fn(source, axis=1, out=np.empty((3, 4), np.complex64) if path != "resident" else a, **kw)
    with pytest.raises(ValueError):
        gpuprims.cumsum(a, out=np.empty((3, 4), np.int64))  # axis None: the result is 1-D
    with pytest.raises(ValueError):
        readonly = np.empty(12, np.int64)
        readonly.flags.writeable = False
        gpuprims.cumsum(a, out=readonly, device="cpu")


def test_out_with_include_initial(path, rng):
    a = make_data(rng, "int16", (6, 5), "prod")
    if path == "resident":
        out = gpuprims.to_device(np.zeros((6, 6), np.int64))
        assert gpuprims.cumulative_prod(gpuprims.to_device(a), axis=1, include_initial=True, out=out) is out
        got = out.get()
    else:
        out = np.zeros((6, 6), np.float64)
        device = "cpu" if path == "cpu" else "cuda"
        assert gpuprims.cumulative_prod(a, axis=1, include_initial=True, out=out, device=device) is out
        got = out
    np.testing.assert_array_equal(got, numpy_cumulative("cumulative_prod", a, 1, include_initial=True))


def views_of(path, base):
    """view(start, shape): the elements of `base` (1-D, C-contiguous) from `start` as a C-contiguous
    array of `shape`, a view of one copy of `base` (a device copy on the resident path), and that
    copy's values on the host."""
    if path != "resident":
        copy = base.copy()
        return (lambda start, shape: copy[start:start + math.prod(shape)].reshape(shape)), (lambda: copy)
    d = gpuprims.to_device(base)
    strides = lambda shape: tuple(math.prod(shape[axis + 1:]) * d.itemsize for axis in range(len(shape)))
    return ((lambda start, shape: gpuprims.DeviceArray(d, d.ptr + start * d.itemsize, shape, d.dtype, strides(shape),
                                                       d.device_index)), d.get)


OVERLAPS = [(0, 1, (19999,), None), (1, 0, (19999,), None), (0, 5000, (10000,), 0), (0, 30, (40, 30), 0),
            (30, 0, (40, 30), 0), (0, 7, (40, 30), 1), (0, 0, (40, 30), None), (0, 0, (1100, 3), 0),
            (0, 0, (700, 9), 0), (0, 3, (1100, 3), 0), (0, 0, (1101, 4), 0), (0, 0, (1103, 2), 0)]


@pytest.mark.parametrize("source,target,shape,axis", OVERLAPS)
@pytest.mark.parametrize("name", SCANS)
def test_out_overlapping_the_input(path, name, source, target, shape, axis):
    """An out= that overlaps the input gets NumPy's result: the scan of the input as it was before
    (NumPy buffers the result); out= the input itself is scanned in place, without a buffer."""
    base = (np.arange(20000) % 7 + 1).astype(np.int64)
    size = math.prod(shape)
    result_shape = (size,) if axis is None else shape
    expected = base.copy()
    expected[target:target + size] = numpy_scan(name.replace("prefix_sum", "cumsum"),
                                                 base[source:source + size].reshape(shape), axis).reshape(-1)
    view, values = views_of(path, base)
    a, out = view(source, shape), view(target, result_shape)
    kwargs = {} if path == "resident" else {"device": "cpu" if path == "cpu" else "cuda"}
    if source == target:
        assert _plan.planned(getattr(gpuprims, name), a, axis=axis, out=out, **kwargs)._writes_into(out)
    assert getattr(gpuprims, name)(a, axis=axis, out=out, **kwargs) is out
    np.testing.assert_array_equal(values(), expected)


@pytest.mark.parametrize("source,target,shape,axis", [(0, 0, (19999,), 0), (1, 0, (19999,), 0), (0, 1, (19998,), 0),
                                                      (0, 0, (39, 30), 0), (0, 0, (40, 29), 1), (1, 0, (40, 29), 1)])
@pytest.mark.parametrize("name", ["cumulative_sum", "cumulative_prod"])
def test_out_with_include_initial_overlapping_the_input(path, name, source, target, shape, axis):
    """include_initial writes its identities after the scan has read the input that out= overlaps."""
    base = (np.arange(20000) % 7 + 1).astype(np.int64)
    result_shape = shape[:axis] + (shape[axis] + 1,) + shape[axis + 1:]
    expected = base.copy()
    scanned = numpy_cumulative(name, base[source:source + math.prod(shape)].reshape(shape), axis, include_initial=True)
    expected[target:target + scanned.size] = scanned.reshape(-1)
    view, values = views_of(path, base)
    a, out = view(source, shape), view(target, result_shape)
    kwargs = {} if path == "resident" else {"device": "cpu" if path == "cpu" else "cuda"}
    assert getattr(gpuprims, name)(a, axis=axis, out=out, include_initial=True, **kwargs) is out
    np.testing.assert_array_equal(values(), expected)


@pytest.mark.skipif(not gpuprims.cuda_available(), reason="CUDA not available")
def test_pinned_out_is_written_by_the_copy_engine(monkeypatch, rng):
    """The planner writes a streamed result straight into a pinned out (result_pinned), into a
    pageable one through staging, and without out into a cached pinned block."""
    monkeypatch.setenv("GPUPRIMS_STREAM_MIN_BYTES", "0")
    a = make_data(rng, "float32", 1 << 20, "minmax")

    def plan(out):
        return gpuprims._core.scan(a, out, 0, -1, a.dtype.num, 1, a.size, 1, False, 3, False)

    pinned = gpuprims.empty_pinned(a.shape, a.dtype)
    assert plan(a.shape)["result_pinned"]
    assert not plan(np.empty_like(a))["result_pinned"]
    assert plan(pinned)["route"] == "cuda-streamed" and plan(pinned)["result_pinned"]
    assert gpuprims.cummax(a, out=pinned, device="cuda") is pinned
    np.testing.assert_array_equal(pinned, np.maximum.accumulate(a))


@pytest.mark.parametrize("op", [-1, 4, 5, 6, 9, 10, 11])  # argmin .. std, and no gp_op
def test_core_scan_refuses_operators_without_a_scan(op):
    """The scan entry takes sum, prod, min and max only: the reductions' other operators share the
    gp_op enum but have no scan loop or kernel."""
    a = np.arange(7.0)
    for device in (-1, -2):  # the CPU, and the planner's choice
        with pytest.raises(ValueError, match="unsupported scan"):
            gpuprims._core.scan(a, a.shape, device, 0, a.dtype.num, 1, a.size, 1, False, op, False)


# ---- streaming: carries across tiles -------------------------------------------------------------------

@pytest.mark.skipif(not gpuprims.cuda_available(), reason="CUDA not available")
@pytest.mark.parametrize("chunk", [8, 200, 4096])
@pytest.mark.parametrize("shape,axis", [((1009,), None), ((37, 53), 0), ((37, 53), 1), ((5, 7, 11), 1)])
@pytest.mark.parametrize("dtype", ["int8", "uint16", "float16", "float32", "float64", "bool"])
@pytest.mark.parametrize("name", OPS)
def test_streamed_chunks(monkeypatch, rng, name, dtype, shape, axis, chunk):
    monkeypatch.setenv("GPUPRIMS_STREAM_MIN_BYTES", "0")
    monkeypatch.setenv("GPUPRIMS_STREAM_CHUNK_BYTES", str(chunk))
    a = data(rng, name, dtype, shape)
    if dtype[0] == "f":
        a.reshape(-1)[rng.integers(0, a.size, 3)] = np.nan
    assert gpuprims.explain(getattr(gpuprims, name), a, axis, device="cuda")["route"] == "cuda-streamed"
    check(name, a, getattr(gpuprims, name)(a, axis, device="cuda"), axis)
