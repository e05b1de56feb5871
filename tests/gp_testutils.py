"""Shared helpers for the gpuprims test-suite.

Everything here compares gpuprims against NumPy.  Integer results must be
bit-exact (including wrap-around); float results are compared against a
float64 reference with an error bound that scales with the number of summed
elements.
"""

import math
import operator
import subprocess
import sys
import warnings

import numpy as np

import gpuprims

def run_python(code, env=None, cwd=None):
    """The output of `code` in a fresh Python, started in `cwd` (a directory outside the source
    tree) so that it imports the gpuprims this test imports (installed, or on PYTHONPATH), not the
    uncompiled sources."""
    return subprocess.run([sys.executable, "-c", code], env=env, cwd=cwd, capture_output=True, text=True,
                          check=True).stdout


# --------------------------------------------------------------------------
# dtypes
# --------------------------------------------------------------------------

INT_DTYPES = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"]
FLOAT_DTYPES = ["float16", "float32", "float64"]
ALL_DTYPES = ["bool"] + INT_DTYPES + FLOAT_DTYPES

REDUCE_FUNCS = ["sum", "prod", "mean", "min", "max"]
FUNCS_WITH_DTYPE = ("sum", "prod", "mean")

# Odd sizes, primes, powers of two and 2**k +- 1 (small enough for every
# dtype/function combination; the big sizes are used selectively).
SMALL_SIZES = [1, 2, 3, 7, 31, 32, 33, 255, 256, 257, 1000, 4095, 4097, 65537]

# Error-bound constant for summations: |err| <= C_SUM*eps*log2(n+1)*sum|a|.
C_SUM = 2.0

_NOTGIVEN = object()


def shape_axis_params(cases):
    """[(shape, axis), ...] -> pytest params with readable ids like 3x5x7-ax(0,2)."""
    import pytest
    return [pytest.param(s, a, id=f"{'x'.join(map(str, s)) or '0d'}-ax{a!r}".replace(" ", ""))
            for s, a in cases]


# Streamed calls in tiles of a few bytes cut every row and column; on the long shapes they launch
# 10^4-10^5 tiles (about a minute per test on an H100), so those take the larger chunks only.
STREAM_CASES = [((1009,), None), ((37, 53), 0), ((37, 53), 1), ((5, 7, 11), 1), ((3, 40000), 1), ((20000, 3), 0)]
STREAM_CHUNKS = [8, 200, 4096]


def stream_params(cases=STREAM_CASES, chunks=STREAM_CHUNKS, tiny_chunk_max_size=4096):
    """pytest params (shape, axis, chunk) for forced streaming: every case with every chunk, but
    chunks under 64 bytes only for shapes of at most `tiny_chunk_max_size` elements."""
    import pytest
    return [pytest.param(s, a, c, id=f"{'x'.join(map(str, s))}-ax{a!r}-{c}".replace(" ", ""))
            for s, a in cases for c in chunks if c >= 64 or math.prod(s) <= tiny_chunk_max_size]


# --------------------------------------------------------------------------
# random data
# --------------------------------------------------------------------------

