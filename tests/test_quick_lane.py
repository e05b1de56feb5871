"""The core's quick lane: a function's common call (NumPy arrays, other arguments plain, device
None or "cpu") replayed from what its first such call taught, with the same result as the full
path and never for a call it does not fit."""
import ctypes
import sys
import threading

import numpy as np
import pytest
import scipy.signal

import gpuprims
from gpuprims import _core, _plan
from gpuprims._plan import QUICK_AXIS_SLOTS, QUICK_SLOTS
from gp_testutils import make_data

DTYPES = ["bool", "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64",
          "float16", "float32", "float64"]
REDUCTIONS = ["sum", "prod", "min", "max", "any", "all", "argmin", "argmax"]
SCANS = ["cumsum", "cumprod", "cummax", "cummin", "nancumsum", "nancumprod"]
NUMPY = {"min": np.min, "max": np.max, "cummax": np.maximum.accumulate, "cummin": np.minimum.accumulate}


def _numpy(name, a):
    function = NUMPY.get(name) or getattr(np, name)
    return function(a.reshape(-1)) if name in ("cummax", "cummin") else function(a)


def _same(result, expected):
    """`expected` bit for bit, of its type and dtype."""
    assert type(result) is type(expected)
    assert np.asarray(result).dtype == np.asarray(expected).dtype
    np.testing.assert_array_equal(result, expected)


def _like_numpy(name, result, a):
    """NumPy's answer for `name` on `a`: exact for integers, bool and the comparisons; for float
    sums and products within the dtype's rounding of the float64 answer (the summation orders
    differ, and float16 accumulates in float32, more accurately than NumPy)."""
    expected = _numpy(name, a)
    if a.dtype.kind != "f" or name in ("min", "max", "argmin", "argmax", "cummax", "cummin"):
        _same(result, expected)
        return
    assert type(result) is type(expected)
    assert np.asarray(result).dtype == np.asarray(expected).dtype
    wide = _numpy(name, a.astype(np.float64))
    scale = np.maximum.accumulate(np.abs(wide)) if np.ndim(wide) else abs(wide)
    tolerance = np.finfo(a.dtype).eps * a.size * (scale + 1.0)
    assert np.all(np.abs(np.asarray(result, np.float64) - wide) <= tolerance)


def _full_path(function, *args, **kwargs):
    """function(*args, **kwargs) by the full path, the lane paused."""
    _core.pause_quick(True)
    try:
        return function(*args, **kwargs)
    finally:
        _core.pause_quick(False)


def _learned(name, a, device=None):
    """Whether the lane answers `name` on `a` (after the call that teaches it)."""
    return _core.quick(QUICK_SLOTS[name], a, device) is not NotImplemented


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", REDUCTIONS + SCANS)
def test_replays_numpys_answer(name, dtype, rng):
    function = getattr(gpuprims, name)
    kind = "prod" if "prod" in name else "sum"
    a = make_data(rng, dtype, 37, kind)
    first = function(a, device="cpu")  # the full path, which teaches the lane
    replayed = function(a, device="cpu")
    _like_numpy(name, first, a)
    _same(replayed, first)
    if a.dtype.kind != "f" or not name.startswith("nancum"):
        assert _learned(name, a, "cpu")
    b = make_data(rng, dtype, 1021, kind)  # another size: the recipe does not hold the size
    _like_numpy(name, function(b, device="cpu"), b)


@pytest.mark.parametrize("name", ["sum", "max", "argmax", "cumsum", "cummax"])
def test_device_none_runs_where_the_planner_says(name, rng):
    a = make_data(rng, "float32", 4099)
    function = getattr(gpuprims, name)
    first = function(a)
    assert _learned(name, a)
    _like_numpy(name, first, a)
    _like_numpy(name, function(a), a)


def test_declines_what_it_was_not_taught(rng):
    gpuprims.sum(make_data(rng, "float32", 64), device="cpu")
    gpuprims.cumsum(make_data(rng, "float32", 64), device="cpu")
    a = make_data(rng, "float32", (4, 5))
    assert _learned("sum", a, "cpu")  # a whole reduction replays for any ndim
    assert _learned("cumsum", a, "cpu")  # and a scan of the flattened array, for any ndim and strides
    for b in (a, a.T, a[:, ::-2], a[1:2]):
        _same(_core.quick(QUICK_SLOTS["cumsum"], b, "cpu"), _full_path(gpuprims.cumsum, b, device="cpu"))
        _like_numpy("cumsum", gpuprims.cumsum(b, device="cpu"), b)
    swapped = a.astype(">f4")
    assert not _learned("sum", swapped, "cpu")
    assert gpuprims.sum(swapped, device="cpu") == pytest.approx(float(np.sum(a, dtype=np.float64)), rel=1e-5)
    for other in (np.zeros(0, np.float32), np.matrix(a), a.tolist(), np.float32(3)):
        assert not _learned("sum", other, "cpu")
    for device in ("cuda", "cuda:0", "CPU", 0):
        assert not _learned("sum", a, device)


