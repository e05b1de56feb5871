"""Convolution and correlation: numpy.convolve/correlate and scipy.signal.convolve2d/correlate2d.

Every call becomes one correlation for the backend (``_core.correlate``): an image (a 1-D signal
is one row), a mask of the same dtype (reversed for a convolution), the window of outputs as
offsets into the image, and how the image reads outside its bounds.  The rules that pick these
(operand swaps, NumPy's and SciPy's centring of 'same', result dtypes) are NumPy's and SciPy's own,
quoted where they are applied.

Device in, device out: when either operand is device-resident (a DeviceArray, or another library's
GPU array), the correlation runs on that GPU and returns a DeviceArray there.  The image is converted on the device (a host image is uploaded); the mask is
always read from the host, so a device-resident mask is copied down first (masks are small).
"""
import functools
import math
import operator

import numpy as np

from . import _core
from ._boundary import SUPPORTED_NAMES, as_ndarray, placement, supported
from ._device_array import DeviceArray, device_view, to_device
from ._plan import QUICK_SLOTS, Plan

FILL, WRAP, SYMM = 0, 1, 2  # gp_boundary in csrc/contract/gp_call.h

_NUMPY_MODES = {"valid": 0, "same": 1, "full": 2}
SCIPY_MODES = {"valid": 0, "same": 1, "full": 2}
# scipy.signal._signaltools._boundarydict; 'reflect' is listed there but refused later.
SCIPY_BOUNDARIES = {"fill": FILL, "pad": FILL, "wrap": WRAP, "circular": WRAP, "symm": SYMM,
                     "symmetric": SYMM, "reflect": None}


def _unsupported(dtype, function):
    return TypeError(f"gpuprims.{function} does not support dtype {dtype} (supported: {SUPPORTED_NAMES})")


def _correlation(image, mask, out_rows, out_cols, offsets, dtype, shape, index, resident, boundary=FILL,
                 fill=None, reverse=False, overlaps_only=False):
    """The plan of one backend correlation: out[i, j] = sum of mask[p, q] * image(i + offsets[0] + p,
    j + offsets[1] + q), computed in `dtype` on backend device `index`, shaped as `shape` (reversed
    when `reverse`).  With `resident` (an operand is device-resident) the image runs on the device
    (converted there, or uploaded when it is host data) and the result is a DeviceArray; the mask is
    always a host array."""
    mask = mask.astype(dtype, copy=False)
    # NumPy's 1-D correlation sums only the taps that overlap the signal, where the backends
    # multiply the taps past its ends by zeros: the same sums unless a tap is inf or NaN.  Such
    # masks run from the host, whose result is then mended (and moved back to the device).
    fix_edges = overlaps_only and dtype.kind == "f" and not _all_finite(mask)
    if isinstance(image, DeviceArray):
        image = image.get() if fix_edges else image.contiguous() if image.dtype == dtype else image.astype(dtype)
    if not isinstance(image, DeviceArray):
        image = image.astype(dtype, copy=False)
        if resident and not fix_edges:
            image = to_device(image, f"cuda:{index}")

    def finish(result):
        if fix_edges:
            _sum_overlaps_only(result, image[0], mask[0], offsets[1])
        if reverse:
            result = result._flipped() if isinstance(result, DeviceArray) else np.ascontiguousarray(np.flip(result))
        return to_device(result, f"cuda:{index}") if resident and fix_edges else result

    params = (mask, _zero(dtype) if fill is None else fill, out_rows, out_cols, offsets[0], offsets[1], boundary)
    return Plan(_core.correlate, image, params, shape, dtype, index, finish if fix_edges or reverse else None)


def _all_finite(mask):
    """Whether every tap is finite: a short mask's Python sum is finite only then (or overflows,
    which only sends the call the careful way), cheaper than a NumPy loop on a few taps."""
    if mask.size <= 64:
        return math.isfinite(sum(mask.ravel().tolist()))
    return bool(np.isfinite(mask).all())


@functools.lru_cache(maxsize=None, typed=True)  # typed: int64 and longlong are equal dtypes
def _zero(dtype):
    """The fill value of a correlation that reads no fill (read-only: shared between calls)."""
    zero = np.zeros((), dtype)
    zero.flags.writeable = False
    return zero


