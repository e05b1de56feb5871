"""transpose against numpy.ascontiguousarray(numpy.transpose(a, axes)): every dtype, ndim 0-5,
random permutations, shapes around the kernels' tile edges, views and strided inputs; bit-exact."""

import itertools

import numpy as np
import pytest

import gpuprims
from gp_testutils import ALL_DTYPES, gp_call, make_data, run_numpy_and_gp

# One dtype per element size (the kernels only see the size), for the larger shape sweeps.
SIZE_DTYPES = ["uint8", "float16", "float32", "float64"]


def expected(a, axes):
    return np.ascontiguousarray(np.transpose(a, axes))


def check(a, axes, device):
    """gpuprims.transpose(a, axes) is NumPy's result: same dtype, shape and bytes, a new
    C-contiguous array, and `a` is left unchanged."""
    got = gp_call("transpose", a, device, axes=axes)
    want = expected(a, axes)
    assert type(got) is np.ndarray
    assert got.dtype == want.dtype, f"dtype {got.dtype} != {want.dtype}"
    assert got.shape == want.shape, f"shape {got.shape} != {want.shape}"
    assert got.flags.c_contiguous and (got.flags.owndata or gpuprims.is_pinned(got))  # streamed: pinned
    if isinstance(a, np.ndarray) and a.size:
        assert not np.shares_memory(got, a)
    if got.tobytes() != want.tobytes():
        bad = np.argwhere(got.view(np.uint8).reshape(got.shape + (-1,)) !=
                          want.view(np.uint8).reshape(want.shape + (-1,)))[:5]
        raise AssertionError(f"transpose{a.shape} axes={axes}: values differ, first at {bad.tolist()}")
    return got


def random_shape(rng, ndim, high):
    return tuple(int(n) for n in rng.integers(1, high + 1, size=ndim))


@pytest.mark.parametrize("ndim", range(6))
@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_random_permutations(device, rng, dtype, ndim):
    for high in (5, 40):  # small extents, and extents around the 32- and 64-element tile sides
        shape = random_shape(rng, ndim, high if ndim <= 3 else 9)
        a = make_data(rng, dtype, shape)
        check(a, None, device)
        for _ in range(3):
            axes = tuple(int(x) for x in rng.permutation(ndim))
            check(a, axes, device)
            check(a, tuple(x - ndim for x in axes), device)  # negative axes


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_every_permutation_4d(device, rng, dtype):
    a = make_data(rng, dtype, (3, 4, 5, 6))
    for axes in itertools.permutations(range(4)):
        check(a, axes, device)


# 2-D shapes around tile edges (32/64/128 elements, 16-byte rows), thin and degenerate shapes.
SHAPES_2D = [
    (1, 1), (1, 7), (7, 1), (1, 1000), (1000, 1), (2, 3), (31, 33), (32, 32), (33, 31),
    (63, 64), (64, 63), (64, 64), (65, 65), (96, 100), (100, 96), (127, 128), (128, 129),
    (129, 127), (144, 160), (160, 144), (200, 264), (255, 257), (256, 256), (257, 255),
    (1000, 3), (3, 1000), (2, 4099), (4099, 2), (7, 10007), (10007, 7), (31, 4097), (4097, 33),
    (16, 2048), (2048, 16), (513, 1024), (1024, 513),
    (5001, 4), (4, 5001), (3001, 5), (5, 3001), (1001, 6), (6, 1001),  # dense sides of 2 to 7: (de)interleaves
]


@pytest.mark.parametrize("shape", SHAPES_2D, ids=lambda s: "x".join(map(str, s)))
@pytest.mark.parametrize("dtype", SIZE_DTYPES)
def test_2d_shapes(device, rng, dtype, shape):
    check(make_data(rng, dtype, shape), None, device)


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_2d_every_dtype(device, rng, dtype):
    for shape in [(130, 260), (67, 129), (5, 1001)]:
        check(make_data(rng, dtype, shape), None, device)


# Batched and higher-dimensional permutations: the last two axes swapped, axes that merge, and
# the 4-D (3, 1, 2, 0) at a smaller size.
BATCHED = [
    ((5, 130, 67), (0, 2, 1)), ((3, 64, 128), (0, 2, 1)), ((2, 3, 256, 96), (0, 1, 3, 2)),
    ((16, 17, 18, 64), (3, 1, 2, 0)), ((32, 32, 32, 32), (3, 1, 2, 0)), ((8, 9, 10), (1, 0, 2)),
    ((8, 9, 10), (2, 0, 1)), ((8, 9, 10), (1, 2, 0)), ((100, 7, 5), (0, 2, 1)),
    ((6, 200, 4), (1, 0, 2)), ((4, 6, 200), (2, 1, 0)), ((2, 3, 4, 5, 6), (4, 0, 3, 1, 2)),
    ((64, 48, 4), (1, 0, 2)), ((33, 65, 8), (1, 0, 2)), ((9, 7, 2), (1, 0, 2)),
]


@pytest.mark.parametrize("shape,axes", BATCHED, ids=lambda v: "x".join(map(str, v)))
@pytest.mark.parametrize("dtype", SIZE_DTYPES + ["bool", "int64"])
def test_batched(device, rng, dtype, shape, axes):
    check(make_data(rng, dtype, shape), axes, device)


