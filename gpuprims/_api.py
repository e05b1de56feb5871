"""The public reductions and scans: NumPy's argument and dtype semantics on top of gpuprims._core.

Each call is turned into a plan: the input as a (outer, n, inner) view, the dtype the backend
writes, and how that result becomes NumPy's result (a narrowing cast, a reshape).  The backends
only ever see (outer, n, inner) and a supported (input dtype, output dtype) pair.  The same plan
serves host inputs (NumPy arrays in, NumPy results out) and device inputs (DeviceArray and other
libraries' GPU arrays in, DeviceArray results out): both array types provide the few methods
the plan uses (astype, reshape, transpose).
"""
import builtins
import functools
import math
import operator

import numpy as np

from . import _core
from ._device import resolve_device
from ._device_array import DeviceArray, device_view, to_device

try:  # NumPy >= 2.0
    from numpy.lib.array_utils import normalize_axis_index, normalize_axis_tuple
except ImportError:  # NumPy 1.x
    from numpy.core.multiarray import normalize_axis_index
    from numpy.core.numeric import normalize_axis_tuple

_OPS = {"sum": 0, "prod": 1, "min": 2, "max": 3}
_SUPPORTED_KINDS = "biuf"


def _supported(dtype):
    return dtype.kind in _SUPPORTED_KINDS and (dtype.kind != "f" or dtype.itemsize in (2, 4, 8))


def _input(a, name, device):
    """(array, backend device index): a DeviceArray view of GPU inputs (which stay where they
    are), else a NumPy array."""
    view = device_view(a)
    index = _placement(name, device, (view,))
    return (_as_input(a, name) if view is None else view), index


def _placement(name, device, views):
    """The backend device index of a call whose inputs' device views are `views` (None for host
    data): the GPU the device-resident inputs share, which `device` may name but not contradict;
    without device-resident inputs, `device`."""
    index = resolve_device(device) if device is not None else None
    resident = [view for view in views if view is not None]
    if not resident:
        return resolve_device(None) if index is None else index
    home = resident[0]
    if any(view.device_index != home.device_index for view in resident):
        raise ValueError(f"gpuprims.{name}: the inputs live on "
                         f"{' and '.join(sorted({view.device for view in resident}))}; "
                         "gpuprims does not move device arrays")
    if index is not None and index != home.device_index:
        raise ValueError(f"gpuprims.{name}: the input lives on {home.device}, but device={device!r}; "
                         "gpuprims does not move device arrays")
    return home.device_index


def _on_host(array):
    """A host stand-in with the array's shape and dtype, for results NumPy defines on empty input."""
    return np.empty(array.shape, array.dtype) if isinstance(array, DeviceArray) else array


def _like_input(result, array):
    """A result computed on the host, moved to the input's device when the input is there."""
    return to_device(result, array.device) if isinstance(array, DeviceArray) else result


def _as_input(a, name):
    array = np.asarray(a)
    if not _supported(array.dtype):
        raise TypeError(
            f"gpuprims.{name} does not support dtype {array.dtype} "
            "(supported: bool, int8-int64, uint8-uint64, float16, float32, float64)"
        )
    return array


@functools.lru_cache(maxsize=None)
def _numpy_result_dtype(name, in_dtype, dtype):
    """The dtype NumPy's function returns for this input dtype and dtype= argument."""
    function = {"sum": np.sum, "prod": np.prod, "mean": np.mean, "cumsum": np.cumsum}[name]
    result = np.asarray(function(np.ones(1, in_dtype), dtype=dtype)).dtype
    if not _supported(result):
        raise TypeError(f"gpuprims.{name} does not support dtype={dtype!r} (result dtype {result})")
    return result


def _accumulation_dtype(name, array, dtype):
    if dtype is not None:
        try:
            dtype = np.dtype(dtype)
        except TypeError as error:
            raise TypeError(f"gpuprims.{name}: invalid dtype={dtype!r}: {error}") from None
        if not _supported(dtype):
            raise TypeError(f"gpuprims.{name} does not support dtype={dtype}")
    return _numpy_result_dtype(name, array.dtype, dtype)


