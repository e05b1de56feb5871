"""convolve/correlate against numpy.convolve/correlate, convolve2d/correlate2d against
scipy.signal.convolve2d/correlate2d.

Integer and bool results must be bit-exact (wrap-around included); float results are compared
with a float64 reference under a bound that grows with the number of taps (float16 and float32
accumulate in float32 on the GPU, as NumPy and SciPy do)."""
import warnings
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

import gpuprims
from gp_testutils import (
    ALL_DTYPES, _assert_unchanged, _snapshot, assert_exact, assert_float_close,
    assert_same_kind_of_result, make_data,
)

FUNCS_1D = ["convolve", "correlate"]
FUNCS_2D = ["convolve2d", "correlate2d"]
MODES = ["full", "same", "valid"]
BOUNDARIES = ["fill", "wrap", "symm"]
# dtypes SciPy's convolve2d computes in (it has no bool and float16 kernels)
SCIPY_DTYPES = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
                "float32", "float64"]
C_TAPS = 2.0  # float error bound: C_TAPS * eps(accumulator) * taps * sum|x*w| + one result ulp


@pytest.fixture
def signal():
    return pytest.importorskip("scipy.signal")


def gp(name, *args, device, **kwargs):
    """gpuprims.<name>(*args, device=device, **kwargs), checking the inputs are not modified."""
    snapshots = [_snapshot(a) for a in args]
    got = getattr(gpuprims, name)(*args, device=device, **kwargs)
    for a, snap in zip(args, snapshots):
        _assert_unchanged(a, snap)
    return got


def data(rng, dtype, shape):
    """Random data of `dtype`: full-range integers (so sums wrap), normal floats, fair bools."""
    return make_data(rng, dtype, shape)


def check(got, expected, reference, what):
    """`got` against the library's result `expected` (dtype, shape, exact for integers and bool)
    and, for floats, against reference(cast, taps) -> (float64 result, float64 sum of |terms|)."""
    assert_same_kind_of_result(got, expected, what=what)
    dtype = expected.dtype
    if dtype.kind in "biu":
        assert_exact(got, expected, what)
        return
    ref, absolute, taps = reference()
    eps = np.finfo(np.float64 if dtype == np.float64 else np.float32).eps
    with np.errstate(all="ignore"):
        spacing = np.spacing(np.abs(ref).astype(dtype)).astype(np.float64)
        tol = C_TAPS * eps * taps * absolute + spacing + 4 * float(np.finfo(dtype).smallest_subnormal)
    assert_float_close(got, ref, tol, what, dtype)


def as_f64(x, dtype):
    """x converted to the computation dtype first (as NumPy/SciPy do), then to float64."""
    return np.asarray(x).astype(dtype).astype(np.float64)


def check_1d(name, a, v, got, mode):
    expected = getattr(np, name)(a, v, mode)
    dtype = expected.dtype

    def reference():
        a64, v64 = as_f64(a, dtype), as_f64(v, dtype)
        function = getattr(np, name)
        return (function(a64, v64, mode), function(np.abs(a64), np.abs(v64), mode),
                min(np.size(a), np.size(v)))

    check(got, expected, reference, f"{name}(n={np.size(a)}, m={np.size(v)}, mode={mode!r})")


def check_2d(signal, name, in1, in2, got, mode="full", boundary="fill", fillvalue=0):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # overflowing or complex fill values, as gpuprims
        expected = getattr(signal, name)(in1, in2, mode, boundary, fillvalue)
    dtype = expected.dtype

    def reference():
        function = getattr(signal, name)
        fill = float(np.asarray(fillvalue).astype(dtype)) if boundary == "fill" else 0.0
        a64, k64 = as_f64(in1, dtype), as_f64(in2, dtype)
        return (function(a64, k64, mode, boundary, fill),
                function(np.abs(a64), np.abs(k64), mode, boundary, abs(fill)),
                min(np.size(in1), np.size(in2)))

    check(got, expected, reference,
          f"{name}({np.shape(in1)}, {np.shape(in2)}, {mode!r}, {boundary!r}, fillvalue={fillvalue!r})")


