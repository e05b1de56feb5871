"""gpuprims.dask against NumPy/SciPy on the whole computed array: every function, uneven chunks
(chunks of one element, chunks shorter than a mask's halo), every axis form, keepdims, exclusive
scans across chunk edges, every mode and boundary, int and float dtypes, graphs composed with
ordinary dask.array operations, the synchronous, threaded and distributed schedulers; CuPy chunks
on the GPU; bad input."""
import warnings

import numpy as np
import pytest

da = pytest.importorskip("dask.array")
import dask  # noqa: E402

import gpuprims  # noqa: E402
import gpuprims.dask as gd  # noqa: E402
from gp_testutils import (  # noqa: E402
    ALL_DTYPES, FUNCS_WITH_DTYPE, REDUCE_FUNCS, assert_exact, assert_float_close, check_reduce, check_scan,
    data_kind, make_data, run_python,
)

UNEVEN = ((1, 4, 2, 6), (3, 1, 5))  # 13 x 9 in chunks of one element up to six
AXES = [None, 0, 1, -1, (0, 1), (1, 0), (-2,), ()]


@pytest.fixture(scope="module")
def client():
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(processes=False, n_workers=2, threads_per_worker=2, dashboard_address=":0") as cluster, \
            distributed.Client(cluster, set_as_default=False) as c:
        yield c


@pytest.fixture(params=["sync", "threads", "distributed"])
def compute(request):
    """compute(collection) on each scheduler: synchronous, threaded, and dask.distributed with
    threads in this process (where distributed is installed)."""
    if request.param == "distributed":
        c = request.getfixturevalue("client")
        return lambda collection: c.compute(collection).result()
    return lambda collection: collection.compute(scheduler=request.param)


def chunked(a, chunks):
    return da.from_array(a, chunks=chunks)


def quiet(run):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return run()


# ---------------------------------------------------------------------------------------------
# reductions
# ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("func", REDUCE_FUNCS)
def test_reductions_every_dtype_and_axis(func, dtype, device, rng):
    a = make_data(rng, dtype, (13, 9), data_kind(func))
    x = chunked(a, UNEVEN)
    for axis in AXES:
        for keepdims in (False, True):
            got = quiet(lambda: getattr(gd, func)(x, axis=axis, keepdims=keepdims, device=device)
                        .compute(scheduler="sync"))
            check_reduce(func, a, got, axis=axis, keepdims=keepdims)


@pytest.mark.parametrize("func", FUNCS_WITH_DTYPE)
@pytest.mark.parametrize("dtype_in,dtype", [("int8", "int8"), ("uint16", None), ("int64", "float32"),
                                            ("float16", None), ("float32", "float64"), ("bool", "int32"),
                                            ("float64", "float16")])
def test_reductions_dtype_argument(func, dtype_in, dtype, device, rng):
    a = make_data(rng, dtype_in, (50, 7), data_kind(func))
    x = chunked(a, ((1, 13, 36), 7))
    for axis in (None, 0, 1):
        got = quiet(lambda: getattr(gd, func)(x, axis=axis, dtype=dtype, device=device).compute())
        check_reduce(func, a, got, axis=axis, dtype=dtype)


@pytest.mark.parametrize("func", REDUCE_FUNCS)
def test_reductions_on_each_scheduler_and_deep_trees(func, compute, rng):
    a = make_data(rng, "float32", (101, 3, 5), data_kind(func))
    x = chunked(a, (7, (1, 2), 5))
    for axis in (None, 0, (0, 2)):
        got = compute(getattr(gd, func)(x, axis=axis, split_every=2))
        check_reduce(func, a, got, axis=axis)


def test_mean_carries_counts_not_means_of_means():
    # chunks of 1 and 3 elements: the mean of the chunk means would be (1 + 3) / 2 = 2
    x = chunked(np.array([1.0, 2.0, 3.0, 4.0]), ((1, 3),))
    assert gd.mean(x).compute() == 2.5


