"""Reductions (sum, prod, mean, min, max) against NumPy."""

import warnings

import numpy as np
import pytest

import gpuprims
from gp_testutils import (
    shape_axis_params,
    ALL_DTYPES, FLOAT_DTYPES, INT_DTYPES, REDUCE_FUNCS, SMALL_SIZES,
    check_reduce, data_kind, gp_call, make_data, np_reduce, run_numpy_and_gp,
    assert_same_kind_of_result,
)


def _size_params():
    out = []
    for func in REDUCE_FUNCS:
        for dt in ALL_DTYPES:
            for n in SMALL_SIZES:
                if func == "prod" and dt == "float16" and n > 4097:
                    continue
                out.append(pytest.param(func, dt, n, id=f"{func}-{dt}-{n}"))
    return out


@pytest.mark.parametrize("func,dtype,n", _size_params())
def test_full_reduction_sizes(device, rng, func, dtype, n):
    a = make_data(rng, dtype, n, data_kind(func))
    got = gp_call(func, a, device)
    check_reduce(func, a, got)


BIG = [
    ("sum", "float32", 1_000_003), ("sum", "float32", 2**20 + 1), ("sum", "float32", 2**24),
    ("sum", "int32", 1_000_003), ("sum", "int32", 2**20 + 1), ("sum", "int32", 2**24),
    ("max", "float32", 2**24), ("max", "int32", 2**24), ("min", "float32", 2**20 + 1),
    ("min", "int8", 1_000_003), ("max", "uint64", 1_000_003), ("min", "float16", 1_000_003),
    ("sum", "float64", 2**20 + 1), ("sum", "float16", 2**20 + 1), ("sum", "uint8", 1_000_003),
    ("sum", "int64", 1_000_003), ("sum", "bool", 2**20 + 1), ("sum", "uint64", 2**20 + 1),
    ("prod", "int64", 1_000_003), ("prod", "uint32", 2**20 + 1), ("prod", "float64", 65537 * 4 + 1),
    ("mean", "float32", 2**24), ("mean", "int64", 2**20 + 1), ("mean", "float16", 1_000_003),
]


@pytest.mark.parametrize("func,dtype,n", [pytest.param(*c, id="-".join(map(str, c))) for c in BIG])
def test_full_reduction_big(device, rng, func, dtype, n):
    a = make_data(rng, dtype, n, data_kind(func))
    got = gp_call(func, a, device)
    check_reduce(func, a, got)


# (shape, axis) cases: inner>1 and inner==1, size-1 dims, 0-d, tuples of
# adjacent / non-adjacent / all axes, negative axes and the empty tuple.
AXIS_CASES = [
    ((3, 5, 7), None), ((3, 5, 7), 0), ((3, 5, 7), 1), ((3, 5, 7), 2), ((3, 5, 7), -1),
    ((3, 5, 7), -2), ((3, 5, 7), -3), ((3, 5, 7), (0, 1)), ((3, 5, 7), (1, 2)),
    ((3, 5, 7), (0, 2)), ((3, 5, 7), (2, 0)), ((3, 5, 7), (-1, 0)), ((3, 5, 7), (0, 1, 2)),
    ((3, 5, 7), ()), ((3, 5, 7), (1,)),
    ((1000, 3), None), ((1000, 3), 0), ((1000, 3), 1), ((1000, 3), -1), ((1000, 3), (0, 1)),
    ((3, 1000), 0), ((3, 1000), 1), ((3, 1000), ()),
    ((2, 3, 4, 5), 1), ((2, 3, 4, 5), (0, 2)), ((2, 3, 4, 5), (1, 3)), ((2, 3, 4, 5), (1, 2)),
    ((2, 3, 4, 5), (0, 3)), ((2, 3, 4, 5), (3,)), ((2, 3, 4, 5), (0, 1, 2, 3)),
    ((2, 3, 4, 5), (-4, -2, -1)),
    ((), None), ((), ()),
    ((1,), 0), ((1,), None), ((1, 7, 1), None), ((1, 7, 1), 0), ((1, 7, 1), 1), ((1, 7, 1), 2),
    ((1, 7, 1), (0, 2)), ((5, 1), 0), ((5, 1), 1), ((33, 1, 65), 0), ((33, 1, 65), (0, 2)),
    ((257, 129), 0), ((257, 129), 1), ((4097, 2), 0), ((2, 4097), 1),
]


