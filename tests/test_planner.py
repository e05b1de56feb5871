"""The planner: where each call runs (gpuprims.explain), device=None routing by the cost model,
GPUPRIMS_COSTS, and results that do not depend on the route."""
import numpy as np
import pytest
import scipy.signal

import gpuprims
from gpuprims import _core
from gp_testutils import check_reduce, check_scan, make_data

cuda = pytest.mark.skipif(not gpuprims.cuda_available(), reason="CUDA not available")
cuda_build = pytest.mark.skipif(not gpuprims.build_info()["cuda"], reason="CPU-only build")

EXPLAIN_KEYS = {"function", "primitive", "route", "device", "in_bytes", "out_bytes", "input_pinned",
                "result_pinned", "result_touched", "cpu_us", "cuda_us"}


@pytest.fixture(autouse=True)
def _default_costs(monkeypatch):
    monkeypatch.delenv("GPUPRIMS_COSTS", raising=False)
    monkeypatch.delenv("GPUPRIMS_STREAM_MIN_BYTES", raising=False)
    monkeypatch.delenv("GPUPRIMS_MAX_DEVICE_BYTES", raising=False)


def _calls(a):
    """(function, args, kwargs) of every public computation on a 1-D float32 array `a`."""
    square = a[: (a.size // 64) * 64].reshape(64, -1)
    return [(gpuprims.sum, (a,), {}), (gpuprims.prod, (a,), {}), (gpuprims.min, (a,), {}),
            (gpuprims.max, (a,), {}), (gpuprims.mean, (a,), {}), (gpuprims.prefix_sum, (a,), {}),
            (gpuprims.cumsum, (a,), {}), (gpuprims.sum, (square,), {"axis": 0}),
            (gpuprims.convolve, (a, np.ones(7, np.float32)), {"mode": "same"}),
            (gpuprims.correlate, (a, np.ones(7, np.float32)), {}),
            (gpuprims.convolve2d, (square, np.ones((5, 5), np.float32)), {"mode": "same"}),
            (gpuprims.correlate2d, (square, np.ones((5, 5), np.float32)), {}),
            (gpuprims.transpose, (square,), {})]


def test_explain_describes_without_running(device, rng):
    a = make_data(rng, "float32", 4096)
    for function, args, kwargs in _calls(a):
        plan = gpuprims.explain(function, *args, device=device, **kwargs)
        assert set(plan) == EXPLAIN_KEYS, function.__name__
        assert plan["function"] == function.__name__
        assert plan["route"] == ("cpu" if device == "cpu" else "cuda"), plan
        assert plan["device"] == ("cpu" if device == "cpu" else "cuda:0")
        assert plan["in_bytes"] >= a.nbytes // 64 and plan["out_bytes"] > 0
        assert plan["cpu_us"] is None and plan["cuda_us"] is None  # an explicit device: no estimate
        primitive = {"prefix_sum": "scan", "cumsum": "scan", "transpose": "copy"}.get(
            function.__name__, "correlate" if "corr" in function.__name__ or "conv" in function.__name__ else "reduce")
        assert plan["primitive"] == primitive, plan
    assert gpuprims.explain(gpuprims.sum, a, device=device)["in_bytes"] == a.nbytes
    assert gpuprims.explain(gpuprims.prefix_sum, a, device=device)["out_bytes"] == a.nbytes


def test_explain_of_empty_input_is_numpy(device):
    for function in (gpuprims.sum, gpuprims.prefix_sum, gpuprims.mean):
        plan = gpuprims.explain(function, np.zeros(0, np.float32), device=device)
        assert plan["route"] == "numpy" and plan["primitive"] is None


def test_explain_checks_arguments_like_the_call(device):
    a = np.arange(12.0).reshape(3, 4)
    with pytest.raises(np.exceptions.AxisError):
        gpuprims.explain(gpuprims.sum, a, axis=2, device=device)
    with pytest.raises(TypeError):
        gpuprims.explain(gpuprims.sum, a.astype(complex), device=device)
    with pytest.raises(TypeError, match="not a gpuprims computation"):
        gpuprims.explain(lambda x, device=None: x, a, device=device)


def test_explain_leaves_later_calls_alone(device, rng):
    """A dry run in one call does not leak into the next (or into another thread's calls)."""
    a = make_data(rng, "float32", 1000)
    gpuprims.explain(gpuprims.sum, a, device=device)
    check_reduce("sum", a, gpuprims.sum(a, device=device))


def test_auto_without_gpu_runs_on_the_cpu(rng):
    if gpuprims.cuda_available():
        pytest.skip("a GPU is usable here")
    for n in (64, 1 << 20):
        a = make_data(rng, "float32", n)
        plan = gpuprims.explain(gpuprims.sum, a)
        assert plan["route"] == "cpu" and plan["cpu_us"] is None
        check_reduce("sum", a, gpuprims.sum(a))


@pytest.mark.parametrize("n", [1, 63, 1 << 10, 1 << 16, (1 << 20) + 3, 1 << 22])
def test_auto_results_match_numpy_at_every_size(rng, n):
    """device=None: whatever route a size takes, the result is NumPy's."""
    a = make_data(rng, "float32", n)
    for name in ("sum", "min", "max", "mean"):
        check_reduce(name, a, getattr(gpuprims, name)(a))
    check_scan(a, gpuprims.prefix_sum(a))
    taps = np.array([1, -2, 3, 0.5, 2, -1, 1], np.float32)
    assert np.allclose(gpuprims.convolve(a, taps, "same"), np.convolve(a.astype(np.float64), taps, "same"),
                       rtol=1e-4, atol=1e-3)
    if n >= 64:
        image = a[: (n // 64) * 64].reshape(64, -1)
        assert np.array_equal(gpuprims.transpose(image), image.T)
        mask = np.arange(25, dtype=np.float32).reshape(5, 5) / 25
        assert np.allclose(gpuprims.convolve2d(image, mask, "same"),
                           scipy.signal.convolve2d(image.astype(np.float64), mask, "same"), rtol=1e-4, atol=1e-3)


@cuda
def test_auto_routes_by_the_measured_costs():
    """With the H100 machine's constants: small calls run on the CPU; large scans and transposes,
    whose results come in fresh pages, on the GPU; reductions on the CPU at every size (16 cores read
    host memory faster than PCIe brings it to the GPU)."""
    small, large = np.ones(64, np.float32), np.ones(1 << 24, np.float32)
    for function in (gpuprims.sum, gpuprims.max, gpuprims.prefix_sum):
        plan = gpuprims.explain(function, small)
        assert plan["route"] == "cpu", plan
        assert 0 < plan["cpu_us"] < plan["cuda_us"]
    for function in (gpuprims.sum, gpuprims.max):
        plan = gpuprims.explain(function, large)
        assert plan["route"] == "cpu", plan
        assert 0 < plan["cpu_us"] < plan["cuda_us"]
    plan = gpuprims.explain(gpuprims.prefix_sum, large)
    assert plan["route"] == "cuda-streamed", plan
    assert 0 < plan["cuda_us"] < plan["cpu_us"]
    assert gpuprims.explain(gpuprims.transpose, large.reshape(4096, 4096))["route"].startswith("cuda")
    assert gpuprims.explain(gpuprims.transpose, small.reshape(8, 8))["route"] == "cpu"


@cuda
def test_large_cpu_results_pay_their_fresh_pages(monkeypatch):
    """Results from fresh_min_bytes (32 MiB) on cost out_bytes / cpu_fresh_gbps more on the CPU."""
    def cpu_us(n, costs):
        monkeypatch.setenv("GPUPRIMS_COSTS", costs)
        return gpuprims.explain(gpuprims.prefix_sum, np.ones(n, np.float32))["cpu_us"]
    for n, fresh in ((1 << 23, True), ((1 << 23) - 1, False)):  # 32 MiB of float32 results, and less
        extra = cpu_us(n, "scan.cpu_fresh_gbps=2") - cpu_us(n, "scan.cpu_fresh_gbps=0")
        assert extra == pytest.approx(4 * n / 2e3 if fresh else 0.0, abs=1e-6)
    assert cpu_us(1000, "fresh_min_bytes=0,scan.cpu_fresh_gbps=2") > cpu_us(1000, "scan.cpu_fresh_gbps=2") + 1.9


@pytest.mark.parametrize("threads", [1, 2, 3])
def test_large_new_results_are_touched_first_and_written_whole(rng, threads):
    """A new host result of fresh_min_bytes (32 MiB) and more has its pages faulted in by every pool
    thread before the backend writes it (result_touched); smaller results are written as they are.
    The touch writes zeros, which these positive results never hold, so an element the backend then
    missed would show."""
    n = (1 << 23) + 5  # float32: just over 32 MiB, not a whole number of pages or huge pages
    a = rng.uniform(0.5, 1.0, n).astype(np.float32)
    image = rng.uniform(0.5, 1.0, (4097, 2051)).astype(np.float32)  # 32.1 MiB
    taps = np.array([0.25, 0.5, 0.25], np.float32)
    calls = [(gpuprims.prefix_sum, (a,)), (gpuprims.transpose, (image,)), (gpuprims.convolve, (a, taps))]
    default = gpuprims.get_num_threads()
    try:
        gpuprims.set_num_threads(threads)
        for function, args in calls:
            assert gpuprims.explain(function, *args, device="cpu")["result_touched"], function.__name__
        assert not gpuprims.explain(gpuprims.prefix_sum, a[: 1 << 22], device="cpu")["result_touched"]
        assert not gpuprims.explain(gpuprims.sum, a, device="cpu")["result_touched"]
        got = gpuprims.prefix_sum(a, device="cpu")
        assert got.min() > 0
        check_scan(a, got)
        assert np.array_equal(gpuprims.transpose(image, device="cpu"), image.T)
        convolved = gpuprims.convolve(a, taps, device="cpu")
        assert convolved.min() > 0
        np.testing.assert_allclose(convolved, np.convolve(a, taps), rtol=1e-5)
    finally:
        gpuprims.set_num_threads(default)


@cuda
def test_explicit_device_is_obeyed():
    small, large = np.ones(64, np.float32), np.ones(1 << 24, np.float32)
    assert gpuprims.explain(gpuprims.sum, small, device="cuda")["route"] == "cuda"
    assert gpuprims.explain(gpuprims.sum, large, device="cpu")["route"] == "cpu"
    assert gpuprims.explain(gpuprims.sum, large, device="cuda")["route"] == "cuda-streamed"
    assert gpuprims.sum(small, device="cuda") == 64


@cuda
def test_device_resident_input_stays_on_its_gpu():
    d = gpuprims.to_device(np.ones(64, np.float32))
    plan = gpuprims.explain(gpuprims.sum, d)
    assert plan["route"] == "cuda-resident" and plan["device"] == "cuda:0" and plan["cpu_us"] is None
    assert isinstance(gpuprims.sum(d), gpuprims.DeviceArray)


@cuda
def test_cost_overrides_move_the_crossover(monkeypatch):
    """GPUPRIMS_COSTS overrides the measured constants: a fast enough CPU takes large arrays, a free
    GPU takes small ones; the environment is read on every call."""
    small, large = np.ones(1024, np.float32), np.ones(1 << 24, np.float32)
    assert gpuprims.explain(gpuprims.prefix_sum, large)["route"].startswith("cuda")
    monkeypatch.setenv("GPUPRIMS_COSTS", "scan.cpu_gbps=1e9,scan.cpu_fixed_us=0,scan.cpu_fresh_gbps=0")
    assert gpuprims.explain(gpuprims.prefix_sum, large)["route"] == "cpu"
    assert gpuprims.explain(gpuprims.transpose, large.reshape(4096, 4096))["route"].startswith("cuda")  # copies keep theirs
    monkeypatch.setenv("GPUPRIMS_COSTS", "reduce.cpu_fixed_us=1e6,reduce.cuda_fixed_us=0,h2d_gbps=1e9")
    assert gpuprims.explain(gpuprims.sum, small)["route"] == "cuda"
    assert gpuprims.sum(small) == 1024
    monkeypatch.delenv("GPUPRIMS_COSTS")
    assert gpuprims.explain(gpuprims.sum, small)["route"] == "cpu"


@cuda_build
@pytest.mark.parametrize("setting", ["bogus=1", "reduce.bogus=1", "h2d_gbps", "h2d_gbps=fast", "h2d_gbps=-1",
                                     "nothing.cpu_gbps=1", "=1"])
def test_bad_cost_override_is_a_value_error(monkeypatch, setting):
    """Planning a GPU call reads GPUPRIMS_COSTS; what it cannot read is a ValueError naming it.
    (Planning for GPU 0 without running needs no GPU: the describe mode of the core's entry.)"""
    monkeypatch.setenv("GPUPRIMS_COSTS", setting)
    a = np.ones(100, np.float32)
    with pytest.raises(ValueError, match="GPUPRIMS_COSTS"):
        _core.reduce(a, (), 0, -1, 0, a.dtype.num, 1, 100, 1)
    monkeypatch.setenv("GPUPRIMS_COSTS", "h2d_gbps=20, reduce.cpu_gbps=3.5,,scan.stream_min_bytes=0")
    assert _core.reduce(a, (), 0, -1, 0, a.dtype.num, 1, 100, 1)["route"] == "cuda"
    assert _core.scan(a, (), 0, -1, a.dtype.num, 1, 100, 1, False)["route"] == "cuda-streamed"


@cuda_build
def test_planned_routes_for_gpu_zero_without_running(monkeypatch):
    """The planner's GPU routes by size and device cap (describe mode: no GPU needed)."""
    def route(n, primitive="reduce"):
        a = np.ones(n, np.float32)
        if primitive == "reduce":
            return _core.reduce(a, (), 0, -1, 0, a.dtype.num, 1, n, 1)
        return _core.scan(a, (), 0, -1, a.dtype.num, 1, n, 1, False)
    assert route(1 << 20)["route"] == "cuda"
    assert route((32 << 20) // 4)["route"] == "cuda-streamed"  # reductions stream from 32 MiB
    assert route((2 << 20) // 4, "scan")["route"] == "cuda-streamed"  # scans from 2 MiB
    assert route((2 << 20) // 4 - 1, "scan")["route"] == "cuda"
    monkeypatch.setenv("GPUPRIMS_STREAM_MIN_BYTES", "0")
    assert route(100)["route"] == "cuda-streamed"
    monkeypatch.setenv("GPUPRIMS_STREAM_MIN_BYTES", str(1 << 40))
    monkeypatch.setenv("GPUPRIMS_MAX_DEVICE_BYTES", str(1 << 16))
    assert route(1 << 14)["route"] == "cuda-streamed"  # the short path would not fit the cap
    assert route(1000)["route"] == "cuda"
    plan = route(1 << 20)
    assert plan["result_pinned"] is False  # a reduction's result is too small for a pinned block
    assert route((4 << 20) // 4, "scan")["result_pinned"] is True  # 4 MiB streamed scan result