def test_reductions_nan_and_inf_propagate():
    a = np.arange(40, dtype=np.float64)
    a[17], a[3] = np.nan, np.inf
    x = chunked(a, 6)
    for func in ("sum", "min", "max", "mean", "prod"):
        assert np.isnan(getattr(gd, func)(x).compute()), func


def test_integer_sums_wrap_across_chunks():
    a = np.full(10, 2**62, dtype=np.int64)
    got = gd.sum(chunked(a, 3)).compute()
    assert got == np.sum(a) and got.dtype == np.int64


def test_reductions_of_empty_arrays_and_chunks():
    a = np.zeros((0, 4), np.float32)
    x = chunked(a, (1, 2))
    assert gd.sum(x).compute() == 0
    assert gd.sum(x, axis=0).compute().tolist() == [0, 0, 0, 0]
    with pytest.warns(RuntimeWarning):
        assert np.isnan(gd.mean(x).compute())
    with pytest.raises(ValueError):
        gd.min(x).compute()
    assert gd.max(x, axis=1).compute().shape == (0,)
    # an empty chunk between full ones
    b = np.arange(10.0)
    y = da.concatenate([chunked(b[:4], 2), chunked(b[4:4], 1), chunked(b[4:], 3)])
    assert gd.min(y).compute() == 0 and gd.max(y).compute() == 9 and gd.mean(y).compute() == 4.5


def test_reduction_of_0d_array():
    x = da.from_array(np.array(5, np.int16))
    assert gd.sum(x).compute() == 5
    assert gd.max(x, axis=0).compute() == 5
    with pytest.raises(np.exceptions.AxisError):
        gd.mean(x, axis=0)


# ---------------------------------------------------------------------------------------------
# scans
# ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_scans_every_dtype_axis_and_exclusive(dtype, device, rng):
    a = make_data(rng, dtype, (13, 9))
    x = chunked(a, UNEVEN)
    for axis in (None, 0, 1, -1, -2):
        for exclusive in (False, True):
            got = gd.prefix_sum(x, axis=axis, exclusive=exclusive, device=device).compute()
            check_scan(a, got, axis=axis, exclusive=exclusive)


@pytest.mark.parametrize("dtype_in,dtype", [("int8", "int8"), ("int32", "float32"), ("float16", None),
                                            ("float64", "float16"), ("bool", "bool"), ("uint8", "uint64")])
def test_scans_dtype_argument(dtype_in, dtype, device, rng):
    a = make_data(rng, dtype_in, 1000)
    x = chunked(a, ((1, 1, 333, 665),))
    for exclusive in (False, True):
        got = gd.prefix_sum(x, dtype=dtype, exclusive=exclusive, device=device).compute()
        check_scan(a, got, dtype=dtype, exclusive=exclusive)


def test_scans_on_each_scheduler(compute, rng):
    a = make_data(rng, "int32", (257, 5))
    x = chunked(a, ((1, 100, 156), (2, 3)))
    for axis, exclusive in ((0, False), (0, True), (1, True), (None, True)):
        got = compute(gd.prefix_sum(x, axis=axis, exclusive=exclusive))
        check_scan(a, got, axis=axis, exclusive=exclusive)
    check_scan(a, compute(gd.cumsum(x, axis=0)), axis=0)


def test_exclusive_scan_across_chunk_edges():
    x = chunked(np.array([3, 0, 2, 5, 1]), ((2, 1, 2),))
    assert gd.prefix_sum(x, exclusive=True).compute().tolist() == [0, 3, 3, 5, 10]


