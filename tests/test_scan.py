"""prefix_sum / cumsum against numpy.cumsum (float values against a float64
reference: the GPU scan is allowed to be more accurate than numpy's
sequential cumsum)."""

import numpy as np
import pytest

import gpuprims
from gp_testutils import (
    shape_axis_params,
    ALL_DTYPES, FLOAT_DTYPES, SMALL_SIZES, _NOTGIVEN, check_scan, gp_call,
    make_data, np_scan, run_numpy_and_gp, shift_exclusive,
)

# variant -> (function name, exclusive flag passed or not)
VARIANTS = {
    "cumsum": ("cumsum", _NOTGIVEN),
    "prefix_sum": ("prefix_sum", _NOTGIVEN),
    "inclusive": ("prefix_sum", False),
    "exclusive": ("prefix_sum", True),
}
MAIN_VARIANTS = ["cumsum", "inclusive", "exclusive"]


def scan(variant, a, device, **kw):
    name, excl = VARIANTS[variant]
    return gp_call(name, a, device, exclusive=excl, **kw) if name == "prefix_sum" else gp_call(name, a, device, **kw)


def is_exclusive(variant):
    return VARIANTS[variant][1] is True


@pytest.mark.parametrize("n", SMALL_SIZES)
@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("variant", MAIN_VARIANTS)
def test_scan_sizes(device, rng, variant, dtype, n):
    a = make_data(rng, dtype, n)
    got = scan(variant, a, device)
    check_scan(a, got, exclusive=is_exclusive(variant))


BIG = [
    ("float32", 2**24), ("int32", 2**24), ("float32", 1_000_003), ("int32", 2**20 + 1),
    ("float64", 1_000_003), ("int8", 2**20 + 1), ("uint16", 1_000_003), ("float16", 2**20 + 1),
    ("int64", 1_000_003), ("bool", 2**20 + 1), ("uint64", 2**20 + 1),
]


@pytest.mark.parametrize("dtype,n", [pytest.param(d, n, id=f"{d}-{n}") for d, n in BIG])
@pytest.mark.parametrize("variant", ["inclusive", "exclusive"])
def test_scan_big(device, rng, variant, dtype, n):
    a = make_data(rng, dtype, n)
    got = scan(variant, a, device)
    check_scan(a, got, exclusive=is_exclusive(variant))


AXIS_CASES = [
    ((3, 5, 7), None), ((3, 5, 7), 0), ((3, 5, 7), 1), ((3, 5, 7), 2), ((3, 5, 7), -1), ((3, 5, 7), -3),
    ((1000, 3), 0), ((1000, 3), 1), ((1000, 3), None), ((3, 1000), 0), ((3, 1000), 1), ((3, 1000), -1),
    ((2, 3, 4, 5), 1), ((2, 3, 4, 5), 3), ((2, 3, 4, 5), -4), ((1, 7, 1), 0), ((1, 7, 1), 1),
    ((1, 7, 1), 2), ((5, 1), 0), ((5, 1), 1), ((1,), 0), ((257, 129), 0), ((257, 129), 1),
    ((4099, 2), 0), ((2, 4099), 1), ((33, 2, 65), 0), ((33, 2, 65), 2),
    ((), None), ((), 0), ((), -1),
]


def _id(shape, axis):
    return f"{'x'.join(map(str, shape)) or '0d'}-ax{axis!r}"


@pytest.mark.parametrize("shape,axis", [pytest.param(s, a, id=_id(s, a)) for s, a in AXIS_CASES])
@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("variant", MAIN_VARIANTS)
def test_scan_axis(device, rng, variant, dtype, shape, axis):
    a = make_data(rng, dtype, shape)
    got = scan(variant, a, device, axis=axis)
    check_scan(a, got, axis=axis, exclusive=is_exclusive(variant))


@pytest.mark.parametrize("variant", ["prefix_sum", "cumsum"])
def test_positional_arguments(device, rng, variant):
    a = make_data(rng, "int16", (6, 9))
    fn = getattr(gpuprims, VARIANTS[variant][0])
    check_scan(a, fn(a, 1, device=device), axis=1)
    check_scan(a, fn(a, 0, np.int8, device=device), axis=0, dtype=np.int8)
    check_scan(a, fn(a, np.int64(-1), device=device), axis=-1)
    if variant == "prefix_sum":
        check_scan(a, fn(a, 1, None, True, device=device), axis=1, exclusive=True)


@pytest.mark.parametrize("dtype", ["float32", "int32", "float64", "uint8"])
@pytest.mark.parametrize("variant", MAIN_VARIANTS)
@pytest.mark.parametrize("shape,axis", shape_axis_params([((1_000_000, 2), 0), ((1_000_000, 2), -1), ((1_000_000, 2), None),
                                        ((2, 1_000_000), 1), ((2, 1_000_000), 0),
                                        ((100_000, 7), 0), ((7, 100_000), -1)]))
