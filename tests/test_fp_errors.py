"""Floating-point errors of sums, products and moments reported as NumPy reports them: overflow and invalid
warnings with NumPy's texts, every numpy.errstate mode, thread-local like NumPy's, and silence
where NumPy is silent (inf or NaN carried from the input, finite results, integers, min/max)."""
import threading
import warnings

import numpy as np
import pytest

import gpuprims

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
    """The last slice of a scan along an axis (gathered on the device) holds every line's end."""
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
