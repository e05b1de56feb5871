"""gpuprims: GPU primitives with NumPy's semantics, with our own CUDA kernels and a C CPU fallback.

Swap ``np.`` for ``gpuprims.``::

    import numpy as np, gpuprims
    a = np.random.default_rng(0).random(1_000_000, dtype=np.float32)
    gpuprims.sum(a), gpuprims.max(a), gpuprims.prefix_sum(a)

Every function takes ``device=None | "cpu" | "cuda" | "cuda:N"``.  None means the environment
variable ``GPUPRIMS_DEVICE`` when it is set, else the fastest: a call on host data runs where it
finishes first (the C CPU backend or GPU 0, as gpuprims' cost model says; ``gpuprims.explain``
shows the choice), a call on device-resident data on its GPU.

The CPU backend uses ``gpuprims.get_num_threads()`` threads for large calls (default: the cores
this process may run on; ``GPUPRIMS_NUM_THREADS`` or ``gpuprims.set_num_threads`` change it), with
results that do not depend on the count.  It picks its vector loops (AVX-512, AVX2 or the
baseline) by what the CPU supports; ``GPUPRIMS_CPU_ISA=baseline`` (or ``avx2``), read at the first
CPU call, forces a lower choice.
"""
try:
    from . import _core
except ImportError as _error:  # say why: the bare error is a "circular import" of _core
    import pathlib as _pathlib

    _package = _pathlib.Path(__file__).parent
    if not any(_package.glob("_core.*")):
        raise ImportError(
            f"gpuprims' compiled core is missing from {_package}: this is the source tree, not an "
            "installed gpuprims. Install it (pip install . , or pip install -e . to work on it), and "
            "run Python outside the checkout's root folder, or build it in place with "
            "python setup.py build_ext --inplace") from _error
    raise

from ._reductions import max, mean, min, prod, sum
from ._reductions import all, any, argmax, argmin, count_nonzero, std, var
from ._reductions import nanargmax, nanargmin, nanmax, nanmean, nanmin, nanprod, nanstd, nansum, nanvar
from ._scans import (cummax, cummin, cumprod, cumsum, cumulative_prod, cumulative_sum, nancumprod, nancumsum,
                     prefix_sum)
from ._plan import explain
from ._transpose import transpose
from ._convolve import convolve, convolve2d, correlate, correlate2d
from ._device import DeviceUnavailableError, cuda_available, device_info
from ._device_array import DeviceArray, empty_cache, memory_info, synchronize, to_device
from ._pinned import empty_pinned, is_pinned, pinned_copy, pinned_like
from ._threads import get_num_threads, set_num_threads

__version__ = "0.1.0"


def build_info():
    """How this copy of gpuprims was built.

    Returns
    -------
    dict
        ``cuda`` (bool: CUDA kernels compiled in), ``cuda_version`` (the CUDA runtime compiled
        against, e.g. "13.0", or None) and ``archs`` (the GPU targets, e.g. "75;80;90;100;120+PTX",
        or None).
    """
    return dict(_core.build_info())


__all__ = [
    "DeviceArray",
    "all",
    "any",
    "argmax",
    "argmin",
    "count_nonzero",
    "DeviceUnavailableError",
    "build_info",
    "convolve",
    "convolve2d",
    "correlate",
    "correlate2d",
    "cuda_available",
    "cummax",
    "cummin",
    "cumprod",
    "cumsum",
    "cumulative_prod",
    "cumulative_sum",
    "device_info",
    "empty_cache",
    "empty_pinned",
    "explain",
    "get_num_threads",
    "is_pinned",
    "max",
    "mean",
    "memory_info",
    "min",
    "pinned_copy",
    "pinned_like",
    "nanargmax",
    "nanargmin",
    "nancumprod",
    "nancumsum",
    "nanmax",
    "nanmean",
    "nanmin",
    "nanprod",
    "nanstd",
    "nansum",
    "nanvar",
    "prefix_sum",
    "prod",
    "set_num_threads",
    "std",
    "sum",
    "synchronize",
    "to_device",
    "transpose",
    "var",
]