def _sum_overlaps_only(result, signal, taps, offset):
    """Recomputes the outputs whose window reaches past the signal's ends as NumPy does
    (_pyarray_correlate: a dot product over the overlap only)."""
    n, m = signal.size, taps.size
    edges = set(range(min(-offset, result.size))) | set(range(max(n - m - offset + 1, 0), result.size))
    with np.errstate(all="ignore"):  # numpy.correlate does not warn about inf - inf either
        for j in edges:
            first, last = max(0, -(j + offset)), min(m, n - (j + offset))
            result[j] = np.dot(taps[first:last], signal[j + offset + first:j + offset + last])


def _array(x, function):
    """A DeviceArray as it is, anything else as a NumPy array."""
    return x if isinstance(x, DeviceArray) else as_ndarray(x, function)


def _host(array):
    """The mask operand on the host (a device-resident one is copied down)."""
    return array.get() if isinstance(array, DeviceArray) else array


def _run(name, operands, device, mode, *options):
    """gpuprims.<name>(*operands, mode, *options, device=device): on the GPU of any device-resident
    operand, with a DeviceArray result; else on `device`, with a NumPy result.  With the default
    boundary and fill (`options` empty for NumPy's functions), from the core's quick lane once the
    first such call with these shapes and mode taught it."""
    image, mask = operands
    quick = not options or (type(options[0]) is str and options[0] == "fill" and type(options[1]) is int
                            and options[1] == 0)
    if quick:
        slot = QUICK_SLOTS[name]
        result = _core.quick(slot, image, device, mask, mode)
        if result is not NotImplemented:
            return result
    views = [device_view(x) for x in operands]
    index = placement(name, device, views)
    operands = [x if view is None else view for x, view in zip(operands, views)]
    resident = any(view is not None for view in views)
    plan = _PLANNERS[name](index, resident, *operands, mode, *options)
    if quick and not resident:
        plan.teach_quick_lane(slot, image, mask, mode, name in ("convolve", "convolve2d"), not options)
    return plan.run()


# ---------------------------------------------------------------------------------------------
# numpy.convolve / numpy.correlate
# ---------------------------------------------------------------------------------------------

def numpy_mode(mode):
    """The mode argument as this NumPy reads it: 'valid', 'same', 'full' or the integers 0, 1, 2;
    other strings as :func:`_inexact_numpy_mode` says."""
    if isinstance(mode, str):
        return _NUMPY_MODES[mode] if mode in _NUMPY_MODES else _inexact_numpy_mode(mode)
    if isinstance(mode, (bool, np.bool_)):
        raise TypeError("convolve/correlate mode not understood")
    try:
        value = operator.index(mode)
    except TypeError:
        raise TypeError("convolve/correlate mode not understood") from None
    if value not in (0, 1, 2):
        raise ValueError("integer convolve/correlate mode must be 0, 1, or 2")
    return value


def _inexact_numpy_mode(mode):
    """A mode string other than 'valid', 'same' or 'full', read by NumPy itself: NumPy up to 2.2
    takes abbreviations and other cases ('f', 'Same') with a DeprecationWarning, later ones raise
    ValueError.  NumPy's own call on a 3-element signal and a 2-tap mask raises its error or warns
    its warning, and the length of its result (2, 3 or 4) names the mode."""
    length = np.convolve(np.zeros(3), np.zeros(2), mode=mode).size
    return {2: 0, 3: 1, 4: 2}[length]


def _numpy_operand(x, name, function, allow_scalar):
    """An operand as NumPy reads it: 1-D (numpy.convolve also takes a scalar as one element)."""
    array = _array(x, function)
    if array.ndim == 0 and allow_scalar:
        array = array.reshape(1)
    if array.ndim != 1:
        raise ValueError(f"gpuprims.{function}: {name} must be 1-D "
                         f"({'object too deep' if array.ndim > 1 else 'object of too small depth'} "
                         "for desired array)")
    if array.size == 0:
        raise ValueError(f"gpuprims.{function}: {name} cannot be empty")
    return array


def _numpy_result_dtype(a, v, function):
    """np.result_type of the two (1-D) operands (NumPy converts both to it), if gpuprims supports
    it."""
    dtype = _result_dtype(a.dtype, v.dtype)
    if dtype is None:
        raise TypeError(f"gpuprims.{function} does not support dtypes {a.dtype} and {v.dtype}")
    if not supported(dtype):
        raise _unsupported(dtype, function)
    return dtype


