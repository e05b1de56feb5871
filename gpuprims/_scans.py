"""The scans: cumsum and prefix_sum (with its exclusive form), cumprod, cummax, cummin, nancumsum,
nancumprod, cumulative_sum and cumulative_prod.

A scan becomes one plan for the core's scan primitive over the (outer, n, inner) view of the
input along the scanned axis, with its operator (sum, product, min or max; the nan-functions read
NaN as the operator's identity).  Result dtypes follow NumPy's through the core's accumulator rule;
min and max keep the input's dtype.
"""
import functools
import math

import numpy as np

from . import _core
from ._boundary import array_input, axis_index, bool_flag, like_input, supported
from ._device_array import DeviceArray
from ._plan import QUICK_AXIS_SLOTS, QUICK_SLOTS, Plan, cast_into, check_out, out_loop_dtype
from ._reductions import backend_dtypes, cast_to

_SUM, _PROD, _MIN, _MAX = 0, 1, 2, 3  # the core's operators (gp_op)

# name -> (operator, the NumPy function whose result dtype the scan has (None: the input's), NaN
# read as the operator's identity)
_OPERATORS = {
    "cumsum": (_SUM, np.cumsum, False),
    "cumprod": (_PROD, np.cumprod, False),
    "nancumsum": (_SUM, np.cumsum, True),
    "nancumprod": (_PROD, np.cumprod, True),
    "cummax": (_MAX, None, False),
    "cummin": (_MIN, None, False),
}


@functools.lru_cache(maxsize=None, typed=True)  # typed: int64 and longlong are equal dtypes
def _numpy_result_dtype(name, numpy_function, in_dtype, dtype):
    """The dtype NumPy's scan returns for this input dtype and dtype= argument."""
    if dtype is not None:
        try:
            dtype = np.dtype(dtype)
        except TypeError as error:
            raise TypeError(f"gpuprims.{name}: invalid dtype={dtype!r}: {error}") from None
    result = numpy_function(np.ones(1, in_dtype), dtype=dtype).dtype
    if not supported(result):
        raise TypeError(f"gpuprims.{name} does not support dtype={dtype!r} (result dtype {result})")
    return result


class _Scan:
    """What a scan does that depends on its arguments and the input's dtype and ndim, not on the
    data: worked out once per distinct call and reused."""

    __slots__ = ("name", "flatten", "axis", "op", "skip_nan", "nan_first", "cast", "result_dtype", "backend_dtype",
                 "finish", "exclusive")

    def __init__(self, name, in_dtype, ndim, axis, dtype, exclusive):
        op, numpy_function, skip_nan = _OPERATORS[name]
        self.name = name
        # axis None scans the flattened array; NumPy scans a 0-d array as a 1-element 1-d array
        self.flatten = axis is None or ndim == 0
        self.axis = axis_index(0 if axis is None else axis, 1 if self.flatten else ndim)
        if numpy_function is None:
            self.result_dtype = self.backend_dtype = in_dtype.newbyteorder("=")
            self.cast = None
        else:
            self.result_dtype = _numpy_result_dtype(name, numpy_function, in_dtype, dtype)
            if self.result_dtype.kind == "b":  # NumPy's add and multiply on bool are logical or and and
                op, self.cast, self.backend_dtype = (_MAX if op == _SUM else _MIN), np.dtype(bool), self.result_dtype
            else:
                self.backend_dtype, self.cast = backend_dtypes(in_dtype, self.result_dtype)
        self.op = op
        nan_rule = skip_nan and in_dtype.kind == "f"
        # NaN becomes the identity before a cast to integers or bool would turn it into a number;
        # else the backend reads it as the identity
        self.nan_first = nan_rule and self.cast is not None and self.cast.kind != "f"
        self.skip_nan = nan_rule and not self.nan_first
        self.finish = None if self.backend_dtype == self.result_dtype else cast_to(self.result_dtype, "accumulate")
        self.exclusive = bool(exclusive)

    @property
    def identity(self):
        """The operator's identity, which include_initial puts first (sums and or: 0, products and
        and: 1)."""
        return 0 if self.op in (_SUM, _MAX) else 1

    def result_shape(self, shape, initial=False):
        """The result's shape for an input of `shape` (one more element along the axis with
        include_initial)."""
        shape = (math.prod(shape),) if self.flatten else tuple(shape)
        if initial:
            shape = shape[:self.axis] + (shape[self.axis] + 1,) + shape[self.axis + 1:]
        return shape

    def plan(self, array, index, initial=None):
        """The plan for `array` on backend device `index` (an empty array: NumPy's zeros).  A
        flattened NumPy array is scanned in its C order as it is (a strided view in place, on the
        CPU), not reshaped (a copy, for a view).  `initial`: None, or the value each line along the
        axis starts from (see :func:`carried_prefix_sum`)."""
        if self.flatten and array.ndim != 1 and type(array) is not np.ndarray:
            array = array.reshape(-1)
        if array.size == 0:
            return Plan.by_numpy(lambda: like_input(np.zeros(self.result_shape(array.shape), self.result_dtype), array))
        if self.nan_first:
            if isinstance(array, DeviceArray):
                raise TypeError(f"gpuprims.{self.name}: a dtype= that casts float device data to "
                                f"{self.cast} is not supported")
            array = np.where(np.isnan(array), array.dtype.type(self.identity), array)
        if self.cast is not None:
            array = array.astype(self.cast)
        if type(array) is not np.ndarray:
            array = array.contiguous()
        shape, axis = self.result_shape(array.shape), self.axis
        outer, inner = (1, 1) if len(shape) == 1 else (math.prod(shape[:axis]), math.prod(shape[axis + 1:]))
        initial = None if initial is None else self._initial_values(initial, outer * inner)
        params = (self.backend_dtype.num, outer, shape[axis], inner, self.exclusive, self.op, self.skip_nan, initial)
        return Plan(_core.scan, array, params, shape, self.backend_dtype, index, self.finish)

    def _initial_values(self, initial, lines):
        """`initial` as the core takes a scan's initial values: a host array of one 8-byte value
        per line, float64 for a float backend dtype, else the 64-bit integer."""
        if not isinstance(initial, np.ndarray):
            initial = initial.get() if hasattr(initial, "get") else np.asarray(initial)  # CuPy, DeviceArray
        kind = self.backend_dtype.kind
        values = np.ascontiguousarray(initial, np.float64 if kind == "f" else np.int64 if kind == "i" else np.uint64)
        if values.size != lines:
            raise ValueError(f"gpuprims.{self.name}: {values.size} initial values for {lines} lines")
        return values.reshape(-1)