def test_other_arguments_take_the_full_path(rng):
    a = make_data(rng, "int32", 101)
    gpuprims.cumsum(a, device="cpu")
    gpuprims.sum(a, device="cpu")
    _same(gpuprims.prefix_sum(a, exclusive=True, device="cpu"), np.concatenate(([0], np.cumsum(a)[:-1])))
    _same(gpuprims.sum(a, dtype=np.int8, device="cpu"), np.sum(a, dtype=np.int8))
    _same(gpuprims.sum(a, keepdims=True, device="cpu"), np.sum(a, keepdims=True))
    _same(gpuprims.sum(a, axis=0, device="cpu"), np.sum(a, axis=0))
    out = np.empty(101, np.int64)
    assert gpuprims.cumsum(a, out=out, device="cpu") is out
    np.testing.assert_array_equal(out, np.cumsum(a))


def test_gpuprims_device_setting_is_obeyed(monkeypatch, rng):
    a = make_data(rng, "float64", 64)
    gpuprims.sum(a)
    assert _learned("sum", a)
    monkeypatch.setenv("GPUPRIMS_DEVICE", "nonsense")
    assert not _learned("sum", a)
    with pytest.raises(ValueError, match="GPUPRIMS_DEVICE"):
        gpuprims.sum(a)
    monkeypatch.setenv("GPUPRIMS_DEVICE", "cpu")
    assert gpuprims.explain(gpuprims.sum, a)["route"] == "cpu"


def test_environment_changes_are_seen_at_the_next_call(monkeypatch):
    """The settings are re-read whenever the environment changed since the last call, through
    os.environ or C's setenv/unsetenv: a new variable, a new value, the same value again, a removal."""
    libc = ctypes.CDLL(None)
    libc.setenv.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_int]
    libc.unsetenv.argtypes = [ctypes.c_char_p]
    monkeypatch.delenv("GPUPRIMS_DEVICE", raising=False)
    assert _core.device_setting() is None
    monkeypatch.setenv("GPUPRIMS_DEVICE", "cpu")
    assert _core.device_setting() == "cpu"
    monkeypatch.setenv("GPUPRIMS_DEVICE", "cuda:1")
    assert _core.device_setting() == "cuda:1"
    monkeypatch.setenv("GPUPRIMS_DEVICE", "cpu")
    assert _core.device_setting() == "cpu"
    monkeypatch.setenv("GPUPRIMS_DEVICE", "")
    assert _core.device_setting() is None  # empty counts as unset
    try:
        assert libc.setenv(b"GPUPRIMS_DEVICE", b"cuda", 1) == 0
        assert _core.device_setting() == "cuda"
        for i in range(40):  # many new variables: the environment's array grows and moves
            assert libc.setenv(f"GPUPRIMS_TEST_FILLER_{i}".encode(), b"x", 1) == 0
        assert _core.device_setting() == "cuda"
        assert libc.unsetenv(b"GPUPRIMS_DEVICE") == 0
        assert _core.device_setting() is None
    finally:
        for i in range(40):
            libc.unsetenv(f"GPUPRIMS_TEST_FILLER_{i}".encode())
        libc.unsetenv(b"GPUPRIMS_DEVICE")


def test_dry_runs_still_plan(rng):
    a = make_data(rng, "float32", 64)
    for function in (gpuprims.sum, gpuprims.argmax, gpuprims.cumsum):
        function(a, device="cpu")
        plan = gpuprims.explain(function, a, device="cpu")
        assert plan["route"] == "cpu" and plan["in_bytes"] == a.nbytes
    assert _learned("sum", a, "cpu")  # resumed after the dry run