def test_scan_tall_and_wide(device, rng, variant, dtype, shape, axis):
    if dtype in ("float64", "uint8") and shape[0] == 1_000_000 and axis != 0:
        pytest.skip("keep runtime down")
    a = make_data(rng, dtype, shape)
    got = scan(variant, a, device, axis=axis)
    check_scan(a, got, axis=axis, exclusive=is_exclusive(variant))


@pytest.mark.parametrize("shape,axis", shape_axis_params([((0,), None), ((0,), 0), ((0,), -1), ((3, 0), 0), ((3, 0), 1),
                                        ((3, 0), None), ((0, 5), 0), ((0, 5), 1), ((0, 5), None),
                                        ((2, 0, 4), 2), ((2, 0, 4), 1)]))
@pytest.mark.parametrize("dtype", ["bool", "int8", "uint32", "int64", "float16", "float64"])
@pytest.mark.parametrize("variant", MAIN_VARIANTS)
def test_scan_empty(device, variant, dtype, shape, axis):
    a = np.zeros(shape, dtype=dtype)
    got = scan(variant, a, device, axis=axis)
    check_scan(a, got, axis=axis, exclusive=is_exclusive(variant))
    assert got.shape == (np.cumsum(a, axis=axis)).shape


@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("variant", MAIN_VARIANTS)
def test_scan_zero_dim(device, variant, dtype):
    a = np.array(5 if dtype != "bool" else True, dtype=dtype)
    for axis in (_NOTGIVEN, None, 0, -1):
        got = scan(variant, a, device, axis=axis)
        assert isinstance(got, np.ndarray) and got.shape == (1,)
        check_scan(a, got, axis=None if axis is _NOTGIVEN else axis, exclusive=is_exclusive(variant))
        assert got[0] == (0 if is_exclusive(variant) else a)


DTYPE_ARG_CASES = [
    ("int8", "int8"), ("int8", "int16"), ("int8", "float32"), ("int8", "float64"), ("int16", "uint16"),
    ("uint8", "uint8"), ("bool", "int8"), ("bool", "bool"), ("bool", "float32"), ("int32", "int32"),
    ("uint32", "uint32"), ("int64", "float64"), ("float16", "float32"), ("float16", "float64"),
    ("float32", "float64"), ("float64", "float32"), ("float32", "float16"), ("uint64", "int64"),
    ("int64", "uint8"), ("float64", "int64"),
]


@pytest.mark.parametrize("in_dt,dt", [pytest.param(i, d, id=f"{i}->{d}") for i, d in DTYPE_ARG_CASES])
@pytest.mark.parametrize("variant", MAIN_VARIANTS)
@pytest.mark.parametrize("shape,axis", shape_axis_params([((1000,), None), ((4097,), 0), ((37, 41), 0), ((37, 41), 1)]))
def test_scan_dtype_argument(device, rng, variant, in_dt, dt, shape, axis):
    a = make_data(rng, in_dt, shape)
    if dt == "int64" and in_dt == "float64":
        a = a * 1000   # float -> int casts truncate each element (like numpy)
    for dtype_obj in (np.dtype(dt), dt, np.dtype(dt).type):
        got = scan(variant, a, device, axis=axis, dtype=dtype_obj)
        check_scan(a, got, axis=axis, dtype=np.dtype(dt), exclusive=is_exclusive(variant))


@pytest.mark.parametrize("a,kw,expected", [
    (np.array([100, 100, 100], np.int8), dict(dtype=np.int8), np.array([100, -56, 44], np.int8)),
    (np.array([200, 100], np.uint8), dict(dtype=np.uint8), np.array([200, 44], np.uint8)),
    (np.array([2**64 - 1, 2, 3], np.uint64), {}, np.array([2**64 - 1, 1, 4], np.uint64)),
    (np.array([2**63 - 1, 1], np.int64), {}, np.array([2**63 - 1, -2**63], np.int64)),
    (np.full(3, 2**31 - 1, np.int32), {}, np.array([1, 2, 3], np.int64) * (2**31 - 1)),
    (np.full(3, 2**31 - 1, np.int32), dict(dtype=np.int32), np.array([2**31 - 1, -2, 2**31 - 3], np.int32)),
    (np.full(5, 255, np.uint8), {}, np.array([255, 510, 765, 1020, 1275], np.uint64)),
    (np.array([True, False, True]), {}, np.array([1, 1, 2], np.int64)),
    (np.array([False, True, False]), dict(dtype=bool), np.array([False, True, True])),
])
def test_scan_wraparound(device, a, kw, expected):
    for variant in ("cumsum", "inclusive", "exclusive"):
        got = scan(variant, a, device, **kw)
        exp = shift_exclusive(expected, 0) if is_exclusive(variant) else expected
        assert got.dtype == exp.dtype
        assert np.array_equal(got, exp), (variant, got, exp)
        check_scan(a, got, dtype=kw.get("dtype"), exclusive=is_exclusive(variant))


