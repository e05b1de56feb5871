"""The CPU backend's own properties (issue 14): results that do not depend on the thread count or on
the instruction set, odd sizes around the vector and piece widths, misaligned and strided inputs,
NaN in every lane position, float16 conversions, and the thread settings (float32 sums against
NumPy's accuracy: test_reduce.py).  Every test runs on device="cpu" and stays cheap (the suite's CI
runs on 2 cores)."""
import os

import numpy as np
import pytest

import gpuprims
from gp_testutils import check_reduce, check_scan, run_python

CPU = "cpu"
REDUCTIONS = ["sum", "prod", "min", "max", "mean"]
DTYPES = ["bool", "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64", "float16", "float32",
          "float64"]


def isas():
    """The instruction sets this CPU runs (the baseline always)."""
    best = gpuprims._core.cpu_info()["isa"]
    order = ["baseline", "avx2", "avx512"]
    return order[:order.index(best) + 1]


@pytest.fixture
def threads():
    """Restores the thread count a test changes."""
    before = gpuprims.get_num_threads()
    yield
    gpuprims.set_num_threads(before)


@pytest.fixture
def isa():
    """Restores the instruction set a test changes."""
    before = gpuprims._core.cpu_info()["isa"]
    yield
    gpuprims._core._set_cpu_isa(before)


def data(rng, dtype, shape):
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return rng.random(shape) < 0.5
    if dtype.kind == "f":
        return rng.standard_normal(shape).astype(dtype)
    info = np.iinfo(dtype)
    return rng.integers(info.min, info.max, size=shape, dtype=dtype, endpoint=True)


def every_call(rng, large):
    """(name, function) pairs covering every primitive: reductions flat and along both axes of a
    2-D array, scans, 1-D and 2-D correlation, transposes.  `large` arrays are big enough to be
    cut into several pieces and shared between threads."""
    n = 3 * 2**16 + 5 if large else 1000
    side = 611 if large else 33
    calls = []
    for dtype in ["int32", "float16", "float32", "float64", "uint8"]:
        flat, square = data(rng, dtype, n), data(rng, dtype, (side, side + 2))
        for op in REDUCTIONS:
            for a, axis in [(flat, None), (square, 0), (square, 1)]:
                calls.append((f"{op} {dtype} axis={axis}",
                              lambda op=op, a=a, axis=axis: getattr(gpuprims, op)(a, axis=axis, device=CPU)))
        for a, axis in [(flat, None), (square, 0), (square, 1)]:
            calls.append((f"cumsum {dtype} axis={axis}", lambda a=a, axis=axis: gpuprims.cumsum(a, axis, device=CPU)))
            calls.append((f"exclusive {dtype} axis={axis}",
                          lambda a=a, axis=axis: gpuprims.prefix_sum(a, axis, exclusive=True, device=CPU)))
        calls.append((f"transpose {dtype}", lambda a=square: gpuprims.transpose(a, device=CPU)))
    if large:  # rows of several pieces side by side, and long narrow columns
        for dtype in ["float32", "int64", "float16"]:
            wide, tall, taller = data(rng, dtype, (3, 5 * 16384 + 9)), data(rng, dtype, (40000, 3)), \
                data(rng, dtype, (9000, 11))
            for op in REDUCTIONS:
                calls.append((f"{op} {dtype} wide", lambda op=op, a=wide: getattr(gpuprims, op)(a, axis=1, device=CPU)))
                calls.append((f"{op} {dtype} tall", lambda op=op, a=tall: getattr(gpuprims, op)(a, axis=0, device=CPU)))
            calls.append((f"cumsum {dtype} wide", lambda a=wide: gpuprims.cumsum(a, axis=1, device=CPU)))
            calls.append((f"cumsum {dtype} tall", lambda a=tall: gpuprims.cumsum(a, axis=0, device=CPU)))
            calls.append((f"exclusive {dtype} tall, 11 columns",
                          lambda a=taller: gpuprims.prefix_sum(a, axis=0, exclusive=True, device=CPU)))
    for dtype in ["float32", "float64", "int16", "float16", "bool"]:
        signal, taps = data(rng, dtype, n), data(rng, dtype, 7)
        calls.append((f"convolve {dtype}", lambda s=signal, t=taps: gpuprims.convolve(s, t, "full", device=CPU)))
    for dtype in ["float32", "float64", "int16", "uint32"]:  # SciPy's dtypes
        image, mask = data(rng, dtype, (side, side + 3)), data(rng, dtype, (5, 4))
        calls.append((f"convolve2d {dtype}",
                      lambda i=image, m=mask: gpuprims.convolve2d(i, m, "same", "symm", device=CPU)))
    return calls