def make_data(rng, dtype, shape, kind="sum"):
    """Random array of `dtype` and `shape` (C-contiguous, native byte order).

    kind="sum"/"minmax": integers use the full range of the type (so sums of
      narrow types really wrap around), bool is a fair coin, floats are
      standard normal (sums of float16 data stay far from float16 overflow).
    kind="prod": values chosen so that products neither vanish nor overflow
      too quickly: odd integers (odd numbers are a group modulo 2**k, so the
      product never becomes 0 but still wraps), bools that are mostly True,
      floats of random sign with magnitude close to 1.
    """
    dt = np.dtype(dtype)
    shape = tuple(shape) if isinstance(shape, (tuple, list)) else (int(shape),)
    if dt == np.bool_:
        p = 0.5 if kind != "prod" else 0.995
        out = rng.random(shape) < p
    elif dt.kind in "iu":
        if kind == "prod":
            vals = np.array([-3, -1, 1, 3, 5, -5, 7] if dt.kind == "i" else [1, 3, 5, 7, 9], dtype=dt)
            out = vals[rng.integers(0, len(vals), size=shape)]
        else:
            info = np.iinfo(dt)
            out = rng.integers(info.min, info.max, size=shape, dtype=dt, endpoint=True)
    elif dt.kind == "f":
        if kind == "prod":
            lo, hi = (0.98, 1.02) if dt == np.float16 else (0.95, 1.05)
            mag = rng.uniform(lo, hi, size=shape)
            sign = np.where(rng.random(shape) < 0.5, -1.0, 1.0)
            out = (mag * sign).astype(dt)
        else:
            out = rng.standard_normal(size=shape).astype(dt)
    else:  # pragma: no cover
        raise ValueError(dtype)
    out = np.array(out, dtype=dt, order="C").reshape(shape)   # keeps 0-d arrays 0-d
    # guarantee "never only zeros or ones" even for tiny sizes
    if out.size >= 4 and dt != np.bool_ and np.all((out == 0) | (out == 1)):
        out.flat[0] = 3
    return out


def data_kind(func):
    if func == "prod":
        return "prod"
    if func in ("min", "max"):
        return "minmax"
    return "sum"


# --------------------------------------------------------------------------
# calling helpers
# --------------------------------------------------------------------------

def _snapshot(a):
    if isinstance(a, np.ndarray):
        return ("nd", a.tobytes(), a.shape, a.strides, a.dtype, a.flags.writeable,
                a.__array_interface__["data"][0])
    if isinstance(a, list):
        import copy
        return ("list", copy.deepcopy(a))
    return ("other", a)


def _assert_unchanged(a, snap):
    now = _snapshot(a)
    assert now[0] == snap[0]
    if snap[0] == "nd":
        assert now[2:] == snap[2:], "input array metadata was modified"
        assert now[1] == snap[1], "input array data was modified"
    elif snap[0] == "list":
        assert now[1] == snap[1], "input list was modified"


def gp_call(name, a, device, **kwargs):
    """Call gpuprims.<name>(a, device=device, **kwargs), checking that the
    input is not modified.  kwargs whose value is _NOTGIVEN are omitted."""
    kw = {k: v for k, v in kwargs.items() if v is not _NOTGIVEN}
    snap = _snapshot(a)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        got = getattr(gpuprims, name)(a, device=device, **kw)
    _assert_unchanged(a, snap)
    return got


def np_reduce(name, a, axis=None, dtype=None, keepdims=False):
    kw = dict(axis=axis, keepdims=keepdims)
    if dtype is not None:
        kw["dtype"] = dtype
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return getattr(np, name)(a, **kw)


def np_scan(a, axis=None, dtype=None, exclusive=False):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        inc = np.cumsum(a, axis=axis, dtype=dtype)
    if not exclusive:
        return inc
    return shift_exclusive(inc, 0 if axis is None else axis)


def shift_exclusive(inc, axis):
    """Exclusive scan from an inclusive one: zero first, then inc[:-1]."""
    out = np.zeros_like(inc)
    if inc.size == 0:
        return out
    ax = axis % inc.ndim
    dst = [slice(None)] * inc.ndim
    src = [slice(None)] * inc.ndim
    dst[ax] = slice(1, None)
    src[ax] = slice(None, -1)
    out[tuple(dst)] = inc[tuple(src)]
    return out


# --------------------------------------------------------------------------
# result checks
# --------------------------------------------------------------------------

def _axes_tuple(axis, ndim):
    if axis is None:
        return tuple(range(ndim))
    if isinstance(axis, tuple):
        return tuple(operator.index(x) % max(ndim, 1) for x in axis)
    return (operator.index(axis) % max(ndim, 1),)


def reduced_count(shape, axis):
    if len(shape) == 0:
        return 1
    n = 1
    for ax in _axes_tuple(axis, len(shape)):
        n *= shape[ax]
    return n