@functools.lru_cache(maxsize=None)
def _backend_dtype(in_dtype, result_dtype):
    """(dtype the backend writes, dtype the input must be cast to first or None).

    Mirrors gp_accumulate_supported() in csrc/gp_types.h: integer results come from 64-bit
    wrap-around accumulation and are narrowed afterwards; float results need a supported pair.
    """
    if result_dtype.kind in "biu":
        wide = np.dtype(np.uint64 if result_dtype.kind == "u" else np.int64)
        return wide, (result_dtype if in_dtype.kind == "f" else None)
    supported = {
        np.dtype(np.float64): "biuf",
        np.dtype(np.float32): ("e", "f"),
        np.dtype(np.float16): ("e",),
    }[result_dtype]
    ok = in_dtype.kind in supported if isinstance(supported, str) else in_dtype.char in supported
    return result_dtype, (None if ok else result_dtype)


class _Plan:
    """A backend call: source array viewed as (outer, n, inner), backend output dtype."""

    def __init__(self, source, outer, n, inner, backend_dtype, result_dtype):
        self.source = source
        self.outer, self.n, self.inner = outer, n, inner
        self.backend_dtype = backend_dtype
        self.result_dtype = result_dtype

    def finish(self, flat):
        """Turn the backend's 1-D output into the result dtype."""
        return flat if flat.dtype == self.result_dtype else flat.astype(self.result_dtype)

    def run_reduce(self, op, index, shape):
        """The backend's result of reducing the plan's source with `op`, in `shape`."""
        if not isinstance(self.source, DeviceArray):
            return _core.reduce(self.source, _OPS[op], self.backend_dtype.num, self.outer, self.n,
                                self.inner, index).reshape(shape)
        source = self.source.contiguous()
        out = DeviceArray._empty(shape, self.backend_dtype, index)
        _core.reduce_resident(source.ptr, source.dtype.num, _OPS[op], out.ptr, self.backend_dtype.num,
                              self.outer, self.n, self.inner, index)
        return out

    def run_scan(self, exclusive, index):
        """The backend's prefix sums of the plan's source, in the source's shape."""
        if not isinstance(self.source, DeviceArray):
            return _core.scan(self.source, self.backend_dtype.num, self.outer, self.n, self.inner,
                              exclusive, index).reshape(self.source.shape)
        source = self.source.contiguous()
        out = DeviceArray._empty(source.shape, self.backend_dtype, index)
        _core.scan_resident(source.ptr, source.dtype.num, out.ptr, self.backend_dtype.num, self.outer,
                            self.n, self.inner, exclusive, index)
        return out


def _reduce_plan(array, axes, result_dtype, op):
    """Plan a reduction of `array` over the sorted tuple `axes`."""
    backend_dtype, cast_to = (result_dtype, None) if op in ("min", "max") else _backend_dtype(
        array.dtype, result_dtype)
    if cast_to is not None:
        array = array.astype(cast_to)
    shape = array.shape
    if not axes:
        return _Plan(array, array.size, 1, 1, backend_dtype, result_dtype)
    first, last = axes[0], axes[-1]
    if last - first + 1 == len(axes):  # adjacent axes: one (outer, n, inner) view, no copy
        outer, n, inner = (math.prod(shape[:first]), math.prod(shape[first:last + 1]),
                           math.prod(shape[last + 1:]))
        return _Plan(array, outer, n, inner, backend_dtype, result_dtype)
    kept = tuple(axis for axis in range(array.ndim) if axis not in axes)
    moved = array.transpose(kept + axes)  # made contiguous by the C glue or DeviceArray.contiguous
    return _Plan(moved, math.prod(shape[k] for k in kept), math.prod(shape[k] for k in axes), 1,
                 backend_dtype, result_dtype)


def _reduced_shape(shape, axes, keepdims):
    if keepdims:
        return tuple(1 if axis in axes else size for axis, size in enumerate(shape))
    return tuple(size for axis, size in enumerate(shape) if axis not in axes)


