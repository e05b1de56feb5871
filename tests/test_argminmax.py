"""argmin and argmax against NumPy: every dtype, sizes, axes, keepdims, ties, NaN positions, views,
empty and 0-d inputs, errors, device-resident inputs and the forced streaming path."""
import numpy as np
import pytest

import gpuprims
from gp_testutils import ALL_DTYPES, FLOAT_DTYPES, SMALL_SIZES, assert_same_kind_of_result, gp_call, make_data, \
    stream_params

cuda = pytest.mark.skipif(not gpuprims.cuda_available(), reason="CUDA not available")
FUNCS = ["argmin", "argmax"]


def check_arg(func, a, got, axis=None, keepdims=False):
    expected = getattr(np, func)(a, axis=axis, keepdims=keepdims)
    assert_same_kind_of_result(got, expected, src=a, what=f"{func}(axis={axis!r}, keepdims={keepdims})")
    assert np.array_equal(got, expected), (func, axis, np.asarray(got).ravel()[:8], np.asarray(expected).ravel()[:8])


def few_values(rng, dtype, shape):
    """Data with many ties: values from a set of four (two for bool)."""
    return make_data(rng, dtype, 4, "minmax")[rng.integers(0, 4, size=shape)]


@pytest.mark.parametrize("n", SMALL_SIZES + [16384, 16385, 3 * 16384 + 5, 1_000_003])
@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("func", FUNCS)
def test_flat(device, rng, func, dtype, n):
    for a in (make_data(rng, dtype, n, "minmax"), few_values(rng, dtype, n)):
        check_arg(func, a, gp_call(func, a, device))


@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("func", FUNCS)
def test_best_planted_in_every_piece_position(device, rng, func, dtype):
    """The extreme value once, late, and again later: the first copy's index, past piece and block
    boundaries (the CPU's pieces are 16384 elements)."""
    a = few_values(rng, dtype, 70001)
    dt = np.dtype(dtype)
    extreme = (np.iinfo(dt).min if func == "argmin" else np.iinfo(dt).max) if dt.kind in "iu" else (
        (func == "argmax") if dt.kind == "b" else (-np.inf if func == "argmin" else np.inf))
    if dt.kind == "b":
        a[:] = func == "argmin"  # the extreme is the other value
    for pos in (0, 16383, 16384, 40000, 70000):
        b = a.copy()
        b[pos] = extreme
        b[-1] = extreme
        check_arg(func, b, gp_call(func, b, device))


