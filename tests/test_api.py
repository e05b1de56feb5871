"""Argument validation, device selection, info functions, docstrings and
CPU/CUDA agreement."""

import inspect
import warnings

import numpy as np
import pytest
from numpy.exceptions import AxisError

import gpuprims
from gp_testutils import (
    ALL_DTYPES, REDUCE_FUNCS, check_reduce, check_scan, data_kind, gp_call, make_data,
    run_numpy_and_gp, shape_axis_params,
)

ALL_FUNCS = REDUCE_FUNCS + ["prefix_sum", "cumsum"]
PUBLIC_FUNCS = ALL_FUNCS + ["cuda_available", "device_info", "build_info"]


def call(name, a, **kw):
    return getattr(gpuprims, name)(a, **kw)


# ------------------------------------------------------------ bad dtypes ---

BAD_ARRAYS = [
    pytest.param(np.array([1 + 2j, 3 - 1j], np.complex64), id="complex64"),
    pytest.param(np.array([1 + 2j, 3 - 1j], np.complex128), id="complex128"),
    pytest.param(np.array(["ab", "c"]), id="str"),
    pytest.param(np.array([b"ab", b"c"]), id="bytes"),
    pytest.param(np.array([1, "x", None], dtype=object), id="object"),
    pytest.param(np.array([1, 2], dtype=object), id="object-ints"),
    pytest.param(np.array(["2020-01-01", "2021-02-03"], dtype="datetime64[D]"), id="datetime64"),
    pytest.param(np.array([1, 2], dtype="timedelta64[s]"), id="timedelta64"),
    pytest.param(np.zeros(0, np.complex128), id="empty-complex128"),
    pytest.param(np.array(1 + 1j), id="0d-complex"),
]


def _dtype_named(msg, dt):
    names = {str(dt), dt.name}
    return any(n in msg for n in names)


@pytest.mark.parametrize("a", BAD_ARRAYS)
@pytest.mark.parametrize("func", ALL_FUNCS)
def test_unsupported_dtype_raises_typeerror(device, func, a):
    with pytest.raises(TypeError) as ei:
        call(func, a, device=device)
    assert _dtype_named(str(ei.value), a.dtype), f"message does not name {a.dtype}: {ei.value}"


@pytest.mark.parametrize("func", ALL_FUNCS)
def test_unsupported_python_inputs(device, func):
    with pytest.raises(TypeError) as ei:
        call(func, [1 + 1j, 2], device=device)
    assert "complex128" in str(ei.value)
    with pytest.raises(TypeError):
        call(func, ["a", "b"], device=device)


@pytest.mark.parametrize("func", ["sum", "prod", "mean", "prefix_sum", "cumsum"])
@pytest.mark.parametrize("bad", ["foo", complex, np.complex64, "complex128", object, "U3", "datetime64[s]",
                                 np.longdouble if np.dtype(np.longdouble).itemsize > 8 else np.clongdouble],
                         ids=lambda v: getattr(v, "__name__", str(v)))
def test_bad_dtype_argument(device, func, bad):
    a = np.arange(10, dtype=np.int32)
    with pytest.raises(TypeError):
        call(func, a, dtype=bad, device=device)


@pytest.mark.parametrize("func", ["min", "max"])
def test_min_max_have_no_dtype_argument(func):
    with pytest.raises(TypeError):
        call(func, np.arange(3), dtype=np.int64, device="cpu")


# ----------------------------------------------------------- array-likes ---

class _HasArray:
    def __init__(self, arr):
        self._arr = arr

    def __array__(self, dtype=None, copy=None):
        return self._arr if dtype is None else self._arr.astype(dtype)


@pytest.mark.parametrize("func", ALL_FUNCS)
def test_array_like_inputs(device, func):
    import array
    base = np.array([3.5, -1.25, 2.0, 8.0, -0.5])
    for obj in (tuple(base.tolist()), array.array("d", base.tolist()), memoryview(base),
                _HasArray(base.astype(np.float32)), range(1, 9), [np.int16(3), np.int16(-4)],
                array.array("b", [100, 100, 100])):
        np_fn = np.cumsum if func in ("prefix_sum", "cumsum") else getattr(np, func)
        expected = np_fn(np.asarray(obj))
        got = call(func, obj, device=device)
        assert np.asarray(got).dtype == expected.dtype, (func, type(obj))
        if func in REDUCE_FUNCS:
            check_reduce(func, np.asarray(obj), got)
        else:
            check_scan(np.asarray(obj), got)


