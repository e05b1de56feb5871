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
    dtype = np.dtype(dtype)
    if dtype.hasobject:  # the buffer would hold raw bytes where NumPy expects object references
        raise TypeError(f"empty_pinned: {dtype} holds Python objects, which pinned memory cannot")
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
    """
    a = np.asarray(a)
    return empty_pinned(a.shape, a.dtype)


def pinned_copy(a):
    """Copy ``a`` into a new pinned array of its shape and dtype (C order); see
    :func:`pinned_like`."""
    a = np.asarray(a)
    out = pinned_like(a)
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
    a = np.asarray(a)
    if a.size == 0 or not cuda_available():
        return False
    low, high = np.lib.array_utils.byte_bounds(a) if hasattr(np.lib, "array_utils") else np.byte_bounds(a)
    return bool(_core.is_pinned(low, high - low))