def assert_same_kind_of_result(got, expected, src=None, what=""):
    """Type / dtype / shape / layout checks shared by all functions."""
    if isinstance(expected, np.generic):
        assert isinstance(got, np.generic), (
            f"{what}: numpy returns a scalar ({type(expected).__name__}), got {type(got)!r}")
        assert not isinstance(got, np.ndarray)
    else:
        assert isinstance(got, np.ndarray), f"{what}: expected ndarray, got {type(got)!r}"
        assert type(got) is np.ndarray
        assert got.flags.c_contiguous, f"{what}: result is not C-contiguous"
        if isinstance(src, np.ndarray) and src.size and got.size:
            assert not np.shares_memory(got, src), f"{what}: result shares memory with input"
    assert got.dtype == expected.dtype, f"{what}: dtype {got.dtype} != numpy's {expected.dtype}"
    assert got.dtype.isnative
    assert np.shape(got) == np.shape(expected), f"{what}: shape {np.shape(got)} != {np.shape(expected)}"


def _spacing(res_dt, ref):
    """One ulp of the result dtype at |ref| (as float64)."""
    with np.errstate(all="ignore"):
        r = np.abs(np.asarray(ref, dtype=np.float64)).astype(res_dt)
        return np.spacing(r).astype(np.float64)


def _tiny(res_dt):
    return float(np.finfo(res_dt).smallest_subnormal) * 4


def _eps(dt):
    return float(np.finfo(dt).eps)


def assert_float_close(got, ref, tol, what="", res_dt=None):
    g = np.asarray(got, dtype=np.float64)
    r = np.asarray(ref, dtype=np.float64)
    if res_dt is not None:
        # a finite float64 reference beyond the result type's range must
        # come out as +-inf (e.g. float32 products that overflow)
        with np.errstate(all="ignore"):
            r = np.where(np.isfinite(r), r.astype(res_dt).astype(np.float64), r)
    t = np.broadcast_to(np.asarray(tol, dtype=np.float64), r.shape)
    assert g.shape == r.shape
    nan_r = np.isnan(r)
    nan_g = np.isnan(g)
    if not np.array_equal(nan_r, nan_g):
        idx = np.argwhere(nan_r != nan_g)[:5]
        raise AssertionError(f"{what}: NaN pattern differs at {idx.tolist()}: "
                             f"got {g[tuple(idx.T)]}, ref {r[tuple(idx.T)]}")
    inf_r = np.isinf(r)
    if not np.array_equal(g[inf_r], r[inf_r]):
        raise AssertionError(f"{what}: infinities differ: got {g[inf_r][:5]}, ref {r[inf_r][:5]}")
    fin = ~(nan_r | inf_r)
    with np.errstate(invalid="ignore"):
        ok = np.abs(g - r) <= t
    bad = fin & ~ok
    if bad.any():
        idx = np.argwhere(bad)[:5]
        sel = tuple(idx.T)
        raise AssertionError(
            f"{what}: {int(bad.sum())} of {bad.size} values out of tolerance; first at "
            f"{idx.tolist()}: got {g[sel]}, ref {r[sel]}, tol {t[sel]}, err {np.abs(g - r)[sel]}")


def _as_f64(a):
    return np.asarray(a).astype(np.float64)


