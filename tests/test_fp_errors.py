"""Floating-point errors of sums, products and moments reported as NumPy reports them: overflow and invalid
warnings with NumPy's texts, every numpy.errstate mode, thread-local like NumPy's, and silence
where NumPy is silent (inf or NaN carried from the input, finite results, integers, min/max)."""
import threading
import warnings

import numpy as np
import pytest

import gpuprims
from gpuprims import _scans

FLOATS = ["float16", "float32", "float64"]
REDUCTIONS = ["sum", "prod", "mean", "nansum", "nanprod"]
SCANS = ["cumsum", "cumprod", "nancumsum", "nancumprod"]


def _numpy(name):
    return getattr(np, name)


def _messages(function, *args, **kwargs):
    """(result, the messages of the RuntimeWarnings the call gave)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = function(*args, **kwargs)
    return result, [str(w.message) for w in caught if issubclass(w.category, RuntimeWarning)]


def _cases(dtype, product):
    """Inputs that overflow, carry an inf, make a NaN from infinities, and carry a NaN."""
    big = np.finfo(dtype).max
    big = np.sqrt(big) * 2 if product else big
    inf, nan = np.inf, np.nan
    return {
        "overflow": np.array([big, big, 1], dtype),
        "inf carried": np.array([inf, 1, 2], dtype),
        "invalid": np.array([inf, -inf, 1] if not product else [inf, 0, 1], dtype),
        "nan carried": np.array([nan, 1, 2], dtype),
        "finite": np.array([1, 2, 3], dtype),
    }


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("name", REDUCTIONS + SCANS)
def test_warnings_are_numpys(device, name, dtype):
    for case, a in _cases(dtype, "prod" in name).items():
        expected, expected_messages = _messages(_numpy(name), a)
        got, messages = _messages(getattr(gpuprims, name), a, device=device)
        assert messages == expected_messages, (case, messages, expected_messages)
        np.testing.assert_array_equal(np.isnan(got), np.isnan(expected))
        np.testing.assert_array_equal(np.isinf(got), np.isinf(expected))


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("name", ["var", "std", "nanmean", "nanvar", "nanstd"])
def test_moments_signal_where_numpy_does(device, name, dtype):
    """var, std and the nan-moments: where the result holds NaN or inf, NumPy's answer and its
    floating-point errors, which come from its own steps (the sum's "reduce", the "subtract" of an
    infinite mean, the squares' "multiply"), in every errstate mode."""
    big = np.finfo(dtype).max
    cases = {**_cases(dtype, False), "squares overflow": np.array([big, -big, 0], dtype),
             "rows": np.array([[np.inf, 1, 2], [1, 2, 3]], dtype)}
    if name == "nanmean":  # its mean is taken in double: no overflow where NumPy's float sum has one
        del cases["overflow"]
        assert np.isfinite(gpuprims.nanmean(np.array([big, big, 1], dtype), device=device))
    for case, a in cases.items():
        for axis in (None, -1):
            expected, expected_messages = _messages(_numpy(name), a, axis=axis)
            got, messages = _messages(getattr(gpuprims, name), a, axis=axis, device=device)
            assert messages == expected_messages, (case, axis, messages, expected_messages)
            np.testing.assert_array_equal(np.isnan(got), np.isnan(expected))
            np.testing.assert_array_equal(np.isinf(got), np.isinf(expected))
    with np.errstate(invalid="raise"):
        with pytest.raises(FloatingPointError, match="invalid value"):
            getattr(gpuprims, name)(np.array([np.inf, -np.inf, 1], dtype), device=device)
        getattr(gpuprims, name)(np.array([np.nan, 1, 2], dtype), device=device)  # NaN carried: silent


@pytest.mark.parametrize("dtype", FLOATS)
def test_along_an_axis(device, dtype):
    big = np.finfo(dtype).max
    a = np.array([[big, 1, np.inf], [big, 2, 3]], dtype)
    for function, name in ((gpuprims.sum, "reduce"), (gpuprims.cumsum, "accumulate")):
        for axis in (0, 1):
            got, messages = _messages(function, a, axis=axis, device=device)
            _, expected = _messages(getattr(np, function.__name__), a, axis=axis)
            assert messages == expected, (function.__name__, axis)
    assert _messages(gpuprims.sum, a, axis=0, device=device)[1] == ["overflow encountered in reduce"]


def test_float16_sum_overflowing_only_in_the_cast(device):
    a = np.float16([60000, 60000])
    assert _messages(gpuprims.sum, a, device=device)[1] == ["overflow encountered in reduce"]
    assert _messages(gpuprims.sum, a, dtype=np.float32, device=device)[1] == []
    assert _messages(gpuprims.mean, a, device=device)[1] == []  # the mean fits float16
    assert _messages(gpuprims.cumsum, a, device=device)[1] == ["overflow encountered in accumulate"]


def test_silent_where_numpy_is(device):
    big = np.finfo(np.float64).max
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        gpuprims.sum(np.arange(10, dtype=np.float32), device=device)
        gpuprims.sum(np.array([np.iinfo(np.int64).max, 1]), device=device)  # integers wrap silently
        gpuprims.max(np.array([big, np.nan]), device=device)
        gpuprims.cummax(np.array([np.inf, -np.inf]), device=device)
        gpuprims.convolve(np.array([big, big]), np.array([big, big]), device=device)  # NumPy's convolve is silent
        gpuprims.sum(np.zeros(0), device=device)


@pytest.mark.parametrize("mode", ["ignore", "warn", "raise", "call", "print", "log"])
def test_every_errstate_mode(device, mode, capsys):
    a = np.array([1e308, 1e308])
    outcomes = []
    for function in (np.sum, gpuprims.sum):
        calls = []
        kwargs = {} if function is np.sum else {"device": device}

        class Log:
            def write(self, message):
                calls.append(("log", message))

        handler = Log() if mode == "log" else (lambda kind, flag: calls.append((kind, flag)))
        old = np.seterrcall(handler)
        try:
            with np.errstate(over=mode):
                try:
                    _, messages = _messages(function, a, **kwargs)
                    outcomes.append(("ok", messages, calls))
                except FloatingPointError as error:
                    outcomes.append(("raised", str(error), calls))
        finally:
            np.seterrcall(old)
        outcomes[-1] += (capsys.readouterr().out,)
    assert outcomes[0] == outcomes[1]


def test_global_errstate(device):
    old = np.seterr(invalid="raise")
    try:
        with pytest.raises(FloatingPointError, match="invalid value encountered in reduce"):
            gpuprims.sum(np.array([np.inf, -np.inf]), device=device)
        with pytest.raises(FloatingPointError, match="invalid value encountered in accumulate"):
            gpuprims.cumsum(np.array([np.inf, -np.inf]), device=device)
    finally:
        np.seterr(**old)


def test_errstate_is_thread_local(device):
    a = np.array([1e308, 1e308])
    barrier = threading.Barrier(2)
    outcome = {}

    def run(mode):
        with np.errstate(over=mode):
            barrier.wait()
            try:
                for _ in range(50):
                    gpuprims.sum(a, device=device)
                outcome[mode] = "quiet"
            except FloatingPointError:
                outcome[mode] = "raised"

    threads = [threading.Thread(target=run, args=(mode,)) for mode in ("ignore", "raise")]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert outcome == {"ignore": "quiet", "raise": "raised"}


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("column", [0, 63, 64, 130, 199])
def test_found_in_every_result_position(device, dtype, column):
    """The results are checked in blocks of 64 and a tail: an overflow in any column is seen."""
    a = np.ones((3, 200), dtype)
    a[:2, column] = np.finfo(dtype).max
    assert _messages(gpuprims.sum, a, axis=0, device=device)[1] == ["overflow encountered in reduce"]
    assert _messages(gpuprims.cumsum, a, axis=0, device=device)[1] == ["overflow encountered in accumulate"]
    a[:2, column] = -np.finfo(dtype).max  # negative: the sign bit is not a finite magnitude's
    assert _messages(gpuprims.sum, a, axis=0, device=device)[1] == ["overflow encountered in reduce"]


@pytest.mark.skipif(not gpuprims.cuda_available(), reason="CUDA not available")
@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("name", REDUCTIONS + SCANS)
def test_device_resident_results(name, dtype):
    """Device-resident inputs: the results stay on the device, and the same warnings as NumPy's."""
    for case, a in _cases(dtype, "prod" in name).items():
        expected, expected_messages = _messages(_numpy(name), a)
        got, messages = _messages(getattr(gpuprims, name), gpuprims.to_device(a))
        assert isinstance(got, gpuprims.DeviceArray), case
        assert messages == expected_messages, (case, messages, expected_messages)
        np.testing.assert_array_equal(np.isinf(got.get()), np.isinf(expected))


@pytest.mark.skipif(not gpuprims.cuda_available(), reason="CUDA not available")
def test_device_resident_scans_along_each_axis():
    """Every line of a scan along an axis, and of a sum along it, is looked at."""
    big = np.finfo(np.float32).max
    for shape, axis in (((4, 300), 1), ((300, 4), 0), ((3, 200, 5), 1)):
        for line in range(4):
            a = np.ones(shape, np.float32)
            index = [line % s for s in shape]
            for position in (shape[axis] // 2, shape[axis] // 2 + 1):  # two of the largest: an overflow
                index[axis] = position
                a[tuple(index)] = big
            assert _messages(np.cumsum, a, axis=axis)[1] == ["overflow encountered in accumulate"]
            got, messages = _messages(gpuprims.cumsum, gpuprims.to_device(a), axis=axis)
            assert messages == ["overflow encountered in accumulate"], (shape, axis, line)
            with np.errstate(over="raise"), pytest.raises(FloatingPointError):
                gpuprims.sum(gpuprims.to_device(a), axis=axis)


@pytest.mark.skipif(not gpuprims.cuda_available(), reason="CUDA not available")
def test_device_resident_check_skipped_where_nothing_would_be_reported(monkeypatch):
    """With overflow and invalid ignored, no device check runs (no readback, no synchronisation)."""
    from gpuprims import _device_array
    big = np.finfo(np.float32).max
    d = gpuprims.to_device(np.array([big, big], np.float32))
    memcpy, readbacks = _device_array._core.memcpy, []
    monkeypatch.setattr(_device_array._core, "memcpy", lambda *args: readbacks.append(args) or memcpy(*args))
    with np.errstate(over="ignore", invalid="ignore"):
        assert np.isinf(gpuprims.sum(d).get())  # .get() itself reads back once
    assert len(readbacks) == 1


def _come_back(dtype, product):
    """A run that overflows in NumPy's left fold, then would come back finite in another order
    (big + big = inf, then - big); one that overflows only in another order (-big + big + big:
    NumPy's running value is 0, then big); and one whose running values never overflow, but whose
    every eighth elements' sums do (big + big, -big - big: a CPU piece's total, summed lane by lane
    when threads share a row, which the next piece then starts from)."""
    big = np.finfo(dtype).max
    if product:
        root = np.sqrt(np.float64(big)) * 2
        lanes = np.array([root, 1 / root] + [1] * 6 + [root, 1 / root], dtype)
        return np.array([root, root, 1 / root, 1 / root], dtype), np.array([1 / root, root, root, 1], dtype), lanes
    lanes = np.array([big, -big] + [0] * 6 + [big, -big], dtype)
    return np.array([big, big, -big, -big], dtype), np.array([-big, big, big, 1], dtype), lanes


def _line_of(dtype, product, n, at, run, rng):
    """n numbers near 1 (products: +-1, so that nothing else overflows) with `run` placed at `at`."""
    line = rng.choice([-1.0, 1.0], n) if product else rng.uniform(0.5, 1.5, n)
    line = line.astype(dtype)
    line[at:at + run.size] = run[:n - at]
    return line


def _assert_numpys(name, a, axis, got, expected, messages, expected_messages, context, initial=None):
    """NumPy's warnings, inf and NaN in NumPy's places, and finite values within rounding of an
    exact (float64) fold: (4 sqrt(n) + 4) ulps of the running sum of magnitudes (of products),
    which terms as large as the dtype's maximum make loose where they were added (-big + big + 31
    is 31 in one order and 0 in NumPy's, and float16's NumPy fold stalls where its spacing passes
    the terms)."""
    assert messages == expected_messages, (context, messages, expected_messages)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(expected), err_msg=str(context))
    np.testing.assert_array_equal(np.isinf(got), np.isinf(expected), err_msg=str(context))
    np.testing.assert_array_equal(got[np.isinf(got)], expected[np.isinf(got)], err_msg=str(context))
    with np.errstate(all="ignore"):
        product = "prod" in name
        exact = np.nan_to_num(a.astype(np.float64), nan=1.0 if product else 0.0)
        if initial is not None:
            exact = np.concatenate([np.asarray(initial, np.float64).reshape(-1, 1), exact], axis=axis)
        fold = (np.cumprod if product else np.cumsum)(exact, axis=axis)
        scale = (np.cumprod if product else np.cumsum)(np.abs(exact), axis=axis)
        if initial is not None:
            fold, scale = fold[:, 1:], scale[:, 1:]
        tolerance = (4 * np.sqrt(exact.shape[axis]) + 4) * float(np.finfo(got.dtype).eps) * scale
        checked = np.isfinite(expected) & np.isfinite(tolerance)
        error = np.abs(got.astype(np.float64) - fold)
    assert (error[checked] <= tolerance[checked]).all(), (context, error[checked].max())


def _come_back_cases(name, dtype):
    """(array, axis, context): the runs of :func:`_come_back` placed at lane, vector, block, tile
    and piece edges, along rows (two long enough for the CPU threads' two passes and the GPU's
    streamed tiles, one run across the edge of two threads' pieces, whose offset then overflows),
    narrow columns (transposed blocks on the CPU) and wide columns."""
    rng = np.random.default_rng(20)
    product = "prod" in name
    for run in _come_back(dtype, product):
        for n, at in ((4, 0), (37, 13), (64, 30), (600, 511), (16390, 16382), (1 << 21, 3 << 19),
                      (1 << 21, (1 << 20) - 1)):
            line = _line_of(dtype, product, n, at, run, rng)
            shapes = ((n,), 0), ((3, n), 1), ((n, 3), 0), ((n, 17), 0)
            for shape, axis in shapes if n < 1 << 20 else shapes[:1]:  # a long row: pieces on threads
                a = np.repeat(line[:, None], shape[1 - axis] if len(shape) == 2 else 1, axis=1)
                a = (a if axis == 0 else a.T).reshape(shape).copy()
                if name.startswith("nan"):
                    a[tuple(rng.integers(0, s) for s in shape)] = np.nan
                yield a, axis, (run, n, at, shape, axis)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("name", SCANS)
def test_scans_keep_numpys_overflow(device, name, dtype):
    """An overflowed running value stays inf (or becomes NaN) as in NumPy's left fold, although
    the backends' blocked scans associate otherwise and would bring it back ([1e308, 1e308,
    -1e308] scanned to [1e308, inf, 1e308])."""
    for a, axis, context in _come_back_cases(name, dtype):
        expected, expected_messages = _messages(_numpy(name), a, axis=axis)
        got, messages = _messages(getattr(gpuprims, name), a, axis=axis, device=device)
        _assert_numpys(name, a, axis, got, expected, messages, expected_messages, context)


@pytest.mark.skipif(not gpuprims.cuda_available(), reason="CUDA not available")
@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("name", SCANS)
def test_device_resident_scans_keep_numpys_overflow(name, dtype):
    """As above for device-resident data, whose results stay on the device: the kernels' flag
    brings the lines that hold an inf or NaN to the host, where NumPy's fold settles them."""
    for a, axis, context in _come_back_cases(name, dtype):
        expected, expected_messages = _messages(_numpy(name), a, axis=axis)
        got, messages = _messages(getattr(gpuprims, name), gpuprims.to_device(a), axis=axis)
        assert isinstance(got, gpuprims.DeviceArray), context
        _assert_numpys(name, a, axis, got.get(), expected, messages, expected_messages, context)


@pytest.mark.parametrize("dtype", FLOATS)
def test_exclusive_carried_and_out_scans_keep_numpys_overflow(device, dtype):
    """The exclusive prefix sum, a scan from carried initial values (gpuprims.dask's chunks) and
    one into out= follow the left fold from their first value."""
    big = np.finfo(dtype).max
    a = np.ones((2, 40), dtype)
    a[:, 20:23] = [big, big, -big]
    inclusive, messages = _messages(np.cumsum, a, axis=1)
    exclusive = np.concatenate([np.zeros((2, 1), dtype), inclusive[:, :-1]], axis=1)
    got, got_messages = _messages(gpuprims.prefix_sum, a, axis=1, exclusive=True, device=device)
    _assert_numpys("cumsum", np.concatenate([np.zeros((2, 1), dtype), a[:, :-1]], axis=1), 1, got, exclusive,
                   got_messages, messages, "exclusive")
    out = np.empty_like(a)
    got, got_messages = _messages(gpuprims.cumsum, a, axis=1, out=out, device=device)
    assert got is out
    _assert_numpys("cumsum", a, 1, out, inclusive, got_messages, messages, "out")
    start = np.array([big, 0.0])
    b = np.ones((2, 40), dtype)
    b[:, 5:7] = [big, -big]
    expected, messages = _messages(np.cumsum, np.concatenate([start.astype(dtype)[:, None], b], axis=1), axis=1)
    got, got_messages = _messages(_scans.carried_prefix_sum, b, start[:, None], axis=1, device=device)
    _assert_numpys("cumsum", b, 1, got, expected[:, 1:], got_messages, messages, "carried", start)


@pytest.mark.skipif(not gpuprims.cuda_available(), reason="CUDA not available")
@pytest.mark.parametrize("dtype", FLOATS)
def test_device_resident_exclusive_carried_out_and_raise(dtype):
    """The exclusive, carried and out= forms on device data settle their lines as on the host, and
    under np.errstate(over="raise") the device result holds NumPy's values when the error is raised."""
    big = np.finfo(dtype).max
    a = np.ones((2, 40), dtype)
    a[:, 20:23] = [big, big, -big]
    d = gpuprims.to_device(a)
    inclusive, messages = _messages(np.cumsum, a, axis=1)
    shifted = np.concatenate([np.zeros((2, 1), dtype), a[:, :-1]], axis=1)
    exclusive = np.concatenate([np.zeros((2, 1), dtype), inclusive[:, :-1]], axis=1)
    got, got_messages = _messages(gpuprims.prefix_sum, d, axis=1, exclusive=True)
    _assert_numpys("cumsum", shifted, 1, got.get(), exclusive, got_messages, messages, "exclusive")
    out = gpuprims.to_device(np.zeros_like(a))
    got, got_messages = _messages(gpuprims.cumsum, d, axis=1, out=out)
    assert got is out
    _assert_numpys("cumsum", a, 1, out.get(), inclusive, got_messages, messages, "out")
    start = np.array([big, 0.0])
    b = np.ones((2, 40), dtype)
    b[:, 5:7] = [big, -big]
    expected, messages = _messages(np.cumsum, np.concatenate([start.astype(dtype)[:, None], b], axis=1), axis=1)
    got, got_messages = _messages(_scans.carried_prefix_sum, gpuprims.to_device(b), start[:, None], axis=1)
    _assert_numpys("cumsum", b, 1, got.get(), expected[:, 1:], got_messages, messages, "carried", start)
    raised = gpuprims.to_device(np.zeros_like(a))
    with np.errstate(over="raise"), pytest.raises(FloatingPointError):
        gpuprims.cumsum(d, axis=1, out=raised)
    np.testing.assert_array_equal(np.isinf(raised.get()), np.isinf(inclusive))