@functools.lru_cache(maxsize=256, typed=True)  # typed: int64 and longlong are equal dtypes
def _result_dtype(first, second):
    """np.result_type of two dtypes, or None where NumPy has none (worked out once per pair)."""
    try:
        return np.result_type(first, second)
    except TypeError:
        return None


def numpy_window(n, m, mode):
    """(output length, offset of the first window) of NumPy's correlation of n samples with m taps
    (_pyarray_correlate: 'same' starts m // 2 taps before the signal)."""
    if mode == 0:
        return n - m + 1, 0
    if mode == 1:
        return n, -(m // 2)
    return n + m - 1, -(m - 1)


def _plan_convolve(index, resident, a, v, mode="full"):
    """numpy.convolve: the shorter operand, reversed, slides over the longer."""
    a = _numpy_operand(a, "a", "convolve", True)
    v = _numpy_operand(v, "v", "convolve", True)
    dtype = _numpy_result_dtype(a, v, "convolve")
    mode = numpy_mode(mode)
    if v.size > a.size:
        a, v = v, a
    length, offset = numpy_window(a.size, v.size, mode)
    return _correlation(a.reshape(1, -1), _host(v)[None, ::-1], 1, length, (0, offset), dtype, (length,), index,
                        resident, overlaps_only=True)


def _plan_correlate(index, resident, a, v, mode="valid"):
    """numpy.correlate: if v is the longer, NumPy correlates v with a and reverses the result."""
    a = _numpy_operand(a, "a", "correlate", False)
    v = _numpy_operand(v, "v", "correlate", False)
    dtype = _numpy_result_dtype(a, v, "correlate")
    mode = numpy_mode(mode)
    swapped = v.size > a.size
    if swapped:
        a, v = v, a
    length, offset = numpy_window(a.size, v.size, mode)
    return _correlation(a.reshape(1, -1), _host(v)[None, :], 1, length, (0, offset), dtype, (length,), index,
                        resident, reverse=swapped, overlaps_only=True)


def convolve(a, v, mode="full", *, device=None):
    """Discrete, linear convolution of two 1-D sequences, as :func:`numpy.convolve`.

    Parameters
    ----------
    a, v : array_like or device array
        The sequences (1-D, non-empty; a scalar counts as one element).  If `v` is longer than
        `a`, they are swapped, as NumPy does.  Either may be device-resident (DeviceArray,
        CuPy, PyTorch, ...); the other may then be host data (see Returns).
    mode : {'full', 'same', 'valid'} or {2, 1, 0}, optional
        'full': every overlap, length ``N + M - 1``; 'same': length ``max(M, N)``, centred as
        NumPy centres it; 'valid': full overlaps only, length ``max(M, N) - min(M, N) + 1``.
    device : {None, "cpu", "cuda", "cuda:N"}, optional
        Where to compute; None means ``GPUPRIMS_DEVICE`` or the GPU when one is usable.  With a
        device-resident operand, the call runs on its GPU and `device` may only name that GPU.

    Returns
    -------
    numpy.ndarray or DeviceArray
        dtype ``numpy.result_type(a, v)``: integers wrap around as NumPy's do, bool is the OR of
        ANDs, float16 is accumulated in float32 and float32 in float32.  A DeviceArray on the
        operands' GPU when either operand is device-resident: the signal stays on the device
        (converted there), a host signal is uploaded, and the shorter operand (the taps) is read
        from the host, so a device-resident one is copied down first.  Unlike CuPy, which refuses
        to mix host and device arrays, gpuprims accepts host taps next to a device signal.

    Raises
    ------
    ValueError
        For empty or multi-dimensional operands and unknown modes; for operands on different
        GPUs, or a `device` other than the GPU of a device-resident operand.
    TypeError
        For dtypes gpuprims does not support (complex, object, strings, datetimes) and modes of
        the wrong type.
    """
    return _run("convolve", (a, v), device, mode)


def correlate(a, v, mode="valid", *, device=None):
    """Cross-correlation of two 1-D sequences, as :func:`numpy.correlate` (real inputs).

    ``c[k] = sum_n a[n + k] * v[n]``.  If `v` is longer than `a`, NumPy correlates `v` with `a`
    and reverses the result; so does gpuprims.

    Parameters
    ----------
    a, v : array_like or device array
        The sequences (1-D, non-empty), host or device-resident as in :func:`gpuprims.convolve`.
    mode : {'valid', 'same', 'full'} or {0, 1, 2}, optional
        As in :func:`gpuprims.convolve`; the default is 'valid'.
    device : {None, "cpu", "cuda", "cuda:N"}, optional
        Where to compute, as in :func:`gpuprims.convolve`.

    Returns
    -------
    numpy.ndarray or DeviceArray
        dtype ``numpy.result_type(a, v)``, with :func:`gpuprims.convolve`'s arithmetic; a
        DeviceArray when either operand is device-resident (reversed on the device when `v` is
        the longer).

    Raises
    ------
    ValueError, TypeError
        As :func:`gpuprims.convolve`.
    """
    return _run("correlate", (a, v), device, mode)


# ---------------------------------------------------------------------------------------------
# scipy.signal.convolve2d / scipy.signal.correlate2d
# ---------------------------------------------------------------------------------------------

def inputs_swap_needed(mode, shape1, shape2):
    """scipy.signal._signaltools.inputs_swap_needed: in 'valid' mode the larger input comes first."""
    if mode != "valid":
        return False
    ok1 = all(i >= j for i, j in zip(shape1, shape2))
    ok2 = all(j >= i for i, j in zip(shape1, shape2))
    if not (ok1 or ok2):
        raise ValueError("For 'valid' mode, one must be at least as large as the other in every "
                         "dimension")
    return not ok1


def _scipy_result_dtype(in1, in2, function):
    """The dtype SciPy computes in (the two inputs' promotion), if gpuprims supports it.

    SciPy has no bool and float16 kernels and refuses objects, strings and datetimes with a
    ValueError; complex and long double, which SciPy has but gpuprims does not, are a TypeError.
    """
    dtype = _result_dtype(in1.dtype, in2.dtype) or np.dtype(object)
    if dtype.kind in "iu" or dtype.char in "fd":
        return dtype
    if dtype.kind in "cf" and not supported(dtype):
        raise _unsupported(dtype, function)
    raise ValueError(f"{function} not available for this type ({dtype}).")


def _scipy_fill_value(fillvalue, dtype):
    """SciPy's fillvalue as a 0-d array of `dtype`: sigtools' conversion (PyArray_FromObject,
    which does not force casts), with its fall-back through complex that ends in an error."""
    if type(fillvalue) is int and fillvalue == 0:  # the default
        return _zero(dtype)
    try:
        fill = _core.array_from_object(fillvalue, dtype.num)
    except Exception:  # noqa: BLE001 - sigtools clears any error and tries complex
        _core.array_from_object(fillvalue, np.dtype(np.complex128).num).astype(dtype)
        raise ValueError("could not cast `fillvalue` directly to the output type (it was first "
                         "converted to complex).") from None
    if fill.size != 1:
        if fill.size == 0:
            raise ValueError("`fillvalue` cannot be an empty array.")
        raise ValueError("`fillvalue` must be scalar or an array with one element.")
    return fill.reshape(())


def scipy_window(n, m, mode, flip):
    """(output length, offset of the first window) along one axis of SciPy's 2-D correlation of n
    samples with m taps (mode 0 valid, 1 same, 2 full; `flip` for convolve2d)."""
    if mode == 0:
        return n - m + 1, 0
    if mode == 1:  # (m - 1) >> 1 before the output for correlate2d, the rest for convolve2d
        return n, -(m // 2) if flip else -((m - 1) // 2)
    return n + m - 1, -(m - 1)


def _plan_2d(function, flip, index, resident, in1, in2, mode="full", boundary="fill", fillvalue=0):
    """scipy.signal.convolve2d (flip) or correlate2d, as sigtools' pylab_convolve_2d computes them."""
    in1, in2 = _array(in1, function), _array(in2, function)
    if not in1.ndim == in2.ndim == 2:
        raise ValueError(f"{function} inputs must both be 2-D arrays")
    swapped = inputs_swap_needed(mode, in1.shape, in2.shape)
    if swapped:
        in1, in2 = in2, in1
    try:
        mode_value = SCIPY_MODES[mode]
    except KeyError:
        raise ValueError("Acceptable mode flags are 'valid', 'same', or 'full'.") from None
    try:
        boundary_value = SCIPY_BOUNDARIES[boundary]
    except KeyError:
        raise ValueError("Acceptable boundary flags are 'fill', 'circular' (or 'wrap'), and "
                         "'symmetric' (or 'symm').") from None
    if boundary_value is None:
        raise ValueError("Incorrect boundary value.")
    dtype = _scipy_result_dtype(in1, in2, function)
    fill = _scipy_fill_value(fillvalue, dtype) if boundary_value == FILL else None
    if in1.size == 0 or in2.size == 0:  # SciPy returns zeros of odd shapes or crashes here
        raise ValueError(f"gpuprims.{function}: inputs cannot be empty")
    shape, offsets = zip(*(scipy_window(n, m, mode_value, flip) for n, m in zip(in1.shape, in2.shape)))
    mask = _host(in2)[::-1, ::-1] if flip else _host(in2)
    return _correlation(in1, mask, shape[0], shape[1], offsets, dtype, tuple(shape), index, resident,
                        boundary_value, fill, reverse=swapped and not flip)


def convolve2d(in1, in2, mode="full", boundary="fill", fillvalue=0, *, device=None):
    """Convolve two 2-D arrays, as :func:`scipy.signal.convolve2d` (real inputs).

    Parameters
    ----------
    in1, in2 : array_like or device array
        2-D inputs.  In 'valid' mode one must be at least as large as the other in every
        dimension; if `in2` is the larger, they are swapped, as SciPy does.  Either may be
        device-resident (DeviceArray, CuPy, PyTorch, ...); the other may then be host data.
    mode : {'full', 'valid', 'same'}, optional
        'full': every overlap; 'valid': full overlaps only; 'same': the shape of `in1`, centred
        as SciPy centres it.
    boundary : {'fill', 'wrap', 'symm'}, optional
        How `in1` extends past its edges: `fillvalue`, periodically, or mirrored with the edge
        element repeated.  SciPy's aliases 'pad', 'circular' and 'symmetric' are accepted.
    fillvalue : scalar, optional
        The value outside `in1` for ``boundary='fill'``, converted to the result dtype as SciPy
        converts it.
    device : {None, "cpu", "cuda", "cuda:N"}, optional
        Where to compute; with a device-resident input, only its GPU may be named.

    Returns
    -------
    numpy.ndarray or DeviceArray
        A new C-contiguous array of dtype ``numpy.result_type(in1, in2)``; integers wrap around
        in that type, float32 is accumulated in float32.  A DeviceArray on the inputs' GPU when
        either input is device-resident: the image (`in1`, or `in2` when 'valid' swaps them)
        stays on the device (converted there; a host image is uploaded) and the kernel is read
        from the host (a device-resident kernel is copied down first).  Unlike CuPy, which
        refuses to mix host and device arrays, gpuprims accepts a host kernel next to a device
        image.

    Raises
    ------
    ValueError
        For inputs that are not 2-D or are empty, sizes that do not fit 'valid', unknown modes or
        boundaries, fill values that do not convert, and dtypes SciPy refuses (bool, float16,
        objects, strings, datetimes); for inputs on different GPUs, or a `device` other than the
        GPU of a device-resident input.
    TypeError
        For complex and long double inputs, which gpuprims does not support.
    """
    return _run("convolve2d", (in1, in2), device, mode, boundary, fillvalue)


def correlate2d(in1, in2, mode="full", boundary="fill", fillvalue=0, *, device=None):
    """Cross-correlate two 2-D arrays, as :func:`scipy.signal.correlate2d` (real inputs).

    Parameters, results and errors are those of :func:`gpuprims.convolve2d`, device-resident
    inputs included.  When 'valid' mode swaps the inputs, the result is reversed along both axes,
    as SciPy does (here as a new C-contiguous array, reversed on the device for device inputs).

    Returns
    -------
    numpy.ndarray or DeviceArray
    """
    return _run("correlate2d", (in1, in2), device, mode, boundary, fillvalue)


_PLANNERS = {
    "convolve": _plan_convolve,
    "correlate": _plan_correlate,
    "convolve2d": functools.partial(_plan_2d, "convolve2d", True),
    "correlate2d": functools.partial(_plan_2d, "correlate2d", False),
}
