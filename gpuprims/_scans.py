"""The scans: prefix_sum (numpy.cumsum, and its exclusive form) and cumsum.

A scan becomes one plan for the core's scan primitive over the (outer, n, inner) view of the
input along the scanned axis; dtypes follow numpy.cumsum through the core's accumulator rule.
"""
import functools
import math

import numpy as np

from . import _core
from ._boundary import array_input, axis_index, bool_flag, like_input
from ._plan import Plan
from ._reductions import accumulation_dtype, backend_dtypes, cast_to


class _Scan:
    """What a scan does that depends on its arguments and the input's dtype and ndim, not on the
    data: worked out once per distinct call and reused."""

    __slots__ = ("flatten", "axis", "cast", "result_dtype", "backend_dtype", "finish", "exclusive")

    def __init__(self, in_dtype, ndim, axis, dtype, exclusive):
        # axis None scans the flattened array; NumPy scans a 0-d array as a 1-element 1-d array
        self.flatten = axis is None or ndim == 0
        self.axis = axis_index(0 if axis is None else axis, 1 if self.flatten else ndim)
        self.result_dtype = accumulation_dtype("cumsum", in_dtype, dtype)
        self.backend_dtype, self.cast = backend_dtypes(in_dtype, self.result_dtype)
        self.finish = None if self.backend_dtype == self.result_dtype else cast_to(self.result_dtype)
        self.exclusive = exclusive

    def plan(self, array, index):
        """The plan for `array` on backend device `index` (an empty array: NumPy's zeros)."""
        if self.flatten and array.ndim != 1:
            array = array.reshape(-1)
        if array.size == 0:
            return Plan.by_numpy(lambda: like_input(np.zeros(array.shape, self.result_dtype), array))
        if self.cast is not None:
            array = array.astype(self.cast)
        if type(array) is not np.ndarray:
            array = array.contiguous()
        shape, axis = array.shape, self.axis
        outer, inner = (1, 1) if len(shape) == 1 else (math.prod(shape[:axis]), math.prod(shape[axis + 1:]))
        return Plan(_core.scan, array, (self.backend_dtype.num, outer, shape[axis], inner, self.exclusive), shape,
                    self.backend_dtype, index, self.finish)


@functools.lru_cache(maxsize=1024, typed=True)
def _cached_scan(in_dtype, ndim, axis, dtype, exclusive):
    return _Scan(in_dtype, ndim, axis, dtype, exclusive)


def _scan(a, axis, dtype, exclusive, device):
    """The plan of prefix_sum(a, axis, dtype, exclusive)."""
    exclusive = bool_flag(exclusive, "exclusive")
    array, index = array_input(a, "prefix_sum", device)
    return _scan_of(array.dtype, array.ndim, axis, dtype, exclusive).plan(array, index)


def _scan_of(in_dtype, ndim, axis, dtype, exclusive):
    """The _Scan of these arguments (NumPy's errors for bad ones)."""
    if axis is None or type(axis) is int:  # the axis forms a cache may key on (True == 1 is an error)
        try:
            return _cached_scan(in_dtype, ndim, axis, dtype, exclusive)
        except TypeError:  # an unhashable dtype= (raises NumPy's error below)
            pass
    return _Scan(in_dtype, ndim, axis, dtype, exclusive)


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
        Where to compute, as in :func:`gpuprims.sum` (None: the fastest).

    Returns
    -------
    numpy.ndarray or DeviceArray
        A new C-contiguous array; 1-D when axis is None.
    """
    return _scan(a, axis, dtype, exclusive, device).run()


def cumsum(a, axis=None, dtype=None, *, device=None):
    """Cumulative sum, as :func:`numpy.cumsum` (the inclusive :func:`gpuprims.prefix_sum`).

    Returns
    -------
    numpy.ndarray or DeviceArray
    """
    return _scan(a, axis, dtype, False, device).run()