def as_bytes(result):
    return np.asarray(result).tobytes()


@pytest.mark.parametrize("large", [False, True], ids=["small", "large"])
def test_results_do_not_depend_on_the_thread_count(rng, threads, large):
    calls = every_call(rng, large)
    default = gpuprims.get_num_threads()
    reference = {}
    for count in [1, 2, default, 3, 7]:
        gpuprims.set_num_threads(count)
        for name, call in calls:
            got = as_bytes(call())
            if name in reference:
                assert got == reference[name], f"{name}: {count} threads differ from 1"
            else:
                reference[name] = got


def test_baseline_and_vector_paths_agree(rng, isa):
    if len(isas()) == 1:
        pytest.skip("this CPU runs the baseline loops only")
    calls = every_call(rng, large=False) + every_call(rng, large=True)[::3]
    results = {}
    for name in isas():
        gpuprims._core._set_cpu_isa(name)
        assert gpuprims._core.cpu_info()["isa"] == name
        results[name] = [as_bytes(call()) for _, call in calls]
    for name in isas()[1:]:
        for (what, _), base, vector in zip(calls, results["baseline"], results[name]):
            assert base == vector, f"{what}: {name} differs from the baseline"


def test_isa_environment_variable_forces_the_baseline(tmp_path):
    code = ("import numpy as np, gpuprims; a = np.arange(1000, dtype=np.float32);"
            "print(gpuprims._core.cpu_info()['isa'], gpuprims.sum(a, device='cpu'))")
    env = dict(os.environ, GPUPRIMS_CPU_ISA="baseline")
    assert run_python(code, env, tmp_path).split() == ["baseline", "499500.0"]


def test_set_cpu_isa_refuses_unknown_names(isa):
    with pytest.raises(ValueError):
        gpuprims._core._set_cpu_isa("sse9")


ODD_SIZES = list(range(1, 66)) + [2**k + d for k in range(6, 17) for d in (-1, 1)]


@pytest.mark.parametrize("dtype", DTYPES)
def test_odd_sizes(rng, dtype):
    """Sizes 1 to 65 and 2^k +- 1 (around vector widths, unrolled steps, blocks and pieces)."""
    for n in ODD_SIZES:
        a = data(rng, dtype, n)
        for op in REDUCTIONS:
            check_reduce(op, a, getattr(gpuprims, op)(a, device=CPU))
        check_scan(a, gpuprims.cumsum(a, device=CPU))
        check_scan(a, gpuprims.prefix_sum(a, exclusive=True, device=CPU), exclusive=True)


@pytest.mark.parametrize("dtype", ["int8", "int32", "float16", "float32", "float64"])
def test_odd_column_widths(rng, dtype):
    """Along axis 0, widths around the column loops' vectors and tiles."""
    for width in [1, 2, 7, 8, 9, 15, 16, 17, 31, 33, 63, 65, 1023, 1025]:
        a = data(rng, dtype, (13, width))
        for op in REDUCTIONS:
            check_reduce(op, a, getattr(gpuprims, op)(a, axis=0, device=CPU), axis=0)
        check_scan(a, gpuprims.cumsum(a, axis=0, device=CPU), axis=0)


