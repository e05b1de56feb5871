"""The reductions: sum, prod, min, max, mean, var, std, argmin, argmax, any, all and count_nonzero,
and the NaN-skipping nansum, nanprod, nanmin, nanmax, nanmean, nanvar, nanstd, nanargmin and
nanargmax, with NumPy's argument and dtype semantics.

Each call becomes one plan (``_plan.Plan``) for the core's reduce primitive: the input viewed as
(outer, n, inner) (non-adjacent reduced axes are moved last first), the dtype the backend writes
(the core's accumulator rule, ``_core.backend_result``), the result's shape, and the cast that
turns the backend's output into NumPy's result dtype.  Host inputs give NumPy results; device
inputs (DeviceArray, or other libraries' GPU arrays) give DeviceArray results on their GPU.

A nan-function is its plain reduction with the core's skip_nan flag (NaN elements left out, in the
kernels: no copy of the data) for float inputs, and the plain reduction itself for the others (they
hold no NaN), as NumPy.  NumPy's warnings and errors about slices of NaNs are raised from the result
(a NaN, or argmin's index -1), which the kernels make where a slice holds no number.
"""
import builtins
import functools
import math
import operator
import warnings

import numpy as np

from . import _core
from ._boundary import (array_input, axis_index, keepdims_flag, like_input, normalize_axis_index, on_host, reduced_axes,
                        supported)
from ._device_array import DeviceArray
from ._fperrors import report_cast_overflow
from ._plan import QUICK_AXIS_SLOTS, QUICK_SLOTS, Plan, cast_into, check_out, check_out_is_array, out_loop_dtype

_OPS = {"sum": 0, "prod": 1, "min": 2, "max": 3, "argmin": 4, "argmax": 5, "any": 6, "all": 7, "count_nonzero": 8,
        "var": 9, "std": 10, "mean": 11}
_NUMPY = {"sum": np.sum, "prod": np.prod, "min": np.min, "max": np.max, "mean": np.mean, "cumsum": np.cumsum,
          "argmin": np.argmin, "argmax": np.argmax, "any": np.any, "all": np.all, "count_nonzero": np.count_nonzero,
          "var": np.var, "std": np.std,
          "nansum": np.nansum, "nanprod": np.nanprod, "nanmin": np.nanmin, "nanmax": np.nanmax, "nanmean": np.nanmean,
          "nanvar": np.nanvar, "nanstd": np.nanstd, "nanargmin": np.nanargmin, "nanargmax": np.nanargmax}
_ACCUMULATING = ("sum", "prod", "nansum", "nanprod")  # the reductions with a dtype= argument besides the moments
# The reductions whose result dtype is their own, whatever the input's.
_FIXED_RESULT = {"argmin": np.dtype(np.intp), "argmax": np.dtype(np.intp), "any": np.dtype(bool),
                 "all": np.dtype(bool), "count_nonzero": np.dtype(np.intp)}
# numpy.count_nonzero(a) is a Python int before NumPy 2.3, an intp scalar since.
_COUNT_TYPE = type(np.count_nonzero(np.ones(1)))
_DTYPE_OF_TYPENUM = {np.dtype(name).num: np.dtype(name) for name in _core.DTYPES}


@functools.lru_cache(maxsize=None, typed=True)  # typed: int64 and longlong are equal dtypes
def _numpy_result_dtype(name, in_dtype, dtype):
    """The dtype NumPy's function returns for this input dtype and dtype= argument."""
    result = np.asarray(_NUMPY[name](np.ones(1, in_dtype), dtype=dtype)).dtype
    if not supported(result):
        raise TypeError(f"gpuprims.{name} does not support dtype={dtype!r} (result dtype {result})")
    return result


def accumulation_dtype(name, in_dtype, dtype):
    """NumPy's result dtype of a sum, prod, mean or cumsum of `in_dtype` with dtype=`dtype`."""
    return _numpy_result_dtype(name, in_dtype, _dtype_argument(name, dtype))


@functools.lru_cache(maxsize=None, typed=True)  # typed: int64 and longlong are equal dtypes
def backend_dtypes(in_dtype, result_dtype):
    """(dtype the backend writes, dtype the input is cast to first or None): the core's accumulator
    rule for a sum, prod or scan."""
    out, cast = _core.backend_result(in_dtype.num, result_dtype.num)
    out = _DTYPE_OF_TYPENUM[out]
    # the result's own dtype where it is the same type under another name (longlong for int64),
    # so that the result has NumPy's scalar type
    return (result_dtype if out == result_dtype else out), (None if cast is None else _DTYPE_OF_TYPENUM[cast])


def cast_to(dtype, kind):
    """A plan's finish step that casts the backend's output to `dtype` (None when it has it).  A
    float narrowed (a float16 sum accumulated in float32) that overflows in the cast is reported
    as NumPy's `kind` ("reduce" or "accumulate") loop reports its overflow."""
    def finish(output):
        if output.dtype == dtype:
            return output
        if dtype.kind != "f" or output.dtype.itemsize <= dtype.itemsize or isinstance(output, DeviceArray):
            return output.astype(dtype)
        with np.errstate(over="ignore"):
            cast = output.astype(dtype)
        report_cast_overflow(kind, output, cast)
        return cast
    return finish