@functools.lru_cache(maxsize=1024, typed=True)
def _cached_scan(name, in_dtype, ndim, axis, dtype, exclusive):
    return _Scan(name, in_dtype, ndim, axis, dtype, exclusive)


def _scan_of(name, in_dtype, ndim, axis, dtype, exclusive):
    """The _Scan of these arguments (NumPy's errors for bad ones)."""
    if axis is None or type(axis) is int:  # the axis forms a cache may key on (True == 1 is an error)
        try:
            return _cached_scan(name, in_dtype, ndim, axis, dtype, bool(exclusive))
        except TypeError:  # an unhashable dtype= (raises NumPy's error below)
            pass
    return _Scan(name, in_dtype, ndim, axis, dtype, exclusive)


def _loop_dtype(name, dtype, array, out):
    """The dtype= a sum or product scan runs with: NumPy's accumulate computes in out's promotion
    with the input's dtype when no dtype= is given (cummax and cummin keep the input's)."""
    return dtype if _OPERATORS[name][1] is None else out_loop_dtype(dtype, array.dtype, out)


def _run(name, a, axis, dtype, out, device, exclusive=False):
    """The result of the scan `name` of `a` (into `out` when given); the common call from the
    core's quick lane, which the first such call for each dtype teaches."""
    if (axis is None or type(axis) is int) and dtype is None and out is None and exclusive is False:
        slot, arguments = (QUICK_SLOTS[name], ()) if axis is None else (QUICK_AXIS_SLOTS[name], (axis,))
        result = _core.quick(slot, a, device, *arguments)
        if result is not NotImplemented:
            return result
        array, index = array_input(a, name, device)
        plan = _scan_of(name, array.dtype, array.ndim, axis, dtype, exclusive).plan(array, index)
        plan.teach_quick_lane(slot, a, *arguments)
        return plan.run()
    array, index = array_input(a, name, device)
    scan = _scan_of(name, array.dtype, array.ndim, axis, _loop_dtype(name, dtype, array, out), exclusive)
    if out is None:
        return scan.plan(array, index).run()
    return scan.plan(array, index).run(check_out(name, out, scan.result_shape(array.shape), array))