def test_errors_are_the_full_paths(rng):
    with pytest.raises(TypeError):
        gpuprims.sum(np.ones(3, complex))
    with pytest.raises(ValueError):
        gpuprims.argmax(np.zeros(0, np.float32))
    _same(gpuprims.max(np.array([1.0, np.nan, 2.0]), device="cpu"), np.float64(np.nan))
    with pytest.raises(TypeError):
        _core.quick(0, np.ones(3))  # the entry's own arity
    with pytest.raises(ValueError):
        _core.learn_quick(99, np.dtype(np.float32).num, 0, -1, 0, np.dtype(np.float32).num, False)
    with pytest.raises(ValueError):  # a correlation's mode must be a plain str or int
        _core.learn_quick(0, np.dtype(np.float32).num, _plan._CORRELATE, -1, (5,), (3,), 1.5, True, True, 5, 1, 0, -1)
    with pytest.raises(TypeError):  # a recipe's arity
        _core.learn_quick(0, np.dtype(np.float32).num, _plan._TRANSPOSE, -1, 1)


AXIS_REDUCTIONS = ["sum", "prod", "min", "max", "any", "all", "argmin", "argmax", "nansum", "nanmax",
                   "nanargmin"]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", AXIS_REDUCTIONS)
def test_axis_reductions_replay_numpys_answer(name, dtype, rng):
    function, expected_of = getattr(gpuprims, name), getattr(np, name)
    a = make_data(rng, dtype, (3, 7, 5), "prod" if "prod" in name else "sum")
    if name.startswith("nan") and a.dtype.kind != "f":
        pytest.skip("NumPy's nan-functions on integers are the plain ones")
    for axis in (0, 1, 2, -1, -3):
        first = function(a, axis=axis, device="cpu")
        replayed = function(a, axis=axis, device="cpu")
        assert _core.quick(QUICK_AXIS_SLOTS[name], a, "cpu", axis) is not NotImplemented
        _same(replayed, first)
        expected = expected_of(a, axis=axis)
        if a.dtype.kind == "f" and name in ("sum", "prod", "nansum"):
            # rounding at the running values' magnitude, which cancellation leaves above a sum's
            values = np.abs(a.astype(np.float64))
            magnitude = np.abs(expected.astype(np.float64)) if name == "prod" else np.nansum(values, axis=axis)
            error = np.abs(replayed.astype(np.float64) - expected.astype(np.float64))
            assert np.all(error <= 4 * float(np.finfo(a.dtype).eps) * a.shape[axis] * magnitude)
        else:
            _same(replayed, expected)
    b = make_data(rng, dtype, (6, 2, 11), "prod" if "prod" in name else "sum")  # another shape, same recipe
    _same(function(b, axis=1, device="cpu").shape, expected_of(b, axis=1).shape)
    vector = make_data(rng, dtype, 9, "sum")  # 1-D along axis 0: a scalar, as NumPy's
    assert np.ndim(function(vector, axis=0, device="cpu")) == 0


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", SCANS)
def test_axis_scans_replay_numpys_answer(name, dtype, rng):
    """A scan along one int axis replays for any shape and strides, as the full path scans."""
    function = getattr(gpuprims, name)
    a = make_data(rng, dtype, (3, 7, 5), "prod" if "prod" in name else "sum")
    for axis in (0, 1, 2, -1, -3):
        first = function(a, axis=axis, device="cpu")
        replayed = function(a, axis=axis, device="cpu")
        if a.dtype.kind != "f" or not name.startswith("nancum"):  # NaN read as the identity is a cast first
            assert _core.quick(QUICK_AXIS_SLOTS[name], a, "cpu", axis) is not NotImplemented
        _same(replayed, first)
        expected_of = NUMPY.get(name) or getattr(np, name)
        if a.dtype.kind != "f" or name in ("cummax", "cummin"):
            _same(replayed, expected_of(a, axis=axis))
        for view in (a[:, ::-2], a.transpose(2, 0, 1), a[1:2]):  # strided views of the taught dtype
            _same(function(view, axis=axis, device="cpu"), _full_path(function, view, axis=axis, device="cpu"))
    assert _core.quick(QUICK_AXIS_SLOTS[name], a, "cpu", 3) is NotImplemented  # out of range: Python's AxisError
    zero_d = a.reshape(-1)[:1].reshape(())
    _same(function(zero_d, axis=0, device="cpu"), function(zero_d.reshape(1), device="cpu"))  # NumPy's 0-d as 1-d


def test_axis_lane_declines_what_numpy_refuses(rng):
    a = make_data(rng, "float32", (4, 6))
    gpuprims.sum(a, axis=1, device="cpu")
    for axis in (2, -3, True, np.int64(0), 1.0):
        assert _core.quick(QUICK_AXIS_SLOTS["sum"], a, "cpu", axis) is NotImplemented
    with pytest.raises(np.exceptions.AxisError if hasattr(np, "exceptions") else np.AxisError):
        gpuprims.sum(a, axis=2, device="cpu")
    with pytest.raises(TypeError):
        gpuprims.sum(a, axis=1.0, device="cpu")
    _same(gpuprims.sum(a, axis=np.int64(0), device="cpu"), gpuprims.sum(a, axis=0, device="cpu"))
    _same(gpuprims.argmax(np.float32(3), axis=0, device="cpu"), np.argmax(np.float32(3), axis=0))