def _axis_integer(axis):
    """An axis as NumPy reads it: an integer (not a bool, list or float)."""
    if isinstance(axis, (bool, np.bool_)):
        raise TypeError("an integer is required for the axis, not a bool")
    return operator.index(axis)


def _axis_index(axis, ndim):
    """One axis as NumPy reads it, negatives allowed, checked against ndim."""
    return normalize_axis_index(_axis_integer(axis), ndim)


def _normalize_axes(axis, ndim):
    """The sorted tuple of reduced axes."""
    if axis is None:
        return tuple(range(ndim))
    if isinstance(axis, tuple):
        for item in axis:
            _axis_index(item, builtins.max(ndim, 1))  # type checks; ranges checked next
        return tuple(sorted(normalize_axis_tuple(axis, ndim)))
    if ndim == 0:  # NumPy lets a 0-d array be reduced along axis 0 or -1: nothing to reduce
        _axis_index(axis, 1)
        return ()
    return (_axis_index(axis, ndim),)


def _run_reduce(name, op, a, axis, dtype, keepdims, device):
    array, index = _input(a, name, device)
    axes = _normalize_axes(axis, array.ndim)
    if array.size == 0:  # no work: NumPy's own identities, errors and warnings
        numpy_function = {"sum": np.sum, "prod": np.prod, "min": np.min, "max": np.max}[op]
        kwargs = {} if op in ("min", "max") else {"dtype": dtype}
        return _like_input(numpy_function(_on_host(array), axis=axes, keepdims=keepdims, **kwargs), array)
    if op in ("min", "max"):
        result_dtype = array.dtype.newbyteorder("=")
    else:
        result_dtype = _accumulation_dtype(op, array, dtype)
    if result_dtype.kind == "b" and op in ("sum", "prod"):
        # NumPy's add/multiply on bool are logical or/and: max/min of the values as bool.
        array, op = array.astype(bool), ("max" if op == "sum" else "min")
    plan = _reduce_plan(array, axes, result_dtype, op)
    result = plan.finish(plan.run_reduce(op, index, _reduced_shape(array.shape, axes, bool(keepdims))))
    return result[()] if result.ndim == 0 and not isinstance(result, DeviceArray) else result


def sum(a, axis=None, dtype=None, keepdims=False, *, device=None):
    """Sum of array elements over the given axes, as :func:`numpy.sum`.

    Parameters
    ----------
    a : array_like
        Input data: bool, signed or unsigned integers, float16, float32 or float64.
    axis : None or int or tuple of ints, optional
        Axes to sum over; None sums all elements.  Negative axes count from the end.
    dtype : dtype, optional
        Accumulator and result dtype.  By default NumPy's rule: integers narrower than the
        platform integer (and bool) are summed as int64 (uint64 for unsigned); integer sums wrap.
        float16 is accumulated in float32 and returned as float16.
    keepdims : bool, optional
        Keep the reduced axes as dimensions of size one.
    device : {None, "cpu", "cuda", "cuda:N"}, optional
        Where to compute; None means ``GPUPRIMS_DEVICE`` or the GPU when one is usable.

    Returns
    -------
    numpy.generic or numpy.ndarray
        A NumPy scalar for a full reduction, else a new C-contiguous array.

    Raises
    ------
    TypeError
        For unsupported input or dtype= dtypes (complex, strings, objects, datetimes).
    numpy.exceptions.AxisError
        For an axis out of range.
    MemoryError
        When device or host memory runs out.
    """
    return _run_reduce("sum", "sum", a, axis, dtype, keepdims, device)


def prod(a, axis=None, dtype=None, keepdims=False, *, device=None):
    """Product of array elements over the given axes, as :func:`numpy.prod`.

    Parameters and dtype rules are those of :func:`gpuprims.sum`; integer products wrap around
    and the product of an empty selection is 1.

    Returns
    -------
    numpy.generic or numpy.ndarray
        A NumPy scalar for a full reduction, else a new C-contiguous array.
    """
    return _run_reduce("prod", "prod", a, axis, dtype, keepdims, device)


