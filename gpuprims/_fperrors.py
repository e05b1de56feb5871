"""Floating-point errors of sums and products, reported as NumPy reports them.

NumPy's reductions and accumulations of floats warn (or raise, call, print, log: whatever
``numpy.errstate`` says in the calling thread) when they overflow ("overflow encountered in
reduce") or make a NaN from numbers ("invalid value encountered in accumulate").  The backends
do not keep the FPU's flags, so gpuprims looks at the results instead: the core calls
:func:`report` when a float sum's or product's results hold inf or NaN (finite results cost one
pass over the results, nothing more; device-resident results are checked on the device, see
:func:`check_device_result`), and the finish step of a narrowing cast calls
:func:`report_cast_overflow`.  The error is then raised through NumPy itself, on a tiny array that
makes the same error, so that every ``numpy.errstate`` mode behaves exactly as NumPy's own.
"""
import numpy as np

from . import _core
from ._device_array import DeviceArray


def _signal(kind, dtype, overflow, invalid):
    """Make NumPy report `overflow` and/or `invalid` in its `kind` ("reduce" or "accumulate") loop
    of `dtype`."""
    big = np.finfo(dtype).max
    values = ([big, big] if overflow else []) + ([np.inf, -np.inf] if invalid else [])
    if values:
        getattr(np.add, kind)(np.array(values, dtype))


_SUM, _PROD = 0, 1  # gp_op's codes of the operators checked (fp_errors.c checks the same calls)


def _settle(out, data, op, skip_nan, initial, exclusive):
    """A scan's lines (`out` and its input `data` as (outer, n, inner)) that hold an inf or NaN
    made NumPy's, in place: from the first such output on, they are computed again in NumPy's left
    fold, from the output before it.  A backend that combines in another order can bring an
    overflowed running value back to a finite one ([1e308, 1e308, -1e308] to [1e308, inf, 1e308],
    where NumPy's cumsum gives [1e308, inf, inf]); the outputs before it keep the backend's rounding.
    Lines start from their value in `initial` when the scan has them, an exclusive scan's first
    output being it; a skipped NaN counts as +0 (nancumsum) or 1 (nancumprod).  One accumulate
    folds every line from its own place, over the outer indices and the columns that need it."""
    with np.errstate(all="ignore"):
        bad = ~np.isfinite(out)
        lines = bad.any(axis=1)  # (outer, inner)
        rows = np.flatnonzero(lines.any(axis=1))
        if rows.size == 0:
            return
        span = slice(rows[0], rows[-1] + 1)
        out, data, bad, lines = out[span], data[span], bad[span], lines[span]
        n = out.shape[1]
        identity = -0.0 if op == _SUM else 1.0  # exact: folding it in changes no value
        # per line, the first output computed again (an exclusive scan's first is its start);
        # n where none is
        resume = bad.argmax(axis=1)
        if exclusive:
            resume = np.maximum(resume, 1)
        resume = np.where(lines, resume, n)
        lo = int(resume.min())
        # the value the fold resumes from: the output before, or the line's start
        seed = np.take_along_axis(out, np.maximum(resume - 1, 0)[:, None, :], axis=1)[:, 0, :]
        if initial is not None or lo == 0:
            start = identity if initial is None else np.asarray(initial, np.float64).reshape(-1, out.shape[2])[span]
            seed = np.where(resume == 0, start, seed)
        # column c > 0 holds the term of output lo + c - 1 (an exclusive scan's: the element before);
        # a line's seed goes in the column before its resume point, the identity before that
        fold = np.empty((out.shape[0], n - lo + 1, out.shape[2]), out.dtype)
        fold[:, 1:] = data[:, lo - exclusive:n - exclusive]
        if skip_nan:
            terms = fold[:, 1:]
            terms[np.isnan(terms)] = 0.0 if op == _SUM else 1.0
        column = np.arange(n - lo + 1)[None, :, None]
        place = (resume - lo)[:, None, :]
        np.copyto(fold, identity, where=column < place)
        np.copyto(fold, seed[:, None, :].astype(out.dtype), where=column == place)
        (np.add if op == _SUM else np.multiply).accumulate(fold, axis=1, out=fold)
        np.copyto(out[:, lo:], fold[:, 1:], where=column[:, 1:] > place)