@pytest.mark.parametrize("dtype", ["bool", "int8", "float16", "int32", "float64", "uint64"])
@pytest.mark.parametrize("shape", [(5,), (3, 7), (2, 3, 5), (4, 1, 3, 2)])
def test_transposes_replay(shape, dtype, rng):
    a = make_data(rng, dtype, shape)
    first = gpuprims.transpose(a, device="cpu")
    assert _core.quick(QUICK_SLOTS["transpose"], a, "cpu") is not NotImplemented
    for view in (a, a[..., ::-1], a[::2]):
        _same(gpuprims.transpose(view, device="cpu"), np.ascontiguousarray(np.transpose(view)))
    _same(first, np.ascontiguousarray(np.transpose(a)))
    scalar = np.asarray(a.reshape(-1)[0])  # 0-d: a 1-element 1-d array, from the full path
    _same(gpuprims.transpose(scalar, device="cpu"), np.ascontiguousarray(np.transpose(scalar)))
    _same(gpuprims.transpose(a, (0,) + tuple(range(1, a.ndim)), device="cpu"), a.copy())


_CORRELATIONS = {"convolve": np.convolve, "correlate": np.correlate,
                 "convolve2d": scipy.signal.convolve2d, "correlate2d": scipy.signal.correlate2d}


@pytest.mark.parametrize("dtype", ["int8", "int32", "uint16", "float32", "float64"])
@pytest.mark.parametrize("mode", ["full", "same", "valid", 1])
@pytest.mark.parametrize("name", list(_CORRELATIONS))
def test_correlations_replay_for_their_shapes(name, mode, dtype, rng):
    if name.endswith("2d") and mode == 1:
        pytest.skip("SciPy's modes are strings")
    function, reference = getattr(gpuprims, name), _CORRELATIONS[name]
    flat = not name.endswith("2d")
    shapes = [(41, 7), (7, 41), (64, 64), (10, 3)] if flat else [((9, 11), (3, 4)), ((3, 4), (9, 11)),
                                                                    ((6, 6), (6, 6)), ((12, 5), (5, 2))]
    for image_shape, mask_shape in shapes:
        a, v = make_data(rng, dtype, image_shape), make_data(rng, dtype, mask_shape)
        if mode == "valid" and not flat and image_shape < mask_shape:
            continue  # SciPy swaps these (tested below)
        first, replayed = function(a, v, mode, device="cpu"), function(a, v, mode, device="cpu")
        _same(replayed, first)
        expected = reference(a, v, mode)
        if a.dtype.kind == "f":
            np.testing.assert_allclose(replayed, expected, rtol=1e-5, atol=1e-5)
        else:
            _same(replayed, expected)
        learned = _core.quick(QUICK_SLOTS[name], a, "cpu", v, mode) is not NotImplemented
        assert learned == (a.size >= v.size or not flat and mode != "valid")  # swapped operands are not taught
        other = make_data(rng, dtype, image_shape[:-1] + (image_shape[-1] + 1,) if not flat else image_shape + 1)
        assert _core.quick(QUICK_SLOTS[name], other, "cpu", v, mode) is NotImplemented


def test_correlation_lane_declines_other_calls(rng):
    a, v = make_data(rng, "float32", 50), make_data(rng, "float32", 5)
    gpuprims.convolve(a, v, "same", device="cpu")
    assert _core.quick(QUICK_SLOTS["convolve"], a, "cpu", v, "same") is not NotImplemented
    for mask, mode in ((v, "full"), (v, np.int64(1)), (v.astype(np.float64), "same"), (v.tolist(), "same"),
                       (v[::-1], "same"), (v.astype(">f4"), "same")):
        if mask is not v and isinstance(mask, np.ndarray) and mask.dtype == v.dtype and mask.dtype.isnative:
            continue  # a reversed view of the right dtype replays: it is made contiguous
        assert _core.quick(QUICK_SLOTS["convolve"], a, "cpu", mask, mode) is NotImplemented
        np.testing.assert_allclose(gpuprims.convolve(a, mask, mode, device="cpu"), np.convolve(a, mask, mode),
                                   rtol=1e-5)
    np.testing.assert_allclose(gpuprims.convolve(a, v[::-1], "same", device="cpu"), np.convolve(a, v[::-1], "same"),
                               rtol=1e-5)
    for tap in (np.nan, np.inf):  # NumPy sums only the overlaps: inf * 0 never happens at the edges
        bad = v.copy()
        bad[0] = tap
        assert _core.quick(QUICK_SLOTS["convolve"], a, "cpu", bad, "same") is NotImplemented
        _same(gpuprims.convolve(a, bad, "same", device="cpu"), np.convolve(a, bad, "same"))
    image, kernel = make_data(rng, "float64", (8, 8)), make_data(rng, "float64", (3, 3))
    gpuprims.convolve2d(image, kernel, "same", device="cpu")
    for boundary, fillvalue in (("wrap", 0), ("fill", 2.5), ("symm", 0)):
        np.testing.assert_allclose(gpuprims.convolve2d(image, kernel, "same", boundary, fillvalue, device="cpu"),
                                   scipy.signal.convolve2d(image, kernel, "same", boundary, fillvalue))