def min(a, axis=None, keepdims=False, *, device=None):
    """Minimum over the given axes, as :func:`numpy.min`.

    NaN propagates: a slice containing NaN has a NaN minimum.  The result keeps the input dtype.

    Parameters
    ----------
    a : array_like
        Input data.
    axis : None or int or tuple of ints, optional
        Axes to reduce.
    keepdims : bool, optional
        Keep the reduced axes as dimensions of size one.
    device : {None, "cpu", "cuda", "cuda:N"}, optional
        Where to compute.

    Returns
    -------
    numpy.generic or numpy.ndarray

    Raises
    ------
    ValueError
        For an empty selection (there is no identity), as NumPy.
    """
    return _run_reduce("min", "min", a, axis, None, keepdims, device)


def max(a, axis=None, keepdims=False, *, device=None):
    """Maximum over the given axes, as :func:`numpy.max`.

    NaN propagates.  See :func:`gpuprims.min` for the parameters.

    Returns
    -------
    numpy.generic or numpy.ndarray
    """
    return _run_reduce("max", "max", a, axis, None, keepdims, device)


def mean(a, axis=None, dtype=None, keepdims=False, *, device=None):
    """Arithmetic mean over the given axes, as :func:`numpy.mean`.

    Integer and bool inputs are averaged in float64; float16 is summed in float32 and returned as
    float16.  An empty selection gives NaN with a RuntimeWarning, as NumPy.

    Parameters
    ----------
    a : array_like
        Input data.
    axis : None or int or tuple of ints, optional
        Axes to average over.
    dtype : dtype, optional
        Accumulator and result dtype.
    keepdims : bool, optional
        Keep the reduced axes as dimensions of size one.
    device : {None, "cpu", "cuda", "cuda:N"}, optional
        Where to compute.

    Returns
    -------
    numpy.generic or numpy.ndarray
    """
    array, index = _input(a, "mean", device)
    if array.ndim == 0 and axis is not None and not isinstance(axis, tuple):
        _axis_index(axis, 0)  # unlike sum, numpy.mean rejects axis 0 of a 0-d array
    axes = _normalize_axes(axis, array.ndim)
    if array.size == 0:
        return _like_input(np.mean(_on_host(array), axis=axes, dtype=dtype, keepdims=keepdims), array)
    _accumulation_dtype("mean", array, dtype)  # validates dtype=
    float16_result = dtype is None and array.dtype == np.float16
    total = _run_reduce("mean", "sum", array, axes, _mean_sum_dtype(array, dtype), keepdims,
                        _device_name(index))
    count = math.prod(array.shape[axis] for axis in axes)
    if isinstance(total, DeviceArray):
        return total._converted(np.dtype(np.float16) if float16_result else total.dtype, divisor=count)
    if isinstance(total, np.ndarray):
        total = np.true_divide(total, count, out=total, casting="unsafe")
        return total.astype(np.float16) if float16_result else total
    return (np.float16 if float16_result else total.dtype.type)(total / count)


def _mean_sum_dtype(array, dtype):
    """The dtype numpy.mean sums in: float64 for integers and bool, float32 for float16."""
    if dtype is not None:
        return dtype
    if array.dtype.kind in "biu":
        return np.float64
    return np.float32 if array.dtype == np.float16 else None


def _device_name(index):
    """The device string of a backend index (-1 is the CPU)."""
    return "cpu" if index < 0 else f"cuda:{index}"


