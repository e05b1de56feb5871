"""Device-resident arrays: DeviceArray, to_device, zero-copy interop with CuPy, PyTorch and Numba,
stream ordering, the caching allocator, and bad device inputs.  The DLPack capsule code is also
exercised on the CPU (NumPy is a DLPack producer and consumer), so CI covers its ownership rules."""
import gc
import sys

import numpy as np
import pytest

import gpuprims
from gpuprims import _core
from gp_testutils import ALL_DTYPES, check_reduce, check_scan, data_kind, make_data, run_numpy_and_gp

cuda = pytest.mark.skipif(not gpuprims.cuda_available(), reason="CUDA not available")


def host(result):
    """A gpuprims device result as NumPy would have returned it (0-d arrays become scalars)."""
    assert isinstance(result, gpuprims.DeviceArray), type(result)
    out = result.get()
    return out[()] if out.ndim == 0 else out


# ------------------------------------------------------------------ DLPack capsules (CPU) ---

def _numpy_takes_versioned_capsules():
    """Whether this NumPy speaks DLPack 1.0 (versioned capsules, NumPy >= 2.1): older ones neither
    ask for nor export them."""
    try:
        np.empty(0).__dlpack__(max_version=(1, 0))
    except TypeError:
        return False
    return True


NUMPY_VERSIONED_DLPACK = _numpy_takes_versioned_capsules()
needs_versioned = pytest.mark.skipif(not NUMPY_VERSIONED_DLPACK, reason="this NumPy predates versioned DLPack")
VERSIONED = [pytest.param(True, id="versioned", marks=needs_versioned), pytest.param(False, id="legacy")]


