"""transpose: NumPy's axis semantics on top of gpuprims' strided-copy engine.

A transpose is the C-contiguous copy of a permuted view: the view only reorders shape and strides,
and the core's copy primitive (``_core.copy``) copies any strided view (negative and zero strides
included).
"""
from . import _core
from ._boundary import array_input, axis_integer, normalize_axis_index
from ._plan import QUICK_SLOTS, Plan


def permutation(axes, ndim):
    """The permutation numpy.transpose(a, axes) applies, with NumPy's errors.

    Like NumPy, every entry is read as an integer first (TypeError), then the length is checked
    (ValueError), then the axes in order: out of range (AxisError) or repeated (ValueError).
    """
    if axes is None:
        return tuple(range(ndim - 1, -1, -1))
    try:
        items = list(axes)
    except TypeError:  # a single integer names the only axis of a 1-d array
        items = [axes]
    items = [axis_integer(item) for item in items]
    if len(items) != ndim:
        raise ValueError("axes don't match array")
    order = []
    for item in items:
        axis = normalize_axis_index(item, ndim)
        if axis in order:
            raise ValueError("repeated axis in transpose")
        order.append(axis)
    return tuple(order)


def _permuted(array, axes):
    view = array.transpose(permutation(axes, array.ndim))
    return view.reshape(1) if view.ndim == 0 else view  # numpy.ascontiguousarray is at least 1-d


def transpose(a, axes=None, *, device=None):
    """Permute the axes of an array into a new C-contiguous array.

    Returns what ``numpy.ascontiguousarray(numpy.transpose(a, axes))`` returns: the values of the
    permuted view, copied.

    Parameters
    ----------
    a : array_like
        Input data: bool, signed or unsigned integers, float16, float32 or float64, any number of
        dimensions, any strides (views, negative and zero strides, byte-swapped dtypes).
    axes : None or sequence of int, optional
        A permutation of ``range(a.ndim)``; negative axes count from the end.  None reverses the
        axes.  Axis ``i`` of the result is axis ``axes[i]`` of `a`.
    device : {None, "cpu", "cuda", "cuda:N"}, optional
        Where to copy; None means ``GPUPRIMS_DEVICE`` or the GPU when one is usable.

    Returns
    -------
    numpy.ndarray or DeviceArray
        A new C-contiguous array with `a`'s dtype (byte order included).  A 0-d input gives a
        1-element 1-d array, as :func:`numpy.ascontiguousarray` does.  Device-resident inputs
        (DeviceArray, CuPy, PyTorch, ...) give a DeviceArray on their device.

    Raises
    ------
    TypeError
        For unsupported dtypes (complex, strings, objects, datetimes) and non-integer axes.
    ValueError
        When `axes` has the wrong length or repeats an axis.
    numpy.exceptions.AxisError
        For an axis out of range.
    MemoryError
        When device or host memory runs out.
    """
    if axes is None:  # the common call: from the core's quick lane once the first such call taught it
        result = _core.quick(_QUICK_SLOT, a, device)
        if result is not NotImplemented:
            return result
    array, index = array_input(a, "transpose", device)
    view = _permuted(array, axes)
    plan = Plan(_core.copy, view, (), view.shape, view.dtype, index)
    if axes is None:
        plan.teach_quick_lane(_QUICK_SLOT, a)
    return plan.run()


_QUICK_SLOT = QUICK_SLOTS["transpose"]