class _Reduction:
    """What a reduction does that depends on its arguments and the input's dtype and ndim, not on
    the data: worked out once per distinct call (see _reduction) and reused."""

    __slots__ = ("op_code", "skip_nan", "by_numpy", "cast", "backend_dtype", "finish", "moved", "split", "out_axes",
                 "whole")

    def __init__(self, op, in_dtype, ndim, axes, dtype, keepdims):
        # A nan-function: its plain reduction, skipping NaNs where the dtype has them.
        self.skip_nan = op.startswith("nan") and in_dtype.kind == "f"
        op = op[3:] if op.startswith("nan") else op
        if op in ("min", "max"):
            result_dtype = self.backend_dtype = in_dtype.newbyteorder("=")
            self.cast = None
        elif op in _FIXED_RESULT:
            result_dtype = self.backend_dtype = _FIXED_RESULT[op]
            self.cast = None
        elif op in ("var", "std", "mean"):  # moments in double by the backend, written in the result dtype
            result_dtype = self.backend_dtype = _numpy_result_dtype(op, in_dtype, dtype)
            self.cast = None
        else:
            result_dtype = _numpy_result_dtype(op, in_dtype, dtype)
            if result_dtype.kind == "b":  # NumPy's add/multiply on bool are logical or/and
                op, self.cast, self.backend_dtype = ("max" if op == "sum" else "min"), np.dtype(bool), result_dtype
            else:
                self.backend_dtype, self.cast = backend_dtypes(in_dtype, result_dtype)
        self.op_code = _OPS[op]
        # NaN-skipping sums and products cast to integers or bool: NumPy's own (the cast would come first)
        self.by_numpy = self.skip_nan and result_dtype.kind != "f"
        self.finish = None if self.backend_dtype == result_dtype else cast_to(result_dtype, "reduce")
        kept = tuple(axis for axis in range(ndim) if axis not in axes)
        # The (outer, n, inner) view splits the input's shape at `split`.  Adjacent reduced axes
        # are one view, no copy; others are moved after the kept ones first (a copy the glue or
        # the device makes).
        self.moved = None
        if not axes:
            self.split = (ndim, ndim)  # nothing reduced: n = 1
        elif axes[-1] - axes[0] + 1 == len(axes):
            self.split = (axes[0], axes[-1] + 1)
        else:
            self.moved, self.split = kept + axes, (len(kept), ndim)
        # The result's axes: the input's kept axes, and with keepdims a 1 (None) for each reduced one.
        self.out_axes = tuple(None if axis in axes else axis for axis in range(ndim)) if keepdims else kept
        # Every axis reduced and the input used as it is: the common call, whose plan needs no shape
        # arithmetic (its result's shape is all ones).
        self.whole = len(axes) == ndim and self.cast is None and self.moved is None

    def plan(self, array, index, ddof=0.0):
        """The plan for `array` (at least one element) on backend device `index` (var and std: with
        `ddof`)."""
        if self.whole and type(array) is np.ndarray:
            return Plan(_core.reduce, array, (self.op_code, self.backend_dtype.num, 1, array.size, 1, ddof,
                                              self.skip_nan),
                        (1,) * len(self.out_axes), self.backend_dtype, index, self.finish)
        shape = array.shape
        if self.cast is not None:
            array = array.astype(self.cast)
        if self.moved is not None:
            array = array.transpose(self.moved)
        if isinstance(array, DeviceArray):
            array = array.contiguous()
        first, last = self.split
        view = array.shape
        outer, n, inner = math.prod(view[:first]), math.prod(view[first:last]), math.prod(view[last:])
        out_shape = tuple(1 if axis is None else shape[axis] for axis in self.out_axes)
        return Plan(_core.reduce, array, (self.op_code, self.backend_dtype.num, outer, n, inner, ddof, self.skip_nan),
                    out_shape, self.backend_dtype, index, self.finish)


def plain_axes(axis):
    """Whether `axis` is None, an int or a tuple of ints: the axis forms a cache may key on (True
    and 1.0 compare equal to 1 but are errors)."""
    return axis is None or type(axis) is int or (type(axis) is tuple and builtins.all(type(item) is int for item in axis))


def _reduction(op, in_dtype, ndim, axis, dtype, keepdims):
    """The _Reduction of these arguments (NumPy's errors for bad ones)."""
    if axis is None or plain_axes(axis):
        try:
            return _cached_reduction(op, in_dtype, ndim, axis, dtype, keepdims)
        except TypeError:  # an unhashable dtype= (raises NumPy's error below)
            pass
    return _Reduction(op, in_dtype, ndim, reduced_axes(axis, ndim), _dtype_argument(op, dtype), keepdims)


@functools.lru_cache(maxsize=1024, typed=True)
def _cached_reduction(op, in_dtype, ndim, axis, dtype, keepdims):
    return _Reduction(op, in_dtype, ndim, reduced_axes(axis, ndim), _dtype_argument(op, dtype), keepdims)


def _dtype_argument(name, dtype):
    """A dtype= argument checked and as a numpy.dtype (or None)."""
    if dtype is None:
        return None
    try:
        dtype = np.dtype(dtype)
    except TypeError as error:
        raise TypeError(f"gpuprims.{name}: invalid dtype={dtype!r}: {error}") from None
    if not supported(dtype):
        raise TypeError(f"gpuprims.{name} does not support dtype={dtype}")
    return dtype


