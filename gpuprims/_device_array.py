"""Device-resident arrays: :class:`DeviceArray`, :func:`to_device`, and zero-copy views of other
libraries' GPU arrays (anything with ``__cuda_array_interface__`` v3 or ``__dlpack__``).

Streams: gpuprims orders all of its work for a device on one CUDA stream, shared by every host
thread (``DeviceArray.__cuda_array_interface__["stream"]`` names it).  Before reading another
library's array, gpuprims makes its stream wait for the stream that library names; a consumer of
a gpuprims array is made to wait for gpuprims' stream (DLPack) or told to (the interface's
``stream`` entry).  Memory comes from gpuprims' caching allocator and goes back to it when the
last :class:`DeviceArray` using it dies.
"""
import math
import operator

import numpy as np

from . import _core
from ._device import DeviceUnavailableError, concrete_device, resolve_device

_DL_CPU, _DL_CUDA = 1, 2
_DL_CODE_OF_KIND = {"i": 0, "u": 1, "f": 2, "b": 6}
_KIND_OF_DL_CODE = {0: "i", 1: "u", 2: "f", 6: "b"}
_SUPPORTED = "biuf"


def _c_strides(shape, itemsize):
    strides, step = [], itemsize
    for size in reversed(shape):
        strides.append(step)
        step *= size
    return tuple(reversed(strides))


def _checked_dtype(dtype):
    dtype = np.dtype(dtype)
    if dtype.kind not in _SUPPORTED or (dtype.kind == "f" and dtype.itemsize not in (2, 4, 8)):
        raise TypeError(f"gpuprims does not support dtype {dtype} on the device "
                        "(supported: bool, int8-int64, uint8-uint64, float16, float32, float64)")
    return dtype.newbyteorder("=")