def _axis_id(shape, axis):
    return f"{'x'.join(map(str, shape)) or '0d'}-ax{axis!r}".replace(" ", "")


@pytest.mark.parametrize("shape,axis", [pytest.param(s, ax, id=_axis_id(s, ax)) for s, ax in AXIS_CASES])
@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("func", REDUCE_FUNCS)
def test_axis_reduction(device, rng, func, dtype, shape, axis):
    a = make_data(rng, dtype, shape, data_kind(func))
    for keepdims in (False, True):
        got = gp_call(func, a, device, axis=axis, keepdims=keepdims)
        check_reduce(func, a, got, axis=axis, keepdims=keepdims)


@pytest.mark.parametrize("func", REDUCE_FUNCS)
def test_positional_axis_and_numpy_integer_axis(device, rng, func):
    a = make_data(rng, "float64", (4, 6, 5), data_kind(func))
    got = getattr(gpuprims, func)(a, 1, device=device)
    check_reduce(func, a, got, axis=1)
    got = gp_call(func, a, device, axis=np.int64(-1))
    check_reduce(func, a, got, axis=-1)
    got = gp_call(func, a, device, axis=(np.intp(0), np.int32(2)))
    check_reduce(func, a, got, axis=(0, 2))


@pytest.mark.parametrize("func", REDUCE_FUNCS)
@pytest.mark.parametrize("axis", [0, -1, 1, (0,), None, ()])
@pytest.mark.parametrize("keepdims", [False, True])
def test_zero_dim_like_numpy(device, func, axis, keepdims):
    # numpy oddity: sum/prod/min/max of a 0-d array accept axis=0 and axis=-1
    # (but not axis=(0,)), mean does not; every form must behave like numpy.
    a = np.array(7, dtype=np.int16)
    r = run_numpy_and_gp(
        lambda: np_reduce(func, a, axis=axis, keepdims=keepdims),
        lambda: gp_call(func, a, device, axis=axis, keepdims=keepdims))
    if r is not None:
        check_reduce(func, a, r[1], axis=axis, keepdims=keepdims)


# ---------------------------------------------------------------- dtype= ---

DTYPE_ARG_CASES = [
    # (input dtype, dtype=)
    ("int8", "int8"), ("int8", "float32"), ("int8", "float64"), ("int16", "uint16"),
    ("uint8", "int16"), ("bool", "int8"), ("bool", "float32"), ("bool", "bool"),
    ("int32", "int32"), ("uint32", "uint32"), ("int64", "float64"), ("float16", "float32"),
    ("float16", "float64"), ("float32", "float64"), ("float64", "float32"), ("float32", "float16"),
    ("uint64", "int64"), ("int64", "uint8"), ("int32", "int64"), ("float16", "float16"),
]


@pytest.mark.parametrize("in_dt,dt", [pytest.param(i, d, id=f"{i}->{d}") for i, d in DTYPE_ARG_CASES])
@pytest.mark.parametrize("func", ["sum", "prod"])
@pytest.mark.parametrize("shape,axis", shape_axis_params([((1000,), None), ((4097,), 0), ((37, 41), 0), ((37, 41), 1),
                                        ((6, 7, 8), (0, 2))]))
def test_dtype_argument(device, rng, func, in_dt, dt, shape, axis):
    a = make_data(rng, in_dt, shape, data_kind(func))
    for dtype_obj in (np.dtype(dt), dt, np.dtype(dt).type):
        got = gp_call(func, a, device, axis=axis, dtype=dtype_obj)
        check_reduce(func, a, got, axis=axis, dtype=np.dtype(dt))


@pytest.mark.parametrize("in_dt", ALL_DTYPES)
@pytest.mark.parametrize("dt", ["float16", "float32", "float64"])
@pytest.mark.parametrize("shape,axis", shape_axis_params([((1000,), None), ((37, 41), 0), ((37, 41), 1)]))
def test_mean_float_dtype_argument(device, rng, in_dt, dt, shape, axis):
    a = make_data(rng, in_dt, shape, "sum")
    if dt == "float16" and in_dt in INT_DTYPES:
        # keep the float16 intermediate sum in range (numpy sums in float16
        # when dtype=float16 is given, so an overflow there would be inf)
        a = (a % 100).astype(in_dt)
    got = gp_call("mean", a, device, axis=axis, dtype=dt)
    check_reduce("mean", a, got, axis=axis, dtype=np.dtype(dt))