# ------------------------------------------- subclasses and masked arrays ---

EVERY_INPUT_FUNC = {
    **{name: (lambda name: lambda a, **kw: call(name, a, **kw))(name) for name in ALL_FUNCS},
    "transpose": lambda a, **kw: gpuprims.transpose(a, **kw),
    "convolve": lambda a, **kw: gpuprims.convolve(a.ravel(), [1, 2], **kw),
    "correlate": lambda a, **kw: gpuprims.correlate([1, 2, 3, 4], a.ravel(), **kw),
    "convolve2d": lambda a, **kw: gpuprims.convolve2d(a, np.ones((2, 2)), **kw),
    "correlate2d": lambda a, **kw: gpuprims.correlate2d(np.ones((2, 2)), a, **kw),
}


@pytest.mark.parametrize("func", list(EVERY_INPUT_FUNC))
def test_masked_arrays_raise_typeerror(device, func):
    """A masked array's mask is never ignored: gpuprims has no masked semantics, so it refuses."""
    masked = np.ma.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], mask=[[0, 1, 0], [0, 0, 1]])
    with pytest.raises(TypeError, match=r"masked.*\.filled\(.*\.compressed\("):
        EVERY_INPUT_FUNC[func](masked, device=device)
    unmasked = np.ma.array([[1.0, 2.0], [3.0, 4.0]])  # no mask set: still a masked array
    with pytest.raises(TypeError, match="masked"):
        EVERY_INPUT_FUNC[func](unmasked, device=device)


def test_masked_array_helpers_named_in_the_error_work(device):
    masked = np.ma.array([1, 2, 3], mask=[0, 1, 0])
    assert gpuprims.sum(masked.compressed(), device=device) == np.sum(masked) == 4
    assert gpuprims.max(masked.filled(0), device=device) == 3


@pytest.mark.parametrize("func", ["to_device", "pinned_copy", "pinned_like", "is_pinned"])
def test_masked_arrays_refused_by_the_memory_functions(func):
    if func == "to_device" and not gpuprims.cuda_available():
        pytest.skip("CUDA not available")
    with pytest.raises(TypeError, match=f"gpuprims.{func}.*masked"):
        getattr(gpuprims, func)(np.ma.array([1.0, 2.0], mask=[1, 0]))