@pytest.mark.parametrize("rows", [700, 5000, 16384 + 600])
@pytest.mark.parametrize("dtype", ["int8", "uint32", "float16", "float32", "float64"])
@pytest.mark.parametrize("func", FUNCS)
def test_narrow_columns_best_past_a_block(device, rng, func, dtype, rows):
    """Narrow columns (the middle axis of (outer, rows, 3)) whose best lies past the CPU's first
    block of 512 rows: twice (the first copy's index), in the last rows, past a 16384-row piece,
    and a NaN that wins."""
    dt = np.dtype(dtype)
    a = few_values(rng, dt, (4, rows, 3))
    if dt.kind == "f":
        extreme = -np.inf if func == "argmin" else np.inf
        a[0, rows // 2 + 1, 1] = np.nan
    else:
        extreme = np.iinfo(dt).min if func == "argmin" else np.iinfo(dt).max
    a[1, 600, 0] = a[1, rows - 1, 0] = extreme
    a[2, rows - 2, 2] = extreme
    a[3, 513, 1] = a[3, 514, 1] = extreme
    check_arg(func, a, gp_call(func, a, device, axis=1), axis=1)


@pytest.mark.parametrize("shape,axis", [((70001,), None), ((5, 300), 1), ((300, 5), 0), ((3, 5000), 1),
                                        ((5000, 3), 0), ((40, 2000), 0), ((2000, 40), 1)])
@pytest.mark.parametrize("dtype", ["bool", "int8", "uint16", "int64", "float16", "float32", "float64"])
@pytest.mark.parametrize("func", FUNCS)
def test_every_element_the_starting_value(device, func, dtype, shape, axis):
    """Every element equal to the value a search starts from (-inf or the lowest integer for
    argmax, +inf or the highest for argmin): index 0 of every slice, on every kernel's path."""
    dt = np.dtype(dtype)
    if dt.kind == "f":
        value = -np.inf if func == "argmax" else np.inf
    elif dt.kind == "b":
        value = func == "argmin"
    else:
        value = np.iinfo(dt).min if func == "argmax" else np.iinfo(dt).max
    a = np.full(shape, value, dtype=dt)
    check_arg(func, a, gp_call(func, a, device, axis=axis), axis=axis)


def low_and_best(func, dt):
    """The least of 1000 consecutive data values, and a value better than all of them for func:
    for unsigned dtypes past the signed maximum, so that a signed comparison would pick another
    element."""
    if dt.kind == "u":
        high = np.iinfo(dt).max
        return (high // 2 + 7, 1) if func == "argmin" else (high // 2 + 7, high)
    if dt.kind == "i":
        info = np.iinfo(dt)
        return (-1000, info.min) if func == "argmin" else (-1000, info.max)
    return (-1000.0, -np.inf) if func == "argmin" else (-1000.0, np.inf)


@pytest.mark.parametrize("dtype", ["int32", "uint32", "int64", "uint64", "float32", "float64"])
@pytest.mark.parametrize("func", FUNCS)
def test_rows_best_at_every_position(device, rng, func, dtype):
    """Rows of every length up to 140 and some longer (the CPU's one-pass loop for 4- and 8-byte
    elements: its accumulators, lanes and padded tail), each row with its best at another position
    and, in every other row, a second copy later (the first copy's index).  Unsigned values past the
    signed maximum, so that a signed comparison would pick another element."""
    dt = np.dtype(dtype)
    low, best = low_and_best(func, dt)
    for n in list(range(1, 141)) + [255, 256, 257, 1000, 4099, 16384]:
        rows = n if n <= 300 else 37
        a = (rng.integers(0, 1000, size=(rows, n)) + np.array(low, dt)).astype(dt)
        firsts = np.arange(rows) % n if n <= 300 else rng.integers(0, n, size=rows)
        a[np.arange(rows), firsts] = best
        later = np.minimum(firsts + 1 + rng.integers(0, n, size=rows), n - 1)[::2]
        a[np.arange(rows)[::2], later] = best
        check_arg(func, a, gp_call(func, a, device, axis=1), axis=1)


@pytest.mark.parametrize("width", [2, 3, 4, 5, 6, 7, 8, 16])
@pytest.mark.parametrize("dtype", ["int32", "uint32", "int64", "uint64", "float32", "float64"])
@pytest.mark.parametrize("func", FUNCS)
def test_columns_searched_in_place(device, rng, func, dtype, width):
    """Columns that the CPU's one-pass loop searches in place, a lane per column (counts dividing its
    vector lanes, and 3, 5, 6 and 7, whose vectors advance by the whole rows that fit; pieces of 16384
    rows): each column's best at another row, in another piece, with a later copy
    in every other column; one column's best tied across pieces (the first piece's); and a NaN in
    one column, which must win there and leave the others alone."""
    dt = np.dtype(dtype)
    low, best = low_and_best(func, dt)
    columns = np.arange(width)
    for rows in [1, 2, 5, 31, 33, 100, 257, 16384, 16385, 3 * 16384 + 5]:
        a = (rng.integers(0, 1000, size=(2, rows, width)) + np.array(low, dt)).astype(dt)
        firsts = (columns * 7919 + rows // 3) % rows
        a[0, firsts, columns] = best
        later = np.minimum(firsts + 1 + rng.integers(0, rows, size=width), rows - 1)[::2]
        a[0, later, columns[::2]] = best
        a[1, [rows - 1, rows // 2, rows // 5], 0] = best
        check_arg(func, a, gp_call(func, a, device, axis=1), axis=1)
        check_arg(func, a[1], gp_call(func, a[1], device, axis=0), axis=0)
        if dt.kind == "f":
            a[1, rows // 2, width - 1] = np.nan
            check_arg(func, a, gp_call(func, a, device, axis=1), axis=1)


@pytest.mark.parametrize("where", ["first", "middle", "last", "all", "two"])
@pytest.mark.parametrize("n", [1, 2, 33, 4097, 65537])
@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("func", FUNCS)
def test_nan_wins_first_nan(device, rng, func, dtype, n, where):
    a = make_data(rng, dtype, n, "minmax")
    pos = {"first": [0], "middle": [n // 2], "last": [n - 1], "all": list(range(n)),
           "two": [n // 3, n - 1]}[where]
    a[pos] = np.nan
    a[n // 4] = -np.inf if func == "argmin" else np.inf
    check_arg(func, a, gp_call(func, a, device))


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("func", FUNCS)
def test_signed_zeros_and_infinities_tie(device, func, dtype):
    for values in ([0.0, -0.0], [-0.0, 0.0], [np.inf, np.inf], [-np.inf, 1.0, -np.inf], [1.0, np.nan, np.nan]):
        a = np.array(values, dtype)
        check_arg(func, a, gp_call(func, a, device))
        b = np.tile(a[:, None], (1, 33))  # along columns
        check_arg(func, b, gp_call(func, b, device, axis=0), axis=0)
    z = np.zeros(5000, dtype)
    z[::2] = -0.0
    check_arg(func, z, gp_call(func, z, device))


AXIS_CASES = [((3, 5, 7), 0), ((3, 5, 7), 1), ((3, 5, 7), 2), ((3, 5, 7), -1), ((3, 5, 7), None),
              ((1000, 3), 0), ((3, 1000), 1), ((257, 129), 0), ((129, 257), 1), ((1, 7, 1), 1), ((5, 1), 1),
              ((40000, 2), 0), ((2, 40000), 1), ((33, 1, 65), 0), ((3, 2100, 5), 1)]


@pytest.mark.parametrize("shape,axis", AXIS_CASES, ids=[f"{'x'.join(map(str, s))}-ax{a}" for s, a in AXIS_CASES])
@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("func", FUNCS)
def test_axis_and_keepdims(device, rng, func, dtype, shape, axis):
    for a in (make_data(rng, dtype, shape, "minmax"), few_values(rng, dtype, shape)):
        if a.dtype.kind == "f":
            a.flat[rng.integers(0, a.size, size=a.size // 50 + 1)] = np.nan  # NaNs in some slices
        for keepdims in (False, True):
            check_arg(func, a, gp_call(func, a, device, axis=axis, keepdims=keepdims), axis, keepdims)


@pytest.mark.parametrize("dtype", ["int16", "float32", "float64", "uint8"])
@pytest.mark.parametrize("func", FUNCS)
def test_views_and_strides(device, rng, func, dtype):
    base = make_data(rng, dtype, (40, 31), "minmax")
    line = make_data(rng, dtype, 3001, "minmax")
    for view in (line[::2], line[::-1], line[-2::-7], base.T, base[::-1, ::-2], base[3:30:2, 1:25:3],
                 np.asfortranarray(base), np.broadcast_to(base[0], (50, 31))):
        for axis in (None, 0, -1):
            check_arg(func, view, gp_call(func, view, device, axis=axis), axis)
    swapped = base.astype(base.dtype.newbyteorder())
    check_arg(func, swapped, gp_call(func, swapped, device, axis=1), 1)


@pytest.mark.parametrize("func", FUNCS)
def test_zero_dim_lists_and_scalars(device, func):
    for obj in (np.array(7, np.int16), 3.5, [2, 9, 9, 1], [[1, 5], [5, 0]], True):
        a = np.asarray(obj)
        for axis in ([None, 0, -1] if a.ndim else [None, 0, -1]):
            for keepdims in (False, True):
                check_arg(func, a, gp_call(func, obj, device, axis=axis, keepdims=keepdims), axis, keepdims)


@pytest.mark.parametrize("func", FUNCS)
def test_empty_and_errors_like_numpy(device, func):
    for shape, axis in (((0,), None), ((0,), 0), ((3, 0), 1), ((0, 4), None), ((0, 4), 0)):
        with pytest.raises(ValueError, match="empty sequence"):
            gp_call(func, np.zeros(shape, np.float32), device, axis=axis)
    got = gp_call(func, np.zeros((3, 0)), device, axis=0)
    check_arg(func, np.zeros((3, 0)), got, 0)
    a = np.arange(12.0).reshape(3, 4)
    with pytest.raises(TypeError):
        gp_call(func, a, device, axis=(0,))
    with pytest.raises(TypeError):
        gp_call(func, a, device, axis=1.0)
    with pytest.raises(np.exceptions.AxisError):
        gp_call(func, a, device, axis=2)
    with pytest.raises(np.exceptions.AxisError):
        gp_call(func, np.array(1.0), device, axis=1)
    with pytest.raises(TypeError):
        gp_call(func, a.astype(np.complex64), device)


@cuda
@pytest.mark.parametrize("dtype", ["bool", "int8", "int64", "uint32", "float16", "float32", "float64"])
@pytest.mark.parametrize("func", FUNCS)
def test_device_resident(rng, func, dtype):
    a = few_values(rng, dtype, (300, 257))
    if a.dtype.kind == "f":
        a[5, 7] = np.nan
    d = gpuprims.to_device(a)
    for axis in (None, 0, 1):
        for keepdims in (False, True):
            got = getattr(gpuprims, func)(d, axis=axis, keepdims=keepdims)
            assert isinstance(got, gpuprims.DeviceArray) and got.dtype == np.intp
            expected = getattr(np, func)(a, axis=axis, keepdims=keepdims)
            assert got.shape == np.shape(expected) and np.array_equal(got.get(), expected)
    view = d.transpose((1, 0))  # a strided device view (DeviceArray has no slicing): made contiguous first
    assert np.array_equal(getattr(gpuprims, func)(view, axis=1).get(), getattr(np, func)(a.T, axis=1))


@cuda
@pytest.mark.parametrize("shape,axis,chunk", stream_params())
@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("func", FUNCS)
def test_streamed(monkeypatch, rng, func, dtype, shape, axis, chunk):
    """Streaming forced on small arrays, cut into tiles of a few bytes: the running (value, index)
    pairs of cut columns must carry the tiles' first rows."""
    a = few_values(rng, dtype, shape)
    if a.dtype.kind == "f":
        a.flat[rng.integers(0, a.size, size=3)] = np.nan
    monkeypatch.setenv("GPUPRIMS_STREAM_MIN_BYTES", "0")
    monkeypatch.setenv("GPUPRIMS_STREAM_CHUNK_BYTES", str(chunk))
    assert gpuprims.explain(getattr(gpuprims, func), a, axis=axis, device="cuda")["route"] == "cuda-streamed"
    check_arg(func, a, gp_call(func, a, "cuda", axis=axis), axis)


@cuda
@pytest.mark.parametrize("func", FUNCS)
def test_streamed_under_device_cap(monkeypatch, rng, func):
    a = make_data(rng, "float32", (1 << 20) + 7, "minmax")
    a[(1 << 20) - 3] = np.inf if func == "argmax" else -np.inf
    monkeypatch.setenv("GPUPRIMS_MAX_DEVICE_BYTES", str(1 << 20))
    check_arg(func, a, gp_call(func, a, "cuda"))