def test_scan_graph_scans_each_chunk_once(monkeypatch, rng):
    """Each chunk is scanned once: the first of its line from the identity, the others from their
    carries (the scan's initial values), with no second pass to add them."""
    from gpuprims import _scans
    calls = []
    for name in ("prefix_sum", "carried_prefix_sum"):
        def recorded(a, *args, _scan=getattr(_scans, name), _name=name, **kwargs):
            calls.append((_name, a.shape))
            return _scan(a, *args, **kwargs)
        monkeypatch.setattr(_scans, name, recorded)
    a = make_data(rng, "float32", (40, 6))
    got = gd.prefix_sum(chunked(a, ((10, 10, 20), (3, 3))), axis=0).compute(scheduler="sync")
    check_scan(a, got, axis=0)
    chunk_scans = sorted((name, shape) for name, shape in calls if shape[0] >= 10)  # not the totals' scans
    assert chunk_scans == [("carried_prefix_sum", (10, 3))] * 2 + [("carried_prefix_sum", (20, 3))] * 2 + \
        [("prefix_sum", (10, 3))] * 2


def test_scans_of_empty_and_0d_arrays():
    assert gd.prefix_sum(chunked(np.zeros((0, 3)), 2), axis=0).compute().shape == (0, 3)
    assert gd.cumsum(da.from_array(np.array(7, np.int8))).compute().tolist() == [7]
    for shape, chunks in (((7, 0), (2, 1)), ((0, 7), (1, 3)), ((0, 3, 2), (1, 2, 1))):  # dask's reshape refuses these
        for exclusive in (False, True):
            got = gd.prefix_sum(da.from_array(np.zeros(shape, np.int32), chunks=chunks), exclusive=exclusive).compute()
            assert got.shape == (0,) and got.dtype == np.cumsum(np.zeros(shape, np.int32)).dtype


# ---------------------------------------------------------------------------------------------
# transpose
# ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", ["bool", "uint8", "int16", "float32", "float64"])
def test_transpose(dtype, device, rng):
    a = make_data(rng, dtype, (5, 7, 3))
    x = chunked(a, ((1, 4), (3, 4), (2, 1)))
    for axes in (None, (0, 1, 2), (2, 0, 1), (1, -1, 0), [0, 2, 1]):
        got = gd.transpose(x, axes, device=device).compute()
        assert_exact(got, np.ascontiguousarray(np.transpose(a, axes)), f"transpose {axes}")
    assert gd.transpose(da.from_array(np.array(3.0))).compute().tolist() == [3.0]
    with pytest.raises(ValueError):
        gd.transpose(x, (0, 1))
    with pytest.raises(np.exceptions.AxisError):
        gd.transpose(x, (0, 1, 3))


# ---------------------------------------------------------------------------------------------
# convolutions
# ---------------------------------------------------------------------------------------------

def check_convolution(got, expected, reference, what):
    """`got` against the library's result (dtype, shape; exact for integers and bool) and floats
    against a float64 reference within the bound of the taps' count."""
    assert got.dtype == expected.dtype and got.shape == expected.shape, what
    if expected.dtype.kind in "biu":
        assert_exact(got, expected, what)
        return
    ref, absolute, taps = reference
    eps = np.finfo(np.float64 if expected.dtype == np.float64 else np.float32).eps
    tol = 2 * eps * taps * absolute + np.spacing(np.abs(ref).astype(expected.dtype)).astype(np.float64)
    assert_float_close(got, ref, tol, what, expected.dtype)


SIGNAL_CHUNKS = (1, 2, 1, 30, 3, 40, 2)  # 79 samples, many chunks shorter than the halo


@pytest.mark.parametrize("function", ["convolve", "correlate"])
@pytest.mark.parametrize("dtype", ["bool", "int8", "uint32", "int64", "float16", "float32", "float64"])
def test_convolve_correlate_1d(function, dtype, device, rng):
    a = make_data(rng, dtype, sum(SIGNAL_CHUNKS))
    x = chunked(a, (SIGNAL_CHUNKS,))
    for taps in (1, 2, 5, 8, 33, 79, 80, 100):
        v = make_data(rng, dtype, taps)
        for mode in ("full", "same", "valid", 0, 2):
            got = getattr(gd, function)(x, v, mode, device=device).compute()
            expected = getattr(np, function)(a, v, mode)
            wide = (a.astype(np.float64), v.astype(np.float64))
            reference = (getattr(np, function)(*wide, mode),
                         getattr(np, function)(np.abs(wide[0]), np.abs(wide[1]), mode), taps)
            check_convolution(got, expected, reference, f"{function} {taps} taps {mode!r}")