@pytest.mark.parametrize("mode", ["full", "same", "valid"])
def test_zero_d_operands_of_numpys_convolutions(mode):
    """numpy.convolve reads a 0-d operand as one element; such calls are not taught to the lane
    (a 0-d image has no last axis to learn) and answer as NumPy, the second call too."""
    for a, v in ((np.array(3.0), np.array(2.0)), (np.array(3.0), np.array([1.0, 2.0])),
                 (np.array([1.0, 2.0]), np.array(3.0))):
        for _ in range(2):
            _same(gpuprims.convolve(a, v, mode, device="cpu"), np.convolve(a, v, mode))


@pytest.mark.parametrize("dtype", DTYPES)
def test_means_replay_numpys_division(dtype, rng):
    """numpy.mean is a sum divided by the count (in the sum's dtype; float16 summed in float32 and
    the quotient cast): the lane divides through NumPy too, so replayed means are the full path's
    bits, whole or along an axis."""
    a = make_data(rng, dtype, (5, 7, 3))
    cases = [(a, None), (a, 0), (a, -1), (a[0, 0], 0), (a.reshape(-1), None)]
    for x, axis in cases:
        first = gpuprims.mean(x, axis=axis, device="cpu")
        slot, arguments = (QUICK_SLOTS["mean"], ()) if axis is None else (QUICK_AXIS_SLOTS["mean"], (axis,))
        assert _core.quick(slot, x, "cpu", *arguments) is not NotImplemented
        replayed = gpuprims.mean(x, axis=axis, device="cpu")
        _same(replayed, first)
        expected = np.mean(x, axis=axis)
        assert type(replayed) is type(expected) and np.asarray(replayed).dtype == np.asarray(expected).dtype
        tolerance = 4 * float(np.finfo(np.asarray(expected).dtype).eps)
        np.testing.assert_allclose(np.asarray(replayed, np.float64), np.mean(x.astype(np.float64), axis=axis),
                                   rtol=tolerance, atol=tolerance)
    _same(gpuprims.mean(a, axis=(0, 1), device="cpu").shape, np.mean(a, axis=(0, 1)).shape)  # not the lane's
    with pytest.raises(np.exceptions.AxisError if hasattr(np, "exceptions") else np.AxisError):
        gpuprims.mean(np.asarray(a.reshape(-1)[0]), axis=0, device="cpu")


def test_threads_teaching_other_shapes_meanwhile(rng):
    """Threads that call with different shapes relearn the slot's recipe while another thread's
    call is under way (NumPy lets go of the GIL to copy a reversed view): each call still runs
    with the recipe it was checked against."""
    shapes = [(13, 9), (14, 10), (9, 13), (6, 6), (40, 40)]
    mask = make_data(rng, "float32", (3, 3))
    images = [make_data(rng, "float32", shape)[::-1] for shape in shapes]
    expected = [scipy.signal.convolve2d(image, mask, "valid") for image in images]
    failures = []
    start = threading.Barrier(4)

    def calls(seed):
        order = np.random.default_rng(seed).integers(len(shapes), size=600)
        start.wait()
        for k in order:
            try:
                got = gpuprims.convolve2d(images[k], mask, "valid", device="cpu")
                np.testing.assert_allclose(got, expected[k], rtol=1e-5, atol=1e-5)
            except Exception as error:  # noqa: BLE001 - every failure is reported below
                failures.append(f"{shapes[k]}: {error!r}")

    switch = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        threads = [threading.Thread(target=calls, args=(seed,)) for seed in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    finally:
        sys.setswitchinterval(switch)
    assert not failures, failures[:3]