def prefix_sum(a, axis=None, dtype=None, exclusive=False, *, device=None):
    """Cumulative sum along an axis: :func:`numpy.cumsum`, or its exclusive form.

    Parameters
    ----------
    a : array_like
        Input data.
    axis : int, optional
        Axis to scan; None scans the flattened array (C order).
    dtype : dtype, optional
        Accumulator and result dtype, with :func:`numpy.cumsum`'s default rule (small integers
        and bool accumulate as int64 or uint64 and wrap; float16 accumulates in float32).
    exclusive : bool, optional
        If True, element i is the sum of the elements before i (the first is 0); the result has
        the shape of the inclusive one.
    device : {None, "cpu", "cuda", "cuda:N"}, optional
        Where to compute.

    Returns
    -------
    numpy.ndarray
        A new C-contiguous array; 1-D when axis is None.
    """
    if not isinstance(exclusive, (bool, np.bool_)):
        raise TypeError(f"exclusive must be a bool, not {type(exclusive).__name__}")
    array, index = _input(a, "prefix_sum", device)
    if axis is None:
        array, axis = array.reshape(-1), 0
    elif array.ndim == 0:  # NumPy scans a 0-d array as a 1-element 1-d array
        array = array.reshape(1)
    axis = _axis_index(axis, array.ndim)
    result_dtype = _accumulation_dtype("cumsum", array, dtype)
    if array.size == 0:
        return _like_input(np.zeros(array.shape, result_dtype), array)
    plan = _scan_plan(array, axis, result_dtype)
    return plan.finish(plan.run_scan(bool(exclusive), index))


def _scan_plan(array, axis, result_dtype):
    backend_dtype, cast_to = _backend_dtype(array.dtype, result_dtype)
    if cast_to is not None:
        array = array.astype(cast_to)
    shape = array.shape
    return _Plan(array, math.prod(shape[:axis]), shape[axis], math.prod(shape[axis + 1:]),
                 backend_dtype, result_dtype)


def cumsum(a, axis=None, dtype=None, *, device=None):
    """Cumulative sum, as :func:`numpy.cumsum` (the inclusive :func:`gpuprims.prefix_sum`).

    Returns
    -------
    numpy.ndarray
    """
    return prefix_sum(a, axis=axis, dtype=dtype, exclusive=False, device=device)


def _time_kernel(name, a, repeats, *, device="cuda", **kwargs):
    """Kernel times in milliseconds of `repeats` runs of gpuprims.<name>(a, **kwargs) on the GPU.

    The input is uploaded once; each run (all launches and workspace allocations of the call) is
    timed with CUDA events.  For the benchmark (gpuprims.bench).
    """
    index = resolve_device(device)
    if index < 0:
        raise ValueError("_time_kernel needs a CUDA device")
    array = _as_input(a, name)
    if name == "prefix_sum":
        axis = kwargs.get("axis")
        if axis is None:
            array, axis = array.reshape(-1), 0
        plan = _scan_plan(array, _axis_index(axis, array.ndim),
                          _accumulation_dtype("cumsum", array, kwargs.get("dtype")))
        kind, op = "scan", 0
    else:
        op = {"mean": "sum"}.get(name, name)
        dtype = _mean_sum_dtype(array, kwargs.get("dtype")) if name == "mean" else kwargs.get("dtype")
        result_dtype = (array.dtype.newbyteorder("=") if op in ("min", "max")
                        else _accumulation_dtype(op, array, dtype))
        plan = _reduce_plan(array, _normalize_axes(kwargs.get("axis"), array.ndim), result_dtype, op)
        kind, op = "reduce", _OPS[op]
    times = _core.time_kernel(kind, plan.source, op, plan.backend_dtype.num, plan.outer, plan.n,
                              plan.inner, bool(kwargs.get("exclusive", False)), index, int(repeats))
    return np.asarray(times, dtype=np.float64)


def _time_memcpy(nbytes, repeats, *, device="cuda"):
    """Times in milliseconds of `repeats` device-to-device copies of `nbytes` bytes."""
    index = resolve_device(device)
    if index < 0:
        raise ValueError("_time_memcpy needs a CUDA device")
    return np.asarray(_core.time_memcpy(int(nbytes), index, int(repeats)), dtype=np.float64)


def _time_host_to_device(a, repeats, *, device="cuda"):
    """Times in milliseconds of `repeats` host-to-device copies of the C-contiguous array `a`
    (pageable or pinned), after one untimed copy."""
    index = resolve_device(device)
    if index < 0:
        raise ValueError("_time_host_to_device needs a CUDA device")
    a = np.ascontiguousarray(a)
    return np.asarray(_core.time_memcpy(a.nbytes, index, int(repeats), a.ctypes.data), dtype=np.float64)