def test_convolve_1d_non_finite_taps_sum_overlaps_only():
    a = np.arange(1.0, 12.0)
    v = np.array([np.inf, 1.0, 2.0])
    x = chunked(a, ((1, 5, 2, 3),))
    for mode in ("full", "same", "valid"):
        for function in ("convolve", "correlate"):
            got = getattr(gd, function)(x, v, mode).compute()
            np.testing.assert_array_equal(got, getattr(np, function)(a, v, mode))


@pytest.mark.parametrize("function", ["convolve2d", "correlate2d"])
@pytest.mark.parametrize("boundary", ["fill", "wrap", "symm"])
@pytest.mark.parametrize("dtype", ["int16", "uint8", "int64", "float32", "float64"])
def test_convolve_correlate_2d(function, boundary, dtype, device, rng):
    signal = pytest.importorskip("scipy.signal")
    a = make_data(rng, dtype, (13, 9))
    x = chunked(a, UNEVEN)
    for shape in ((1, 1), (3, 3), (2, 5), (4, 2), (13, 9), (20, 3)):
        mask = make_data(rng, dtype, shape)
        for mode in ("full", "same", "valid"):
            try:
                expected = getattr(signal, function)(a, mask, mode, boundary, fillvalue=3)
            except ValueError:  # 'valid' with a mask larger in one dimension only
                with pytest.raises(ValueError):
                    getattr(gd, function)(x, mask, mode, boundary, fillvalue=3)
                continue
            got = getattr(gd, function)(x, mask, mode, boundary, fillvalue=3, device=device).compute()
            wide = (a.astype(np.float64), mask.astype(np.float64))
            reference = (getattr(signal, function)(*wide, mode, boundary, fillvalue=3),
                         getattr(signal, function)(np.abs(wide[0]), np.abs(wide[1]), mode, boundary, fillvalue=3),
                         mask.size)
            check_convolution(got, expected, reference, f"{function} {shape} {mode} {boundary}")


@pytest.mark.parametrize("boundary", ["fill", "wrap", "symm"])
def test_masks_reaching_past_the_image_more_than_once(boundary, rng):
    signal = pytest.importorskip("scipy.signal")
    a = make_data(rng, "int32", (5, 4))
    mask = make_data(rng, "int32", (17, 11))   # wrap and symm read the image three times over
    x = chunked(a, ((1, 4), (3, 1)))
    for function in ("convolve2d", "correlate2d"):
        for mode in ("full", "same"):
            got = getattr(gd, function)(x, mask, mode, boundary).compute()
            assert_exact(got, getattr(signal, function)(a, mask, mode, boundary), f"{function} {mode}")


def test_convolutions_on_each_scheduler(compute, rng):
    signal = pytest.importorskip("scipy.signal")
    a = make_data(rng, "int32", (30, 20))
    mask = make_data(rng, "int32", (4, 3))
    x = chunked(a, ((1, 2, 27), (5, 15)))
    for boundary in ("fill", "wrap", "symm"):
        got = compute(gd.correlate2d(x, mask, "same", boundary))
        assert_exact(got, signal.correlate2d(a, mask, "same", boundary), boundary)
    got = compute(gd.convolve(chunked(a[0], 7), mask[0], "full"))
    assert_exact(got, np.convolve(a[0], mask[0], "full"), "convolve")


def test_output_chunks_line_up_with_the_input():
    x = chunked(np.arange(20.0), 5)
    assert gd.convolve(x, np.ones(3), "full").chunks == ((5, 5, 5, 7),)
    assert gd.convolve(x, np.ones(3), "same").chunks == ((5, 5, 5, 5),)
    assert gd.convolve(x, np.ones(7), "valid").chunks == ((5, 5, 4, 0),)