def check_reduce(name, a, got, axis=None, dtype=None, keepdims=False):
    """Compare gpuprims.<name> result `got` with numpy on input `a`."""
    what = f"{name}(axis={axis!r}, dtype={dtype!r}, keepdims={keepdims})"
    expected = np_reduce(name, a, axis=axis, dtype=dtype, keepdims=keepdims)
    assert_same_kind_of_result(got, expected, src=a, what=what)
    res_dt = expected.dtype
    if res_dt.kind in "biu" or name in ("min", "max"):
        assert np.array_equal(got, expected, equal_nan=True), (
            f"{what}: got {np.asarray(got).ravel()[:8]} expected {np.asarray(expected).ravel()[:8]}")
        return
    arr = np.asarray(a)
    a64 = _as_f64(arr)
    n = reduced_count(arr.shape, axis)
    cast_in = not np.can_cast(arr.dtype, res_dt, "safe")
    with np.errstate(all="ignore"):
        if name in ("sum", "mean"):
            ref = np.sum(a64, axis=axis, keepdims=keepdims)
            absum = np.sum(np.abs(a64), axis=axis, keepdims=keepdims)
            eps_acc = _eps(np.float32) if res_dt == np.float16 else _eps(res_dt)
            err = C_SUM * eps_acc * math.log2(n + 1) * absum
            if cast_in:
                err = err + _eps(res_dt) * absum
            if name == "mean":
                ref = ref / n if n else ref * np.nan
                err = err / max(n, 1)
            tol = err + _spacing(res_dt, ref) + _tiny(res_dt)
        elif name == "prod":
            ref = np.prod(a64, axis=axis, keepdims=keepdims)
            tol = (4 * math.sqrt(n) + 4) * _eps(res_dt) * np.abs(ref) + _tiny(res_dt)
        else:  # pragma: no cover
            raise ValueError(name)
    assert_float_close(got, ref, tol, what, res_dt)


def assert_exact(got, expected, what=""):
    """Bit-exact equality (integer and bool results), naming the first mismatches."""
    if not np.array_equal(got, expected):
        bad = np.argwhere(np.asarray(got) != expected)[:5]
        raise AssertionError(f"{what}: {len(bad)}+ mismatches, first at {bad.tolist()}: "
                             f"got {got[tuple(bad.T)]}, expected {expected[tuple(bad.T)]}")


def check_scan(a, got, axis=None, dtype=None, exclusive=False):
    what = f"scan(axis={axis!r}, dtype={dtype!r}, exclusive={exclusive})"
    expected = np_scan(a, axis=axis, dtype=dtype, exclusive=exclusive)
    assert_same_kind_of_result(got, expected, src=a, what=what)
    res_dt = expected.dtype
    if res_dt.kind in "biu":
        assert_exact(got, expected, what)
        return
    arr = np.asarray(a)
    a64 = _as_f64(arr)
    if axis is None:
        a64 = a64.ravel()
        ax = 0
        n = a64.size
    else:
        ax = axis
        n = a64.reshape(a64.shape or (1,)).shape[axis]
    with np.errstate(all="ignore"):
        ref = np.cumsum(a64, axis=ax)
        abscum = np.cumsum(np.abs(a64), axis=ax)
        if exclusive:
            ref = shift_exclusive(ref, ax)
            abscum = shift_exclusive(abscum, ax)
        err = C_SUM * _eps(res_dt) * math.log2(n + 1) * abscum
        if not np.can_cast(arr.dtype, res_dt, "safe"):
            err = err + _eps(res_dt) * abscum
        tol = err + _spacing(res_dt, ref) + _tiny(res_dt)
    assert_float_close(got, ref, tol, what, res_dt)


def run_numpy_and_gp(np_fn, gp_fn):
    """Run both callables.  Returns (np_result, gp_result, np_warned, gp_warned)
    or asserts that gp raised an exception of numpy's type when numpy raised."""
    np_exc = None
    with warnings.catch_warnings(record=True) as w_np:
        warnings.simplefilter("always")
        try:
            np_res = np_fn()
        except Exception as e:  # noqa: BLE001
            np_exc = e
    np_warned = any(issubclass(x.category, RuntimeWarning) for x in w_np)
    if np_exc is not None:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                gp_fn()
            except Exception as e:  # noqa: BLE001
                assert isinstance(e, type(np_exc)), (
                    f"numpy raised {type(np_exc).__name__}({np_exc}), gpuprims raised "
                    f"{type(e).__name__}({e})")
                return None
        raise AssertionError(f"numpy raised {type(np_exc).__name__}({np_exc}); gpuprims did not raise")
    with warnings.catch_warnings(record=True) as w_gp:
        warnings.simplefilter("always")
        gp_res = gp_fn()
    gp_warned = any(issubclass(x.category, RuntimeWarning) for x in w_gp)
    return np_res, gp_res, np_warned, gp_warned