def _reduce(op, a, axis, dtype, keepdims, device, initial=None, out=None):
    """The plan of gpuprims.<op> (an empty input's with NumPy's answer for `initial`; others leave
    `initial` to _deliver), in NumPy's loop dtype for an `out` without dtype=."""
    if type(keepdims) is not bool:
        keepdims = keepdims_flag(keepdims)
    array, index = array_input(a, op, device)
    loop_dtype = out_loop_dtype(dtype, array.dtype, out)
    if op in _ACCUMULATING:
        dtype = loop_dtype
    if array.size == 0:  # no work: NumPy's own identities, errors and warnings
        return _numpy_plan(op, array, axis, dtype, keepdims, initial, loop_dtype)
    reduction = _reduction(op, array.dtype, array.ndim, axis, dtype, keepdims)
    if reduction.by_numpy:
        return _numpy_plan(op, array, axis, dtype, keepdims, initial, loop_dtype)
    return reduction.plan(array, index)


def _numpy_plan(op, array, axis, dtype, keepdims, initial=None, loop_dtype=None):
    """The plan whose result NumPy's function computes (on the host; moved to the input's device),
    with `initial` when given (min and max compare in `loop_dtype`, out's, where it is converted)."""
    axes = None if axis is None else reduced_axes(axis, array.ndim)
    kwargs = {"dtype": dtype} if op in _ACCUMULATING else {}
    if initial is not None:
        kwargs["initial"] = initial
    host = array.get() if isinstance(array, DeviceArray) and array.size else on_host(array)
    if initial is not None and op not in _ACCUMULATING and loop_dtype is not None:
        host = host.astype(loop_dtype)
    return Plan.by_numpy(lambda: like_input(_NUMPY[op](host, axis=axes, keepdims=keepdims, **kwargs), array))


# How `initial` joins a result, as NumPy's reductions start from it.
_FOLD = {"sum": np.add, "prod": np.multiply, "min": np.minimum, "max": np.maximum, "nansum": np.add,
         "nanprod": np.multiply, "nanmin": np.fmin, "nanmax": np.fmax}


def _lane_call(axis, dtype, keepdims, out):
    """Whether a reduction's arguments make a call the quick lane replays: the whole array or one
    int axis, every other argument at its default."""
    return dtype is None and keepdims is False and out is None and (axis is None or type(axis) is int)


def _lane_slot(op, axis):
    """The quick lane's slot of gpuprims.<op> over `axis`, and the lane's further arguments."""
    return (QUICK_SLOTS[op], ()) if axis is None else (QUICK_AXIS_SLOTS[op], (axis,))


def _result(op, a, axis, dtype, keepdims, device, out=None, initial=None, plan_of=_reduce):
    """The result of gpuprims.<op> (plan_of: its plan): from the core's quick lane for the common
    calls (the whole array, or one int axis; other arguments at their defaults), which the first
    such call for each dtype teaches it."""
    if initial is None and _lane_call(axis, dtype, keepdims, out):
        slot, arguments = _lane_slot(op, axis)
        result = _core.quick(slot, a, device, *arguments)
        if result is not NotImplemented:
            return result
        plan = plan_of(op, a, axis, dtype, keepdims, device)
        plan.teach_quick_lane(slot, a, *arguments)
        return plan.run()
    return _deliver(op, plan_of(op, a, axis, dtype, keepdims, device, initial, out), out, initial)


def _deliver(op, plan, out, initial=None):
    """The result of gpuprims.<op>'s plan with NumPy's `initial` folded in (sum, prod, min, max)
    and written into `out` when given: NumPy's checks (an array, before anything is computed; its
    shape; for argmin and argmax a dtype intp casts to safely, for std a float dtype), then an
    unsafe cast, as NumPy's reductions write `out`."""
    check_out_is_array(op, out)
    out_checked = False
    if op in ("argmin", "argmax", "nanargmin", "nanargmax") and out is not None:
        if plan.entry is not None:  # numpy.argmin checks out's shape before its dtype
            check_out(op, out, plan.out_shape, plan.source)
            out_checked = True
        if not np.can_cast(out.dtype, np.intp):
            raise TypeError(f"gpuprims.{op}: cannot cast out's dtype {out.dtype} to intp according to the rule 'safe'")
    if op in ("std", "nanstd") and out is not None and out.dtype.kind != "f":  # NumPy's sqrt writes out in place
        raise TypeError(f"gpuprims.{op}: cannot write the float result into out of dtype {out.dtype} "
                        "with casting rule 'same_kind'")
    if initial is None or plan.entry is None:  # an empty input's plan has NumPy's answer with initial
        if out is None:
            return plan.run()
        if plan.entry is not None:
            return plan.run(out if out_checked else check_out(op, out, plan.out_shape, plan.source))
        result = plan.run()
    else:
        result = _with_initial(op, plan.run(), initial, out)
    if out is None:
        return result
    return cast_into(check_out(op, out, np.shape(result), result), result)


def _check_inexact_out(op, a, out):
    """NumPy's rule for nanmean, nanvar and nanstd: float input needs a float `out`."""
    if out is not None and getattr(out, "dtype", np.dtype("f")).kind != "f":
        if (a.dtype if hasattr(a, "dtype") else np.asarray(a).dtype).kind == "f":
            raise TypeError(f"gpuprims.{op}: if a is inexact, then out must be inexact")


