"""The benchmark package (python -m gpuprims.bench): its table of ops, and each mode on tiny inputs
(the benchmark, the routing table, the calibration), cheaply: no measurement takes long."""
import subprocess
import sys
from dataclasses import replace

import numpy as np
import pytest

import gpuprims
from gpuprims.bench import calibrate, cli, cub, ops, peers

PRIMITIVES = {"reduce", "scan", "correlate", "copy"}
# The names GPUPRIMS_COSTS accepts (csrc/planner/costs.c).
SHARED_COSTS = {"h2d_gbps", "d2h_gbps", "pinned_gbps", "stream_fixed_us", "stream_gbps", "fresh_min_bytes"}
PRIMITIVE_COSTS = {"cpu_fixed_us", "cpu_gbps", "cpu_gmacs", "cpu_fresh_gbps", "cuda_fixed_us", "cuda_gmacs",
                   "stream_min_bytes"}
ROUTES = {"cpu", "cuda", "cuda-streamed"}
HOSTS = {peer.name: peer for peer in peers.host_peers()}


@pytest.fixture(autouse=True)
def _default_planner(monkeypatch):
    for setting in ("GPUPRIMS_COSTS", "GPUPRIMS_STREAM_MIN_BYTES"):
        monkeypatch.delenv(setting, raising=False)


@pytest.fixture
def small_transposes(monkeypatch):
    """transpose's fixed cases (up to 2 GiB each) replaced by small ones of the same kinds."""
    cases = (ops.Case((64, 48)), ops.Case((6, 8, 10, 12), (3, 1, 2, 0)), ops.Case((32, 32), dtype="uint8"))
    monkeypatch.setitem(ops.OPS, "transpose", replace(ops.OPS["transpose"], cases=cases))


def test_every_op_has_an_input_maker_byte_counts_and_a_gpuprims_call():
    elements = ops.Elements()
    for name, op in ops.OPS.items():
        assert op.name == name and op.primitive in PRIMITIVES
        assert callable(op.make) and callable(op.out_bytes) and callable(op.gpuprims)
        assert (op.macs is not None) == (op.primitive == "correlate")
        problem = op.make(elements(1000, "float32"))
        assert isinstance(problem.data, np.ndarray) and problem.data.size <= 1000
        in_bytes, out_bytes = op.traffic(problem)
        assert in_bytes == problem.data.nbytes and out_bytes > 0
        assert op.host in HOSTS
        for case in op.cases:  # large: checked without making them (the benchmark test makes small ones)
            assert case.axes is None or sorted(case.axes) == list(range(len(case.shape)))
            assert case.label(np.dtype(case.dtype or "float32"))


@pytest.mark.parametrize("dtype", ["float32", "int32"])
@pytest.mark.parametrize("name", sorted(ops.OPS))
def test_host_callables_agree_with_gpuprims(name, dtype):
    """Each op's NumPy or SciPy callable gives gpuprims' result, and the op's count of the bytes
    it writes is the size of that result."""
    op = ops.OPS[name]
    host = HOSTS[op.host]
    for make in filter(None, (op.make, op.latency_make)):
        problem = make(ops.Elements()(256, dtype))
        expected = np.asarray(host.bind(op, problem)(problem.data))
        np.testing.assert_allclose(op.call(problem, device="cpu"), expected, rtol=1e-5, atol=1e-30)
        assert op.out_bytes(problem) == expected.nbytes


@pytest.mark.skipif(not gpuprims.cuda_available(), reason="CUDA not available")
@pytest.mark.parametrize("name", sorted(ops.OPS))
def test_gpu_peers_agree_with_gpuprims_end_to_end(name):
    """Each op's CuPy and PyTorch callables, end to end (upload, call, download), give gpuprims'
    result: a peer that computes something else, or returns what the download cannot take (a
    named tuple), is caught here rather than in a benchmark run.  8192 elements: longer than
    convolve_long's mask, which cupyx.scipy.ndimage's results need."""
    op = ops.OPS[name]
    gpu = [peer for peer in peers.gpu_peers("cuda:0") if peer.offers(op)]
    if not gpu:
        pytest.skip("no GPU peer importable, or none offers this op")
    for make in filter(None, (op.make, op.latency_make)):
        problem = make(ops.Elements()(8192, "float32"))
        expected = np.asarray(op.call(problem, device="cpu"))
        for peer in gpu:
            got = np.asarray(peer.e2e_call(op, problem)(problem.data))
            assert got.shape == expected.shape, (peer.name, got.shape, expected.shape)
            rtol = 3e-3 if op.primitive == "correlate" else 1e-4  # PyTorch may convolve in TF32
            np.testing.assert_allclose(got, expected, rtol=rtol, atol=1e-6, err_msg=peer.name)