def test_mask_given_on_the_gpu_as_cupy_or_device_array(device, rng):
    if device == "cpu":
        pytest.skip("needs a GPU")
    a = make_data(rng, "float64", 50)
    v = gpuprims.to_device(make_data(rng, "float64", 4))
    got = gd.convolve(chunked(a, 7), v, "same").compute()
    np.testing.assert_allclose(got, np.convolve(a, v.get(), "same"))


# ---------------------------------------------------------------------------------------------
# composition, laziness, schedulers
# ---------------------------------------------------------------------------------------------

def test_composes_with_dask_array_operations(compute, rng):
    a = make_data(rng, "float64", (40, 30))
    x = (chunked(a, (7, 11)) * 2 + 1)[::2, 3:]     # ordinary operations before
    before = (a * 2 + 1)[::2, 3:]
    y = gd.prefix_sum(x, axis=1)
    z = gd.sum(gd.transpose(y) - 1, axis=0, keepdims=True) / 3   # and after
    expected = np.sum(np.cumsum(before, axis=1).T - 1, axis=0, keepdims=True) / 3
    got = compute(z)
    np.testing.assert_allclose(got, expected, rtol=1e-12)
    assert isinstance(y, da.Array) and isinstance(z, da.Array)  # nothing computed until asked


def test_graph_is_lazy_and_deterministic():
    sizes = []
    x = chunked(np.arange(10.0), 3).map_blocks(lambda block: sizes.append(block.size) or block, meta=np.empty(0))
    y = gd.sum(x)
    assert sizes == []
    assert y.compute() == 45 and sorted(sizes) == [1, 3, 3, 3]
    assert gd.sum(x).name == y.name


def test_import_gpuprims_does_not_import_dask(tmp_path):
    code = "import sys, gpuprims; gpuprims.sum([1]); print('dask' in sys.modules)"
    assert run_python(code, cwd=tmp_path).strip() == "False"


# ---------------------------------------------------------------------------------------------
# bad input
# ---------------------------------------------------------------------------------------------

def test_numpy_input_names_the_single_array_function():
    with pytest.raises(TypeError, match=r"gpuprims\.sum"):
        gd.sum(np.ones(3))
    with pytest.raises(TypeError, match=r"gpuprims\.prefix_sum"):
        gd.prefix_sum([1, 2])
    with pytest.raises(TypeError, match=r"gpuprims\.convolve2d"):
        gd.convolve2d(np.ones((3, 3)), np.ones((2, 2)))


def test_mask_as_a_dask_array_is_refused():
    x = chunked(np.ones(10), 3)
    with pytest.raises(TypeError, match="concrete"):
        gd.convolve(x, chunked(np.ones(3), 2))
    with pytest.raises(TypeError, match="concrete"):
        gd.correlate2d(chunked(np.ones((4, 4)), 2), chunked(np.ones((2, 2)), 1))


@pytest.mark.parametrize("func", ["sum", "mean", "min", "prefix_sum", "transpose"])
def test_unsupported_dtypes(func):
    for dtype in ("complex64", "U3", "datetime64[s]", "object"):
        x = da.from_array(np.zeros(4, dtype=dtype), chunks=2)
        with pytest.raises(TypeError, match=f"gpuprims.dask.{func}"):
            getattr(gd, func)(x)
    with pytest.raises(TypeError):
        gd.convolve(chunked(np.ones(4), 2), np.ones(2, np.complex128))