def views(rng, dtype):
    """Strided, reversed, broadcast, offset, Fortran-ordered and transposed views."""
    base = make_data(rng, dtype, (40, 70, 9))
    plane = base[:, :, 0]
    return {
        "step": plane[::2, ::3],
        "reversed": plane[::-1],
        "reversed-columns": plane[:, ::-1],
        "reversed-both": plane[::-3, ::-2],
        "offset": plane[5:37, 3:68],
        "middle-axis": base[:, 1:60, 4],
        "3d-steps": base[1::2, ::-5, 2::3],
        "fortran": np.asfortranarray(plane),
        "transposed": plane.T,
        "broadcast-rows": np.broadcast_to(plane[:1], (50, 70)),
        "broadcast-columns": np.broadcast_to(plane[:, :1], (40, 66)),
        "broadcast-3d": np.broadcast_to(plane[:, None, :5], (40, 3, 5)),
        "last-axis-strided": base[:, :, ::4],
        "single-column": plane[:, 7:8],
    }


@pytest.mark.parametrize("name", list(views(np.random.default_rng(0), "int8")))
@pytest.mark.parametrize("dtype", SIZE_DTYPES)
def test_views(device, rng, dtype, name):
    a = views(rng, dtype)[name]
    check(a, None, device)
    check(a, tuple(range(a.ndim)), device)  # the identity: a plain contiguous copy of the view
    if a.ndim == 3:
        check(a, (1, 0, 2), device)


def test_byteswapped_and_misaligned(device, rng):
    swapped = make_data(rng, "float32", (33, 65)).astype(">f4")
    assert check(swapped, None, device).dtype == np.dtype(">f4")
    raw = np.zeros(8 * 35 * 19 + 1, np.uint8)
    misaligned = np.frombuffer(raw.data, np.float64, 35 * 19, offset=1).reshape(35, 19)
    misaligned[...] = make_data(rng, "float64", (35, 19))
    assert not misaligned.flags.aligned
    check(misaligned, None, device)
    check(misaligned[::2, ::-1], (1, 0), device)


@pytest.mark.parametrize("shape", [(0,), (0, 5), (5, 0), (3, 0, 2), (0, 0)], ids=str)
def test_empty(device, shape):
    a = np.zeros(shape, np.float32)
    check(a, None, device)
    check(a, tuple(range(a.ndim))[::-1], device)


def test_0d_and_scalars(device):
    for a in [np.array(2.5), np.array(7, np.int8), np.float32(1.5), True]:
        for axes in [None, ()]:
            np_result = expected(a, axes)
            got = gpuprims.transpose(a, axes, device=device)
            assert got.shape == np_result.shape == (1,) and got.dtype == np_result.dtype
            assert got.tobytes() == np_result.tobytes()


def test_array_likes(device):
    nested = [[1, 2, 3], [4, 5, 6]]
    got = gpuprims.transpose(nested, device=device)
    assert np.array_equal(got, np.transpose(nested)) and got.dtype == np.asarray(nested).dtype
    assert np.array_equal(gpuprims.transpose([1.5, 2.5], 0, device=device), [1.5, 2.5])
    assert np.array_equal(gpuprims.transpose(np.arange(6).reshape(2, 3), [1, 0], device=device),
                          np.arange(6).reshape(2, 3).T)
    assert np.array_equal(gpuprims.transpose(np.arange(6).reshape(2, 3), np.array([-1, 0]),
                                             device=device), np.arange(6).reshape(2, 3).T)


@pytest.mark.parametrize("axes", [
    (0, 1), (0, 1, 1), (0, 1, 3), (0, 1, -4), (0, 5), (True, False, 2), (np.True_, 0, 1),
    (0.0, 1, 2), (0, 0, 5), (0, 5, 5), "012", (None, 1, 2), 0, (np.uint8(1), 0, 2),
    [2, 1, 0], (-1, -2, -3),
], ids=repr)
def test_axes_errors_as_numpy(device, axes):
    a = np.zeros((2, 3, 4), np.float32)
    outcome = run_numpy_and_gp(lambda: np.ascontiguousarray(np.transpose(a, axes)),
                               lambda: gpuprims.transpose(a, axes, device=device))
    if outcome is not None:  # NumPy accepted the axes
        np_result, got = outcome[:2]
        assert np.array_equal(got, np_result)


@pytest.mark.parametrize("ndim,axes", [(1, 0), (1, -1), (1, 1), (1, (1,)), (0, 0), (0, (0,))], ids=repr)
def test_axes_low_ndim_as_numpy(device, ndim, axes):
    a = np.zeros((3,) * ndim, np.int16)
    outcome = run_numpy_and_gp(lambda: np.ascontiguousarray(np.transpose(a, axes)),
                               lambda: gpuprims.transpose(a, axes, device=device))
    if outcome is not None:
        assert np.array_equal(outcome[1], outcome[0])


@pytest.mark.parametrize("dtype", ["complex64", "complex128", "object", "U3", "S2", "datetime64[s]",
                                   "longdouble"])
def test_unsupported_dtypes(device, dtype):
    a = np.zeros((2, 3), dtype)
    with pytest.raises(TypeError, match="dtype"):
        gpuprims.transpose(a, device=device)


def test_large(device, rng):
    """Several tiles per row with an edge on both axes (16-byte rows or not), and thin shapes."""
    for dtype, shape in [("float32", (1500, 2100)), ("uint8", (1100, 3000)), ("uint8", (1104, 3008)),
                         ("float64", (700, 1300)), ("float16", (640, 1030)), ("float16", (640, 1032)),
                         ("float32", (7, 200_003)), ("float32", (200_003, 7)), ("uint8", (5, 100_001))]:
        check(make_data(rng, dtype, shape), None, device)