def _with_initial(op, result, initial, out=None):
    """`result` of gpuprims.<op> (sum, prod, min, max and their nan-forms) with `initial` folded in
    by NumPy's reduce itself, so that `initial` is converted to NumPy's loop dtype as NumPy's
    reductions convert it (NumPy 2: OverflowError for a Python int out of its range) and the
    result keeps its dtype (a narrow integer wraps, a bool sum stays a logical or).  The loop dtype
    is the result's; min and max with an `out` compare in its promotion with the input's."""
    host = np.asarray(result.get() if isinstance(result, DeviceArray) else result)
    loop_dtype = None if op in _ACCUMULATING else out_loop_dtype(None, host.dtype, out)
    # dtype=: np.add.reduce would otherwise sum narrow integers and bools as the platform integer
    folded = _FOLD[op].reduce(host[np.newaxis], axis=0, dtype=host.dtype if loop_dtype is None else loop_dtype,
                              initial=initial)
    return like_input(folded, result)


def _arg_reduce(op, a, axis, dtype, keepdims, device, initial=None, out=None):
    """The plan of gpuprims.argmin/argmax (dtype and initial: None, as _result passes them; out: its
    intp result is cast into it): one int axis or None (the flattened array)."""
    keepdims = bool(keepdims)  # numpy.argmin reads keepdims as a truth value, unlike the ufunc reductions
    array, index = array_input(a, op, device)
    if isinstance(axis, tuple) and op.startswith("nan") and array.dtype.kind == "f":
        # numpy.nanargmin checks its slices of NaNs along the axes first (AxisError, the all-NaN
        # ValueError), then numpy.argmin refuses the tuple: NumPy raises what it raises
        host = array.get() if isinstance(array, DeviceArray) else on_host(array)
        _NUMPY[op](host, axis=axis)
    if axis is not None:
        axis_index(axis, builtins.max(array.ndim, 1))  # NumPy's TypeError for tuples, AxisError
    if array.size == 0:  # ValueError where the reduced axis is empty, else an empty result
        return Plan.by_numpy(lambda: like_input(_NUMPY[op](on_host(array), axis=axis, keepdims=keepdims), array))
    return _reduction(op, array.dtype, array.ndim, axis, None, keepdims).plan(array, index)