def same_error(expected_call, got_call):
    """Both raise, gpuprims with the exception type NumPy/SciPy raised."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(Exception) as expected:
            expected_call()
        with pytest.raises(type(expected.value)):
            got_call()


# ----------------------------------------------------------------------------------------------
# numpy.convolve / numpy.correlate
# ----------------------------------------------------------------------------------------------

# (n, m): odd/even/one-long masks, masks longer than the signal (swapped), sizes around the
# 2304-output row tile and the 2304-tap chunk, long masks.
SIZES_1D = [(1, 1), (2, 1), (1, 2), (7, 3), (7, 4), (3, 7), (4, 7), (10, 10), (33, 2), (2303, 7),
            (2304, 8), (2305, 9), (4609, 16), (4611, 2304), (2304, 2305), (6001, 2305), (4097, 4097),
            (9000, 4097)]


@pytest.mark.parametrize("n,m", SIZES_1D, ids=[f"{n}x{m}" for n, m in SIZES_1D])
@pytest.mark.parametrize("dtype", ["float32", "int16"])
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name", FUNCS_1D)
def test_1d_modes_and_sizes(device, rng, name, mode, dtype, n, m):
    a, v = data(rng, dtype, n), data(rng, dtype, m)
    check_1d(name, a, v, gp(name, a, v, mode, device=device), mode)


@pytest.mark.parametrize("dtype_v", ALL_DTYPES)
@pytest.mark.parametrize("dtype_a", ALL_DTYPES)
@pytest.mark.parametrize("name", FUNCS_1D)
def test_1d_dtypes(device, rng, name, dtype_a, dtype_v):
    a, v = data(rng, dtype_a, 301), data(rng, dtype_v, 6)
    for mode in MODES:
        check_1d(name, a, v, gp(name, a, v, mode, device=device), mode)


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "float16", "bool"])
@pytest.mark.parametrize("name", FUNCS_1D)
def test_1d_long_signals(device, rng, name, dtype):
    a, v = data(rng, dtype, 2**20 + 5), data(rng, dtype, 7)
    for mode in MODES:
        check_1d(name, a, v, gp(name, a, v, mode, device=device), mode)


@pytest.mark.parametrize("m", [127, 128, 129, 255, 256, 257, 1023, 1024, 1025, 4096, 10007])
@pytest.mark.parametrize("dtype", ["float32", "float64", "int8", "uint64"])
def test_1d_mask_lengths(device, rng, dtype, m):
    """Masks around the sizes where they stop fitting a kernel parameter and one tap chunk."""
    a, v = data(rng, dtype, 20011), data(rng, dtype, m)
    for name in FUNCS_1D:
        check_1d(name, a, v, gp(name, a, v, "same", device=device), "same")


def test_1d_views_and_layouts(device, rng):
    base = data(rng, "float64", 4001)
    mask = data(rng, "float64", 12)
    cases = [
        (base[::-1], mask), (base[::3], mask[::-1]), (base[1:], mask[1:]), (base[:-3], mask[::2]),
        (base.astype(">f8"), mask.astype(">f4")), (base.astype(np.float32)[7:], mask),
        (list(base[:50]), list(mask)), (base[:100], 2.5), (3, mask), (np.float32(2), [1, 2, 3]),
        (np.arange(10, dtype=np.int8)[::2], [300]),
    ]
    for a, v in cases:
        for mode in MODES:
            check_1d("convolve", a, v, gp("convolve", a, v, mode, device=device), mode)
            if np.ndim(a) and np.ndim(v):
                check_1d("correlate", a, v, gp("correlate", a, v, mode, device=device), mode)


def test_1d_wraps_and_bool_semantics(device):
    a = np.array([100, 100, 100], np.int8)
    got = gp("convolve", a, np.array([2, 2], np.int8), device=device)
    assert got.dtype == np.int8 and np.array_equal(got, np.convolve(a, np.array([2, 2], np.int8)))
    b = np.array([0, 0, 1, 0, 1], bool)
    for v in (np.array([0, 1], bool), np.array([1, 1, 1], bool), np.zeros(2, bool)):
        for mode in MODES:
            assert np.array_equal(gp("convolve", b, v, mode, device=device), np.convolve(b, v, mode))
            assert np.array_equal(gp("correlate", b, v, mode, device=device), np.correlate(b, v, mode))
    u = np.array([2**64 - 1, 5], np.uint64)
    assert np.array_equal(gp("convolve", u, u, device=device), np.convolve(u, u))


def test_1d_nan_and_inf(device):
    a = np.array([1.0, np.nan, 2.0, 3.0, np.inf, 1.0, 0.0, 5.0], np.float32)
    v = np.array([1.0, 0.0, -1.0], np.float32)
    for mode in MODES:
        for name in FUNCS_1D:
            expected = getattr(np, name)(a, v, mode)
            got = gp(name, a, v, mode, device=device)
            assert np.array_equal(np.isnan(got), np.isnan(expected)), (name, mode, got, expected)
            finite = np.isfinite(expected)
            assert np.array_equal(got[finite], expected[finite]) and np.array_equal(
                got[np.isinf(expected)], expected[np.isinf(expected)])


def test_1d_finite_taps_whose_sum_overflows(device):
    """Taps that are finite but sum past the largest float: NumPy's result wherever it is finite,
    and inf or NaN where NumPy's is.  Where an output's products overflow both ways (inf - inf) the
    order of the sum decides between NaN and inf: NumPy's dot gives NaN, the GPU's fused
    multiply-adds may keep an inf."""
    big = np.finfo(np.float64).max
    a = np.array([0.5, -1e-300, 2.0, 0.0, 3.0])
    for v in (np.array([big, big, -big]), np.array([big / 4, 1.0])):
        for mode in MODES:
            with np.errstate(all="ignore"):
                expected = np.convolve(a, v, mode)
            got = gp("convolve", a, v, mode, device=device)
            finite = np.isfinite(expected)
            np.testing.assert_array_equal(got[finite], expected[finite])
            assert not np.isfinite(got[~finite]).any()
            if device == "cpu":
                np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("taps", [1, 2, 3, 8, 31, 300])
@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_1d_nonfinite_taps(device, rng, dtype, taps):
    """NumPy sums only the taps that overlap the signal, so an inf or NaN tap past the signal's
    end must not turn the edge outputs into NaN (inf * 0 would)."""
    a, v = data(rng, dtype, 257), data(rng, dtype, taps)
    v[rng.integers(0, taps, 2)] = [np.inf, -np.inf] if taps % 2 else [np.nan, np.inf]
    for name in FUNCS_1D:
        for mode in MODES:
            for first, second in ((a, v), (v, a)):
                expected = getattr(np, name)(first, second, mode)
                got = gp(name, first, second, mode, device=device)
                assert got.dtype == expected.dtype
                np.testing.assert_array_equal(np.isnan(got), np.isnan(expected), err_msg=f"{name} {mode}")
                np.testing.assert_array_equal(np.isposinf(got), np.isposinf(expected))
                finite = np.isfinite(expected)
                np.testing.assert_allclose(got[finite].astype(np.float64), expected[finite].astype(np.float64),
                                           rtol=1e-2 if dtype == "float16" else 1e-4, atol=1e-2 * taps)
                if device == "cuda":  # device in, device out: the same values
                    resident = getattr(gpuprims, name)(gpuprims.to_device(first), second, mode)
                    assert isinstance(resident, gpuprims.DeviceArray)
                    np.testing.assert_array_equal(resident.get(), got)


@pytest.mark.parametrize("mode", ["full", "same", "valid", 0, 1, 2, np.int64(1), "f", "Same", "x",
                                  "", 3, -1, None, 1.0, True, [1]],
                         ids=lambda m: repr(m))
@pytest.mark.parametrize("name", FUNCS_1D)
def test_1d_mode_arguments(device, name, mode):
    """Whatever the installed NumPy does: NumPy up to 2.2 takes 'f' and 'Same' with a
    DeprecationWarning, later ones raise."""
    a, v = np.arange(6.0), np.array([1.0, -2.0, 0.5])
    try:
        with warnings.catch_warnings(record=True) as numpy_warnings:
            warnings.simplefilter("always")
            expected = getattr(np, name)(a, v, mode)
    except Exception:  # noqa: BLE001
        same_error(lambda: getattr(np, name)(a, v, mode), lambda: gp(name, a, v, mode, device=device))
        return
    with warnings.catch_warnings(record=True) as gp_warnings:
        warnings.simplefilter("always")
        got = gp(name, a, v, mode, device=device)
    np.testing.assert_allclose(got, expected)
    assert [(w.category, str(w.message)) for w in gp_warnings] == [(w.category, str(w.message))
                                                                   for w in numpy_warnings]


@pytest.mark.parametrize("name", FUNCS_1D)
def test_1d_bad_operands(device, name):
    good = np.arange(4.0)
    for a, v in [([], good), (good, []), (np.ones((2, 2)), good), (good, np.ones((2, 1))),
                 (np.zeros(0, np.int8), np.zeros(0, np.int8)), (np.float64(3), good)]:
        try:
            expected = getattr(np, name)(a, v)
        except ValueError:
            same_error(lambda: getattr(np, name)(a, v), lambda: gp(name, a, v, device=device))
            continue
        np.testing.assert_array_equal(gp(name, a, v, device=device), expected)  # a scalar a
    for bad in (np.array([1 + 2j, 3]), np.array([1, 2], object), np.array([1, 2], "m8[s]"),
                np.array([1.0, 2.0], np.longdouble), np.array(["a", "b"])):
        with pytest.raises(TypeError, match="dtype"):
            gp(name, bad, good, device=device)
        with pytest.raises(TypeError, match="dtype"):
            gp(name, good, bad, device=device)


# ----------------------------------------------------------------------------------------------
# scipy.signal.convolve2d / correlate2d
# ----------------------------------------------------------------------------------------------

# (image, mask): tile edges (64 x 64 outputs), odd/even/1x1 masks, one-row and one-column
# operands, masks as large as or larger than the image, masks past the 32-tap chunk.
SHAPES_2D = [((5, 6), (3, 3)), ((64, 64), (5, 5)), ((65, 63), (5, 5)), ((130, 129), (4, 6)),
             ((1, 200), (1, 7)), ((200, 1), (7, 1)), ((3, 4), (7, 9)), ((9, 7), (9, 7)),
             ((70, 80), (33, 40)), ((4, 5), (1, 1)), ((2, 2), (2, 2)), ((1, 1), (3, 2)),
             ((67, 3), (2, 5))]


@pytest.mark.parametrize("shapes", SHAPES_2D, ids=[f"{s}-{k}".replace(" ", "") for s, k in SHAPES_2D])
@pytest.mark.parametrize("boundary", BOUNDARIES)
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name", FUNCS_2D)
def test_2d_modes_boundaries_shapes(device, rng, signal, name, mode, boundary, shapes):
    image, mask = data(rng, "float64", shapes[0]), data(rng, "float64", shapes[1])
    try:
        getattr(signal, name)(image, mask, mode, boundary)
    except ValueError:  # 'valid' with neither input the larger
        same_error(lambda: getattr(signal, name)(image, mask, mode, boundary),
                   lambda: gp(name, image, mask, mode, boundary, device=device))
        return
    got = gp(name, image, mask, mode, boundary, 1.5, device=device)
    check_2d(signal, name, image, mask, got, mode, boundary, 1.5)


@pytest.mark.parametrize("dtype_k", SCIPY_DTYPES)
@pytest.mark.parametrize("dtype_i", SCIPY_DTYPES)
@pytest.mark.parametrize("name", FUNCS_2D)
def test_2d_dtypes(device, rng, signal, name, dtype_i, dtype_k):
    image, mask = data(rng, dtype_i, (33, 37)), data(rng, dtype_k, (3, 4))
    for mode, boundary in zip(MODES, BOUNDARIES):
        got = gp(name, image, mask, mode, boundary, 3, device=device)
        check_2d(signal, name, image, mask, got, mode, boundary, 3)


@pytest.mark.parametrize("shape", [(1024, 1024), (1000, 1003), (257, 4099)], ids=str)
@pytest.mark.parametrize("dtype", ["float32", "int32", "uint8", "float64"])
def test_2d_images(device, rng, signal, dtype, shape):
    image, mask = data(rng, dtype, shape), data(rng, dtype, (5, 5))
    for name in FUNCS_2D:
        for boundary in BOUNDARIES:
            got = gp(name, image, mask, "same", boundary, 2, device=device)
            check_2d(signal, name, image, mask, got, "same", boundary, 2)


@pytest.mark.parametrize("k", [3, 5, 7])
@pytest.mark.parametrize("dtype", SCIPY_DTYPES)
def test_2d_unrolled_masks(device, rng, signal, dtype, k):
    """The square masks the CUDA tile kernel unrolls at compile time, every dtype, mode and boundary,
    on an image a little past two tiles each way."""
    image, mask = data(rng, dtype, (131, 67)), data(rng, dtype, (k, k))
    for name in FUNCS_2D:
        for mode in MODES:
            for boundary in BOUNDARIES:
                got = gp(name, image, mask, mode, boundary, 2, device=device)
                check_2d(signal, name, image, mask, got, mode, boundary, 2)


@pytest.mark.parametrize("mask_shape", [(16, 16), (16, 17), (20, 20), (1, 300), (300, 1), (40, 40)],
                         ids=str)
@pytest.mark.parametrize("dtype", ["float32", "float64", "int16"])
def test_2d_large_masks(device, rng, signal, dtype, mask_shape):
    """Masks past the kernel-parameter size and the 32 x 32 tap chunk."""
    image, mask = data(rng, dtype, (320, 310)), data(rng, dtype, mask_shape)
    for name, mode, boundary in [("convolve2d", "full", "fill"), ("correlate2d", "same", "wrap"),
                                 ("convolve2d", "valid", "symm"), ("correlate2d", "full", "symm")]:
        got = gp(name, image, mask, mode, boundary, -1, device=device)
        check_2d(signal, name, image, mask, got, mode, boundary, -1)


def test_2d_views_and_layouts(device, rng, signal):
    image, mask = data(rng, "float32", (70, 90)), data(rng, "float64", (3, 5))
    cases = [(image.T, mask), (image[::-1, ::2], mask[::-1]), (image[3:, 1:], mask[:, ::-2]),
             (image.astype(">f4"), mask.astype(">f8")), (image[:9, :9].tolist(), mask.tolist())]
    for in1, in2 in cases:
        for name in FUNCS_2D:
            got = gp(name, in1, in2, "same", "symm", device=device)
            check_2d(signal, name, in1, in2, got, "same", "symm")


FILL_VALUES = [0, 1.5, np.float64(2.5), np.float32(2), np.int64(3), np.array([2.5]), np.array(3, "i8"),
               np.array([3], "i1"), [2.5], True, None, np.nan, 1e10, -1, 2**70, "3", 1j,
               np.complex128(2), [1, 2], [], "x", np.array(["3"])]


@pytest.mark.parametrize("fillvalue", FILL_VALUES, ids=[repr(f) for f in FILL_VALUES])
@pytest.mark.parametrize("dtype", ["int16", "uint16", "float32", "float64"])
def test_2d_fill_values(device, rng, signal, dtype, fillvalue):
    """fillvalue converts (or fails) as SciPy's does; it is ignored by the other boundaries."""
    image, mask = data(rng, dtype, (6, 7)), data(rng, dtype, (3, 2))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            signal.convolve2d(image, mask, "full", "fill", fillvalue)
        except Exception:  # noqa: BLE001
            same_error(lambda: signal.convolve2d(image, mask, "full", "fill", fillvalue),
                       lambda: gp("convolve2d", image, mask, "full", "fill", fillvalue, device=device))
            got = gp("correlate2d", image, mask, "full", "wrap", fillvalue, device=device)
            check_2d(signal, "correlate2d", image, mask, got, "full", "wrap", fillvalue)
            return
        got = gp("convolve2d", image, mask, "full", "fill", fillvalue, device=device)
    check_2d(signal, "convolve2d", image, mask, got, "full", "fill",
             np.asarray(signal.convolve2d(np.zeros((1, 1), dtype), np.ones((1, 2), dtype), "full",
                                          "fill", fillvalue)[0, 0]))