@pytest.mark.parametrize("in_dt,dt", [("int8", "int32"), ("int32", "int32"), ("int64", "int64"),
                                      ("uint8", "uint8"), ("float64", "int64")])
def test_mean_integer_dtype_argument(device, rng, in_dt, dt):
    # numpy: the sum is done in dtype, the division result is cast back
    # (truncated) to dtype, e.g. mean([1,2], dtype=int8) == int8(1).
    a = (rng.integers(-50, 50, size=(9, 11)) if in_dt[0] != "u" else rng.integers(0, 50, size=(9, 11)))
    a = a.astype(in_dt)
    for axis in (None, 0, 1):
        got = gp_call("mean", a, device, axis=axis, dtype=dt)
        check_reduce("mean", a, got, axis=axis, dtype=np.dtype(dt))


@pytest.mark.parametrize("in_dt", ["float32", "float64"])
def test_float_to_int_dtype_truncates_like_numpy(device, rng, in_dt):
    a = (rng.standard_normal(1001) * 1000).astype(in_dt)
    got = gp_call("sum", a, device, dtype=np.int64)
    check_reduce("sum", a, got, dtype=np.int64)


# ----------------------------------------------------------- wrap-around ---

@pytest.mark.parametrize("func,a,kw,expected", [
    ("sum", np.array([100, 100], np.int8), dict(dtype=np.int8), np.int8(-56)),
    ("sum", np.array([200, 100], np.uint8), dict(dtype=np.uint8), np.uint8(44)),
    ("sum", np.array([2**64 - 1, 2], np.uint64), {}, np.uint64(1)),
    ("sum", np.array([2**63 - 1, 1], np.int64), {}, np.int64(-2**63)),
    ("sum", np.array([2**31 - 1, 1], np.int32), dict(dtype=np.int32), np.int32(-2**31)),
    ("sum", np.full(1000, 127, np.int8), {}, np.int64(127000)),
    ("sum", np.full(1000, 255, np.uint8), {}, np.uint64(255000)),
    ("sum", np.full(70000, 60000, np.uint16), {}, np.uint64(4200000000)),
    ("sum", np.full(3, -2**31, np.int32), {}, np.int64(-3 * 2**31)),
    ("sum", np.ones(300, bool), dict(dtype=np.int8), np.int8(44)),
    ("sum", np.ones(300, bool), dict(dtype=np.uint8), np.uint8(44)),
    ("prod", np.full(9, 3, np.int8), dict(dtype=np.int8), np.int8(3**9 % 256 - 256)),
    ("prod", np.array([2**32, 2**32], np.int64), {}, np.int64(0)),
    ("prod", np.full(41, 3, np.int64), {}, np.int64(((3**41 + 2**63) % 2**64) - 2**63)),
    ("prod", np.full(41, 3, np.uint64), {}, np.uint64(3**41 % 2**64)),
    ("prod", np.full(20, 7, np.int32), {}, np.int64(7**20)),
    ("mean", np.full(3, 2**62, np.int64), {}, np.float64(2.0**62)),
    ("mean", np.full(4, 2**64 - 1, np.uint64), {}, np.float64(2.0**64)),
    ("mean", np.full(5000, 127, np.int8), {}, np.float64(127.0)),
    ("mean", np.array([True, False, True, True]), {}, np.float64(0.75)),
])
def test_wraparound_and_accumulator_width(device, func, a, kw, expected):
    got = gp_call(func, a, device, **kw)
    assert type(got) is type(expected)
    assert got == expected
    check_reduce(func, a, got, dtype=kw.get("dtype"))


def test_mean_full_range_int64_does_not_wrap(device, rng):
    a = rng.integers(2**61, 2**63 - 1, size=100_001, dtype=np.int64)
    got = gp_call("mean", a, device)
    ref = np.mean(a.astype(np.float64))
    assert abs(float(got) - ref) <= 1e-12 * ref
    check_reduce("mean", a, got)