def report(kind, result, source, view, skip_nan=False, initial=None, op=_SUM, exclusive=False):
    """Report the errors that made `result`'s non-finite values from `source`, both seen as the
    call's (outer, n, inner) `view` (the result as (outer, 1, inner) for a reduction).  A scan's
    (`op`, `exclusive`) lines with such values are first made NumPy's (:func:`_settle`).  Element by
    element of the result, with the input it was made of (a scan's: the input up to it, after its
    line's value in `initial` when the scan starts from given values): an inf where that input had
    none is an overflow; a NaN where it had none (or where NaN is skipped, as in nancumsum) is an
    invalid operation, after an overflow unless that input held an inf."""
    outer, n, inner = view
    out = result.reshape(outer, -1, inner)
    data = source.reshape(outer, n, inner)
    if kind == "accumulate":
        _settle(out, data, op, skip_nan, initial, exclusive)
    if initial is not None:  # the initial values as the first input, and as their own result
        first = np.asarray(initial, np.float64).reshape(outer, 1, inner)
        data, out = np.concatenate([first, data], axis=1), np.concatenate([first, out], axis=1)
    had_inf = np.isinf(data)
    had_nan = np.zeros_like(had_inf) if skip_nan else np.isnan(data)
    if kind == "accumulate":
        had_inf, had_nan = np.logical_or.accumulate(had_inf, axis=1), np.logical_or.accumulate(had_nan, axis=1)
    else:
        had_inf, had_nan = had_inf.any(axis=1, keepdims=True), had_nan.any(axis=1, keepdims=True)
    invalid = np.isnan(out) & ~had_nan
    overflow = (np.isinf(out) | invalid) & ~had_inf
    _signal(kind, result.dtype, bool(overflow.any()), bool(invalid.any()))


def report_cast_overflow(kind, output, cast):
    """Report the overflow of a float sum or product (`kind`) whose finite backend `output` became
    inf when `cast` to a narrower float (a float16 result accumulated in float32), as NumPy's own
    reduction reports it."""
    if not np.isfinite(cast).all() and np.isfinite(output).all():
        _signal(kind, cast.dtype, True, False)


def device_check(entry, params, dtype):
    """The floating-point check that a device-resident call of the core's `entry` (``_core.reduce``
    or ``_core.scan``) with `params` and results of `dtype` needs: its kind ("reduce" or
    "accumulate") for a float sum or product while ``numpy.errstate`` would report overflow or
    invalid, else None (nothing could be reported: the call stays asynchronous).  A scan then asks
    the core for its kernels' flag (``non_finite=True``)."""
    if entry is _core.reduce:
        op, kind = params[0], "reduce"
    elif entry is _core.scan:
        op, kind = params[5], "accumulate"
    else:
        return None
    if op not in (_SUM, _PROD) or dtype.kind != "f":
        return None
    errors = np.geterr()
    return None if errors["over"] == errors["invalid"] == "ignore" else kind


def check_device_result(kind, params, result, source, flag):
    """After a device-resident call whose :func:`device_check` was `kind` wrote the DeviceArray
    `result` from the DeviceArray `source`: the check the core makes on host results (fp_errors.c).
    A scan's kernels flagged (`flag`, what the core returned: 0 for none) whether they wrote an inf
    or NaN; a reduction's results are summed on the device, one tiny reduction (a single value is
    read back as it is).  Only where either tells of one are the result and the input copied to
    the host for :func:`report`; a scan's lines that it settles in NumPy's fold go back to `result`."""
    if result.size == 0:
        return
    if kind == "reduce":
        op, _, outer, n, inner, _, skip_nan = params
        exclusive, initial = False, None
        with np.errstate(all="ignore"):
            if n == 0 or np.isfinite(_checked_total(result)):
                return
    else:
        _, outer, n, inner, exclusive, op, skip_nan, initial = params
        if flag == 0:
            return
    host = result.get()
    try:
        report(kind, host, source.get(), (outer, n, inner), skip_nan, initial, op, exclusive)
    finally:  # settled, also where np.errstate said raise (a caller's out= then holds NumPy's values)
        if kind == "accumulate":
            _core.memcpy(result.device_index, result.ptr, host.ctypes.data, host.nbytes, True)


def _checked_total(result):
    """A number that is finite where the reduction's results are (a sum of finite results that
    overflows only sends the call to the host's exact report): the one value of a whole reduction
    read back as it is, else the device sum of the results."""
    index, itemsize = result.device_index, result.itemsize
    if result.size == 1:
        value = np.empty(1, result.dtype)
        _core.memcpy(index, value.ctypes.data, result.ptr, itemsize, True)
        return value[0]
    total = DeviceArray._empty((), result.dtype, index)
    _core.reduce(result._operand(), total.ptr, index, 0, _SUM, result.dtype.num, 1, result.size, 1)
    return total.get()