def test_2d_nan_fill_and_inf(device, signal):
    image = np.arange(20, dtype=np.float64).reshape(4, 5)
    image[2, 3] = np.inf
    mask = np.array([[1.0, -1.0], [0.5, 2.0]])
    for mode in MODES:
        for boundary in BOUNDARIES:
            for name in FUNCS_2D:
                expected = getattr(signal, name)(image, mask, mode, boundary, np.nan)
                got = gp(name, image, mask, mode, boundary, np.nan, device=device)
                np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("name", FUNCS_2D)
def test_2d_bad_arguments(device, signal, name):
    image, mask = np.arange(12.0).reshape(3, 4), np.ones((2, 2))
    calls = [((image.ravel(), mask), {}), ((image, mask[None]), {}), ((image, mask), {"mode": "bad"}),
             ((image, mask), {"mode": "FULL"}), ((image, mask), {"boundary": "reflect"}),
             ((image, mask), {"boundary": "bad"}), ((image, np.ones((4, 3))), {"mode": "valid"}),
             ((image, mask), {"mode": ["full"]}), ((image > 3, mask > 0), {}),
             ((image.astype(np.float16), mask.astype(np.float16)), {}),
             ((image.astype(object), mask), {}), ((image.astype("M8[s]"), mask), {}),
             ((image.astype(str), mask), {})]
    for args, kwargs in calls:
        same_error(lambda: getattr(signal, name)(*args, **kwargs),
                   lambda: gp(name, *args, device=device, **kwargs))
    for bad in (image + 1j, image.astype(np.longdouble)):
        with pytest.raises(TypeError, match="dtype"):
            gp(name, bad, mask, device=device)
    for args in ((np.zeros((0, 3)), mask), (image, np.zeros((2, 0)))):
        with pytest.raises(ValueError, match="empty"):
            gp(name, *args, device=device)


