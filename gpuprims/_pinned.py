"""Page-locked (pinned) host arrays: NumPy arrays the GPU's copy engines read and write directly.

gpuprims streams host arrays to the GPU through its own pinned staging buffers, filled by several
host threads; a pinned input skips that staging copy and moves at the bus's full speed (about
55 GB/s each way on a PCIe 5 x16 H200, against about 10 GB/s for a plain ``cudaMemcpy`` from
pageable memory).  Pinning is slow (hundreds of milliseconds per GiB) and takes memory away from
the operating system, so it pays for buffers that are reused.  Where no GPU is usable (CPU-only
build, no driver, no device) these functions return ordinary NumPy arrays, so code written for
them runs everywhere; :func:`is_pinned` tells the two apart.
"""
import math
import operator

import numpy as np

from . import _core
from ._boundary import as_ndarray
from ._device import cuda_available


def empty_pinned(shape, dtype=float):
    """A new uninitialised C-contiguous array in page-locked host memory, as :func:`numpy.empty`.

    The memory is freed when the array (and every view of it) is gone.

    Parameters
    ----------
    shape : int or tuple of ints
        Shape of the array.
    dtype : data-type, optional
        Any NumPy dtype; default float64.

    Returns
    -------
    numpy.ndarray
        Pinned when a GPU is usable, else an ordinary array.

    Raises
    ------
    TypeError
        For a shape that is not integers, and dtypes that hold Python objects.
    ValueError
        For negative dimensions.
    MemoryError
        When the page-locked allocation fails.
    """
    return _empty_pinned(shape, dtype, "empty_pinned")


def _empty_pinned(shape, dtype, function):
    """empty_pinned for gpuprims.<function>, whose name its errors give."""
    dtype = np.dtype(dtype)
    if dtype.hasobject:  # the buffer would hold raw bytes where NumPy expects object references
        raise TypeError(f"gpuprims.{function}: dtype {dtype} holds Python objects, which cannot be "
                        "placed in pinned memory")
    shape = tuple(operator.index(size) for size in (shape if np.ndim(shape) else (shape,)))
    if any(size < 0 for size in shape):
        raise ValueError("negative dimensions are not allowed")
    count = math.prod(shape)
    if count == 0 or dtype.itemsize == 0 or not cuda_available():
        return np.empty(shape, dtype)
    block = _core.PinnedBuffer(count * dtype.itemsize)
    return np.frombuffer(block, dtype=dtype, count=count).reshape(shape)


def pinned_like(a):
    """A new uninitialised pinned array with the shape and dtype of ``a`` (C order).

    Parameters
    ----------
    a : array_like

    Returns
    -------
    numpy.ndarray

    Raises
    ------
    TypeError
        For object dtypes and masked arrays.
    """
    a = as_ndarray(a, "pinned_like")
    return _empty_pinned(a.shape, a.dtype, "pinned_like")


def pinned_copy(a):
    """Copy ``a`` into a new pinned array of its shape and dtype (C order); see
    :func:`pinned_like`.

    Raises
    ------
    TypeError
        For object dtypes and masked arrays (copy ``a.filled(value)`` instead).
    """
    a = as_ndarray(a, "pinned_copy")
    out = _empty_pinned(a.shape, a.dtype, "pinned_copy")
    np.copyto(out, a)
    return out


def is_pinned(a):
    """Whether the memory of the NumPy array ``a`` is page-locked (by gpuprims, CuPy, PyTorch or
    ``cudaHostRegister``), so gpuprims copies it to the GPU without staging.

    Parameters
    ----------
    a : numpy.ndarray

    Returns
    -------
    bool
    """
    a = as_ndarray(a, "is_pinned")
    if a.size == 0 or not cuda_available():
        return False
    low, high = np.lib.array_utils.byte_bounds(a) if hasattr(np.lib, "array_utils") else np.byte_bounds(a)
    return bool(_core.is_pinned(low, high - low))