def _run_with_initial(name, x, axis, dtype, out, include_initial, device):
    """cumulative_sum / cumulative_prod: NumPy >= 2.1's rules (axis required for ndim > 1; 0-d is
    1-d), include_initial (read as a truth value, as NumPy reads it) putting the identity first."""
    array, index = array_input(x, name, device)
    if axis is None and array.ndim > 1:
        raise ValueError("For arrays which have more than one dimension ``axis`` argument is required.")
    if isinstance(axis, tuple):  # NumPy takes a tuple of one axis (0-d arrays read as 1-d)
        axes = [axis_index(item, max(array.ndim, 1)) for item in axis]
        if len(axes) != 1:
            raise ValueError("accumulate does not allow multiple axes")
        axis = axes[0]
    scan = _scan_of(name, array.dtype, array.ndim, axis, _loop_dtype(name, dtype, array, out), False)
    if not include_initial:
        return scan.plan(array, index).run(check_out(name, out, scan.result_shape(array.shape), array))
    shape = scan.result_shape(array.shape, initial=True)
    out = check_out(name, out, shape, array)
    if isinstance(array, DeviceArray):
        result = _device_with_initial(scan, array, index, shape)
        return result if out is None else cast_into(out, result)
    result = np.empty(shape, scan.result_dtype) if out is None else out
    before = (slice(None),) * scan.axis
    scan.plan(array, index).run(result[before + (slice(1, None),)])
    result[before + (slice(0, 1),)] = scan.identity  # after the scan, which reads an input `out` may overlap
    return result


def _device_with_initial(scan, array, index, shape):
    """include_initial on device data: the scan written after a slab of identities, along the first
    axis of the scanned axis moved first (moved back after)."""
    if scan.flatten and array.ndim != 1:
        array = array.reshape(-1)
    axis = scan.axis
    if axis != 0:
        order = (axis,) + tuple(d for d in range(array.ndim) if d != axis)
        moved = _device_with_initial(_along_first(scan), array.transpose(order).contiguous(),
                                     index, tuple(shape[d] for d in order))
        return moved.transpose(tuple(np.argsort(order))).contiguous()
    result = DeviceArray._empty(shape, scan.result_dtype, array.device_index)
    slab = np.full(shape[1:], scan.identity, scan.result_dtype)
    _core.memcpy(array.device_index, result.ptr, slab.ctypes.data, slab.nbytes, True)
    rest = DeviceArray(result._owner, result.ptr + slab.nbytes, array.shape, result.dtype,
                       result.strides, array.device_index)
    scan.plan(array, index).run(rest)
    return result


def _along_first(scan):
    """The same scan along axis 0."""
    moved = object.__new__(_Scan)
    for slot in _Scan.__slots__:
        setattr(moved, slot, getattr(scan, slot))
    moved.axis = 0
    return moved


def carried_prefix_sum(a, initial, axis, dtype=None, exclusive=False, device=None):
    """:func:`prefix_sum` of `a` along `axis` with every line starting from its value in
    `initial`: the scan of one chunk of a longer array whose earlier chunks sum to `initial`
    (gpuprims.dask's scans), in one pass and without a second one to add the carry.

    Parameters
    ----------
    a : array_like
        Input data.
    initial : array_like
        One value per line: the result's shape with `axis` of length 1 (host or device data); an
        exclusive scan's first element, added first in an inclusive one.
    axis : int or None
        As in :func:`prefix_sum`.
    dtype, exclusive, device
        As in :func:`prefix_sum`.

    Returns
    -------
    numpy.ndarray or DeviceArray
    """
    array, index = array_input(a, "prefix_sum", device)
    return _scan_of("cumsum", array.dtype, array.ndim, axis, dtype, exclusive).plan(array, index, initial).run()