@pytest.mark.parametrize("case", ["rows", "row_chunks", "tiles", "tile_chunks"])
def test_blocks_take_several_tiles(device, rng, signal, case):
    """More output tiles than a persistent grid of any occupancy holds blocks (so blocks move on
    to further tiles), with one and with several mask chunks per tile."""
    if case == "rows":
        a, v = data(rng, "float32", 2**22 + 7), data(rng, "float32", 7)
        check_1d("convolve", a, v, gp("convolve", a, v, "same", device=device), "same")
        return
    name, image, mask, mode, boundary = {
        "row_chunks": ("correlate2d", data(rng, "int16", (2000, 2400)), data(rng, "int16", (1, 2305)),
                       "valid", "fill"),
        "tiles": ("convolve2d", data(rng, "float32", (2100, 2050)), data(rng, "float32", (5, 5)),
                  "same", "symm"),
        "tile_chunks": ("convolve2d", data(rng, "int32", (600, 6000)), data(rng, "int32", (33, 2)),
                        "valid", "wrap"),
    }[case]
    got = gp(name, image, mask, mode, boundary, device=device)
    check_2d(signal, name, image, mask, got, mode, boundary)


# ----------------------------------------------------------------------------------------------
# backends and threads
# ----------------------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_cpu_and_cuda_agree(rng, dtype):
    if not gpuprims.cuda_available():
        pytest.skip("needs a GPU")
    a, v = data(rng, dtype, 5003), data(rng, dtype, 31)
    image, mask = data(rng, dtype, (77, 131)), data(rng, dtype, (4, 3))
    results = {}
    for device in ("cpu", "cuda"):
        results[device] = [gp("convolve", a, v, "same", device=device),
                           gp("correlate", a, v, "full", device=device)]
        if dtype not in ("bool", "float16"):  # SciPy has no such 2-D kernels
            results[device].append(gp("convolve2d", image, mask, "same", "wrap", device=device))
    for cpu, cuda in zip(results["cpu"], results["cuda"]):
        assert cpu.dtype == cuda.dtype and cpu.shape == cuda.shape
        if cpu.dtype.kind != "f":
            np.testing.assert_array_equal(cuda, cpu)
            continue
        scale = float(np.max(np.abs(cpu.astype(np.float64)))) + 1.0
        # float32 accumulation on the GPU, double on the CPU; float16 may round either way
        tolerance = {"float16": 2 * float(np.spacing(np.float16(scale))), "float32": 1e-4 * scale,
                     "float64": 1e-12 * scale}[dtype]
        np.testing.assert_allclose(cuda.astype(np.float64), cpu.astype(np.float64), rtol=0, atol=tolerance)


