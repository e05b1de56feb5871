"""CUB, CUDA's own library of device-wide primitives, as the benchmark's ``cub`` peer:
``DeviceScan::InclusiveSum`` beside ``prefix_sum`` and ``DeviceReduce::Sum`` beside ``sum``, in
kernel mode, in the same run as gpuprims' rows.

CUB ships as headers, so the peer compiles ``cub_ops.cu`` with the ``nvcc`` it finds (``PATH``,
then ``CUDA_HOME``/``CUDA_PATH``, then ``/usr/local/cuda``) for the device's own architecture, the
first time a run needs it (about 15 s), into a per-user cache, and calls it through :mod:`ctypes`
on CuPy's arrays and current stream.  Without ``nvcc`` or CuPy there is no ``cub`` peer.
"""

from __future__ import annotations

import ctypes
import functools
import hashlib
import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

SOURCE = Path(__file__).with_name("cub_ops.cu")
DTYPES = {np.dtype(np.float32): 0, np.dtype(np.float64): 1, np.dtype(np.int64): 2}
"""The dtypes ``cub_ops.cu`` is built for, and their codes there.  Others raise TypeError (the
benchmark skips the row): CUB's sums keep the input type, where NumPy widens smaller integers."""


def find_nvcc() -> str | None:
    """The path of ``nvcc``, or None."""
    found = shutil.which("nvcc")
    if found:
        return found
    roots = [os.environ.get(name) for name in ("CUDA_HOME", "CUDA_PATH")] + ["/usr/local/cuda"]
    candidates = (Path(root, "bin", "nvcc") for root in roots if root)
    return next((str(path) for path in candidates if os.access(path, os.X_OK)), None)


def cache_dir() -> Path:
    """Where compiled libraries are kept: ``$XDG_CACHE_HOME/gpuprims`` (``~/.cache/gpuprims``)."""
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base, "gpuprims")


def build(nvcc: str, arch: str) -> Path:
    """``cub_ops.cu`` compiled by ``nvcc`` for ``sm_<arch>``, from the cache when the same source,
    compiler and architecture built it before.

    Raises
    ------
    RuntimeError
        If ``nvcc`` fails (its last lines of output are in the message).
    """
    key = hashlib.sha256(SOURCE.read_bytes() + nvcc_version(nvcc).encode() + arch.encode()).hexdigest()[:16]
    target = cache_dir() / f"cub_ops-sm{arch}-{key}.so"
    if target.exists():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=target.parent) as scratch:
        built = Path(scratch, target.name)
        done = subprocess.run([nvcc, "-O3", "-std=c++17", "-shared", "-Xcompiler", "-fPIC",
                               f"-gencode=arch=compute_{arch},code=sm_{arch}", "-o", str(built), str(SOURCE)],
                              capture_output=True, text=True, check=False)
        if done.returncode != 0:
            tail = "\n".join((done.stdout + done.stderr).strip().splitlines()[-10:])
            raise RuntimeError(f"nvcc could not build the CUB peer ({nvcc}):\n{tail}")
        os.replace(built, target)  # atomic: processes that build at once each leave a whole file
    return target


class CubLibrary:
    """The compiled CUB calls on CuPy arrays, as the op table's ``cub`` binders call them.

    Parameters
    ----------
    cupy : module
        CuPy: the arrays, the memory and the stream the calls run on.
    index : int
        The CUDA device.
    nvcc : str
        The compiler, run on the first call.
    """

    def __init__(self, cupy: Any, index: int, nvcc: str):
        self.cupy = cupy
        self.index = index
        self.nvcc = nvcc
        self._library: ctypes.CDLL | None = None
        self._scratch: dict[tuple, Any] = {}

    def inclusive_sum(self, x: Any) -> Any:
        """``DeviceScan::InclusiveSum`` of the 1-D array ``x`` into a new array."""
        return self._run("inclusive_sum", x, self.cupy.empty_like(x))

    def sum(self, x: Any) -> Any:
        """``DeviceReduce::Sum`` of the 1-D array ``x`` into a new 0-d array."""
        return self._run("sum", x, self.cupy.empty((), x.dtype))

    def release(self) -> None:
        """Drop the scratch buffers kept for later calls of the same size."""
        self._scratch.clear()

    def _load(self) -> ctypes.CDLL:
        if self._library is None:
            major, minor = self.cupy.cuda.Device(self.index).compute_capability
            library = ctypes.CDLL(str(build(self.nvcc, f"{major}{minor}")))
            for name in ("gp_cub_inclusive_sum", "gp_cub_sum"):
                function = getattr(library, name)
                function.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64,
                                     ctypes.c_void_p, ctypes.POINTER(ctypes.c_size_t), ctypes.c_void_p]
                function.restype = ctypes.c_int
            library.gp_cub_error_string.argtypes = [ctypes.c_int]
            library.gp_cub_error_string.restype = ctypes.c_char_p
            self._library = library
        return self._library

    def _run(self, name: str, x: Any, out: Any) -> Any:
        """Run ``gp_cub_<name>`` on ``x`` into ``out`` on CuPy's current stream; the scratch CUB
        asks for is allocated on the first call of each size and kept, so that later calls time
        the kernels alone."""
        code = DTYPES.get(np.dtype(x.dtype))
        if code is None or x.ndim != 1 or not x.flags.c_contiguous:
            raise TypeError(f"the CUB peer takes contiguous 1-D {', '.join(map(str, DTYPES))} arrays")
        library = self._load()
        function = getattr(library, f"gp_cub_{name}")
        stream = self.cupy.cuda.get_current_stream().ptr
        key = (name, x.dtype, x.size)
        scratch = self._scratch.get(key)
        if scratch is None:
            size = ctypes.c_size_t(0)
            self._check(library, function(code, x.data.ptr, out.data.ptr, x.size, None, ctypes.byref(size), stream))
            scratch = self._scratch[key] = self.cupy.empty(max(size.value, 1), self.cupy.uint8)
        size = ctypes.c_size_t(scratch.nbytes)
        self._check(library, function(code, x.data.ptr, out.data.ptr, x.size, scratch.data.ptr, ctypes.byref(size),
                                      stream))
        return out

    @staticmethod
    def _check(library: ctypes.CDLL, error: int) -> None:
        if error:
            message = library.gp_cub_error_string(error).decode()
            if error == 2:  # cudaErrorMemoryAllocation
                raise MemoryError(f"CUB: {message}")
            raise RuntimeError(f"CUB: {message}")


@functools.lru_cache(maxsize=None)
def nvcc_version(nvcc: str) -> str:
    """What ``nvcc --version`` prints (run once per compiler and process)."""
    return subprocess.run([nvcc, "--version"], capture_output=True, text=True, check=False).stdout


def nvcc_release(nvcc: str) -> str:
    """``"13.0"`` from ``nvcc --version``, ``"?"`` when it says no release."""
    found = re.search(r"release ([\d.]+)", nvcc_version(nvcc))
    return found.group(1) if found else "?"