def test_int_scan_long_carry(device, rng):
    # 2**24 uint8 / int16 values with cumsums far beyond 32-bit range: the
    # carries between blocks must be 64-bit
    a = rng.integers(200, 256, size=2**24, dtype=np.uint8)
    got = gpuprims.prefix_sum(a, device=device)
    assert got.dtype == np.uint64
    assert got[-1] == np.sum(a, dtype=np.uint64) and got[-1] > 2**31
    check_scan(a, got)
    del got
    got32 = gpuprims.prefix_sum(a, dtype=np.int32, device=device)   # wraps
    check_scan(a, got32, dtype=np.int32)
    del got32
    b = rng.integers(20000, 2**15, size=2**24, dtype=np.int16)
    got = gpuprims.cumsum(b, device=device)
    assert got.dtype == np.int64 and got[-1] > 2**38
    check_scan(b, got)


def test_exclusive_default_is_false(device, rng):
    a = make_data(rng, "int32", 100)
    assert np.array_equal(gpuprims.prefix_sum(a, device=device), np.cumsum(a))
    assert np.array_equal(gpuprims.prefix_sum(a, exclusive=False, device=device), np.cumsum(a))
    ex = gpuprims.prefix_sum(a, exclusive=True, device=device)
    assert ex[0] == 0 and np.array_equal(ex[1:], np.cumsum(a)[:-1])


def test_exclusive_axis_none_flattens_2d(device, rng):
    a = make_data(rng, "int16", (4, 5))
    ex = gpuprims.prefix_sum(a, exclusive=True, device=device)
    assert ex.shape == (20,)
    assert np.array_equal(ex, np.concatenate([[0], np.cumsum(a)[:-1]]))
    ex0 = gpuprims.prefix_sum(a, axis=0, exclusive=True, device=device)
    assert np.array_equal(ex0[0], np.zeros(5)) and np.array_equal(ex0[1:], np.cumsum(a, axis=0)[:-1])
    ex1 = gpuprims.prefix_sum(a, axis=1, exclusive=True, device=device)
    assert np.array_equal(ex1[:, 0], np.zeros(4)) and np.array_equal(ex1[:, 1:], np.cumsum(a, axis=1)[:, :-1])


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("variant", MAIN_VARIANTS)
def test_scan_nan_inf(device, rng, variant, dtype):
    n = 5000
    for pos in (0, 1234, n - 1):
        for val in (np.nan, np.inf, -np.inf):
            a = make_data(rng, dtype, n)
            a[pos] = val
            got = scan(variant, a, device)
            check_scan(a, got, exclusive=is_exclusive(variant))
    a = make_data(rng, dtype, (40, 30))
    a[3, 7] = np.nan
    a[10, 2] = np.inf
    a[10, 20] = -np.inf
    for axis in (0, 1):
        check_scan(a, scan(variant, a, device, axis=axis), axis=axis, exclusive=is_exclusive(variant))


def _views(rng, dtype):
    b1 = make_data(rng, dtype, 5001)
    b2 = make_data(rng, dtype, (40, 31))
    b3 = make_data(rng, dtype, (6, 7, 9))
    return [
        ("reversed", b1[::-1], [None, 0]), ("step3", b1[::3], [None]), ("neg_step", b1[-1::-7], [0]),
        ("transposed", b2.T, [None, 0, 1]), ("fortran", np.asfortranarray(b3), [None, 0, 1, 2]),
        ("neg2d", b2[::-2, ::-1], [0, 1, None]), ("column", b2[:, 3], [0]),
        ("broadcast", np.broadcast_to(b2[0], (50, 31)), [0, 1]),
        ("transposed3d", b3.transpose(1, 2, 0), [0, 2, None]),
    ]


@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("variant", MAIN_VARIANTS)
def test_scan_views(device, rng, variant, dtype):
    for name, v, axes in _views(rng, dtype):
        for axis in axes:
            got = scan(variant, v, device, axis=axis)
            try:
                check_scan(v, got, axis=axis, exclusive=is_exclusive(variant))
            except AssertionError as e:
                raise AssertionError(f"view {name}, axis={axis}: {e}") from e