def _cub_peer():
    found = [peer for peer in peers.gpu_peers("cuda:0") if peer.name == "cub"] if gpuprims.cuda_available() else []
    if not found:
        pytest.skip("no CUB peer: it needs CUDA, CuPy and nvcc")
    return found[0]


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "int32"])
def test_cub_peer_scans_and_sums_as_numpy(dtype):
    """The CUB peer's scan and sum give NumPy's results for the dtypes it is built for (a prime
    size, many of CUB's tiles), and refuse the others with TypeError, which skips the benchmark's
    row."""
    peer = _cub_peer()
    a = np.random.default_rng(5).integers(-1000, 1000, 100_003).astype(dtype)
    x = peer.put(a)
    if np.dtype(dtype) not in cub.DTYPES:
        with pytest.raises(TypeError):
            peer.module.inclusive_sum(x)
        return
    expected = np.cumsum(a, dtype=np.int64)  # exact: the sums stay below 2^24
    np.testing.assert_array_equal(peer.get(peer.module.inclusive_sum(x)), expected)
    assert peer.get(peer.module.sum(x)) == expected[-1]
    peer.release()


def test_benchmark_rates_cub_beside_gpuprims(tmp_path):
    """Kernel mode puts CUB's rows beside prefix_sum's and sum's, rated against the same run's
    memcpy."""
    _cub_peer()
    rows = cli.main(["--ops", "prefix_sum,sum", "--sizes", "14", "--repeats", "2", "--no-e2e", "--no-device",
                     "--out", str(tmp_path)])
    rated = {row.op: row for row in rows if row.library == "cub"}
    assert set(rated) == {"prefix_sum", "sum"}
    assert all(row.mode == "kernel" and row.x_memcpy > 0 for row in rated.values())


def test_fit_recovers_constants_and_keeps_them_non_negative():
    bytes_ = np.geomspace(1e3, 1e8, 12)
    us = 5.0 + bytes_ / (4.0 * 1e3)  # 5 us fixed, 4 bytes per ns
    coefficients, errors = calibrate.fit(us, np.column_stack([np.ones_like(us), bytes_]))
    assert coefficients[0] == pytest.approx(5.0) and calibrate.rate(coefficients[1]) == pytest.approx(4.0)
    assert errors.max() < 1e-9
    coefficients, _ = calibrate.fit(us, np.column_stack([np.ones_like(us), bytes_, -bytes_]))
    assert (coefficients >= 0).all()
    assert calibrate.rate(0.0) == 0.0  # the model's "not counted"


def _lines(output, op, library):
    return [line.split() for line in output.splitlines() if line.startswith(op) and f" {library} " in line]


def test_benchmark_prints_rows_with_the_auto_route(capsys, tmp_path, small_transposes):
    rows = cli.main(["--device", "cpu", "--ops", "sum,prefix_sum,transpose,convolve2d", "--sizes", "10",
                     "--repeats", "2", "--out", str(tmp_path)])
    output = capsys.readouterr().out
    for op in ("sum", "prefix_sum", "transpose", "convolve2d"):
        auto = _lines(output, op, "gpuprims-auto")
        assert auto and all(line[-1] in ROUTES for line in auto), output
        assert _lines(output, op, "gpuprims") and _lines(output, op, ops.OPS[op].host)
    assert {row.library for row in rows} >= {"gpuprims", "gpuprims-auto", "numpy", "scipy"}
    assert all(row.route == "cpu" for row in rows if row.library == "gpuprims")
    assert len([row for row in rows if row.op == "transpose" and row.library == "gpuprims"]) == 3
    for row in rows:  # the host memcpy of the same input rates every row
        memcpy = [other for other in rows if other.library == "memcpy" and (other.op, other.n, other.case) ==
                  (row.op, row.n, row.case)]
        assert len(memcpy) == 1 and row.x_memcpy == pytest.approx(row.gbps / memcpy[0].gbps), row
    assert "route" in (tmp_path / "bench.md").read_text()
    assert (tmp_path / "bench.csv").read_text().splitlines()[0].endswith(",route")