def test_bad_arguments_raise_numpys_errors_before_computing():
    x = chunked(np.ones((4, 5)), 2)
    with pytest.raises(np.exceptions.AxisError):
        gd.sum(x, axis=2)
    with pytest.raises(np.exceptions.AxisError):
        gd.prefix_sum(x, axis=-3)
    with pytest.raises(TypeError):
        gd.sum(x, dtype=np.complex64)
    with pytest.raises(ValueError):
        gd.convolve(x, np.ones(2))          # not 1-D
    with pytest.raises(ValueError):
        gd.convolve(chunked(np.ones(0), 1), np.ones(2))   # empty
    with pytest.raises(ValueError):
        gd.convolve2d(x, np.ones((2, 2)), "middle")
    with pytest.raises(ValueError):
        gd.convolve2d(x, np.ones((2, 2)), boundary="reflect")
    with pytest.raises(ValueError):
        gd.correlate(chunked(np.ones(4), 2), np.ones(2), mode=5)


def test_unknown_and_mixed_chunk_types():
    masked = da.ma.masked_array(chunked(np.ones(4), 2))
    with pytest.raises(TypeError, match="not supported"):
        gd.sum(masked)
    # the meta says NumPy, a chunk is something else
    lying = chunked(np.ones(4), 2).map_blocks(np.ma.masked_array, meta=np.empty((0,)))
    with pytest.raises(TypeError, match="meta says NumPy"):
        gd.sum(lying).compute()


def test_unknown_chunk_sizes_for_convolutions():
    x = chunked(np.arange(10.0), 3)
    y = x[x > 2]
    with pytest.raises(ValueError, match="compute_chunk_sizes"):
        gd.convolve(y, np.ones(2))
    assert gd.sum(y).compute() == 42 and gd.mean(y).compute() == 6.0


# ---------------------------------------------------------------------------------------------
# CuPy chunks on the GPU
# ---------------------------------------------------------------------------------------------

@pytest.fixture
def cupy():
    cupy = pytest.importorskip("cupy")
    if not gpuprims.cuda_available():
        pytest.skip("CUDA not available")
    return cupy


def test_cupy_chunks_in_cupy_chunks_out_no_host_copies(cupy, rng, monkeypatch):
    from gpuprims import _device_array
    a = make_data(rng, "float32", (300, 40))
    x = chunked(a, ((1, 99, 200), (17, 23))).map_blocks(cupy.asarray, meta=cupy.empty((0, 0), np.float32))
    core = _device_array._core
    memcpy, host_copies = core.memcpy, []

    def on_host(ptr):
        try:
            core.pointer_device(ptr)
        except ValueError:
            return True
        return False

    def counting(index, dst, src, nbytes, *rest):
        if on_host(dst) or on_host(src):
            host_copies.append(nbytes)
        return memcpy(index, dst, src, nbytes, *rest)

    monkeypatch.setattr(core, "memcpy", counting)
    graphs = {"sum": gd.sum(x, axis=0), "mean": gd.mean(x), "max": gd.max(x, axis=1, keepdims=True),
              "prefix_sum": gd.prefix_sum(x, axis=0, exclusive=True), "transpose": gd.transpose(x),
              "correlate2d": gd.correlate2d(x, np.ones((3, 4), np.float32), "same", "symm")}
    results = {}
    for name, graph in graphs.items():
        assert isinstance(graph._meta, cupy.ndarray), name
        blocks = dask.compute(*graph.to_delayed().ravel(), scheduler="threads")
        assert all(isinstance(block, cupy.ndarray) for block in blocks), name
        results[name] = graph.compute(scheduler="threads")
    # the floating-point check of device-resident sums and scans reads back one total (a scalar)
    assert all(nbytes <= 8 for nbytes in host_copies), \
        f"a host round-trip: gpuprims copied data between the host and the device ({host_copies} bytes)"
    monkeypatch.undo()
    check_reduce("sum", a, results["sum"].get(), axis=0)
    check_reduce("mean", a, results["mean"].get()[()])  # CuPy's full reductions are 0-d arrays
    check_reduce("max", a, results["max"].get(), axis=1, keepdims=True)
    check_scan(a, results["prefix_sum"].get(), axis=0, exclusive=True)
    assert_exact(results["transpose"].get(), a.T, "transpose")
    signal = pytest.importorskip("scipy.signal")
    np.testing.assert_allclose(results["correlate2d"].get(),
                               signal.correlate2d(a, np.ones((3, 4), np.float32), "same", "symm"), rtol=1e-4, atol=1e-4)
    lying = chunked(a, 100).map_blocks(lambda block: block, meta=cupy.empty((0, 0), np.float32))
    with pytest.raises(TypeError, match="meta says GPU"):
        gd.sum(lying).compute()