@pytest.mark.parametrize("shape,axis", shape_axis_params([((10000,), None), ((10000, 3), 0), ((3, 10000), 1),
                                        ((100, 100, 3), (0, 1)), ((100, 3, 100), (0, 2))]))
def test_float16_sum_accumulates_in_float32(device, rng, shape, axis):
    # positive values: a float16 running sum would stall at 2048.
    a = rng.uniform(0.25, 1.0, size=shape).astype(np.float16)
    for func in ("sum", "mean"):
        got = gp_call(func, a, device, axis=axis)
        assert np.asarray(got).dtype == np.float16
        ref = getattr(np, func)(a.astype(np.float64), axis=axis)
        ok = np.abs(np.asarray(got, np.float64) - ref) <= 1.5 * np.spacing(np.abs(ref).astype(np.float16)).astype(np.float64) + 1e-3 * np.abs(ref) * 1e-2
        assert np.all(ok), (func, np.asarray(got).ravel()[:4], np.asarray(ref).ravel()[:4])


# --------------------------------------------------------- layouts/views ---

def _views(rng, dtype, kind):
    base1 = make_data(rng, dtype, 3001, kind)
    base3 = make_data(rng, dtype, (6, 7, 9), kind)
    base2 = make_data(rng, dtype, (40, 31), kind)
    return [
        ("step2", base1[::2], [None, 0]),
        ("step3", base1[1::3], [None, -1]),
        ("reversed", base1[::-1], [None, 0]),
        ("reversed_step", base1[-2::-7], [None]),
        ("transposed", base2.T, [None, 0, 1, (0, 1)]),
        ("fortran3d", np.asfortranarray(base3), [None, 0, 1, 2, (0, 2), (1, 2)]),
        ("transposed3d", base3.transpose(2, 0, 1), [None, 0, 2, (0, 1)]),
        ("neg2d", base2[::-1, ::-2], [None, 0, 1]),
        ("subblock", base2[3:30:2, 1:25:3], [None, 0, 1]),
        ("column", base2[:, 5], [None, 0]),
        ("broadcast0", np.broadcast_to(base2[0], (50, 31)), [None, 0, 1]),
        ("broadcast_mid", np.broadcast_to(base2[:, None, 0:3], (40, 4, 3)), [None, 1, (0, 1)]),
    ]


@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("func", REDUCE_FUNCS)
def test_views_and_strides(device, rng, func, dtype):
    for name, v, axes in _views(rng, dtype, data_kind(func)):
        for axis in axes:
            got = gp_call(func, v, device, axis=axis)
            try:
                check_reduce(func, v, got, axis=axis)
            except AssertionError as e:
                raise AssertionError(f"view {name}, axis={axis}: {e}") from e


MULTIBYTE = [d for d in ALL_DTYPES if np.dtype(d).itemsize > 1]


@pytest.mark.parametrize("dtype", MULTIBYTE)
@pytest.mark.parametrize("func", REDUCE_FUNCS)
def test_byteswapped(device, rng, func, dtype):
    a = make_data(rng, dtype, (33, 17), data_kind(func))
    b = a.astype(a.dtype.newbyteorder())
    assert not b.dtype.isnative
    for axis in (None, 0, 1):
        got = gp_call(func, b, device, axis=axis)
        check_reduce(func, b, got, axis=axis)
        if a.dtype.kind != "f" or func in ("min", "max"):
            assert np.array_equal(got, gp_call(func, a, device, axis=axis), equal_nan=True)


def misaligned(a):
    buf = np.zeros(a.nbytes + 1, dtype=np.uint8)
    m = buf[1:].view(a.dtype).reshape(a.shape)
    m[...] = a
    return m


@pytest.mark.parametrize("dtype", MULTIBYTE)
@pytest.mark.parametrize("func", REDUCE_FUNCS)
def test_misaligned(device, rng, func, dtype):
    a = make_data(rng, dtype, (33, 17), data_kind(func))
    m = misaligned(a)
    assert not m.flags.aligned
    for axis in (None, 0, 1, ()):
        got = gp_call(func, m, device, axis=axis)
        check_reduce(func, m, got, axis=axis)