class DeviceArray:
    """An n-dimensional array in GPU memory, returned by gpuprims for device-resident inputs.

    Create one with :func:`gpuprims.to_device`; copy it back with :meth:`get` or
    ``numpy.asarray``.  It exports ``__cuda_array_interface__`` (v3) and ``__dlpack__``, so
    ``cupy.asarray(x)``, ``torch.from_dlpack(x)`` and ``numba.cuda.as_cuda_array(x)`` use it
    without a copy.

    Attributes
    ----------
    shape : tuple of int
    dtype : numpy.dtype
    strides : tuple of int
        Bytes between consecutive elements along each axis (may be negative).
    device : str
        ``"cuda:N"``.
    size, ndim, nbytes, itemsize : int
    ptr : int
        Device address of the element at index (0, ..., 0).
    """

    __slots__ = ("_owner", "ptr", "shape", "dtype", "strides", "device_index", "readonly", "size",
                 "_c_contiguous", "__weakref__")

    def __init__(self, owner, ptr, shape, dtype, strides, device_index, readonly=False):
        self._owner = owner  # keeps the memory alive: a _core.Buffer or the producer's object
        self.ptr = ptr
        self.shape = shape
        self.dtype = dtype
        self.strides = strides
        self.device_index = device_index
        self.readonly = readonly
        self.size = math.prod(shape)
        self._c_contiguous = self.size <= 1 or all(
            size == 1 or stride == expected
            for size, stride, expected in zip(shape, strides, _c_strides(shape, dtype.itemsize)))

    @classmethod
    def _empty(cls, shape, dtype, device_index):
        """A new C-contiguous array (uninitialised) from the caching allocator."""
        buffer = _core.Buffer(math.prod(shape) * dtype.itemsize, device_index)
        return cls(buffer, buffer.ptr, shape, dtype, _c_strides(shape, dtype.itemsize), device_index)

    # -- properties -------------------------------------------------------------------------
    @property
    def ndim(self):
        return len(self.shape)

    @property
    def itemsize(self):
        return self.dtype.itemsize

    @property
    def nbytes(self):
        return self.size * self.dtype.itemsize

    @property
    def device(self):
        return f"cuda:{self.device_index}"

    @property
    def is_c_contiguous(self):
        return self._c_contiguous

    def __len__(self):
        if not self.shape:
            raise TypeError("len() of a 0-d DeviceArray")
        return self.shape[0]

    def __repr__(self):
        return f"DeviceArray(shape={self.shape}, dtype={self.dtype}, device='{self.device}')"

    # -- copies -----------------------------------------------------------------------------
    def get(self):
        """Copy to a new NumPy array on the host (waits for pending work on the array)."""
        source = self.contiguous()
        out = np.empty(self.shape, self.dtype)
        _core.memcpy(self.device_index, out.ctypes.data, source.ptr, out.nbytes, True)
        return out

    def __array__(self, dtype=None, copy=None):
        if copy is False:
            raise ValueError("a DeviceArray cannot be viewed as a NumPy array without a copy")
        host = self.get()
        return host if dtype is None else host.astype(dtype, copy=False)

    def contiguous(self):
        """This array if it is C-contiguous, else a C-contiguous copy on the device."""
        if self._c_contiguous:
            return self
        out = DeviceArray._empty(self.shape, self.dtype, self.device_index)
        _core.copy(self._operand(), out.ptr, self.device_index, 0)
        return out

    def _operand(self):
        """The array as the core's entries take device data: (ptr, typenum, shape, strides), strides
        in elements."""
        if any(stride % self.itemsize for stride in self.strides):
            raise ValueError("gpuprims needs strides that are multiples of the item size")
        return (self.ptr, self.dtype.num, self.shape, tuple(stride // self.itemsize for stride in self.strides))

    def copy(self):
        """A C-contiguous copy on the device."""
        source = self.contiguous()
        if source is not self:
            return source
        out = DeviceArray._empty(self.shape, self.dtype, self.device_index)
        _core.memcpy(self.device_index, out.ptr, self.ptr, self.nbytes, False)
        return out

    def _flipped(self):
        """:func:`numpy.flip` over every axis, as a C-contiguous copy on the device."""
        if self.size <= 1:
            return self.copy()
        last = self.ptr + sum((size - 1) * stride for size, stride in zip(self.shape, self.strides))
        view = DeviceArray(self._owner, last, self.shape, self.dtype,
                           tuple(-stride for stride in self.strides), self.device_index, self.readonly)
        return view.contiguous()

    def astype(self, dtype):
        """A C-contiguous copy converted to `dtype` as :meth:`numpy.ndarray.astype` does."""
        return self._converted(_checked_dtype(dtype))

    def _converted(self, dtype, divisor=0):
        source = self.contiguous()
        out = DeviceArray._empty(self.shape, dtype, self.device_index)
        _core.convert(source._operand(), out.ptr, self.device_index, 0, dtype.num, divisor)
        return out

    def reshape(self, *shape):
        """The array with a new shape (a view when C-contiguous, else of a contiguous copy)."""
        if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
            shape = shape[0]
        shape = tuple(operator.index(size) for size in shape)
        shape = _resolve_shape(shape, self.size)
        if shape == self.shape and self._c_contiguous:
            return self
        source = self.contiguous()
        return DeviceArray(source._owner, source.ptr, shape, self.dtype, _c_strides(shape, self.itemsize),
                           self.device_index, self.readonly)

    def transpose(self, axes):
        """A view with permuted axes (metadata only)."""
        return DeviceArray(self._owner, self.ptr, tuple(self.shape[axis] for axis in axes), self.dtype,
                           tuple(self.strides[axis] for axis in axes), self.device_index, self.readonly)

    # -- export -----------------------------------------------------------------------------
    @property
    def __cuda_array_interface__(self):
        return {
            "shape": self.shape,
            "typestr": self.dtype.str,
            "data": (self.ptr, self.readonly),
            "strides": None if self.is_c_contiguous else self.strides,
            "version": 3,
            "stream": _core.work_stream(self.device_index),
        }

    def __dlpack_device__(self):
        return (_DL_CUDA, self.device_index)

    def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
        if dl_device is not None and tuple(dl_device) != self.__dlpack_device__():
            raise BufferError(f"gpuprims cannot export a {self.device} array to device {dl_device}")
        source = self.copy() if copy else self
        if stream is not None and stream != -1:
            if stream == 0:
                raise BufferError("stream 0 is ambiguous in DLPack; pass 1 for the legacy default stream")
            if stream != 1:  # the legacy default stream already waits for gpuprims' (blocking) stream
                _core.order_streams(self.device_index, int(stream), True)
        versioned = max_version is not None and tuple(max_version) >= (1, 0)
        if any(stride % source.itemsize for stride in source.strides):
            raise BufferError("strides are not multiples of the item size")
        return _core.dlpack_export(
            source, source.ptr, _DL_CUDA, source.device_index, source.shape,
            tuple(stride // source.itemsize for stride in source.strides),
            _DL_CODE_OF_KIND[source.dtype.kind], source.itemsize * 8, versioned,
            source.readonly and versioned)


def _resolve_shape(shape, size):
    """A reshape target with at most one -1, as NumPy resolves it."""
    unknown = [i for i, value in enumerate(shape) if value == -1]
    if len(unknown) > 1 or any(value < -1 for value in shape):
        raise ValueError(f"invalid shape {shape}")
    known = math.prod(value for value in shape if value != -1)
    if unknown:
        if known == 0 or size % known:
            raise ValueError(f"cannot reshape array of size {size} into shape {shape}")
        shape = shape[:unknown[0]] + (size // known,) + shape[unknown[0] + 1:]
    if math.prod(shape) != size:
        raise ValueError(f"cannot reshape array of size {size} into shape {shape}")
    return shape


def to_device(a, device=None):
    """Copy an array to the GPU.

    Parameters
    ----------
    a : array_like or DeviceArray
        Host data (anything :func:`numpy.asarray` takes) or a device array (returned as it is
        when it already lives on `device`).
    device : {None, "cuda", "cuda:N"}, optional
        The GPU; None means ``GPUPRIMS_DEVICE`` or the first GPU.

    Returns
    -------
    DeviceArray
        A C-contiguous array on the device.

    Raises
    ------
    gpuprims.DeviceUnavailableError
        When no GPU is usable (or ``device="cpu"`` is asked for).
    TypeError
        For unsupported dtypes and masked arrays.
    """
    view = device_view(a)
    index = concrete_device(device if device is not None else (view.device if view is not None else None))
    if index < 0:
        raise DeviceUnavailableError("to_device needs a CUDA device, not the CPU")
    if view is not None:
        if view.device_index != index:
            raise ValueError(f"the array lives on {view.device}, not cuda:{index}")
        return view
    from ._boundary import as_ndarray  # _boundary builds on this module
    host = as_ndarray(a, "to_device")
    dtype = _checked_dtype(host.dtype)
    host = np.asarray(host, dtype=dtype, order="C")  # native byte order, C-contiguous, 0-d kept
    out = DeviceArray._empty(host.shape, dtype, index)
    _core.memcpy(index, out.ptr, host.ctypes.data, host.nbytes, False)
    return out


def device_view(obj):
    """A DeviceArray viewing `obj` without a copy if it is GPU memory, else None (host data).

    Accepts DeviceArray, ``__cuda_array_interface__`` v3 producers (CuPy, PyTorch, Numba) and
    ``__dlpack__`` producers whose ``__dlpack_device__`` is a CUDA device.  gpuprims' stream is
    ordered after the producer's stream before the view is returned.
    """
    if isinstance(obj, DeviceArray):
        return obj
    if type(obj) is np.ndarray or isinstance(obj, (np.generic, list, tuple, int, float, bool)):
        return None
    interface = getattr(obj, "__cuda_array_interface__", None)
    if interface is not None:
        return _from_interface(obj, interface)
    if hasattr(obj, "__dlpack__") and hasattr(obj, "__dlpack_device__"):
        device_type, device_id = obj.__dlpack_device__()
        if device_type == _DL_CUDA:
            return _from_dlpack(obj, int(device_id))
    return None


def _pointer_device(ptr):
    """The device the pointer's memory lives on; ValueError for host memory (0 for null)."""
    return _core.pointer_device(ptr) if ptr else resolve_device("cuda")


def _from_interface(obj, interface):
    if interface.get("mask") is not None:
        raise TypeError("masked __cuda_array_interface__ arrays are not supported")
    shape = tuple(int(size) for size in interface["shape"])
    dtype = _checked_dtype(np.dtype(interface["typestr"]))
    if np.dtype(interface["typestr"]).byteorder == ">":
        raise TypeError("big-endian device arrays are not supported")
    ptr, readonly = interface["data"]
    ptr = int(ptr or 0)
    strides = interface.get("strides")
    strides = _c_strides(shape, dtype.itemsize) if strides is None else tuple(int(s) for s in strides)
    index = _pointer_device(ptr)
    stream = interface.get("stream") if interface.get("version", 0) >= 3 else None
    if stream == 0:
        raise ValueError("__cuda_array_interface__ stream 0 is not allowed")
    if stream is not None and stream != 1:  # our stream already waits for the legacy default
        _core.order_streams(index, int(stream), False)
    return DeviceArray(obj, ptr, shape, dtype, strides, index, bool(readonly))


def _from_dlpack(obj, device_id):
    stream = _core.work_stream(device_id)
    try:
        capsule = obj.__dlpack__(stream=stream, max_version=(1, 0))
    except TypeError:  # producers that predate the max_version keyword
        capsule = obj.__dlpack__(stream=stream)
    holder, ptr, device_type, device_id, shape, strides, code, bits, lanes, readonly = \
        _core.dlpack_import(capsule)
    if device_type != _DL_CUDA:
        raise BufferError(f"DLPack device type {device_type} is not CUDA memory")
    if lanes != 1 or code not in _KIND_OF_DL_CODE:
        raise TypeError(f"unsupported DLPack dtype (code {code}, bits {bits}, lanes {lanes})")
    dtype = _checked_dtype(np.dtype(f"{_KIND_OF_DL_CODE[code]}{bits // 8}") if code != 6
                           else np.dtype(bool))
    strides = (_c_strides(shape, dtype.itemsize) if strides is None
               else tuple(stride * dtype.itemsize for stride in strides))
    return DeviceArray(holder, ptr, shape, dtype, strides, device_id, readonly)


def memory_info(device=None):
    """Statistics of gpuprims' caching allocator on a GPU.

    Returns
    -------
    dict
        ``in_use`` (bytes held by live arrays and calls), ``cached`` (bytes kept for reuse),
        ``peak_in_use``, and the whole device's ``device_free`` and ``device_total``.
    """
    return _core.memory_info(concrete_device(device if device is not None else "cuda"))


def synchronize(device=None):
    """Wait until gpuprims' work on a GPU (its stream for that device) has finished."""
    _core.synchronize(concrete_device(device if device is not None else "cuda"))


def empty_cache(device=None):
    """Give the cached, unused device memory back to the driver (waits for pending work), and the
    cached page-locked host blocks of streamed results that have died back to the system."""
    _core.empty_cache(concrete_device(device if device is not None else "cuda"))