def sum(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, *, device=None):
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
    out : numpy.ndarray or DeviceArray, optional
        Where to write the result: an array of the result's shape (a 0-d array for a full
        reduction), host or on the input's device as the input; values are cast to its dtype.
        `out` is then returned.
    keepdims : bool, optional
        Keep the reduced axes as dimensions of size one.
    initial : scalar, optional
        The starting value of the reduction, folded into every result (converted to the result's
        dtype as NumPy converts it); with it an empty selection's sum is `initial`.
    device : {None, "cpu", "cuda", "cuda:N"}, optional
        Where to compute.  None means ``GPUPRIMS_DEVICE`` when set, else the fastest: host data
        runs where the call finishes first (the CPU backend or GPU 0, by gpuprims' cost model),
        device-resident data on its GPU.  Floats may differ between the two backends in the last
        bits (each stays within NumPy's own error).

    Returns
    -------
    numpy.generic or numpy.ndarray or DeviceArray
        A NumPy scalar for a full reduction of host data, else a new C-contiguous array; a
        DeviceArray for device-resident input; `out` when given.

    Raises
    ------
    TypeError
        For unsupported input or dtype= dtypes (complex, strings, objects, datetimes).
    numpy.exceptions.AxisError
        For an axis out of range.
    MemoryError
        When device or host memory runs out.
    """
    return _result("sum", a, axis, dtype, keepdims, device, out, initial)


def prod(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, *, device=None):
    """Product of array elements over the given axes, as :func:`numpy.prod`.

    Parameters (`out`, `initial` included) and dtype rules are those of :func:`gpuprims.sum`;
    integer products wrap around and the product of an empty selection is 1 (or `initial`).

    Returns
    -------
    numpy.generic or numpy.ndarray or DeviceArray
        A NumPy scalar for a full reduction, else a new C-contiguous array; `out` when given.
    """
    return _result("prod", a, axis, dtype, keepdims, device, out, initial)


def min(a, axis=None, out=None, keepdims=False, initial=None, *, device=None):
    """Minimum over the given axes, as :func:`numpy.min`.

    NaN propagates: a slice containing NaN has a NaN minimum.  The result keeps the input dtype.

    Parameters
    ----------
    a : array_like
        Input data.
    axis : None or int or tuple of ints, optional
        Axes to reduce.
    out : numpy.ndarray or DeviceArray, optional
        Where to write the result, as in :func:`gpuprims.sum`.
    keepdims : bool, optional
        Keep the reduced axes as dimensions of size one.
    initial : scalar, optional
        A value every result is compared with too (in the input's dtype; OverflowError for a
        Python int out of its range); with it an empty selection's minimum is `initial`.
    device : {None, "cpu", "cuda", "cuda:N"}, optional
        Where to compute, as in :func:`gpuprims.sum`.

    Returns
    -------
    numpy.generic or numpy.ndarray or DeviceArray
        `out` when given.

    Raises
    ------
    ValueError
        For an empty selection without `initial` (there is no identity), as NumPy.
    """
    return _result("min", a, axis, None, keepdims, device, out, initial)


def max(a, axis=None, out=None, keepdims=False, initial=None, *, device=None):
    """Maximum over the given axes, as :func:`numpy.max`.

    NaN propagates.  See :func:`gpuprims.min` for the parameters.

    Returns
    -------
    numpy.generic or numpy.ndarray or DeviceArray
    """
    return _result("max", a, axis, None, keepdims, device, out, initial)


def mean_sum_dtype(in_dtype, dtype, out=None):
    """The dtype numpy.mean sums in: float64 for integers and bool, float32 for float16, and for
    float32 and float64 with an `out` its promotion with theirs (numpy.mean sums into `out`)."""
    if dtype is not None:
        return dtype
    if in_dtype.kind in "biu":
        return np.float64
    return np.float32 if in_dtype == np.float16 else out_loop_dtype(None, in_dtype, out)


def mean_division(count, float16_result):
    """mean's finish step: the sum divided by the count, as numpy.mean divides (in the sum's
    precision, then cast to float16 when the input was)."""
    def finish(total):
        if isinstance(total, DeviceArray):
            return total._converted(np.dtype(np.float16) if float16_result else total.dtype, divisor=count)
        if isinstance(total, np.ndarray):
            total = np.true_divide(total, count, out=total, casting="unsafe")
            return total.astype(np.float16) if float16_result else total
        return (np.float16 if float16_result else total.dtype.type)(total / count)
    return finish


def mean(a, axis=None, dtype=None, out=None, keepdims=False, *, device=None):
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
    out : numpy.ndarray or DeviceArray, optional
        Where to write the result, as in :func:`gpuprims.sum`.
    keepdims : bool, optional
        Keep the reduced axes as dimensions of size one.
    device : {None, "cpu", "cuda", "cuda:N"}, optional
        Where to compute, as in :func:`gpuprims.sum`.

    Returns
    -------
    numpy.generic or numpy.ndarray or DeviceArray
        `out` when given.
    """
    quick = _lane_call(axis, dtype, keepdims, out)
    if quick:  # the common calls, from the core's quick lane once the first such call taught it
        slot, arguments = _lane_slot("mean", axis)
        result = _core.quick(slot, a, device, *arguments)
        if result is not NotImplemented:
            return result
    keepdims = keepdims_flag(keepdims)
    array, index = array_input(a, "mean", device)
    _count_axes_first(axis, array.ndim)
    axes = reduced_axes(axis, array.ndim)
    if array.size == 0:
        return _deliver("mean", Plan.by_numpy(lambda: like_input(
            np.mean(on_host(array), axis=axes, dtype=dtype, keepdims=keepdims), array)), out)
    accumulation_dtype("mean", array.dtype, dtype)  # validates dtype=
    sum_dtype = mean_sum_dtype(array.dtype, dtype, out)
    plan = _reduction("sum", array.dtype, array.ndim, axes, sum_dtype, keepdims).plan(array, index)
    sum_finish = plan.finish
    # numpy.mean divides a float16 input's float32 sum in float32, rounded to float16 unless out= takes it
    float16_result = dtype is None and out is None and array.dtype == np.float16
    divide = mean_division(math.prod(array.shape[axis] for axis in axes), float16_result)
    if quick and sum_finish is None:
        plan.teach_quick_lane(slot, a, *arguments, mean_of=np.dtype(np.float16) if float16_result else plan.out_dtype)
    plan.finish = divide if sum_finish is None else (lambda output: divide(sum_finish(output)))
    return _deliver("mean", plan, out)


def _count_axes_first(axis, ndim):
    """numpy.mean and numpy.var count the reduced elements before they sum, normalizing each axis
    as an index (a bool reads as 0 or 1 there): an axis out of range is NumPy's AxisError even where
    the sum would take it (axis 0 of a 0-d array) or refuse its type first (a bool)."""
    for item in () if axis is None else axis if isinstance(axis, tuple) else (axis,):
        try:
            index = operator.index(item)
        except TypeError:
            return  # not an index: the sum's own TypeError follows
        normalize_axis_index(index, ndim)


def _moments(op, a, axis, dtype, ddof, keepdims, device):
    """The plan of gpuprims.var/std.  NumPy answers what the backend does not compute: empty
    selections, ddof at or above the count (inf or NaN with its warnings) and integer dtype=."""
    keepdims = keepdims_flag(keepdims)
    array, index = array_input(a, op, device)
    if not (op.startswith("nan") and array.dtype.kind == "f"):  # those NumPy sums with numpy.sum
        _count_axes_first(axis, array.ndim)
    axes = reduced_axes(axis, array.ndim)
    count = math.prod(array.shape[axis] for axis in axes)
    result_dtype = _numpy_result_dtype(op, array.dtype, _dtype_argument(op, dtype))
    if array.size == 0 or not count - ddof > 0 or result_dtype.kind != "f":
        kwargs = {} if op == "nanmean" else {"ddof": ddof}
        def by_numpy():
            host = array.get() if isinstance(array, DeviceArray) and array.size else on_host(array)
            return like_input(_NUMPY[op](host, axis=axes, dtype=dtype, keepdims=keepdims, **kwargs), array)
        return Plan.by_numpy(by_numpy)
    plan = _reduction(op, array.dtype, array.ndim, axes, dtype, keepdims).plan(array, index, float(ddof))
    plan.finish = _numpy_where_not_finite(op, array, axes, dtype, ddof, plan.finish, count)
    return plan


def _any_nan(result):
    """Whether the result holds a NaN (a device result: by its max, one element brought back)."""
    if result.dtype.kind != "f" or not np.size(result):
        return False
    if isinstance(result, DeviceArray):
        result = max(result).get()
    return bool(np.isnan(result).any())


def _holds_non_finite(result):
    """Whether a float array (a result, or an input) holds NaN or inf (a device array: by its max and
    min, two elements brought back)."""
    if result.dtype.kind != "f" or not np.size(result):
        return False
    if isinstance(result, DeviceArray):
        result = np.array([max(result).get(), min(result).get()])
    return not bool(np.isfinite(result).all())


def _numpy_where_not_finite(op, array, axes, dtype, ddof, finish, count):
    """var, std, nanmean, nanvar and nanstd's finish step: `finish`, then, only where the result
    holds NaN or inf (or, for slices of `count` 1 element, the input does), NumPy's answer instead,
    computed by NumPy on the host input with all its signals: its floating-point errors in every
    numpy.errstate mode (from the steps where NumPy meets them: the sum's "reduce", the "subtract"
    of an infinite mean, the squares' "multiply") and the nan-functions' warning of a slice without
    enough numbers.  The backends' one pass shifts every element by its piece's first, which
    infinities and values near the float's largest turn into NaN or inf where NumPy's two passes
    give inf or a number.  A slice of one element is a deviation of 0 to the backends (along
    columns: no element after the first is shifted), where NumPy's x - mean is NaN for a NaN or an
    infinite x."""
    numpy_kwargs = {} if op == "nanmean" else {"ddof": ddof}

    def check(output):
        result = output if finish is None else finish(output)
        if not _holds_non_finite(result) and not (count == 1 and _holds_non_finite(array)):
            return result
        host = array.get() if isinstance(array, DeviceArray) else array
        expected = np.asarray(_NUMPY[op](host, axis=axes, dtype=dtype, **numpy_kwargs), result.dtype)
        expected = expected.reshape(np.shape(result))
        if isinstance(result, DeviceArray):
            return like_input(expected, array)
        return expected if isinstance(result, np.ndarray) else expected[()]
    return check


def _all_nan_warning(result):
    """nanmin/nanmax's result, with NumPy's RuntimeWarning where a slice of NaNs made it NaN."""
    if _any_nan(result):
        warnings.warn("All-NaN slice encountered", RuntimeWarning, stacklevel=3)
    return result


def _holds_no_nan(a):
    """Whether `a` is an array of a dtype without NaN (bool, integers): nanargmin/nanargmax are then
    argmin/argmax, as NumPy's, without the look for a slice of NaNs."""
    dtype = getattr(a, "dtype", None)
    return isinstance(dtype, np.dtype) and dtype.kind in "biu"


def _all_nan_error(result):
    """nanargmin/nanargmax's result, or NumPy's ValueError where a slice of NaNs made an index -1."""
    if isinstance(result, np.integer):  # the common case, without an array reduction's cost
        lowest = result
    elif not np.size(result):
        return result
    else:
        lowest = min(result).get() if isinstance(result, DeviceArray) else np.min(result)
    if lowest < 0:
        raise ValueError("All-NaN slice encountered")
    return result


def var(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, device=None):
    """Variance over the given axes, as :func:`numpy.var`: the mean of the squared deviations
    from the mean, ``sum((x - x.mean())**2) / (N - ddof)``.

    One pass over the data: each piece (a GPU thread's elements, a CPU piece of 16384) is reduced
    to sums of deviations from its first element, and the pieces' (count, mean, M2) are combined by
    Chan, Golub and LeVeque's pairwise formula, in double for every input dtype.  The result is as
    accurate as NumPy's two passes or more (a float32 array with a large mean and a small spread
    included).

    Parameters
    ----------
    a : array_like
        Input data: bool, signed or unsigned integers, float16, float32 or float64 (complex is not
        supported: TypeError).
    axis : None or int or tuple of ints, optional
        Axes to compute the variance over; None means all.
    dtype : dtype, optional
        The result dtype.  By default float64 for integer and bool inputs, else the input's float
        dtype (float16 stays float16).  An integer dtype is NumPy's own computation.
    out : numpy.ndarray or DeviceArray, optional
        Where to write the result, as in :func:`gpuprims.sum`.
    ddof : int or float, optional
        Delta degrees of freedom: the divisor is ``N - ddof``.  Where it is not positive the result
        is NumPy's (inf, or NaN for a constant slice) with its RuntimeWarning ``Degrees of freedom
        <= 0 for slice``.
    keepdims : bool, optional
        Keep the reduced axes as dimensions of size one.
    device : {None, "cpu", "cuda", "cuda:N"}, optional
        Where to compute, as in :func:`gpuprims.sum`.

    Returns
    -------
    numpy.generic or numpy.ndarray or DeviceArray
        A NumPy scalar for a full reduction of host data, else an array; a DeviceArray for
        device-resident input; `out` when given.  An empty selection gives NaN with NumPy's
        RuntimeWarning.

    Raises
    ------
    TypeError
        For unsupported input or dtype= dtypes (complex, strings, objects, datetimes).
    numpy.exceptions.AxisError
        For an axis out of range.
    """
    return _deliver("var", _moments("var", a, axis, dtype, ddof, keepdims, device), out)


def std(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, device=None):
    """Standard deviation over the given axes, as :func:`numpy.std`: the square root of
    :func:`gpuprims.var`, with the same parameters, algorithm and rules.

    Returns
    -------
    numpy.generic or numpy.ndarray or DeviceArray
    """
    return _deliver("std", _moments("std", a, axis, dtype, ddof, keepdims, device), out)


def argmin(a, axis=None, out=None, *, keepdims=False, device=None):
    """Index of the minimum along an axis, as :func:`numpy.argmin`.

    The first occurrence wins; a NaN wins over every number, so a slice holding NaNs gives the
    index of its first NaN.

    Parameters
    ----------
    a : array_like
        Input data: bool, signed or unsigned integers, float16, float32 or float64.
    axis : int, optional
        The axis to search along.  None (default) searches the flattened array (C order) and
        returns an index into it.
    out : numpy.ndarray or DeviceArray, optional
        Where to write the indices, as in :func:`gpuprims.sum`; its dtype must hold intp values
        safely (TypeError otherwise: a float or uint64 `out`).
    keepdims : bool, optional
        Keep the searched axis (every axis when `axis` is None) as a dimension of size one.
    device : {None, "cpu", "cuda", "cuda:N"}, optional
        Where to compute, as in :func:`gpuprims.sum`.

    Returns
    -------
    numpy.intp or numpy.ndarray or DeviceArray
        Indices of dtype intp: a NumPy scalar for a whole-array search of host data, else an
        array; a DeviceArray for device-resident input; `out` when given.

    Raises
    ------
    ValueError
        When the searched axis is empty (``attempt to get argmin of an empty sequence``).
    TypeError
        For a tuple or non-integer `axis`, and unsupported dtypes.
    numpy.exceptions.AxisError
        For an axis out of range.
    """
    return _result("argmin", a, axis, None, keepdims, device, out, plan_of=_arg_reduce)


def argmax(a, axis=None, out=None, *, keepdims=False, device=None):
    """Index of the maximum along an axis, as :func:`numpy.argmax`.

    The first occurrence wins; a NaN wins over every number (the first NaN's index).  See
    :func:`gpuprims.argmin` for the parameters, result and errors.

    Returns
    -------
    numpy.intp or numpy.ndarray or DeviceArray
    """
    return _result("argmax", a, axis, None, keepdims, device, out, plan_of=_arg_reduce)


def any(a, axis=None, out=None, keepdims=False, *, device=None):
    """Whether any element along the given axes is true, as :func:`numpy.any`.

    An element is true when it is nonzero: NaN is true, -0.0 is not.

    Parameters
    ----------
    a : array_like
        Input data: bool, signed or unsigned integers, float16, float32 or float64.
    axis : None or int or tuple of ints, optional
        Axes to reduce; None reduces all of them.
    out : numpy.ndarray or DeviceArray, optional
        Where to write the result, as in :func:`gpuprims.sum` (any dtype: True is written as 1).
    keepdims : bool, optional
        Keep the reduced axes as dimensions of size one.
    device : {None, "cpu", "cuda", "cuda:N"}, optional
        Where to compute, as in :func:`gpuprims.sum`.

    Returns
    -------
    numpy.bool or numpy.ndarray or DeviceArray
        A NumPy bool for a full reduction of host data, else a bool array; a DeviceArray for
        device-resident input; `out` when given.  An empty selection is False.
    """
    return _result("any", a, axis, None, keepdims, device, out)


def all(a, axis=None, out=None, keepdims=False, *, device=None):
    """Whether every element along the given axes is true (nonzero), as :func:`numpy.all`.

    NaN is true, -0.0 is not; an empty selection is True.  See :func:`gpuprims.any` for the
    parameters.

    Returns
    -------
    numpy.bool or numpy.ndarray or DeviceArray
    """
    return _result("all", a, axis, None, keepdims, device, out)


def count_nonzero(a, axis=None, *, keepdims=False, device=None):
    """The number of nonzero elements along the given axes, as :func:`numpy.count_nonzero`.

    NaN counts, -0.0 does not.

    Parameters
    ----------
    a : array_like
        Input data.
    axis : None or int or tuple of ints, optional
        Axes to count along; None counts the whole array.
    keepdims : bool, optional
        Keep the counted axes as dimensions of size one.  As NumPy, a false value (None too) with
        `axis` None counts the whole array; others are read as :func:`gpuprims.sum` reads them.
    device : {None, "cpu", "cuda", "cuda:N"}, optional
        Where to compute, as in :func:`gpuprims.sum`.

    Returns
    -------
    int or numpy.intp or numpy.ndarray or DeviceArray
        With `axis` None and no `keepdims` the count as NumPy returns it (a Python int before
        NumPy 2.3, an intp scalar since); else an intp array; a DeviceArray (0-d for a whole-array
        count) for device-resident input.
    """
    if axis is None and not keepdims:  # NumPy's whole-array count reads keepdims as a truth value (None too)
        keepdims = False
    plan = _reduce("count_nonzero", a, axis, None, keepdims, device)
    if axis is None and not keepdims and plan.entry is not None and not isinstance(plan.source, DeviceArray):
        plan.finish = _COUNT_TYPE
    return plan.run()


def nansum(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, *, device=None):
    """Sum over the given axes with NaN counted as zero, as :func:`numpy.nansum`.

    The kernels read a NaN as 0 as they sum (no copy of the data); a slice of NaNs (or an empty
    one) sums to 0.  Integer and bool inputs hold no NaN: their sum is :func:`gpuprims.sum`'s.
    The parameters (`out` and `initial` included) and dtype rules are :func:`gpuprims.sum`'s; an
    integer or bool dtype= for float input is NumPy's own computation.

    Returns
    -------
    numpy.generic or numpy.ndarray or DeviceArray
        As :func:`gpuprims.sum`.
    """
    return _result("nansum", a, axis, dtype, keepdims, device, out, initial)


def nanprod(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, *, device=None):
    """Product over the given axes with NaN counted as one, as :func:`numpy.nanprod`.

    A slice of NaNs has the product 1.  See :func:`gpuprims.nansum` for the parameters.

    Returns
    -------
    numpy.generic or numpy.ndarray or DeviceArray
    """
    return _result("nanprod", a, axis, dtype, keepdims, device, out, initial)


def nanmin(a, axis=None, out=None, keepdims=False, initial=None, *, device=None):
    """Minimum over the given axes, ignoring NaNs, as :func:`numpy.nanmin`.

    A slice of NaNs has the minimum NaN, with NumPy's RuntimeWarning ``All-NaN slice
    encountered`` (with `initial`, `initial`).  Integer and bool inputs give
    :func:`gpuprims.min`'s result.  See :func:`gpuprims.min` for the parameters (`out`,
    `initial` included).

    Returns
    -------
    numpy.generic or numpy.ndarray or DeviceArray

    Raises
    ------
    ValueError
        For an empty selection without `initial`, as NumPy.
    """
    return _all_nan_warning(_result("nanmin", a, axis, None, keepdims, device, out, initial))


def nanmax(a, axis=None, out=None, keepdims=False, initial=None, *, device=None):
    """Maximum over the given axes, ignoring NaNs, as :func:`numpy.nanmax`.

    See :func:`gpuprims.nanmin` for the parameters, warnings and errors.

    Returns
    -------
    numpy.generic or numpy.ndarray or DeviceArray
    """
    return _all_nan_warning(_result("nanmax", a, axis, None, keepdims, device, out, initial))


def nanmean(a, axis=None, dtype=None, out=None, keepdims=False, *, device=None):
    """Arithmetic mean over the given axes, ignoring NaNs, as :func:`numpy.nanmean`.

    One pass over the data: the count and the mean of the numbers of each slice come from the
    moments of :func:`gpuprims.var` (in double, whatever the input), so the result is at least as
    accurate as NumPy's.  A slice of NaNs gives NaN with NumPy's RuntimeWarning ``Mean of empty
    slice``.  Integer and bool inputs give :func:`gpuprims.mean`'s result.  The parameters are
    :func:`gpuprims.mean`'s (`out` included); an integer dtype= for float input is NumPy's own
    computation.

    Returns
    -------
    numpy.generic or numpy.ndarray or DeviceArray
        `out` when given.
    """
    array, _ = array_input(a, "nanmean", device)
    _check_inexact_out("nanmean", array, out)
    if array.dtype.kind != "f":
        return mean(array, axis, dtype, out, keepdims, device=device)
    return _deliver("nanmean", _moments("nanmean", array, axis, dtype, 0, keepdims, device), out)


def nanvar(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, device=None):
    """Variance over the given axes, ignoring NaNs, as :func:`numpy.nanvar`.

    :func:`gpuprims.var`'s one pass, with the NaNs left out of each slice's count and sums.  Where a
    slice has no more numbers than `ddof` the result is NaN, with NumPy's RuntimeWarning ``Degrees
    of freedom <= 0 for slice.``.  Integer and bool inputs give :func:`gpuprims.var`'s result.
    See :func:`gpuprims.var` for the parameters.

    Returns
    -------
    numpy.generic or numpy.ndarray or DeviceArray
    """
    _check_inexact_out("nanvar", a, out)
    return _deliver("nanvar", _moments("nanvar", a, axis, dtype, ddof, keepdims, device), out)


def nanstd(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, device=None):
    """Standard deviation over the given axes, ignoring NaNs, as :func:`numpy.nanstd`: the square
    root of :func:`gpuprims.nanvar`, with its parameters and rules.

    Returns
    -------
    numpy.generic or numpy.ndarray or DeviceArray
    """
    _check_inexact_out("nanstd", a, out)
    return _deliver("nanstd", _moments("nanstd", a, axis, dtype, ddof, keepdims, device), out)


def nanargmin(a, axis=None, out=None, *, keepdims=False, device=None):
    """Index of the minimum along an axis, ignoring NaNs, as :func:`numpy.nanargmin`.

    As NumPy, a NaN reads as +inf: it never wins over a number, but where the minimum is +inf the
    first of the +inf and NaN elements wins.  Integer and bool inputs give :func:`gpuprims.argmin`'s
    result.  See :func:`gpuprims.argmin` for the parameters.

    Returns
    -------
    numpy.intp or numpy.ndarray or DeviceArray

    Raises
    ------
    ValueError
        For a slice of NaNs (``All-NaN slice encountered``) and an empty one, as NumPy.
    """
    if _holds_no_nan(a):
        return argmin(a, axis, out, keepdims=keepdims, device=device)
    return _all_nan_error(_result("nanargmin", a, axis, None, keepdims, device, out, plan_of=_arg_reduce))


def nanargmax(a, axis=None, out=None, *, keepdims=False, device=None):
    """Index of the maximum along an axis, ignoring NaNs (read as -inf), as :func:`numpy.nanargmax`.

    See :func:`gpuprims.nanargmin` for the parameters, result and errors.

    Returns
    -------
    numpy.intp or numpy.ndarray or DeviceArray
    """
    if _holds_no_nan(a):
        return argmax(a, axis, out, keepdims=keepdims, device=device)
    return _all_nan_error(_result("nanargmax", a, axis, None, keepdims, device, out, plan_of=_arg_reduce))