@pytest.mark.parametrize("dtype", ["int16", "float32", "uint64", "bool"])
@pytest.mark.parametrize("func", REDUCE_FUNCS)
def test_readonly(device, rng, func, dtype):
    a = make_data(rng, dtype, (20, 9), data_kind(func))
    a.flags.writeable = False
    for axis in (None, 1):
        got = gp_call(func, a, device, axis=axis)
        check_reduce(func, a, got, axis=axis)
        if isinstance(got, np.ndarray):
            assert got.flags.writeable
    ro_view = np.broadcast_to(a[0], (3, 9))   # read-only, zero stride
    check_reduce(func, ro_view, gp_call(func, ro_view, device, axis=0), axis=0)


@pytest.mark.parametrize("func", REDUCE_FUNCS)
@pytest.mark.parametrize("obj", [
    [1, 2, 3], [[1, -2, 3], [4, 5, -6]], [1.5, -2.25, 4.0], [True, False, True], [1, 2.5],
    [[True], [False]], 7, -3.5, True, [3], [[2**40, 3]], [2**63, 5], np.float32(2.5),
    np.int8(-7), np.uint16(9),
], ids=lambda o: repr(o).replace(" ", ""))
def test_python_lists_and_scalars(device, func, obj):
    for axis in (None, 0, -1):
        r = run_numpy_and_gp(lambda: np_reduce(func, obj, axis=axis),
                             lambda: gp_call(func, obj, device, axis=axis))
        if r is not None:
            check_reduce(func, obj, r[1], axis=axis)


# ------------------------------------------------------- special floats ---