@pytest.mark.parametrize("dtype", ["int32", "int64"])
def test_concurrent_calls_with_different_masks(device, dtype, signal):
    """Threads convolving at once, each with its own mask (kernel-parameter masks are per launch;
    a shared __constant__ mask would be overwritten by other threads' calls).  8-byte rows need
    more shared memory than a kernel gets by default: each launch opts in, and one thread's
    setting must not undercut another's larger tile."""
    rng = np.random.default_rng(2024)
    jobs = [(rng.integers(-50, 50, size=int(n), dtype=dtype), rng.integers(-9, 9, size=int(m), dtype=dtype),
             rng.integers(-50, 50, size=(int(n) // 500 + 5, 61), dtype=dtype),
             rng.integers(-9, 9, size=(3, int(m) % 5 + 1), dtype=dtype))
            for n, m in zip(rng.integers(20000, 200000, size=24), rng.integers(3, 600, size=24))]

    def work(job):
        a, v, image, mask = job
        return (gpuprims.convolve(a, v, "same", device=device),
                gpuprims.correlate2d(image, mask, "full", "symm", device=device))

    with ThreadPoolExecutor(max_workers=8) as pool:
        results = list(pool.map(work, jobs))
    for (a, v, image, mask), (line, plane) in zip(jobs, results):
        np.testing.assert_array_equal(line, np.convolve(a, v, "same"))
        np.testing.assert_array_equal(plane, signal.correlate2d(image, mask, "full", "symm"))


# ----------------------------------------------------------------------------------------------
# device in, device out
# ----------------------------------------------------------------------------------------------

cuda = pytest.mark.skipif(not gpuprims.cuda_available(), reason="CUDA not available")
# which operands are device-resident: both, only the first (signal/image), only the second
PLACEMENTS = ["both", "first", "second"]


def place(placement, x, y):
    """(x, y) with the operands `placement` names copied to the GPU."""
    return (gpuprims.to_device(x) if placement in ("both", "first") else x,
            gpuprims.to_device(y) if placement in ("both", "second") else y)


def on_device(result, what=""):
    """A device result copied back, after checking it is a new C-contiguous DeviceArray on GPU 0."""
    assert isinstance(result, gpuprims.DeviceArray), f"{what}: got {type(result)!r}, not a DeviceArray"
    assert result.device == "cuda:0" and result.is_c_contiguous, what
    return result.get()


def device_view_of(host, key):
    """(DeviceArray, NumPy view): host[key] of a device copy of the C-contiguous `host`, as a
    strided DeviceArray view (negative steps, transposes) without a copy."""
    d = gpuprims.to_device(host)
    view = host[key] if key is not None else host.T
    offset = view.__array_interface__["data"][0] - host.__array_interface__["data"][0]
    return gpuprims.DeviceArray(d, d.ptr + offset, view.shape, d.dtype, view.strides, 0), view


# (n, m): swaps (m > n), one-long operands, around the row tile and the tap chunk.
DEVICE_SIZES_1D = [(1, 1), (7, 3), (7, 4), (3, 7), (4, 7), (2305, 9), (9, 2305), (2304, 2305),
                   (4611, 1100)]


@cuda
@pytest.mark.parametrize("placement", PLACEMENTS)
@pytest.mark.parametrize("n,m", DEVICE_SIZES_1D, ids=[f"{n}x{m}" for n, m in DEVICE_SIZES_1D])
@pytest.mark.parametrize("dtype", ["float32", "int16"])
@pytest.mark.parametrize("name", FUNCS_1D)
def test_device_1d_modes(rng, name, dtype, n, m, placement):
    a, v = data(rng, dtype, n), data(rng, dtype, m)
    da, dv = place(placement, a, v)
    for mode in MODES:
        got = getattr(gpuprims, name)(da, dv, mode)
        check_1d(name, a, v, on_device(got, f"{name} {mode}"), mode)


@cuda
@pytest.mark.parametrize("dtype_v", ALL_DTYPES)
@pytest.mark.parametrize("dtype_a", ALL_DTYPES)
@pytest.mark.parametrize("name", FUNCS_1D)
def test_device_1d_dtypes(rng, name, dtype_a, dtype_v):
    """NumPy's promotion (int x int wraps, int x float is float64, bool, float16), the signal
    converted on the device; the taps once on the device, once on the host."""
    a, v = data(rng, dtype_a, 301), data(rng, dtype_v, 6)
    da = gpuprims.to_device(a)
    for mode, taps in zip(MODES, (v, gpuprims.to_device(v), v)):
        check_1d(name, a, v, on_device(getattr(gpuprims, name)(da, taps, mode)), mode)
        check_1d(name, v, a, on_device(getattr(gpuprims, name)(taps, da, mode)), mode)  # swapped


@cuda
@pytest.mark.parametrize("placement", PLACEMENTS)
@pytest.mark.parametrize("shapes", SHAPES_2D, ids=[f"{s}-{k}".replace(" ", "") for s, k in SHAPES_2D])
@pytest.mark.parametrize("name", FUNCS_2D)
def test_device_2d_modes_boundaries_shapes(rng, signal, name, shapes, placement):
    image, mask = data(rng, "float64", shapes[0]), data(rng, "float64", shapes[1])
    d_image, d_mask = place(placement, image, mask)
    for mode in MODES:
        for boundary in BOUNDARIES:
            try:
                getattr(signal, name)(image, mask, mode, boundary)
            except ValueError:  # 'valid' with neither input the larger
                same_error(lambda: getattr(signal, name)(image, mask, mode, boundary),
                           lambda: getattr(gpuprims, name)(d_image, d_mask, mode, boundary))
                continue
            got = getattr(gpuprims, name)(d_image, d_mask, mode, boundary, 1.5)
            check_2d(signal, name, image, mask, on_device(got, f"{name} {mode} {boundary}"), mode,
                     boundary, 1.5)


@cuda
@pytest.mark.parametrize("dtype_k", SCIPY_DTYPES)
@pytest.mark.parametrize("dtype_i", SCIPY_DTYPES)
@pytest.mark.parametrize("name", FUNCS_2D)
def test_device_2d_dtypes(rng, signal, name, dtype_i, dtype_k):
    image, mask = data(rng, dtype_i, (33, 37)), data(rng, dtype_k, (3, 4))
    d_image = gpuprims.to_device(image)
    for mode, boundary, kernel in zip(MODES, BOUNDARIES, (mask, gpuprims.to_device(mask), mask)):
        got = getattr(gpuprims, name)(d_image, kernel, mode, boundary, 3)
        check_2d(signal, name, image, mask, on_device(got), mode, boundary, 3)


@cuda
def test_device_valid_swap_reverses_on_device(rng, signal):
    """'valid' with the second operand the larger: SciPy swaps (and correlate2d reverses), NumPy
    swaps (and correlate reverses); every placement of the operands gives the same values."""
    image, mask = data(rng, "int32", (9, 40)), data(rng, "int32", (30, 200))
    a, v = data(rng, "float32", 50), data(rng, "float32", 777)
    for placement in PLACEMENTS:
        for name in FUNCS_2D:
            got = on_device(getattr(gpuprims, name)(*place(placement, image, mask), "valid"))
            assert_exact(got, getattr(signal, name)(image, mask, "valid"), f"{name} {placement}")
        for name in FUNCS_1D:
            for mode in MODES:
                check_1d(name, a, v, on_device(getattr(gpuprims, name)(*place(placement, a, v), mode)),
                         mode)


@cuda
def test_device_views_and_layouts(rng, signal):
    """Strided, reversed, offset and transposed device views, as DeviceArrays."""
    base = data(rng, "float64", 4001)
    taps = data(rng, "float32", 12)
    for key in (slice(None, None, -1), slice(None, None, 3), slice(5, None, -2), slice(1, None)):
        d, view = device_view_of(base, key)
        dt, tview = device_view_of(taps, key)
        for mode in MODES:
            check_1d("convolve", view, taps, on_device(gpuprims.convolve(d, taps, mode)), mode)
            check_1d("correlate", view, tview, on_device(gpuprims.correlate(d, dt, mode)), mode)
            check_1d("correlate", tview, view, on_device(gpuprims.correlate(dt, d, mode)), mode)
    image, mask = data(rng, "float32", (70, 90)), data(rng, "float64", (3, 5))
    for key in (None, (slice(None, None, -1), slice(None, None, 2)), (slice(3, None), slice(None, 1, -3))):
        d, view = device_view_of(image, key)
        for name in FUNCS_2D:
            for boundary in BOUNDARIES:
                got = on_device(getattr(gpuprims, name)(d, mask[::-1], "same", boundary))
                check_2d(signal, name, view, mask[::-1], got, "same", boundary)


@cuda
def test_device_wraps_bool_and_half(rng):
    a = gpuprims.to_device(np.array([100, 100, 100], np.int8))
    got = on_device(gpuprims.convolve(a, np.array([2, 2], np.int8)))
    assert got.dtype == np.int8 and np.array_equal(got, np.convolve(a.get(), np.array([2, 2], np.int8)))
    b = np.array([0, 0, 1, 0, 1], bool)
    for v in (np.array([0, 1], bool), np.array([1, 1, 1], bool)):
        for mode in MODES:
            got = on_device(gpuprims.correlate(gpuprims.to_device(b), v, mode))
            assert got.dtype == bool and np.array_equal(got, np.correlate(b, v, mode))
    h, w = data(rng, "float16", 1000), data(rng, "int8", 5)
    check_1d("convolve", h, w, on_device(gpuprims.convolve(gpuprims.to_device(h), w, "same")), "same")


@cuda
def test_device_argument_and_placement():
    d = gpuprims.to_device(np.arange(10.0))
    assert np.array_equal(on_device(gpuprims.convolve(d, [1.0, 2.0], device="cuda:0")),
                          np.convolve(np.arange(10.0), [1.0, 2.0]))
    image = gpuprims.to_device(np.arange(12.0).reshape(3, 4))
    for call in (lambda: gpuprims.convolve(d, [1.0, 2.0], device="cpu"),
                 lambda: gpuprims.correlate([1.0, 2.0], d, device="cpu"),
                 lambda: gpuprims.convolve2d(image, np.ones((2, 2)), device="cpu"),
                 lambda: gpuprims.correlate2d(np.ones((2, 2)), image, device="cpu")):
        with pytest.raises(ValueError, match="lives on cuda:0"):
            call()
    # host operands with device= still give host results
    got = gpuprims.convolve(np.arange(10.0), [1.0, 2.0], device="cuda")
    assert type(got) is np.ndarray


@cuda
def test_device_inputs_on_two_gpus():
    if len(gpuprims.device_info()["devices"]) < 2:
        pytest.skip("needs two GPUs")
    a = gpuprims.to_device(np.arange(10.0), "cuda:0")
    v = gpuprims.to_device(np.ones(3), "cuda:1")
    with pytest.raises(ValueError, match="cuda:0 and cuda:1"):
        gpuprims.convolve(a, v)
    got = gpuprims.convolve(gpuprims.to_device(np.arange(10.0), "cuda:1"), [1.0, 1.0])
    assert got.device == "cuda:1" and np.array_equal(got.get(), np.convolve(np.arange(10.0), [1.0, 1.0]))


@cuda
def test_device_bad_inputs(signal):
    """Empty, wrong-ndim and SciPy-refused device operands raise as their host copies do."""
    good = np.arange(4.0)
    for name in FUNCS_1D:
        for a, v in [(np.zeros(0), good), (good, np.zeros(0)), (np.ones((2, 2)), good),
                     (good, np.ones((2, 1)))]:
            same_error(lambda: getattr(np, name)(a, v),
                       lambda: getattr(gpuprims, name)(gpuprims.to_device(a), gpuprims.to_device(v)))
            same_error(lambda: getattr(np, name)(a, v),
                       lambda: getattr(gpuprims, name)(gpuprims.to_device(a), v))
    with pytest.raises(ValueError, match="1-D"):
        gpuprims.correlate(gpuprims.to_device(np.float64(3)), good)  # numpy.correlate takes no scalars
    assert np.array_equal(on_device(gpuprims.convolve(gpuprims.to_device(np.float64(3)), good)),
                          np.convolve(3.0, good))
    image, mask = np.arange(12.0).reshape(3, 4), np.ones((2, 2))
    for name in FUNCS_2D:
        for args, kwargs in [((image.ravel(), mask), {}), ((image, np.ones((4, 3))), {"mode": "valid"}),
                             ((image > 3, mask > 0), {}), ((image, mask), {"boundary": "reflect"}),
                             ((image.astype(np.float16), mask.astype(np.float16)), {}),
                             ((image, mask), {"fillvalue": [1, 2]})]:
            same_error(lambda: getattr(signal, name)(*args, **kwargs),
                       lambda: getattr(gpuprims, name)(*map(gpuprims.to_device, args), **kwargs))
        for args in ((np.zeros((0, 3)), mask), (image, np.zeros((2, 0)))):
            with pytest.raises(ValueError, match="empty"):
                getattr(gpuprims, name)(*map(gpuprims.to_device, args))


@cuda
def test_device_calls_do_not_leak(rng):
    import gc
    a, v = gpuprims.to_device(data(rng, "float32", 5000)), gpuprims.to_device(data(rng, "int8", 9))
    image = gpuprims.to_device(data(rng, "int16", (40, 50)))
    gpuprims.convolve(a, v)
    gc.collect()
    start = gpuprims.memory_info()["in_use"]
    for _ in range(300):
        gpuprims.convolve(a, v, "same")
        gpuprims.correlate(v, a, "full")  # swapped: reversed on the device
        gpuprims.convolve2d(image, v.reshape(3, 3), "same", "wrap")
        gpuprims.correlate2d(v.reshape(3, 3), image, "valid")
    gc.collect()
    assert gpuprims.memory_info()["in_use"] == start


@cuda
@pytest.mark.parametrize("dtype", ["int8", "uint16", "int64", "float32", "float64"])
def test_device_cupy_inputs(rng, signal, dtype):
    cp = pytest.importorskip("cupy")
    a, v = data(rng, dtype, 3001), data(rng, dtype, 17)
    x = cp.asarray(a)
    for xv, av in ((x, a), (x[::-1], a[::-1]), (x[5::3], a[5::3])):
        for name in FUNCS_1D:
            got = getattr(gpuprims, name)(xv, cp.asarray(v), "same")
            check_1d(name, av, v, on_device(got), "same")
            assert np.array_equal(cp.asnumpy(cp.asarray(got)), got.get())  # CuPy reads the result
    image, mask = data(rng, dtype, (61, 47)), data(rng, dtype, (4, 3))
    y = cp.asarray(image)
    for yv, iv in ((y, image), (y.T, image.T), (y[::-2, 1:], image[::-2, 1:])):
        for name in FUNCS_2D:
            got = getattr(gpuprims, name)(yv, mask, "same", "symm")
            check_2d(signal, name, iv, mask, on_device(got), "same", "symm")


@cuda
@pytest.mark.parametrize("dtype", ["int16", "int32", "float32", "float64"])
def test_device_torch_inputs(rng, signal, dtype):
    torch = pytest.importorskip("torch")
    a, v = data(rng, dtype, 3001), data(rng, dtype, 17)
    t = torch.from_numpy(a).cuda()
    for tv, av in ((t, a), (t[3::2], a[3::2])):
        for name in FUNCS_1D:
            got = getattr(gpuprims, name)(tv, torch.from_numpy(v).cuda(), "full")
            check_1d(name, av, v, on_device(got), "full")
    image, mask = data(rng, dtype, (61, 47)), data(rng, dtype, (4, 3))
    timage = torch.from_numpy(image).cuda()
    for tv, iv in ((timage, image), (timage.T, image.T)):
        for name in FUNCS_2D:
            got = getattr(gpuprims, name)(tv, mask, "full", "wrap")
            check_2d(signal, name, iv, mask, on_device(got), "full", "wrap")
            assert np.array_equal(torch.from_dlpack(got).cpu().numpy(), got.get())