@pytest.fixture(scope="module")
def cuda_cluster():
    """A dask_cuda.LocalCUDACluster of every GPU, one worker process per GPU (where dask_cuda is
    installed and CUDA usable)."""
    dask_cuda = pytest.importorskip("dask_cuda")
    distributed = pytest.importorskip("distributed")
    if not gpuprims.cuda_available():
        pytest.skip("CUDA not available")
    with dask_cuda.LocalCUDACluster(threads_per_worker=2, dashboard_address=":0") as cluster, \
            distributed.Client(cluster, set_as_default=False) as c:
        yield c


def test_cupy_chunks_on_a_cuda_cluster_of_every_gpu(cupy, cuda_cluster, rng):
    generated = da.random.default_rng(7).random((1000, 700), dtype=np.float32, chunks=(100, 70)).persist()
    a = cuda_cluster.compute(generated).result()  # made by the workers, as a cluster's data is
    x = generated.map_blocks(cupy.asarray, meta=cupy.empty((0, 0), np.float32)).persist()
    gpus = len(cuda_cluster.scheduler_info()["workers"])

    def pci_address(block):  # defined here: the workers cannot import this module, a closure travels
        props = cupy.cuda.runtime.getDeviceProperties(block.device.id)
        return np.full((1, 1), (props["pciDomainID"] << 16) | (props["pciBusID"] << 8) | props["pciDeviceID"])

    where = x.map_blocks(pci_address, chunks=((1,) * 10, (1,) * 10), dtype=np.int64, meta=np.empty((0, 0), np.int64))
    assert len(np.unique(cuda_cluster.compute(where).result())) == gpus, "the chunks did not reach every GPU"
    signal = pytest.importorskip("scipy.signal")
    mask = rng.random((5, 3), dtype=np.float32)
    taps = rng.random(7)
    line_generated = da.random.default_rng(8).standard_normal(100_003, chunks=10_000).persist()
    line = cuda_cluster.compute(line_generated).result()
    line_chunks = line_generated.map_blocks(cupy.asarray, meta=cupy.empty((0,), np.float64))
    graphs = {"sum": gd.sum(x, axis=0), "mean": gd.mean(x), "max": gd.max(x, axis=1, keepdims=True),
              "prefix_sum": gd.prefix_sum(x, axis=0, exclusive=True), "cumsum": gd.cumsum(x),
              "transpose": gd.transpose(x), "convolve2d": gd.convolve2d(x, mask, "same", "symm"),
              "correlate": gd.correlate(line_chunks, taps, "full")}
    results = dict(zip(graphs, cuda_cluster.gather(cuda_cluster.compute(list(graphs.values())))))
    assert all(isinstance(result, cupy.ndarray) for result in results.values())
    check_reduce("sum", a, results["sum"].get(), axis=0)
    check_reduce("mean", a, results["mean"].get()[()])
    check_reduce("max", a, results["max"].get(), axis=1, keepdims=True)
    check_scan(a, results["prefix_sum"].get(), axis=0, exclusive=True)
    check_scan(a, results["cumsum"].get())
    assert_exact(results["transpose"].get(), a.T, "transpose")
    np.testing.assert_allclose(results["convolve2d"].get(), signal.convolve2d(a, mask, "same", "symm"),
                               rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(results["correlate"].get(), np.correlate(line, taps, "full"), rtol=1e-12, atol=1e-9)