def test_module_runs(tmp_path):
    """python -m gpuprims.bench (from outside the source tree: the installed package)."""
    result = subprocess.run([sys.executable, "-m", "gpuprims.bench", "--device", "cpu", "--ops", "sum",
                             "--sizes", "8", "--repeats", "2"], cwd=tmp_path, capture_output=True, text=True,
                            check=True)
    assert _lines(result.stdout, "sum", "gpuprims-auto"), result.stdout


def test_routing_table_and_summary(capsys):
    cases = cli.main(["--routing", "--sizes", "8,10", "--dtypes", "float32", "--budget", "0.001"])
    output = capsys.readouterr().out
    assert [case.op for case in cases[::2]] == list(cli.ROUTING_OPS)
    for case in cases:
        assert case.route in ROUTES and case.auto_ms > 0 and case.cpu_ms > 0 and case.ratio > 0
        assert (case.cuda_ms is not None) == gpuprims.cuda_available()
        assert f"{case.op} (ms)" in output
    assert "auto <= 1.2x the host library" in output and "routing right" in output


def _costs_line(output):
    (line,) = [line for line in output.splitlines() if line.startswith("GPUPRIMS_COSTS=")]
    return line.partition("=")[2]


def _check_costs(setting, monkeypatch):
    for item in setting.split(","):
        name, _, value = item.partition("=")
        primitive, dot, field = name.rpartition(".")
        assert (primitive in PRIMITIVES and field in PRIMITIVE_COSTS) if dot else name in SHARED_COSTS, name
        assert float(value) >= 0
    monkeypatch.setenv("GPUPRIMS_COSTS", setting)
    gpuprims.explain(gpuprims.sum, np.ones(1000, np.float32))  # with a GPU the planner reads it


def test_calibration_prints_costs_the_planner_accepts(capsys, monkeypatch):
    cli.main(["--calibrate", "--device", "cpu", "--sizes", "8,10", "--dtypes", "float32", "--budget", "0.001"])
    output = capsys.readouterr().out
    setting = _costs_line(output)
    assert {item.partition("=")[0] for item in setting.split(",")} == {
        f"{primitive}.{field}" for primitive in PRIMITIVES for field in ("cpu_fixed_us", "cpu_gbps", "cpu_fresh_gbps")
    } | {"correlate.cpu_gmacs"}
    _check_costs(setting, monkeypatch)


@pytest.mark.skipif(not gpuprims.cuda_available(), reason="CUDA not available")
def test_calibration_on_the_gpu(capsys, monkeypatch):
    cli.main(["--calibrate", "--sizes", "8,10", "--dtypes", "float32", "--budget", "0.001"])
    setting = _costs_line(capsys.readouterr().out)
    assert {"h2d_gbps", "pinned_gbps", "stream_gbps", "reduce.cuda_fixed_us"} <= \
           {item.partition("=")[0] for item in setting.split(",")}
    _check_costs(setting, monkeypatch)


def test_dask_rows(capsys, tmp_path):
    pytest.importorskip("dask.array")
    rows = cli.main(["--dask", "--device", "cpu", "--sizes", "14", "--chunk", "11", "--repeats", "1",
                     "--out", str(tmp_path)])
    output = capsys.readouterr().out
    for op in ("sum", "prefix_sum"):
        assert _lines(output, op, "gpuprims") and _lines(output, op, "gpuprims.dask") and _lines(output, op,
                                                                                                  "dask+numpy")
        dask_rows = [row for row in rows if row.op == op and row.library == "gpuprims.dask"]
        assert {row.scheduler for row in dask_rows} == {"threads", "sync"}
        assert all(row.tasks >= 8 and row.x_single > 0 for row in dask_rows)
    assert "x_single" in (tmp_path / "dask.md").read_text()
    with pytest.raises(SystemExit):
        cli.main(["--dask", "--ops", "max"])