class _Producer:
    """Hands out a capsule made by gpuprims' exporter for a NumPy array's memory: a versioned one
    when the consumer asks for DLPack 1 (and `versioned`), as the protocol says."""

    def __init__(self, array, versioned):
        self.array, self.versioned = array, versioned

    def __dlpack_device__(self):
        return (1, 0)

    def __dlpack__(self, max_version=None, **kwargs):
        a = self.array
        versioned = self.versioned and max_version is not None and max_version[0] >= 1
        return _core.dlpack_export(a, a.ctypes.data, 1, 0, a.shape,
                                   tuple(s // a.itemsize for s in a.strides), 2, a.itemsize * 8,
                                   versioned, False)


@pytest.mark.parametrize("versioned", VERSIONED)
def test_dlpack_export_is_consumed_once_and_releases_owner(rng, versioned):
    a = rng.standard_normal((5, 7))[:, ::2]  # strided
    before = sys.getrefcount(a)
    view = np.from_dlpack(_Producer(a, versioned))
    assert np.array_equal(view, a) and np.shares_memory(view, a)
    assert sys.getrefcount(a) == before + 1  # the capsule's deleter holds the owner
    del view
    gc.collect()
    assert sys.getrefcount(a) == before
    capsule = _Producer(a, versioned).__dlpack__(max_version=(1, 0))
    del capsule  # never consumed: the capsule destructor releases the owner
    assert sys.getrefcount(a) == before


@pytest.mark.parametrize("versioned", VERSIONED)
def test_dlpack_import_of_numpy_capsule(rng, versioned):
    a = rng.standard_normal((3, 4))
    capsule = a.__dlpack__(max_version=(1, 0)) if versioned else a.__dlpack__()
    holder, ptr, device_type, device_id, shape, strides, code, bits, lanes, readonly = \
        _core.dlpack_import(capsule)
    assert (ptr, device_type, device_id, shape, code, bits, lanes) == (a.ctypes.data, 1, 0, (3, 4), 2, 64, 1)
    assert strides in (None, (4, 1))
    with pytest.raises(ValueError, match="consumed"):
        _core.dlpack_import(capsule)  # a capsule can be consumed once
    del holder


def test_dlpack_import_rejects_non_capsules():
    with pytest.raises(ValueError):
        _core.dlpack_import(object())


def test_to_device_without_gpu_raises():
    if gpuprims.cuda_available():
        pytest.skip("a GPU is usable here")
    with pytest.raises(gpuprims.DeviceUnavailableError):
        gpuprims.to_device(np.arange(3))


# ------------------------------------------------------------------------ DeviceArray (GPU) ---

@cuda
@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("shape", [(), (0,), (1,), (7,), (3, 0, 2), (5, 33), (2, 3, 4)],
                         ids=lambda s: "x".join(map(str, s)) or "0d")
def test_round_trip(rng, dtype, shape):
    a = make_data(rng, dtype, shape)
    d = gpuprims.to_device(a)
    assert isinstance(d, gpuprims.DeviceArray)
    assert (d.shape, d.dtype, d.size, d.ndim, d.nbytes, d.device) == (
        a.shape, a.dtype, a.size, a.ndim, a.nbytes, "cuda:0")
    if a.size:  # NumPy gives empty arrays zero strides; any value is right there
        assert d.strides == np.empty(a.shape, a.dtype).strides
    assert np.array_equal(d.get(), a) and np.array_equal(np.asarray(d), a)
    assert d.get().dtype == a.dtype
    assert "DeviceArray" in repr(d) and str(a.dtype) in repr(d)


@cuda
def test_to_device_of_views_and_byteswapped(rng):
    a = rng.standard_normal((6, 8)).astype(">f4")[::-2, 1::3]
    d = gpuprims.to_device(a)
    assert d.dtype == np.float32 and np.array_equal(d.get(), a)


@cuda
def test_astype_reshape_copy(rng):
    a = rng.standard_normal((4, 6)) * 100
    d = gpuprims.to_device(a)
    for dtype in ALL_DTYPES:
        with np.errstate(all="ignore"):
            expected = a.astype(dtype)
        assert np.array_equal(d.astype(dtype).get(), expected), dtype
    assert np.array_equal(d.reshape(3, -1).get(), a.reshape(3, -1))
    assert np.array_equal(d.reshape((24,)).get(), a.reshape(24))
    with pytest.raises(ValueError):
        d.reshape(5, 5)
    c = d.copy()
    assert c.ptr != d.ptr and np.array_equal(c.get(), a)


@cuda
@pytest.mark.parametrize("func", ["sum", "prod", "mean", "min", "max"])
@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("shape,axis", [((1001,), None), ((7, 300), 1), ((7, 300), 0),
                                        ((3, 5, 7), (0, 2)), ((4, 6), -1)])
def test_reduce_device_in_device_out(rng, func, dtype, shape, axis):
    a = make_data(rng, dtype, shape, data_kind(func))
    result = getattr(gpuprims, func)(gpuprims.to_device(a), axis=axis)
    check_reduce(func, a, host(result), axis=axis)


@cuda
@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("shape,axis", [((1,), None), ((70001,), None), ((9, 517), 1), ((517, 9), 0),
                                        ((3, 4, 5), None)])
@pytest.mark.parametrize("exclusive", [False, True])
def test_scan_device_in_device_out(rng, dtype, shape, axis, exclusive):
    a = make_data(rng, dtype, shape)
    result = gpuprims.prefix_sum(gpuprims.to_device(a), axis=axis, exclusive=exclusive)
    check_scan(a, host(result), axis=axis, exclusive=exclusive)


@cuda
@pytest.mark.parametrize("func", ["sum", "prod", "min", "max", "mean", "prefix_sum"])
@pytest.mark.parametrize("a", [np.float32(2.5), np.zeros((0, 3), np.int16), np.ones((2, 0))],
                         ids=["0d", "0x3", "2x0"])
def test_empty_and_0d_device_inputs(func, a):
    a = np.asarray(a)
    np_f = np.cumsum if func == "prefix_sum" else getattr(np, func)
    outcome = run_numpy_and_gp(lambda: np_f(a), lambda: host(getattr(gpuprims, func)(gpuprims.to_device(a))))
    if outcome is not None:  # None: both raised the same exception type
        expected, got, np_warned, gp_warned = outcome
        assert np.array_equal(got, expected, equal_nan=True) and np.asarray(got).dtype == expected.dtype
        assert np_warned == gp_warned


@cuda
def test_device_argument_must_match_input():
    d = gpuprims.to_device(np.arange(10))
    assert host(gpuprims.sum(d, device="cuda:0")) == 45
    with pytest.raises(ValueError, match="lives on cuda:0"):
        gpuprims.sum(d, device="cpu")


@cuda
def test_memory_returns_to_cache_and_no_leaks(rng):
    a = rng.standard_normal(1 << 12).astype(np.float32)
    d = gpuprims.to_device(a)
    gc.collect()
    start = gpuprims.memory_info()["in_use"]
    refs = sys.getrefcount(d)
    for _ in range(10_000):
        gpuprims.sum(d)
        gpuprims.prefix_sum(d)
    gc.collect()
    assert gpuprims.memory_info()["in_use"] == start
    assert sys.getrefcount(d) == refs
    del d
    gc.collect()
    assert gpuprims.memory_info()["in_use"] < start  # the array's block went back to the cache
    gpuprims.empty_cache()
    info = gpuprims.memory_info()
    assert info["cached"] == 0
    assert set(info) == {"in_use", "cached", "peak_in_use", "device_free", "device_total"}


@cuda
def test_out_of_memory_is_memoryerror():
    with pytest.raises(MemoryError):
        gpuprims.DeviceArray._empty((1 << 50,), np.dtype(np.float32), 0)
    assert host(gpuprims.sum(gpuprims.to_device(np.arange(5)))) == 10  # still usable


# --------------------------------------------------------------------------- bad device input ---

class _FakeInterface:
    def __init__(self, interface):
        self.__cuda_array_interface__ = interface


@cuda
def test_host_pointer_posing_as_device_memory():
    a = np.arange(10, dtype=np.float32)
    fake = _FakeInterface({"shape": (10,), "typestr": "<f4", "data": (a.ctypes.data, False), "version": 3})
    with pytest.raises(ValueError, match="not device memory"):
        gpuprims.sum(fake)


@cuda
def test_unsupported_interface_dtype_and_stream_zero():
    d = gpuprims.to_device(np.arange(4, dtype=np.float32))
    bad = _FakeInterface({"shape": (2,), "typestr": "<c8", "data": (d.ptr, False), "version": 3})
    with pytest.raises(TypeError, match="complex64"):
        gpuprims.sum(bad)
    zero = _FakeInterface({"shape": (4,), "typestr": "<f4", "data": (d.ptr, False), "version": 3, "stream": 0})
    with pytest.raises(ValueError, match="stream 0"):
        gpuprims.sum(zero)


class _FakeDLPack:
    def __init__(self, capsule, device):
        self.capsule, self.device = capsule, device

    def __dlpack_device__(self):
        return self.device

    def __dlpack__(self, **kwargs):
        return self.capsule


@cuda
def test_dlpack_capsule_for_another_device_and_consumed_capsule():
    host_capsule = np.arange(3.0).__dlpack__()
    with pytest.raises(BufferError, match="not CUDA"):
        gpuprims.sum(_FakeDLPack(host_capsule, (2, 0)))  # claims CUDA, is CPU memory
    d = gpuprims.to_device(np.arange(3.0))
    capsule = d.__dlpack__()
    np_view = _core.dlpack_import(capsule)  # consume it
    with pytest.raises(ValueError, match="consumed"):
        gpuprims.sum(_FakeDLPack(capsule, (2, 0)))
    del np_view


@cuda
def test_dlpack_export_keywords():
    d = gpuprims.to_device(np.arange(6.0).reshape(2, 3))
    with pytest.raises(BufferError):
        d.__dlpack__(dl_device=(1, 0))
    with pytest.raises(BufferError):
        d.__dlpack__(stream=0)
    assert d.__dlpack_device__() == (2, 0)
    for kwargs in ({}, {"max_version": (1, 0)}, {"stream": -1}, {"stream": 1}, {"copy": True},
                   {"dl_device": (2, 0)}):
        capsule = d.__dlpack__(**kwargs)
        assert type(capsule).__name__ == "PyCapsule"


# ------------------------------------------------------------------------- other libraries ---

@cuda
@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_cupy_interop(rng, dtype):
    cp = pytest.importorskip("cupy")
    a = make_data(rng, dtype, (6, 40))
    x = cp.asarray(a)
    views = {"plain": (x, a), "strided": (x[::2, 1::3], a[::2, 1::3]), "reversed": (x[::-1, ::-1], a[::-1, ::-1]),
             "transposed": (x.T, a.T), "offset": (x[3:, 5:], a[3:, 5:])}
    for name, (xv, av) in views.items():
        check_reduce("sum", av, host(gpuprims.sum(xv, axis=0)), axis=0)
        check_scan(av, host(gpuprims.prefix_sum(xv, axis=1)), axis=1)
        assert np.array_equal(host(gpuprims.max(xv)), av.max(), equal_nan=True), name
    r = gpuprims.prefix_sum(x)
    assert np.array_equal(cp.asnumpy(cp.asarray(r)), r.get())  # CuPy sees our result (CAI)
    assert int(cp.asarray(r).data.ptr) == r.ptr  # without a copy
    assert np.array_equal(cp.asnumpy(cp.from_dlpack(r)), r.get())


@cuda
def test_cupy_stream_is_honoured(rng):
    cp = pytest.importorskip("cupy")
    a = rng.standard_normal(1 << 22).astype(np.float32)
    with cp.cuda.Stream(non_blocking=True):
        x = cp.asarray(a)
        for _ in range(20):  # queue work gpuprims must wait for
            x = x * 1.0001
        y = x + 1
        got = host(gpuprims.sum(y))
    expected = (a.astype(np.float64) * 1.0001 ** 20 + 1).sum()
    assert abs(got - expected) <= 1e-3 * abs(expected) + 1e-2


@cuda
@pytest.mark.parametrize("dtype", ["bool", "int8", "int16", "int32", "int64", "uint8", "float16", "float32", "float64"])
def test_torch_interop(rng, dtype):
    torch = pytest.importorskip("torch")
    a = make_data(rng, dtype, (5, 33))
    t = torch.from_numpy(a).cuda()
    for tv, av in ((t, a), (t[:, ::3], a[:, ::3]), (t.T, a.T), (t[2:], a[2:])):
        check_reduce("sum", av, host(gpuprims.sum(tv, axis=1)), axis=1)
        check_scan(av, host(gpuprims.prefix_sum(tv)))
    r = gpuprims.prefix_sum(t, axis=1)
    back = torch.from_dlpack(r)
    assert back.data_ptr() == r.ptr and np.array_equal(back.cpu().numpy(), r.get())
    assert np.array_equal(torch.as_tensor(r, device="cuda").cpu().numpy(), r.get())


@cuda
def test_numba_interop(rng):
    numba_cuda = pytest.importorskip("numba.cuda")
    a = rng.standard_normal((4, 9))
    n = numba_cuda.to_device(a)
    check_reduce("sum", a, host(gpuprims.sum(n, axis=0)), axis=0)
    r = gpuprims.prefix_sum(n)
    m = numba_cuda.as_cuda_array(r)
    assert np.array_equal(m.copy_to_host(), r.get())


@cuda
def test_readme_device_example():
    d = gpuprims.to_device(np.arange(1, 11, dtype=np.int32))
    s = gpuprims.sum(d)
    assert isinstance(s, gpuprims.DeviceArray) and s.shape == () and s.get() == 55
    assert np.array_equal(gpuprims.prefix_sum(d, exclusive=True).get(), np.r_[0, np.cumsum(np.arange(1, 10))])


@cuda
@pytest.mark.parametrize("dtype", ["bool", "int8", "float16", "float32", "int64"])
@pytest.mark.parametrize("shape,axes", [((5, 7), None), ((3, 4, 5), (1, 2, 0)), ((), None), ((6,), (0,))])
def test_transpose_device_in_device_out(rng, dtype, shape, axes):
    a = make_data(rng, dtype, shape)
    r = gpuprims.transpose(gpuprims.to_device(a), axes)
    assert isinstance(r, gpuprims.DeviceArray) and r.is_c_contiguous
    assert np.array_equal(r.get(), np.ascontiguousarray(np.transpose(a, axes)))