def prefix_sum(a, axis=None, dtype=None, exclusive=False, *, out=None, device=None):
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
    out : numpy.ndarray or DeviceArray, optional
        Where to write the result: of the result's shape (values are cast to its dtype); a
        device array for device data.  A C-contiguous `out` of the result's dtype is written by
        the backend itself (a pinned host one by the copy engine).
    device : {None, "cpu", "cuda", "cuda:N"}, optional
        Where to compute, as in :func:`gpuprims.sum` (None: the fastest).

    Returns
    -------
    numpy.ndarray or DeviceArray
        A new C-contiguous array (1-D when axis is None), or `out`.
    """
    if type(exclusive) is not bool:
        exclusive = bool_flag(exclusive, "exclusive")
    return _run("cumsum", a, axis, dtype, out, device, exclusive)


def cumsum(a, axis=None, dtype=None, out=None, *, device=None):
    """Cumulative sum, as :func:`numpy.cumsum` (the inclusive :func:`gpuprims.prefix_sum`).

    Parameters
    ----------
    a, axis, dtype, out, device
        As in :func:`gpuprims.prefix_sum`.

    Returns
    -------
    numpy.ndarray or DeviceArray
    """
    return _run("cumsum", a, axis, dtype, out, device)


def cumprod(a, axis=None, dtype=None, out=None, *, device=None):
    """Cumulative product, as :func:`numpy.cumprod`.

    Parameters
    ----------
    a : array_like
        Input data.
    axis : int, optional
        Axis to scan; None scans the flattened array (C order).
    dtype : dtype, optional
        Accumulator and result dtype, with NumPy's default rule (integers and bool multiply as
        int64 or uint64 and wrap around; floats in their own type).
    out : numpy.ndarray or DeviceArray, optional
        Where to write the result, as in :func:`gpuprims.prefix_sum`.
    device : {None, "cpu", "cuda", "cuda:N"}, optional
        Where to compute (None: the fastest).

    Returns
    -------
    numpy.ndarray or DeviceArray
    """
    return _run("cumprod", a, axis, dtype, out, device)


def cummax(a, axis=None, out=None, *, device=None):
    """Cumulative maximum, as :func:`numpy.maximum.accumulate` (over the flattened array when
    `axis` is None, as :func:`numpy.cumsum`).

    Parameters
    ----------
    a : array_like
        Input data.
    axis : int, optional
        Axis to scan; None scans the flattened array (C order).
    out : numpy.ndarray or DeviceArray, optional
        Where to write the result, as in :func:`gpuprims.prefix_sum`.
    device : {None, "cpu", "cuda", "cuda:N"}, optional
        Where to compute (None: the fastest).

    Returns
    -------
    numpy.ndarray or DeviceArray
        Of the input's dtype; a NaN propagates to every later element, as in
        :func:`numpy.maximum`.
    """
    return _run("cummax", a, axis, None, out, device)


def cummin(a, axis=None, out=None, *, device=None):
    """Cumulative minimum, as :func:`numpy.minimum.accumulate`; see :func:`gpuprims.cummax`.

    Returns
    -------
    numpy.ndarray or DeviceArray
    """
    return _run("cummin", a, axis, None, out, device)


def nancumsum(a, axis=None, dtype=None, out=None, *, device=None):
    """Cumulative sum with NaN counted as zero, as :func:`numpy.nancumsum`.

    Parameters
    ----------
    a, axis, dtype, out, device
        As in :func:`gpuprims.cumsum`.

    Returns
    -------
    numpy.ndarray or DeviceArray
        A NaN that the sums themselves make (inf - inf) is kept.
    """
    return _run("nancumsum", a, axis, dtype, out, device)


def nancumprod(a, axis=None, dtype=None, out=None, *, device=None):
    """Cumulative product with NaN counted as one, as :func:`numpy.nancumprod`; the arguments are
    :func:`gpuprims.cumprod`'s.

    Returns
    -------
    numpy.ndarray or DeviceArray
    """
    return _run("nancumprod", a, axis, dtype, out, device)


def cumulative_sum(x, /, *, axis=None, dtype=None, out=None, include_initial=False, device=None):
    """Cumulative sum, as :func:`numpy.cumulative_sum` (NumPy >= 2.1).

    Parameters
    ----------
    x : array_like
        Input data.
    axis : int, optional
        Axis to scan; required when `x` has more than one dimension (a 0-d `x` is scanned as 1-d).
    dtype : dtype, optional
        Accumulator and result dtype, as in :func:`gpuprims.cumsum`.
    out : numpy.ndarray or DeviceArray, optional
        Where to write the result, as in :func:`gpuprims.prefix_sum`.
    include_initial : bool, optional
        If true, the result starts with the sum's identity (0) and is one longer along `axis`.  Any
        truth value is taken, as NumPy takes it.
    device : {None, "cpu", "cuda", "cuda:N"}, optional
        Where to compute (None: the fastest).

    Returns
    -------
    numpy.ndarray or DeviceArray
    """
    return _run_with_initial("cumsum", x, axis, dtype, out, include_initial, device)


def cumulative_prod(x, /, *, axis=None, dtype=None, out=None, include_initial=False, device=None):
    """Cumulative product, as :func:`numpy.cumulative_prod` (NumPy >= 2.1); include_initial puts 1
    first.  See :func:`gpuprims.cumulative_sum`.

    Returns
    -------
    numpy.ndarray or DeviceArray
    """
    return _run_with_initial("cumprod", x, axis, dtype, out, include_initial, device)