@pytest.mark.parametrize("dtype", [d for d in ALL_DTYPES if np.dtype(d).itemsize > 1])
@pytest.mark.parametrize("variant", MAIN_VARIANTS)
def test_scan_byteswapped_misaligned_readonly(device, rng, variant, dtype):
    a = make_data(rng, dtype, (33, 17))
    b = a.astype(a.dtype.newbyteorder())
    buf = np.zeros(a.nbytes + 1, np.uint8)
    m = buf[1:].view(a.dtype).reshape(a.shape)
    m[...] = a
    assert not m.flags.aligned
    r = a.copy()
    r.flags.writeable = False
    for arr in (b, m, r):
        for axis in (None, 0, 1):
            got = scan(variant, arr, device, axis=axis)
            check_scan(arr, got, axis=axis, exclusive=is_exclusive(variant))
            if a.dtype.kind != "f":
                assert np.array_equal(got, scan(variant, a, device, axis=axis))


@pytest.mark.parametrize("obj", [[1, 2, 3], [[1.5, 2], [3, -4]], [True, True, False], 7, 2.5,
                                 [2**63, 1], np.int8(5)], ids=repr)
@pytest.mark.parametrize("variant", MAIN_VARIANTS)
def test_scan_python_inputs(device, variant, obj):
    for axis in (None, 0):
        r = run_numpy_and_gp(lambda: np_scan(obj, axis=axis, exclusive=is_exclusive(variant)),
                             lambda: scan(variant, obj, device, axis=axis))
        if r is not None:
            check_scan(obj, r[1], axis=axis, exclusive=is_exclusive(variant))


@pytest.mark.parametrize("function", ["prefix_sum", "exclusive", "cumprod", "nancumsum"])
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
@pytest.mark.parametrize("shape", [(2**20 + 3,), (3, 2**18 + 7), (2**16 + 1, 5)], ids=str)
def test_float_scans_give_the_same_bits_every_run(device, rng, function, dtype, shape):
    """Float scans are reproducible, as NumPy's cumsum is (issue 18).  Rows of many GPU tiles: the
    look-back combines their totals in one order, whichever tiles had finished (a tree over the
    tiles it found differed from run to run); few long columns: cut into chunks."""
    a = make_data(rng, dtype, shape, "prod" if function == "cumprod" else "sum")
    if function == "nancumsum":
        a.reshape(-1)[rng.integers(a.size, size=50)] = np.nan
    axis = 0 if shape[-1] == 5 else -1
    call = {"prefix_sum": lambda: gpuprims.prefix_sum(a, axis=None if axis == -1 else axis, device=device),
            "exclusive": lambda: gpuprims.prefix_sum(a, axis=axis, exclusive=True, device=device),
            "cumprod": lambda: gpuprims.cumprod(a, axis=axis, device=device),
            "nancumsum": lambda: gpuprims.nancumsum(a, axis=axis, device=device)}[function]
    first = np.asarray(call()).tobytes()
    for _ in range(12):
        assert np.asarray(call()).tobytes() == first


# Long rows of device data: on Hopper and later these run the pipelined tile scan (cuda/scan/scan.cu),
# whose blocks claim tiles at run time and bulk-copy them where they are 16-byte aligned.  Rows of many
# tiles, views starting one element in (off a 16-byte boundary), inputs that widen (int8 -> int64),
# inclusive, exclusive and max.  Every case is past the kernel's threshold on an H100 (2 x 6 x 132
# tiles) except the 1-byte maxima, whose 36 K-element tiles would need 6 x 10^7 elements.
LONG_ROWS = [("float32", (2**25 + 3,)), ("int32", (3, 2**24 + 1)), ("float64", (2**24 + 1,)),
             ("int8", (2**25 + 5,)), ("float16", (2, 2**25 + 7)), ("uint64", (2**24 + 3,)), ("bool", (2**25,))]


@pytest.mark.skipif(not gpuprims.cuda_available(), reason="CUDA not available")
@pytest.mark.parametrize("start", [0, 1], ids=["aligned", "offset"])
@pytest.mark.parametrize("function", ["cumsum", "exclusive", "cummax"])
@pytest.mark.parametrize("dtype,shape", [pytest.param(d, s, id=f"{d}-{'x'.join(map(str, s))}") for d, s in LONG_ROWS])
def test_long_device_rows(rng, dtype, shape, function, start):
    cp = pytest.importorskip("cupy")
    a = make_data(rng, dtype, shape, "minmax" if function == "cummax" else "sum")
    view = a[..., start:]
    x = cp.asarray(a)[..., start:]
    if function == "cummax":
        got = gpuprims.cummax(x, axis=-1).get()
        np.testing.assert_array_equal(got, np.maximum.accumulate(view, axis=-1))
    else:
        got = gpuprims.prefix_sum(x, axis=-1, exclusive=function == "exclusive").get()
        check_scan(view, got, axis=-1, exclusive=function == "exclusive")
