"""The boundary between the public functions and the compiled core: what gpuprims accepts and
where a call runs.

- **Inputs**: host data becomes a plain NumPy array, as ``numpy.asarray`` makes it: subclasses
  and array-likes (``numpy.matrix``, a pandas Series) are computed with ndarray semantics, and
  masked arrays raise TypeError (their mask would be ignored); GPU data (a DeviceArray, or another
  library's array with ``__cuda_array_interface__`` or ``__dlpack__``) becomes a DeviceArray view,
  without a copy.
- **Flags**: ``keepdims`` as NumPy reads it (an integer, not a string or None); gpuprims' own
  flags (``exclusive``) a bool.
- **Supported dtypes**: the core's dtype table (``_core.DTYPES``), whatever the byte order.
- **Axes**: NumPy's axis forms and errors.
- **Placement**: the backend device index of a call: the GPU of its device-resident inputs, or
  the ``device=`` argument (-1 CPU, -2 auto, N GPU N; see ``_device``).
"""
import builtins
import operator

import numpy as np

from . import _core
from ._device import resolve_device
from ._device_array import DeviceArray, device_view

try:  # NumPy >= 2.0
    from numpy.lib.array_utils import normalize_axis_index, normalize_axis_tuple
except ImportError:  # NumPy 1.x
    from numpy.core.multiarray import normalize_axis_index
    from numpy.core.numeric import normalize_axis_tuple

_KIND_SIZES = frozenset((np.dtype(name).kind, np.dtype(name).itemsize) for name in _core.DTYPES)
_NATIVE = frozenset(np.dtype(name) for name in _core.DTYPES)
SUPPORTED_NAMES = "bool, int8-int64, uint8-uint64, float16, float32, float64"


def supported(dtype):
    """Whether the backends compute in `dtype` (any byte order)."""
    return dtype in _NATIVE or (dtype.kind, dtype.itemsize) in _KIND_SIZES


def as_ndarray(a, name):
    """`a` as a plain NumPy array (``numpy.asarray``); a masked array is a TypeError, since its mask
    would be dropped."""
    if type(a) is np.ndarray:
        return a
    if isinstance(a, np.ma.MaskedArray):
        raise TypeError(f"gpuprims.{name} does not take masked arrays: its mask would be ignored. "
                        "Pass a.filled(value) to compute with a fill value, or a.compressed() for "
                        "the unmasked elements (1-D)")
    return np.asarray(a)


def host_array(a, name):
    """`a` as a NumPy array of a supported dtype (TypeError otherwise)."""
    array = as_ndarray(a, name)
    if not supported(array.dtype):
        raise TypeError(f"gpuprims.{name} does not support dtype {array.dtype} (supported: {SUPPORTED_NAMES})")
    return array


def array_input(a, name, device):
    """(array, backend device index) of a one-input call: a DeviceArray view of GPU data, which
    stays on its GPU, else a NumPy array."""
    if type(a) is np.ndarray:  # the common case first
        return host_array(a, name), resolve_device(device)
    view = device_view(a)
    index = placement(name, device, (view,))
    return (host_array(a, name) if view is None else view), index


def placement(name, device, views):
    """The backend device index of a call whose inputs' device views are `views` (None for host
    data): the GPU the device-resident inputs share, which `device` may name but not contradict;
    without device-resident inputs, `device`."""
    resident = [view for view in views if view is not None]
    if not resident:
        return resolve_device(device)
    index = resolve_device(device) if device is not None else None
    home = resident[0]
    if any(view.device_index != home.device_index for view in resident):
        raise ValueError(f"gpuprims.{name}: the inputs live on "
                         f"{' and '.join(sorted({view.device for view in resident}))}; "
                         "gpuprims does not move device arrays")
    if index is not None and index != home.device_index:
        raise ValueError(f"gpuprims.{name}: the input lives on {home.device}, but device={device!r}; "
                         "gpuprims does not move device arrays")
    return home.device_index


def on_host(array):
    """A host stand-in with the array's shape and dtype, for results NumPy defines on empty input."""
    return np.empty(array.shape, array.dtype) if isinstance(array, DeviceArray) else array


def like_input(result, array):
    """A result computed on the host, moved to the input's device when the input is there."""
    from ._device_array import to_device
    return to_device(result, array.device) if isinstance(array, DeviceArray) else result


def keepdims_flag(keepdims):
    """keepdims as NumPy reads it: any integer (bool included), as a bool; a string, None or a
    float is a TypeError."""
    return bool(operator.index(keepdims))


def bool_flag(value, name):
    """One of gpuprims' own flags (``exclusive``): a bool or numpy.bool_ only."""
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be a bool, not {type(value).__name__}")
    return bool(value)


def axis_integer(axis):
    """An axis as NumPy reads it: an integer (not a bool, list or float)."""
    if isinstance(axis, (bool, np.bool_)):
        raise TypeError("an integer is required for the axis, not a bool")
    return operator.index(axis)


def axis_index(axis, ndim):
    """One axis as NumPy reads it, negatives allowed, checked against ndim."""
    return normalize_axis_index(axis_integer(axis), ndim)


def reduced_axes(axis, ndim):
    """The sorted tuple of axes a reduction reduces."""
    if axis is None:
        return tuple(range(ndim))
    if isinstance(axis, tuple):
        for item in axis:
            axis_index(item, builtins.max(ndim, 1))  # type checks; ranges checked next
        return tuple(sorted(normalize_axis_tuple(axis, ndim)))
    if ndim == 0:  # NumPy lets a 0-d array be reduced along axis 0 or -1: nothing to reduce
        axis_index(axis, 1)
        return ()
    return (axis_index(axis, ndim),)