def test_misaligned_and_strided_inputs(rng):
    base = data(rng, "float64", 5000)
    raw = np.frombuffer(b"\0" + base.tobytes(), dtype=np.float64, count=4000, offset=1)  # misaligned
    cases = [base[1:], base[3:4003], base[::2], base[::-3], raw, base.reshape(50, 100).T,
             base.astype(np.float32)[1:], base.astype(np.int32)[5:], base.astype(">f4")]
    for a in cases:
        for op in REDUCTIONS:
            check_reduce(op, a, getattr(gpuprims, op)(a, device=CPU))
        check_scan(a, gpuprims.cumsum(a, device=CPU))
        np.testing.assert_array_equal(gpuprims.transpose(a, device=CPU), a.T)


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_nan_in_every_lane_position(dtype):
    """One NaN at each position of a row longer than four accumulators of vectors plus a tail, and
    in each row and column of a 2-D array: min and max are NaN, and so are sums; along an axis only
    the NaN's column is."""
    n = 4 * 64 + 37
    for value in [np.nan, -np.nan]:
        for position in range(n):
            a = np.arange(n, dtype=dtype) % 100
            a[position] = value
            for op in ["min", "max", "sum"]:
                assert np.isnan(getattr(gpuprims, op)(a, device=CPU)), f"{op}, NaN at {position}"
    shape = (19, 70)
    for row in range(shape[0]):
        for col in range(0, shape[1], 3):
            a = np.ones(shape, dtype)
            a[row, col] = np.nan
            for op in ["min", "max"]:
                for axis in (0, 1):
                    got = getattr(gpuprims, op)(a, axis=axis, device=CPU)
                    np.testing.assert_array_equal(np.isnan(got), np.isnan(getattr(np, op)(a, axis=axis)))


def test_min_max_keep_signed_zeros_and_infinities():
    for dtype in ["float16", "float32", "float64"]:
        a = np.array([np.inf, -0.0, 0.0, -np.inf, 5] * 40, dtype=dtype)
        assert gpuprims.min(a, device=CPU) == -np.inf and gpuprims.max(a, device=CPU) == np.inf
        assert not np.signbit(gpuprims.sum(np.full(100, -0.0, dtype), device=CPU))  # NumPy's sums start from +0.0


def test_float16_conversions_are_exact():
    """Every float16 bit pattern through the vector float16 -> float32 loads (a float32 sum of one
    element, and of a row), and float32 -> float16 rounding (a float16 scan of pairs)."""
    everything = np.arange(2**16, dtype=np.uint16).view(np.float16)
    finite = everything[np.isfinite(everything)]
    got = gpuprims.cumsum(everything, dtype=np.float32, device=CPU)
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal(np.isnan(got), np.isnan(np.cumsum(everything, dtype=np.float32)))
    singles = [gpuprims.sum(everything[k:k + 1], dtype=np.float32, device=CPU) for k in range(0, 2**16, 97)]
    np.testing.assert_array_equal(np.array(singles), everything[::97].astype(np.float32))
    rng = np.random.default_rng(16)
    a, b = rng.choice(finite, 20000), rng.choice(finite, 20000)
    pairs = np.stack([a, b], axis=1)
    got = gpuprims.cumsum(pairs, axis=1, device=CPU)[:, 1]
    with np.errstate(over="ignore"):
        expected = (a.astype(np.float32) + b.astype(np.float32)).astype(np.float16)
    np.testing.assert_array_equal(got.view(np.uint16), expected.view(np.uint16))
    got = gpuprims.cumsum(pairs.T.copy(), axis=0, device=CPU)[1]  # the column loop
    np.testing.assert_array_equal(got.view(np.uint16), expected.view(np.uint16))


def test_thread_settings(threads):
    gpuprims.set_num_threads(3)
    assert gpuprims.get_num_threads() == 3
    gpuprims.set_num_threads(np.int64(1))
    assert gpuprims.get_num_threads() == 1
    for bad in [1.0, "2", None, True]:
        with pytest.raises(TypeError):
            gpuprims.set_num_threads(bad)
    for bad in [0, -1, 257]:
        with pytest.raises(ValueError):
            gpuprims.set_num_threads(bad)


def test_thread_defaults_in_a_fresh_process(tmp_path):
    code = "import gpuprims; print(gpuprims.get_num_threads())"
    env = {k: v for k, v in os.environ.items() if k != "GPUPRIMS_NUM_THREADS"}
    assert int(run_python(code, env, tmp_path)) == len(os.sched_getaffinity(0))
    env["GPUPRIMS_NUM_THREADS"] = "3"
    assert int(run_python(code, env, tmp_path)) == 3