@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("func", REDUCE_FUNCS)
@pytest.mark.parametrize("n", [1, 2, 33, 4097, 65537])
@pytest.mark.parametrize("where", ["first", "middle", "last", "all"])
def test_nan_propagates_full(device, rng, func, dtype, n, where):
    a = make_data(rng, dtype, n, data_kind(func))
    pos = {"first": [0], "middle": [n // 2], "last": [n - 1], "all": list(range(n))}[where]
    a[pos] = np.nan
    got = gp_call(func, a, device)
    assert np.isnan(got), f"{func} of array with NaN at {where} gave {got}"
    check_reduce(func, a, got)


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("func", REDUCE_FUNCS)
@pytest.mark.parametrize("shape,axis", shape_axis_params([((50, 7), 0), ((50, 7), 1), ((7, 50), 1), ((4, 5, 6), (0, 2)),
                                        ((4, 5, 6), 1), ((300, 2), 0)]))
def test_nan_propagates_per_slice(device, rng, func, dtype, shape, axis):
    a = make_data(rng, dtype, shape, data_kind(func))
    # one NaN in about half of the output slices (at least one with, one without)
    axes = (axis,) if isinstance(axis, int) else axis
    axes = tuple(ax % a.ndim for ax in axes)
    kept = [d for d in range(a.ndim) if d not in axes]
    slices = list(np.ndindex(*[a.shape[d] for d in kept]))
    sel = rng.random(len(slices)) < 0.5
    sel[0], sel[-1] = True, False
    for s, pick in zip(slices, sel):
        if pick:
            full = [0] * a.ndim
            for d, i in zip(kept, s):
                full[d] = i
            for d in axes:
                full[d] = rng.integers(a.shape[d])
            a[tuple(full)] = np.nan
    for keepdims in (False, True):
        got = gp_call(func, a, device, axis=axis, keepdims=keepdims)
        expect_nan = np.any(np.isnan(a), axis=axis, keepdims=keepdims)
        assert expect_nan.any() and not expect_nan.all()
        assert np.array_equal(np.isnan(got), expect_nan)
        check_reduce(func, a, got, axis=axis, keepdims=keepdims)


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("values", [
    [1.0, np.inf, -2.0], [-np.inf, 3.0, 2.0], [np.inf, -np.inf, 0.5], [-np.inf, -np.inf],
    [np.inf], [-0.0, 0.0, -0.0], [0.0, -0.0], [-0.0], [np.inf, np.nan, -np.inf],
    [5.0, -np.inf, np.nan], [np.nan, np.inf], [1e-7, -1e-7, 3.0],
], ids=lambda v: repr(v).replace(" ", ""))
@pytest.mark.parametrize("func", REDUCE_FUNCS)
def test_special_values(device, func, dtype, values):
    a = np.array(values, dtype=dtype)
    got = gp_call(func, a, device)
    check_reduce(func, a, got)
    # embed in a longer random array too (exercises the parallel paths)
    rng = np.random.default_rng(len(values))
    big = rng.standard_normal(5000).astype(dtype)
    if func == "prod":
        big = np.where(rng.random(5000) < 0.5, -1, 1).astype(dtype)
    pos = np.sort(rng.choice(5000, size=len(values), replace=False))
    big[pos] = a
    check_reduce(func, big, gp_call(func, big, device))


@pytest.mark.parametrize("func", ["min", "max"])
@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_minmax_extremes_planted(device, rng, func, dtype):
    dt = np.dtype(dtype)
    a = make_data(rng, dtype, 10007, "minmax")
    if dt.kind in "iu":
        info = np.iinfo(dt)
        a = np.clip(a, info.min + 1, info.max - 1).astype(dt)
        ext = info.min if func == "min" else info.max
    elif dt.kind == "b":
        a[:] = func == "min"
        ext = func != "min"
    else:
        ext = -np.inf if func == "min" else np.inf
    for pos in (0, 5003, 10006):
        b = a.copy()
        b[pos] = ext
        got = gp_call(func, b, device)
        assert got == np.asarray(ext, dt), (pos, got)
        check_reduce(func, b, got)
        b2 = b.reshape(1, -1)
        check_reduce(func, b2, gp_call(func, b2, device, axis=1), axis=1)


# ------------------------------------------------------------- empties ---

EMPTY_CASES = [
    ((0,), None), ((0,), 0), ((0,), ()), ((3, 0), None), ((3, 0), 0), ((3, 0), 1), ((3, 0), -1),
    ((0, 5), 0), ((0, 5), 1), ((0, 5), (0, 1)), ((2, 0, 3), 1), ((2, 0, 3), (0, 2)), ((2, 0, 3), ()),
    ((2, 0, 3), None), ((0, 0), 1),
]


@pytest.mark.parametrize("shape,axis", [pytest.param(s, a, id=_axis_id(s, a)) for s, a in EMPTY_CASES])
@pytest.mark.parametrize("dtype", ["bool", "int8", "uint16", "int32", "int64", "uint64", "float16", "float32", "float64"])
@pytest.mark.parametrize("func", REDUCE_FUNCS)
def test_empty_like_numpy(device, func, dtype, shape, axis):
    a = np.zeros(shape, dtype=dtype)
    for keepdims in (False, True):
        # raw calls (the helpers silence RuntimeWarnings): numpy's warning
        # ("Mean of empty slice") must be mirrored by gpuprims
        r = run_numpy_and_gp(lambda: getattr(np, func)(a, axis=axis, keepdims=keepdims),
                             lambda: getattr(gpuprims, func)(a, axis=axis, keepdims=keepdims, device=device))
        if r is None:
            continue
        np_res, gp_res, np_warned, gp_warned = r
        if np_warned:
            assert gp_warned, "numpy emits a RuntimeWarning here, gpuprims must too"
        check_reduce(func, a, gp_res, axis=axis, keepdims=keepdims)


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_empty_full_reductions(device, dtype):
    a = np.zeros(0, dtype=dtype)
    s = gpuprims.sum(a, device=device)
    p = gpuprims.prod(a, device=device)
    assert_same_kind_of_result(s, np.sum(a))
    assert_same_kind_of_result(p, np.prod(a))
    assert s == 0 and p == 1
    with pytest.warns(RuntimeWarning):
        m = gpuprims.mean(a, device=device)
    assert_same_kind_of_result(m, np_reduce("mean", a))
    assert np.isnan(m)
    for func in ("min", "max"):
        with pytest.raises(ValueError):
            getattr(gpuprims, func)(a, device=device)
        with pytest.raises(ValueError):
            getattr(gpuprims, func)(a.reshape(0, 1), axis=0, device=device)
    assert gpuprims.sum(a, dtype=np.float32, device=device).dtype == np.float32
    assert gpuprims.prod(a, dtype=np.int8, device=device) == np.int8(1)


def test_mean_empty_axis_warns_and_is_nan(device):
    a = np.zeros((3, 0), dtype=np.float32)
    with pytest.warns(RuntimeWarning):
        m = gpuprims.mean(a, axis=1, device=device)
    assert m.dtype == np.float32 and m.shape == (3,) and np.all(np.isnan(m))
    m2 = gpuprims.mean(np.zeros((0, 3)), axis=1, device=device)
    assert m2.shape == (0,) and m2.dtype == np.float64


@pytest.mark.parametrize("kind", ["uniform", "normal"])
def test_float32_sum_is_as_accurate_as_numpy(device, kind):
    """The error of a float32 sum against a float64 reference is no larger than NumPy's pairwise
    sum's, summed over a few arrays per size (issue 18; docs/perf-notes.md has the tables).  On the
    GPU up to 2^26, where a float32 running sum per thread was 3x further off than NumPy."""
    rng = np.random.default_rng(14)
    for exponent in [10, 14, 18, 21] + ([24, 26] if device == "cuda" else []):
        ours = numpys = 0.0
        for _ in range(4):
            a = (rng.random(2**exponent, dtype=np.float32) if kind == "uniform"
                 else rng.standard_normal(2**exponent, dtype=np.float32))
            exact = np.sum(a, dtype=np.float64)
            ours += abs(float(gpuprims.sum(a, device=device)) - exact)
            numpys += abs(float(np.sum(a)) - exact)
        assert ours <= numpys, f"2^{exponent} {kind}: error {ours} > NumPy's {numpys}"


@pytest.mark.parametrize("spread", [1e-3, 1e-4])
def test_float32_products_near_one_are_as_accurate_as_numpy(device, spread):
    """prod and cumprod of float32 factors within `spread` of 1 (growth factors, survival
    probabilities): a product of such factors loses their cross term below half an ulp, an error of
    one sign, so a tree of float32 products drifts with n (GPU cumprod of 2^24 factors within 1e-3:
    8.3e-3 off, NumPy 9.7e-5).  Both backends multiply float32 products in double (on Hopper the
    pipelined scan, from 2^24 + 3 here, folds its rows' short trees in float and carries in double);
    the error against a float64 reference, summed over a few arrays, is no larger than NumPy's."""
    rng = np.random.default_rng(15)
    for n in [2**10 + 1, 2**16, 2**20 + 3] + ([2**22 + 1, 2**24 + 3] if device == "cuda" else []):
        ours = numpys = ours_scan = numpys_scan = 0.0
        for _ in range(3):
            a = np.exp(rng.normal(0.0, spread, n)).astype(np.float32)
            exact = np.cumprod(a, dtype=np.float64)
            ours += abs(float(gpuprims.prod(a, device=device)) / exact[-1] - 1)
            numpys += abs(float(np.prod(a)) / exact[-1] - 1)
            ours_scan += np.max(np.abs(gpuprims.cumprod(a, device=device) / exact - 1))
            numpys_scan += np.max(np.abs(np.cumprod(a) / exact - 1))
        assert ours <= numpys, f"prod, n={n}: relative error {ours} > NumPy's {numpys}"
        assert ours_scan <= numpys_scan, f"cumprod, n={n}: largest relative error {ours_scan} > NumPy's {numpys_scan}"


NARROW_WIDTHS = [2, 3, 7, 8, 15, 16]
NARROW_ROWS = [1, 511, 513, 16384 + 515]  # one row, around a 512-row block, past a 16384-row piece


# the CPU backend's short rows are those of up to 128 bytes: around 16 float64, 32 float32, 64 float16
SHORT_LENGTHS = [1, 7, 16, 17, 32, 33, 64, 65]
SHORT_COUNTS = [2, 255, 257, 1000]  # around its blocks of 256 rows


@pytest.mark.parametrize("count", SHORT_COUNTS)
@pytest.mark.parametrize("length", SHORT_LENGTHS)
@pytest.mark.parametrize("dtype", ["bool", "uint8", "int32", "float16", "float32", "float64"])
@pytest.mark.parametrize("func", REDUCE_FUNCS)
def test_short_rows(device, rng, func, dtype, length, count):
    """Many short rows along the last axis, which the CPU backend reduces as columns of transposed
    blocks."""
    a = make_data(rng, dtype, (count, length), data_kind(func))
    check_reduce(func, a, gp_call(func, a, device, axis=1), axis=1)


@pytest.mark.parametrize("count", SHORT_COUNTS)
@pytest.mark.parametrize("length", SHORT_LENGTHS)
@pytest.mark.parametrize("name", ["argmin", "argmax", "nanargmin", "nanargmax", "nanmin", "nanmax", "nansum", "var",
                                  "nanstd", "count_nonzero", "any", "all"])
def test_short_rows_family(device, rng, name, length, count):
    """The family along short rows: ties (values from a few levels), a NaN in one row's last
    element, a row of NaNs for the nan-functions, and a 3-D input whose two leading axes are the
    rows."""
    a = rng.integers(0, 4, size=(count, length)).astype(np.float32)
    a[count // 2, length - 1] = np.nan
    if name.startswith("nan") and name not in ("nanargmin", "nanargmax"):
        a[0] = np.nan
    for x in (a, a.reshape(2, count // 2, length) if count % 2 == 0 else a):
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            try:
                expected = getattr(np, name)(x, axis=-1)
            except ValueError:  # nanargmin/nanargmax of a row of NaNs (one element, the NaN)
                with pytest.raises(ValueError):
                    getattr(gpuprims, name)(x, axis=-1, device=device)
                continue
            got = getattr(gpuprims, name)(x, axis=-1, device=device)
        assert got.dtype == expected.dtype and got.shape == expected.shape
        np.testing.assert_allclose(got, expected, rtol=1e-6, equal_nan=True)


@pytest.mark.parametrize("width", NARROW_WIDTHS)
@pytest.mark.parametrize("length", [2, 7, 16, 33])
@pytest.mark.parametrize("name", ["sum", "prod", "mean", "max", "argmin", "argmax", "nanargmax", "nanmin", "var",
                                  "count_nonzero", "all"])
@pytest.mark.parametrize("dtype", ["uint8", "int32", "float32", "float64"])
def test_short_narrow_slices(device, rng, dtype, name, length, width):
    """Many short slices along the middle axis of narrow columns (an (outer, n, width) array along
    n), which the CPU backend reduces as short rows of transposed slabs: ties, a NaN in one slice."""
    a = rng.integers(0, 4, size=(301, length, width)).astype(dtype)
    if a.dtype.kind == "f":
        a[150, length - 1, width - 1] = np.nan
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        expected = getattr(np, name)(a, axis=1)
        got = getattr(gpuprims, name)(a, axis=1, device=device)
    assert got.dtype == expected.dtype and got.shape == expected.shape
    np.testing.assert_allclose(got, expected, rtol=1e-6, equal_nan=True)


@pytest.mark.parametrize("width", NARROW_WIDTHS)
@pytest.mark.parametrize("rows", NARROW_ROWS)
@pytest.mark.parametrize("dtype", ["int16", "float16", "float32", "float64"])
@pytest.mark.parametrize("func", REDUCE_FUNCS)
def test_narrow_columns(device, rng, func, dtype, rows, width):
    """Columns narrower than 16, which the CPU backend reduces as rows of transposed blocks: two
    outer indices, reduced along the middle axis."""
    a = make_data(rng, dtype, (2, rows, width), data_kind(func))
    check_reduce(func, a, gp_call(func, a, device, axis=1), axis=1)


@pytest.mark.parametrize("width", NARROW_WIDTHS)
@pytest.mark.parametrize("rows", NARROW_ROWS)
@pytest.mark.parametrize("name", ["argmin", "argmax", "nanargmin", "nanargmax", "nanmin", "nanmax", "var",
                                  "count_nonzero", "any"])
def test_narrow_columns_family(device, rng, name, rows, width):
    """The family along narrow columns: ties (values from a few levels), a NaN in the second outer
    index's last block of one column, and a column of NaNs for the nan-functions."""
    a = rng.integers(0, 4, size=(2, rows, width)).astype(np.float32)
    a[1, rows - 1 - rows // 3, width // 2] = np.nan
    if name.startswith("nan") and name != "nanargmin" and name != "nanargmax":
        a[0, :, 0] = np.nan
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        try:
            expected = getattr(np, name)(a, axis=1)
        except ValueError:  # nanargmin/nanargmax of a slice of NaNs (one row, the NaN in it)
            with pytest.raises(ValueError):
                getattr(gpuprims, name)(a, axis=1, device=device)
            return
        got = getattr(gpuprims, name)(a, axis=1, device=device)
    assert got.dtype == expected.dtype and got.shape == expected.shape
    np.testing.assert_allclose(got, expected, rtol=1e-6, equal_nan=True)