def test_matrix_is_computed_as_a_plain_ndarray(device):
    """numpy.matrix inputs get ndarray semantics (numpy.asarray): 1-D results, ndarray type."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PendingDeprecationWarning)
        m = np.matrix([[1, 2, 3], [4, 5, 6]])
    plain = np.asarray(m)
    for func in ("sum", "prod", "min", "max", "mean"):
        got = call(func, m, axis=1, device=device)
        assert type(got) is np.ndarray and got.shape == (2,), func
        np.testing.assert_array_equal(got, getattr(np, func)(plain, axis=1))
    scanned = gpuprims.cumsum(m, axis=1, device=device)
    assert type(scanned) is np.ndarray
    np.testing.assert_array_equal(scanned, np.cumsum(plain, axis=1))
    assert type(gpuprims.transpose(m, device=device)) is np.ndarray


@pytest.mark.parametrize("codes", ["qlQL", "lqLQ"])
def test_longlong_keeps_numpys_scalar_type(device, codes):
    """int64 and longlong (and their unsigned pair) are equal dtypes of two scalar types: each
    call's result has NumPy's, whichever of the two a cache or the quick lane saw first."""
    for _ in range(2):  # the second round replays the quick lane
        for code in codes:
            a = np.arange(1, 7, dtype=code).reshape(2, 3)
            for func in ("sum", "prod", "min", "nansum", "cumsum", "cumprod"):
                for axis in (None, 1):
                    got, expected = call(func, a, axis=axis, device=device), getattr(np, func)(a, axis=axis)
                    assert type(got) is type(expected) and got.dtype.char == expected.dtype.char, (code, func, axis)
                    np.testing.assert_array_equal(got, expected)
            got = gpuprims.convolve(a[0], a[1], device=device)
            assert got.dtype.char == np.convolve(a[0], a[1]).dtype.char


def test_pandas_series_is_computed_as_its_values(device):
    """A pandas Series with NaN sums to nan, as numpy.sum(numpy.asarray(series)) (pandas' own sum
    skips NaN)."""
    pd = pytest.importorskip("pandas")
    series = pd.Series([1.0, np.nan, 2.0])
    assert np.isnan(gpuprims.sum(series, device=device))
    assert gpuprims.sum(series.dropna(), device=device) == 3.0


# ----------------------------------------------------------------- flags ---

@pytest.mark.parametrize("value", [True, False, 1, 0, 2, np.int64(1), np.bool_(True), "yes", None, 1.0, [],
                                   np.array(True)], ids=repr)
@pytest.mark.parametrize("func", REDUCE_FUNCS)
def test_keepdims_accepts_what_numpy_accepts(device, func, value):
    a = np.arange(6.0).reshape(2, 3)
    try:
        expected = getattr(np, func)(a, axis=0, keepdims=value)
    except TypeError:
        with pytest.raises(TypeError):
            call(func, a, axis=0, keepdims=value, device=device)
        return
    got = call(func, a, axis=0, keepdims=value, device=device)
    assert got.shape == expected.shape
    np.testing.assert_allclose(got, expected)


@pytest.mark.parametrize("value", [True, False, 1, 0, 2, None, "yes", "", 1.0, 0.0, [], np.bool_(False),
                                   np.array(True)], ids=repr)
@pytest.mark.parametrize("axis", [None, 0, (0, 1)])
def test_count_nonzero_keepdims_like_numpy(device, axis, value):
    """numpy.count_nonzero counts the whole array for any false keepdims (None, "" ...) with axis
    None; other keepdims go to a sum, which reads them as the reductions do."""
    a = np.array([[0.0, 1.0, 2.0], [3.0, 0.0, np.nan]])
    try:
        expected = np.count_nonzero(a, axis=axis, keepdims=value)
    except TypeError:
        with pytest.raises(TypeError):
            gpuprims.count_nonzero(a, axis=axis, keepdims=value, device=device)
        return
    got = gpuprims.count_nonzero(a, axis=axis, keepdims=value, device=device)
    assert type(got) is type(expected) and np.shape(got) == np.shape(expected)
    np.testing.assert_array_equal(got, expected)


# ------------------------------------------------------------------ axis ---

AXIS_ERROR_CASES = [
    ((3, 4), 3), ((3, 4), 2), ((3, 4), -3), ((3, 4), (0, 3)), ((3, 4), (-3,)), ((5,), 1), ((), 1),
    ((), (0,)), ((2, 3, 4), (0, 5, 1)),
]


@pytest.mark.parametrize("shape,axis", shape_axis_params(AXIS_ERROR_CASES))
@pytest.mark.parametrize("func", REDUCE_FUNCS)
def test_reduce_bad_axis_axiserror(device, rng, func, shape, axis):
    a = make_data(rng, "float32", shape)
    with pytest.raises(AxisError):
        np.sum(a, axis=axis)   # sanity: numpy agrees
    with pytest.raises(AxisError):
        call(func, a, axis=axis, device=device)


@pytest.mark.parametrize("func", REDUCE_FUNCS)
@pytest.mark.parametrize("axis", [(0, 0), (1, -1), (0, 1, 0)], ids=str)
def test_reduce_duplicate_axis_valueerror(device, rng, func, axis):
    a = make_data(rng, "int32", (3, 4))
    with pytest.raises(ValueError):
        call(func, a, axis=axis, device=device)


@pytest.mark.parametrize("func", ALL_FUNCS)
@pytest.mark.parametrize("axis", [1.0, "0", [0], (0, None), True], ids=repr)
def test_non_integer_axis_like_numpy(device, rng, func, axis):
    a = make_data(rng, "int32", (3, 4))
    np_fn = np.cumsum if func in ("prefix_sum", "cumsum") else getattr(np, func)
    r = run_numpy_and_gp(lambda: np_fn(a, axis=axis), lambda: call(func, a, axis=axis, device=device))
    assert r is None, "numpy raises here"


@pytest.mark.parametrize("func", ["prefix_sum", "cumsum"])
@pytest.mark.parametrize("shape,axis", shape_axis_params([((3, 4), 2), ((3, 4), -3), ((5,), 1), ((5,), -2), ((), 1), ((), -2)]))
def test_scan_bad_axis(device, rng, func, shape, axis):
    a = make_data(rng, "int32", shape)
    with pytest.raises(AxisError):
        np.cumsum(a, axis=axis)
    with pytest.raises(AxisError):
        call(func, a, axis=axis, device=device)


@pytest.mark.parametrize("func", ["prefix_sum", "cumsum"])
@pytest.mark.parametrize("axis", [(0,), (), (0, 1)], ids=str)
def test_scan_tuple_axis_typeerror(device, rng, func, axis):
    # numpy.cumsum only takes an int axis
    a = make_data(rng, "int32", (3, 4))
    with pytest.raises(TypeError):
        call(func, a, axis=axis, device=device)


# ------------------------------------------------------------- exclusive ---

@pytest.mark.parametrize("bad", ["yes", 1, 0, 1.0, None, "False"], ids=repr)
def test_exclusive_must_be_bool(device, bad):
    with pytest.raises(TypeError):
        gpuprims.prefix_sum(np.arange(5), exclusive=bad, device=device)


def test_cumsum_has_no_exclusive():
    with pytest.raises(TypeError):
        gpuprims.cumsum(np.arange(5), exclusive=True, device="cpu")


# ---------------------------------------------------------------- device ---

@pytest.mark.parametrize("func", ALL_FUNCS)
@pytest.mark.parametrize("bad", ["gpu", "cuda:x", "cuda:-1", "cuda:99", "", "cuda:", "cpu:0", "cuda0",
                                 "cuda:1.5", "tpu"], ids=repr)
def test_bad_device_string_valueerror(func, bad):
    with pytest.raises(ValueError):
        call(func, np.arange(5, dtype=np.float32), device=bad)


@pytest.mark.parametrize("func", ALL_FUNCS)
@pytest.mark.parametrize("bad", [5, 0, 1.0, b"cpu", ["cpu"], object()], ids=lambda v: type(v).__name__)
def test_non_string_device_typeerror(func, bad):
    with pytest.raises(TypeError):
        call(func, np.arange(5, dtype=np.float32), device=bad)


def test_device_is_keyword_only():
    for name in ALL_FUNCS:
        sig = inspect.signature(getattr(gpuprims, name))
        assert "device" in sig.parameters, name
        assert sig.parameters["device"].kind is inspect.Parameter.KEYWORD_ONLY, name
        assert sig.parameters["device"].default is None, name
        params = list(sig.parameters)
        assert params[0] == "a" and params[1] == "axis", name
        if name in ("sum", "prod", "mean", "prefix_sum", "cumsum"):
            assert params[2] == "dtype", name


def test_device_error_class():
    assert issubclass(gpuprims.DeviceUnavailableError, RuntimeError)
    assert issubclass(gpuprims.DeviceUnavailableError, ValueError)


@pytest.mark.parametrize("func", ALL_FUNCS)
@pytest.mark.parametrize("dev", ["cuda", "cuda:0"])
def test_cuda_without_gpu_raises(func, dev):
    if gpuprims.cuda_available():
        pytest.skip("a GPU is available")
    with pytest.raises(gpuprims.DeviceUnavailableError):
        call(func, np.arange(5, dtype=np.float32), device=dev)
    with pytest.raises(RuntimeError):
        call(func, np.arange(5, dtype=np.float32), device=dev)


def test_cuda_out_of_range_ordinal():
    if not gpuprims.cuda_available():
        pytest.skip("needs a GPU")
    n = len(gpuprims.device_info()["devices"])
    with pytest.raises(ValueError):
        gpuprims.sum(np.arange(5), device=f"cuda:{n}")
    gpuprims.sum(np.arange(5), device=f"cuda:{n - 1}")


@pytest.mark.parametrize("func", ALL_FUNCS)
def test_cpu_device_strings(func, rng):
    a = make_data(rng, "int16", 101, data_kind(func) if func in REDUCE_FUNCS else "sum")
    devs = ["cpu", None] + (["cuda", "cuda:0"] if gpuprims.cuda_available() else [])
    for dev in devs:
        got = call(func, a, device=dev)
        if func in REDUCE_FUNCS:
            check_reduce(func, a, got)
        else:
            check_scan(a, got)


def test_env_var_selects_device(monkeypatch, rng):
    a = make_data(rng, "float32", 1000)
    monkeypatch.setenv("GPUPRIMS_DEVICE", "cpu")
    check_reduce("sum", a, gpuprims.sum(a))
    check_scan(a, gpuprims.prefix_sum(a))
    if not gpuprims.cuda_available():
        # the variable is read at call time: switching it to cuda must fail now
        monkeypatch.setenv("GPUPRIMS_DEVICE", "cuda")
        with pytest.raises(gpuprims.DeviceUnavailableError):
            gpuprims.sum(a)
        with pytest.raises(gpuprims.DeviceUnavailableError):
            gpuprims.prefix_sum(a)
        # an explicit device overrides the environment
        check_reduce("max", a, gpuprims.max(a, device="cpu"))
    else:
        monkeypatch.setenv("GPUPRIMS_DEVICE", "cuda")
        check_reduce("sum", a, gpuprims.sum(a))
    monkeypatch.delenv("GPUPRIMS_DEVICE")
    check_reduce("sum", a, gpuprims.sum(a))


@pytest.mark.parametrize("bad", ["gpu", "cuda:x", "bogus"])
def test_env_var_invalid_value(monkeypatch, bad):
    monkeypatch.setenv("GPUPRIMS_DEVICE", bad)
    with pytest.raises(ValueError):
        gpuprims.sum(np.arange(4))
    # explicit device still works
    assert gpuprims.sum(np.arange(4), device="cpu") == 6


# ------------------------------------------------------------ info funcs ---

def test_cuda_available_is_bool():
    v = gpuprims.cuda_available()
    assert type(v) is bool
    assert gpuprims.cuda_available() is v


def test_build_info():
    info = gpuprims.build_info()
    assert isinstance(info, dict)
    for k in ("cuda", "cuda_version", "archs"):
        assert k in info, k
    assert type(info["cuda"]) is bool
    assert info["cuda_version"] is None or isinstance(info["cuda_version"], str)
    assert info["archs"] is None or isinstance(info["archs"], str)
    if info["cuda"]:
        assert info["cuda_version"]
    if gpuprims.cuda_available():
        assert info["cuda"] is True


def test_device_info():
    info = gpuprims.device_info()
    assert isinstance(info, dict)
    for k in ("available", "devices", "driver_version", "runtime_version"):
        assert k in info, k
    assert type(info["available"]) is bool
    assert info["available"] == gpuprims.cuda_available()
    assert isinstance(info["devices"], list)
    if not info["available"]:
        assert isinstance(info.get("reason"), str) and info["reason"]
    else:
        assert len(info["devices"]) >= 1
    for d in info["devices"]:
        assert isinstance(d, dict)
        assert isinstance(d["name"], str) and d["name"]
        cc = d["compute_capability"]
        assert isinstance(cc, tuple) and len(cc) == 2 and all(isinstance(x, int) for x in cc)
        assert isinstance(d["total_memory"], int) and d["total_memory"] > 0
        assert isinstance(d["multiprocessors"], int) and d["multiprocessors"] > 0


@pytest.mark.parametrize("name", PUBLIC_FUNCS + ["DeviceUnavailableError"])
def test_public_api_has_docstrings(name):
    obj = getattr(gpuprims, name)
    assert obj.__doc__ and len(obj.__doc__.strip()) > 20, f"{name} lacks a docstring"
    assert gpuprims.__doc__, "module docstring"


def test_private_timing_hook(device):
    """_timing.device_times times the work of any public call, on the CPU or the GPU."""
    from gpuprims import _timing
    a = np.arange(1 << 16, dtype=np.float32)
    for name in ("sum", "prod", "min", "max", "mean", "prefix_sum"):
        t = _timing.device_times(getattr(gpuprims, name), a, repeats=3, device=device)
        assert isinstance(t, np.ndarray) and t.dtype == np.float64 and t.shape == (3,)
        assert np.all(t >= 0) and np.all(np.isfinite(t)) and np.any(t > 0)
    t = _timing.device_times(gpuprims.prefix_sum, a, repeats=2, device=device, exclusive=True)
    assert t.shape == (2,)
    t = _timing.device_times(gpuprims.transpose, a.reshape(256, 256), repeats=2, device=device)
    assert t.shape == (2,)
    t = _timing.device_times(gpuprims.convolve2d, a.reshape(256, 256), np.ones((3, 3), np.float32), repeats=2,
                             device=device, mode="same")
    assert t.shape == (2,)
    with pytest.raises(ValueError):
        _timing.device_times(gpuprims.sum, a, repeats=0, device=device)
    with pytest.raises(TypeError, match="not a gpuprims computation"):
        _timing.device_times(lambda x, device=None: x.sum(), a, repeats=2, device=device)
    if not gpuprims.cuda_available():
        with pytest.raises(gpuprims.DeviceUnavailableError):
            _timing.device_times(gpuprims.sum, a, repeats=2, device="cuda")



# ------------------------------------------------------ CPU vs CUDA -------

AGREE_CASES = [
    ("sum", "float32", (100_003,), None), ("sum", "int8", (1000, 37), 0), ("sum", "uint64", (37, 1000), 1),
    ("prod", "int32", (5001,), None), ("prod", "float64", (40, 50), (0, 1)), ("mean", "float16", (333, 7), 0),
    ("mean", "int64", (7, 333), None), ("min", "float32", (10, 20, 30), (0, 2)), ("max", "uint16", (65537,), None),
    ("max", "float64", (300, 300), 1), ("min", "bool", (1000,), None), ("prefix_sum", "float32", (100_003,), None),
    ("prefix_sum", "int16", (300, 301), 0), ("cumsum", "float64", (301, 300), 1), ("cumsum", "uint8", (1 << 20,), None),
]


@pytest.mark.parametrize("func,dtype,shape,axis", AGREE_CASES, ids=lambda v: str(v).replace(" ", ""))
def test_cpu_and_cuda_agree(rng, func, dtype, shape, axis):
    if not gpuprims.cuda_available():
        pytest.skip("needs a GPU")
    a = make_data(rng, dtype, shape, data_kind(func) if func in REDUCE_FUNCS else "sum")
    cpu = gp_call(func, a, "cpu", axis=axis)
    gpu = gp_call(func, a, "cuda", axis=axis)
    assert type(cpu) is type(gpu) and cpu.dtype == gpu.dtype and np.shape(cpu) == np.shape(gpu)
    if np.dtype(cpu.dtype).kind == "f" and func not in ("min", "max"):
        # both within the float64-reference bound
        if func in REDUCE_FUNCS:
            check_reduce(func, a, cpu, axis=axis)
            check_reduce(func, a, gpu, axis=axis)
        else:
            check_scan(a, cpu, axis=axis)
            check_scan(a, gpu, axis=axis)
        assert np.allclose(np.asarray(cpu, np.float64), np.asarray(gpu, np.float64), rtol=1e-2, atol=1e-2)
    else:
        assert np.array_equal(cpu, gpu, equal_nan=True)
    if func == "prefix_sum":
        e_cpu = gpuprims.prefix_sum(a, axis=axis, exclusive=True, device="cpu")
        e_gpu = gpuprims.prefix_sum(a, axis=axis, exclusive=True, device="cuda")
        if e_cpu.dtype.kind != "f":
            assert np.array_equal(e_cpu, e_gpu)
        else:
            check_scan(a, e_gpu, axis=axis, exclusive=True)


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_cpu_and_cuda_agree_all_dtypes(rng, dtype):
    if not gpuprims.cuda_available():
        pytest.skip("needs a GPU")
    for func in REDUCE_FUNCS + ["prefix_sum"]:
        a = make_data(rng, dtype, (129, 65), data_kind(func) if func in REDUCE_FUNCS else "sum")
        for axis in (None, 0, 1):
            cpu = gp_call(func, a, "cpu", axis=axis)
            gpu = gp_call(func, a, "cuda", axis=axis)
            assert cpu.dtype == gpu.dtype and np.shape(cpu) == np.shape(gpu)
            if cpu.dtype.kind != "f" or func in ("min", "max"):
                assert np.array_equal(cpu, gpu, equal_nan=True), (func, axis)
            elif func in REDUCE_FUNCS:
                check_reduce(func, a, gpu, axis=axis)
            else:
                check_scan(a, gpu, axis=axis)


def test_concurrent_threads_get_correct_results(device):
    """Several Python threads at once (the GIL is released during the work; on the GPU each host
    thread has its own stream): every result must still be right."""
    from concurrent.futures import ThreadPoolExecutor

    rng = np.random.default_rng(12345)
    arrays = [rng.integers(-1000, 1000, size=(int(n), 37), dtype=np.int32)
              for n in rng.integers(1000, 50000, size=16)]

    def work(a):
        return (gpuprims.sum(a, axis=0, device=device), gpuprims.prefix_sum(a, axis=1, device=device),
                gpuprims.max(a, device=device))

    with ThreadPoolExecutor(max_workers=8) as pool:
        results = list(pool.map(work, arrays))
    for a, (total, scan, largest) in zip(arrays, results):
        np.testing.assert_array_equal(total, np.sum(a, axis=0))
        np.testing.assert_array_equal(scan, np.cumsum(a, axis=1))
        assert largest == np.max(a)
