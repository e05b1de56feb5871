"""The core's quick lane: a function's common call (a NumPy array, other arguments at their
defaults, device None or "cpu") replayed from what its first such call taught, with the same
result as the full path and never for a call it does not fit."""
import numpy as np
import pytest

import gpuprims
from gpuprims import _core
from gpuprims._plan import QUICK_SLOTS
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
    assert not _learned("cumsum", a, "cpu")  # a scan only for 1-D input (others are flattened first)
    _like_numpy("cumsum", gpuprims.cumsum(a, device="cpu"), a)
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
        _core.learn_quick(99, np.dtype(np.float32).num, 0, 0, np.dtype(np.float32).num, False, False, -1)
