"""Benchmark gpuprims against NumPy, CuPy and PyTorch.

Run as a module::

    python -m gpuprims.bench                       # sum,max,prefix_sum; 2^10 .. 2^28
    python -m gpuprims.bench --ops sum,mean --sizes 20,24,28 --repeats 50
    python -m gpuprims.bench --sizes 1000000 --device cpu --out results/
    python -m gpuprims.bench --ops convolve,convolve2d --sizes 16,20,24,26

Four modes are measured for every operation and size:

``kernel``
    The input already lives on the GPU and only the device work is timed with
    CUDA events: gpuprims (through its private ``_time_kernel`` hook), CuPy and
    PyTorch when they are importable, and a device-to-device ``cudaMemcpy`` of
    the input's byte count as a bandwidth roofline.  Only on a CUDA device.
``device``
    The input already lives on the GPU (a :class:`gpuprims.DeviceArray`, a CuPy
    array, a PyTorch tensor) and the public function is called from Python:
    each repeat times a burst of back-to-back calls up to the completion of
    the device work (wall clock), so the row is the cost of a call in a GPU
    pipeline, Python overhead and launches included.  Convolutions put their
    image on the device; gpuprims is given the mask as a NumPy array (it reads
    masks from the host), CuPy and PyTorch as arrays of their own.
``latency``
    Small device-resident inputs (2^8, 2^12 and 2^16 elements; 2^8 float32 is
    1 KiB; transpose takes them as 16 x 16, 64 x 64 and 256 x 256 matrices):
    the host time of one call, the median of many back-to-back calls (the
    device work is asynchronous and not waited for).
``e2e``
    End to end from a NumPy array on the host, timed with
    :func:`time.perf_counter`: ``gpuprims.<op>(a)``, NumPy itself, and, on a
    CUDA device, CuPy (``cupy.asarray`` + op + ``.get()``) and PyTorch
    (``torch.from_numpy(a).cuda()`` + op + ``.cpu()``).  For ``sum``,
    ``prefix_sum``, ``transpose``, ``convolve`` and ``convolve2d`` also the
    host-to-device copy roofline (``h2d-pageable``, ``h2d-pinned``: one ``cudaMemcpy`` of the input, CUDA events) and
    ``gpuprims-pinned`` (the input in :func:`gpuprims.empty_pinned` memory);
    their ``x_memcpy`` is the pinned bound (the larger of the input and the
    result bytes over the ``h2d-pinned`` rate: copies in and out overlap)
    over the row's time.

Each reported time is the median of ``--repeats`` runs after one untimed
warm-up run (end-to-end runs use fewer repeats for large inputs).  Bandwidth
(GB/s, 1e9 bytes per second) counts the bytes an operation must move at the
least: reductions read the input once; scans read the input and write an output
of the same length; the memcpy row reads and writes its buffer.  ``x_memcpy`` is
a kernel row's bandwidth as a fraction of the memcpy row's.

The convolution ops run a float mask over the input, 'same' mode (output as large as the input,
which counts as read + written): ``convolve`` is :func:`numpy.convolve` with 7 taps,
``convolve_long`` with 4097 taps, ``convolve2d`` is :func:`scipy.signal.convolve2d` of the largest
square-ish image that fits the size (2^24 elements: 4096 x 4096) with a 5 x 5 kernel, zero fill.
Their peers: SciPy end to end, CuPy (``cupy.convolve``, ``cupyx.scipy.signal.convolve2d``),
``cupyx.scipy.ndimage`` (``convolve1d``, ``convolve``) and PyTorch (``conv1d``/``conv2d``, which
correlate: the mask is flipped).  For every op but transpose the report ends with the end-to-end
crossover: the smallest measured size from which gpuprims beats NumPy (SciPy for ``convolve2d``) at
every larger measured size.

Sizes are given with ``--sizes`` as a comma list: a value below 64 (or written
``2^K``) is a power-of-two exponent, any other value is an element count, so
``--sizes 10,20,1000000`` means 1024, 1048576 and 1000000 elements.

``transpose`` runs fixed cases (:data:`TRANSPOSE_CASES`: 16384 x 16384 in the
``--dtype`` and in uint8 and float64, 7 x 1,000,003, and 64^4 with axes
(3, 1, 2, 0)) whatever ``--sizes`` says; it counts the bytes read and written,
and its peers are NumPy's, CuPy's and PyTorch's contiguous copies of the
transposed view.

With ``--out DIR`` the rows are also written to ``DIR/bench.md`` (Markdown, with
the device name and library versions), ``DIR/bench.csv`` and, when matplotlib
is importable, ``DIR/bench.png`` (bandwidth against size, one panel per op).
"""

from __future__ import annotations

import argparse
import csv
import functools
import importlib
import math
import platform
import sys
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Callable, Sequence

import numpy as np

import gpuprims
from gpuprims import _api, _convolve, _transpose

CONVOLVE_TAPS = {"convolve": 7, "convolve_long": 4097}
CONVOLVE2D_SHAPE = (5, 5)
CONVOLVE_OPS = frozenset(CONVOLVE_TAPS) | {"convolve2d"}
OPS = ("sum", "prod", "min", "max", "mean", "prefix_sum", "transpose", "convolve", "convolve_long",
       "convolve2d")
SCAN_OPS = frozenset({"prefix_sum"})
PINNED_OPS = frozenset({"sum", "prefix_sum", "transpose", "convolve", "convolve2d"})
"""Ops with end-to-end rows from pinned inputs and the host-to-device roofline."""
COPY_OPS = frozenset({"transpose"})
DEFAULT_OPS = ("sum", "max", "prefix_sum", "transpose")
DEFAULT_SIZES = tuple(2**k for k in range(10, 29, 2))
DEFAULT_REPEATS = 20
DTYPES = (
    "bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
    "uint64", "float16", "float32", "float64",
)

EXPONENT_LIMIT = 64
"""Size values below this are power-of-two exponents, others element counts."""

E2E_BYTE_BUDGET = 2**30
"""End-to-end runs per size are capped so that they process about this many bytes."""

MIN_E2E_REPEATS = 3

MEMCPY = "memcpy"
KERNEL = "kernel"
DEVICE = "device"
LATENCY = "latency"
E2E = "e2e"
BURST = 10
"""Back-to-back calls per repeat of a device-mode measurement."""
LATENCY_SIZES = (2**8, 2**12, 2**16)
LATENCY_CALLS = 2000
COLUMNS = ("op", "size", "library", "mode", "time_ms", "GB/s", "x_memcpy")


@dataclass(frozen=True)
class TransposeCase:
    """One transpose benchmark input: shape, axes, and dtype (None: the run's ``--dtype``)."""

    shape: tuple[int, ...]
    axes: tuple[int, ...] | None = None
    dtype: str | None = None

    def label(self, dtype: np.dtype) -> str:
        """``"16384x16384 uint8"``, with the axes when they are not reversed."""
        text = "x".join(map(str, self.shape))
        if self.axes is not None:
            text += " axes " + ",".join(map(str, self.axes))
        return f"{text} {dtype.name}"


TRANSPOSE_CASES = (
    TransposeCase((16384, 16384)),
    TransposeCase((16384, 16384), dtype="uint8"),
    TransposeCase((16384, 16384), dtype="float64"),
    TransposeCase((7, 1_000_003)),
    TransposeCase((64, 64, 64, 64), (3, 1, 2, 0)),
)


@dataclass(frozen=True)
class Row:
    """One measurement: the median time of one library running one op at one size.

    Attributes
    ----------
    op : str
        Operation name, one of :data:`OPS`.
    n : int
        Number of input elements.
    library : str
        ``"gpuprims"``, ``"numpy"``, ``"scipy"``, ``"cupy"``, ``"cupyx.ndimage"``, ``"torch"``
        or ``"memcpy"``.
    mode : str
        ``"kernel"`` (device work alone), ``"device"`` and ``"latency"`` (public calls on
        device-resident data) or ``"e2e"`` (from a NumPy array).
    time_ms : float
        Median time in milliseconds.
    gbps : float
        Effective bandwidth in GB/s (see the module docstring for the byte counts).
    x_memcpy : float or None
        ``gbps`` as a fraction of the device memcpy bandwidth at this size;
        None for end-to-end and latency rows or when the memcpy row is missing.
    case : str
        For inputs that are not 1-D sizes (transpose), what the size column
        shows instead: shape, axes and dtype.
    dtype : str
        The row's dtype when it is not the run's ``--dtype`` (transpose cases).
    """

    op: str
    n: int
    library: str
    mode: str
    time_ms: float
    gbps: float
    x_memcpy: float | None
    case: str = ""
    dtype: str = ""

    def cells(self) -> tuple[str, ...]:
        """Return the row formatted as strings, in :data:`COLUMNS` order."""
        ratio = "-" if self.x_memcpy is None else f"{self.x_memcpy:.2f}"
        return (
            self.op, self.case or format_size(self.n), self.library, self.mode,
            f"{self.time_ms:.4f}", f"{self.gbps:.2f}", ratio,
        )


# ---------------------------------------------------------------------------
# Command line
# ---------------------------------------------------------------------------

def parse_sizes(text: str) -> list[int]:
    """Parse a comma list of sizes into element counts.

    Parameters
    ----------
    text : str
        Comma-separated values.  ``K`` with ``K < 64`` and ``2^K`` mean ``2**K``
        elements; any other integer is an element count.

    Returns
    -------
    list of int
        Element counts in the given order.

    Raises
    ------
    argparse.ArgumentTypeError
        If a value is not a non-negative integer or ``2^K``.
    """
    sizes = []
    for token in text.split(","):
        token = token.strip()
        base, caret, exponent = token.partition("^")
        try:
            if caret:
                if base != "2":
                    raise ValueError
                value, is_exponent = int(exponent), True
            else:
                value = int(token)
                is_exponent = value < EXPONENT_LIMIT
        except ValueError:
            raise argparse.ArgumentTypeError(
                f"invalid size {token!r}: use an exponent K < {EXPONENT_LIMIT}, "
                "2^K, or an element count"
            ) from None
        if value < 0:
            raise argparse.ArgumentTypeError(f"invalid size {token!r}: negative")
        sizes.append(2**value if is_exponent else value)
    return sizes


def parse_ops(text: str) -> list[str]:
    """Parse a comma list of operation names, dropping duplicates.

    Raises
    ------
    argparse.ArgumentTypeError
        If a name is not in :data:`OPS`.
    """
    ops = []
    for name in (token.strip() for token in text.split(",")):
        if name not in OPS:
            raise argparse.ArgumentTypeError(
                f"unknown op {name!r}; choose from {', '.join(OPS)}"
            )
        if name not in ops:
            ops.append(name)
    return ops


def parse_repeats(text: str) -> int:
    """Parse a positive repeat count."""
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"repeats must be a positive integer, got {text!r}")
    return value


def build_parser() -> argparse.ArgumentParser:
    """Return the argument parser of ``python -m gpuprims.bench``."""
    parser = argparse.ArgumentParser(
        prog="python -m gpuprims.bench",
        description="Time gpuprims reductions, scans, transposes and convolutions against NumPy, "
                    "SciPy, CuPy and PyTorch.",
        epilog="Sizes: K < 64 or 2^K means 2**K elements, larger values are element counts.",
    )
    parser.add_argument(
        "--ops", type=parse_ops, default=list(DEFAULT_OPS),
        help=f"comma list from {','.join(OPS)} (default: {','.join(DEFAULT_OPS)})",
    )
    parser.add_argument(
        "--sizes", type=parse_sizes, default=list(DEFAULT_SIZES),
        help="comma list of sizes (default: 10,12,...,28, i.e. 2^10 .. 2^28 elements); "
             "transpose runs its own fixed cases",
    )
    parser.add_argument(
        "--dtype", choices=DTYPES, default="float32", metavar="DTYPE",
        help=f"input dtype, one of {','.join(DTYPES)} (default: float32)",
    )
    parser.add_argument(
        "--device", default=None,
        help='"cpu", "cuda" or "cuda:N" (default: "cuda" when a GPU is usable, else "cpu")',
    )
    parser.add_argument(
        "--repeats", type=parse_repeats, default=DEFAULT_REPEATS,
        help=f"timed runs per measurement; the median is reported (default: {DEFAULT_REPEATS})",
    )
    parser.add_argument(
        "--out", type=Path, metavar="DIR",
        help="also write DIR/bench.md, DIR/bench.csv and DIR/bench.png",
    )
    parser.add_argument(
        "--no-kernel", dest="kernel", action="store_false",
        help="skip the device-resident kernel timings",
    )
    parser.add_argument(
        "--no-device", dest="device_rows", action="store_false",
        help="skip the device-resident public-call timings and the latency table",
    )
    parser.add_argument(
        "--no-e2e", dest="e2e", action="store_false",
        help="skip the end-to-end timings from NumPy arrays",
    )
    return parser


def resolve_device(parser: argparse.ArgumentParser, device: str | None) -> str:
    """Return the device to benchmark, exiting with a usage error if it is unusable.

    Parameters
    ----------
    parser : argparse.ArgumentParser
        Used to report errors.
    device : str or None
        The ``--device`` value; None picks ``"cuda"`` when available, else ``"cpu"``.

    Returns
    -------
    str
        ``"cpu"`` or ``"cuda:N"``.
    """
    if device is None:
        return "cuda:0" if gpuprims.cuda_available() else "cpu"
    if device == "cpu":
        return device
    kind, _, index = device.partition(":")
    if kind != "cuda" or (index and not index.isdigit()):
        parser.error(f'--device must be "cpu", "cuda" or "cuda:N", got {device!r}')
    info = gpuprims.device_info()
    if not gpuprims.cuda_available():
        reason = info.get("reason", "no usable GPU")
        parser.error(f"--device {device}: CUDA is not available ({reason})")
    count = len(info["devices"])
    if int(index or 0) >= count:
        parser.error(f"--device {device}: only {count} CUDA device(s) found")
    return f"cuda:{int(index or 0)}"


# ---------------------------------------------------------------------------
# Libraries under test
# ---------------------------------------------------------------------------

TimeFn = Callable[[np.ndarray, int], np.ndarray]
"""Times one op: ``fn(a, repeats)`` returns ``repeats`` times in ms after a warm-up."""


def convolve_problem(op: str, a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Return ``(input, mask)`` of a convolution op on the random elements ``a``.

    The mask is random in the input's dtype and the same in every call; ``convolve2d`` takes the
    largest ``rows x cols`` image of ``a`` with ``rows = isqrt(n)``.
    """
    mask = convolve_mask(op, a.dtype)
    if op == "convolve2d":
        rows, cols = square_shape(a.size)
        return a[: rows * cols].reshape(rows, cols), mask
    return a, mask


@functools.lru_cache(maxsize=None)
def convolve_mask(op: str, dtype: np.dtype) -> np.ndarray:
    """The mask of a convolution op (made once per dtype, so calls do not pay for it)."""
    shape = CONVOLVE2D_SHAPE if op == "convolve2d" else (CONVOLVE_TAPS[op],)
    mask = random_array(np.random.default_rng(7), math.prod(shape), dtype).reshape(shape)
    mask.flags.writeable = False
    return mask


def op_input(op: str, a: np.ndarray) -> np.ndarray:
    """The array every library's function of ``op`` takes: a convolution's image (its mask is
    part of the function), else ``a`` itself."""
    return convolve_problem(op, a)[0] if op in CONVOLVE_OPS else a


def square_shape(n: int) -> tuple[int, int]:
    """The 2-D shape made of ``n`` elements (the ``convolve2d`` image, the latency transposes):
    ``isqrt(n)`` rows, as many columns as fit."""
    rows = max(1, math.isqrt(n))
    return rows, n // rows


class Library:
    """A library that can be timed on one device.

    Attributes
    ----------
    name : str
        Name shown in the ``library`` column.
    version : str
        Version string for the report header.
    skipped_errors : tuple of type
        Exceptions that skip one measurement with a note instead of aborting
        the run (out of memory, unsupported dtype).
    """

    name = ""
    version = ""
    skipped_errors: tuple[type[BaseException], ...] = (MemoryError,)

    def kernel_timer(self, op: str, axes=None) -> TimeFn | None:
        """Return a timer for ``op`` on device-resident data, or None if not applicable.

        ``axes`` is the permutation of ``transpose`` (None reverses the axes).
        """
        return None

    def e2e_function(self, op: str, a: np.ndarray, axes=None) -> Callable[[np.ndarray], object] | None:
        """Return ``f(x)`` computing ``op`` (on the input ``a``) from the NumPy array
        ``x = op_input(op, a)``, or None if not applicable."""
        return None

    def device_call(self, op: str, a: np.ndarray, axes=None) -> DeviceCall | None:
        """Return how to run ``op`` on a device-resident copy of ``op_input(op, a)``, or None if
        not applicable."""
        return None


@dataclass(frozen=True)
class DeviceCall:
    """``call(put(a))`` runs an op on a device copy of ``a``; ``sync()`` waits for the device."""

    put: Callable[[np.ndarray], object]
    call: Callable[[object], object]
    sync: Callable[[], None]


class Gpuprims(Library):
    """gpuprims on the benchmarked device; kernel times come from ``_api._time_kernel``."""

    name = "gpuprims"

    def __init__(self, device: str):
        self.device = device
        self.version = getattr(gpuprims, "__version__", "unknown")

    def kernel_timer(self, op: str, axes=None) -> TimeFn | None:
        if self.device == "cpu":
            return None

        def time_kernel(a: np.ndarray, repeats: int) -> np.ndarray:
            if op in COPY_OPS:
                return _transpose._time_kernel(a, axes, repeats + 1, device=self.device)[1:]
            if op in CONVOLVE_OPS:
                name = "convolve2d" if op == "convolve2d" else "convolve"
                return _convolve._time_kernel(name, *convolve_problem(op, a), repeats + 1,
                                              device=self.device, mode="same")[1:]
            return _api._time_kernel(op, a, repeats + 1, device=self.device)[1:]

        return time_kernel

    @staticmethod
    def _function(op: str, a: np.ndarray, axes, device: str | None) -> Callable[[object], object]:
        """``f(x)``: the public call of ``op`` on ``x``, host or device data.  Convolution masks
        are NumPy arrays: gpuprims reads masks from the host."""
        if op in COPY_OPS:
            return lambda x: gpuprims.transpose(x, axes, device=device)
        if op in CONVOLVE_OPS:
            function = gpuprims.convolve2d if op == "convolve2d" else gpuprims.convolve
            mask = convolve_mask(op, a.dtype)
            return lambda x: function(x, mask, "same", device=device)
        function = getattr(gpuprims, op)
        return lambda x: function(x, device=device)

    def e2e_function(self, op: str, a: np.ndarray, axes=None) -> Callable[[np.ndarray], object]:
        return self._function(op, a, axes, self.device)

    def device_call(self, op: str, a: np.ndarray, axes=None) -> DeviceCall | None:
        if self.device == "cpu":
            return None
        return DeviceCall(lambda x: gpuprims.to_device(x, self.device),
                          self._function(op, a, axes, None),  # device arrays pick their device
                          lambda: gpuprims.synchronize(self.device))


class Numpy(Library):
    """NumPy on the host: end-to-end reference only."""

    name = "numpy"
    version = np.__version__
    functions = {
        "sum": np.sum, "prod": np.prod, "min": np.min, "max": np.max,
        "mean": np.mean, "prefix_sum": np.cumsum,
    }

    def e2e_function(self, op: str, a: np.ndarray, axes=None) -> Callable[[np.ndarray], object] | None:
        if op in COPY_OPS:
            return lambda x: np.ascontiguousarray(np.transpose(x, axes))
        if op in CONVOLVE_TAPS:
            mask = convolve_mask(op, a.dtype)
            return lambda x: np.convolve(x, mask, "same")
        return self.functions.get(op)


class Scipy(Library):
    """SciPy on the host: the end-to-end reference of ``convolve2d``."""

    name = "scipy"

    def __init__(self, module):
        self.signal = module
        self.version = importlib.import_module("scipy").__version__

    def e2e_function(self, op: str, a: np.ndarray, axes=None) -> Callable[[np.ndarray], object] | None:
        if op != "convolve2d":
            return None
        mask = convolve_mask(op, a.dtype)
        return lambda x: self.signal.convolve2d(x, mask, "same")


class Cupy(Library):
    """CuPy on one CUDA device."""

    name = "cupy"
    skipped_errors = (MemoryError, TypeError)

    def __init__(self, module, index: int):
        self.cupy = module
        self.index = index
        self.version = module.__version__

    def _function(self, op: str, a: np.ndarray, axes=None):
        """``f(x)`` computing ``op`` on the device copy ``x`` of ``op_input(op, a)``."""
        cupy = self.cupy
        if op in COPY_OPS:
            return lambda x: cupy.ascontiguousarray(cupy.transpose(x, axes))
        if op in CONVOLVE_OPS:
            mask = cupy.asarray(convolve_mask(op, a.dtype))
            if op == "convolve2d":
                import cupyx.scipy.signal
                return lambda x: cupyx.scipy.signal.convolve2d(x, mask, "same")
            return lambda x: cupy.convolve(x, mask, "same")
        return getattr(cupy, "cumsum" if op == "prefix_sum" else op)

    def kernel_timer(self, op: str, axes=None) -> TimeFn | None:
        cupy = self.cupy

        def time_kernel(a: np.ndarray, repeats: int) -> np.ndarray:
            with cupy.cuda.Device(self.index):
                try:
                    function, x = self._function(op, a, axes), cupy.asarray(op_input(op, a))
                    return time_with_events(
                        lambda: function(x), repeats, cupy.cuda.Event,
                        cupy.cuda.get_elapsed_time,
                    )
                finally:
                    function = x = None
                    cupy.get_default_memory_pool().free_all_blocks()

        return time_kernel if self.offers(op) else None

    def device_call(self, op: str, a: np.ndarray, axes=None) -> DeviceCall | None:
        cupy = self.cupy
        if not self.offers(op):
            return None
        return DeviceCall(cupy.asarray, self._function(op, a, axes),
                          lambda: cupy.cuda.get_current_stream().synchronize())

    def e2e_function(self, op: str, a: np.ndarray, axes=None) -> Callable[[np.ndarray], object] | None:
        cupy = self.cupy

        def run(x: np.ndarray):  # the mask's upload is part of the call, as for gpuprims
            with cupy.cuda.Device(self.index):
                return self._function(op, a, axes)(cupy.asarray(x)).get()  # .get() blocks until done

        return run if self.offers(op) else None

    def offers(self, op: str) -> bool:
        """Whether this peer has a counterpart of ``op``."""
        return True


class CupyxNdimage(Cupy):
    """``cupyx.scipy.ndimage``'s convolutions (zero fill), for the convolution ops only."""

    name = "cupyx.ndimage"

    def _function(self, op: str, a: np.ndarray, axes=None):
        import cupyx.scipy.ndimage as ndimage
        mask = self.cupy.asarray(convolve_mask(op, a.dtype))
        if op == "convolve2d":
            return lambda x: ndimage.convolve(x, mask, mode="constant")
        return lambda x: ndimage.convolve1d(x, mask, mode="constant")

    def offers(self, op: str) -> bool:
        return op in CONVOLVE_OPS


class Torch(Library):
    """PyTorch on one CUDA device."""

    name = "torch"
    skipped_errors = (MemoryError, TypeError, RuntimeError)

    def __init__(self, module, index: int):
        self.torch = module
        self.device = module.device("cuda", index)
        self.version = module.__version__

    def _function(self, op: str, a: np.ndarray, axes=None):
        """``f(x)`` computing ``op`` on the device copy ``x`` of ``op_input(op, a)``."""
        torch = self.torch
        if op in COPY_OPS:
            return lambda x: x.permute(*(axes or range(x.ndim - 1, -1, -1))).contiguous()
        if op in CONVOLVE_OPS:  # torch's convolutions correlate: flip the mask
            mask = convolve_mask(op, a.dtype)
            weight = torch.from_numpy(np.ascontiguousarray(np.flip(mask))).to(self.device)
            if op == "convolve2d":
                weight = weight.view(1, 1, *mask.shape)
                return lambda x: torch.nn.functional.conv2d(
                    x.view(1, 1, *x.shape), weight, padding=tuple(s // 2 for s in mask.shape))
            weight = weight.view(1, 1, -1)
            return lambda x: torch.nn.functional.conv1d(x.view(1, 1, -1), weight,
                                                        padding=mask.size // 2)
        if op == "prefix_sum":
            return lambda x: torch.cumsum(x, dim=0)
        if op == "mean":  # NumPy averages integers and bools in float64; torch refuses them
            return lambda x: torch.mean(x, dtype=None if x.is_floating_point() else torch.float64)
        return getattr(torch, op)

    def kernel_timer(self, op: str, axes=None) -> TimeFn:
        torch = self.torch

        def time_kernel(a: np.ndarray, repeats: int) -> np.ndarray:
            with torch.cuda.device(self.device):
                try:
                    function = self._function(op, a, axes)
                    x = torch.from_numpy(op_input(op, a)).to(self.device)
                    return time_with_events(
                        lambda: function(x), repeats,
                        lambda: torch.cuda.Event(enable_timing=True),
                        lambda start, stop: start.elapsed_time(stop),
                    )
                finally:
                    function = x = None
                    torch.cuda.empty_cache()

        return time_kernel

    def device_call(self, op: str, a: np.ndarray, axes=None) -> DeviceCall:
        torch = self.torch
        return DeviceCall(lambda x: torch.from_numpy(x).to(self.device), self._function(op, a, axes),
                          lambda: torch.cuda.synchronize(self.device))

    def e2e_function(self, op: str, a: np.ndarray, axes=None) -> Callable[[np.ndarray], object]:
        torch = self.torch
        return lambda x: self._function(op, a, axes)(torch.from_numpy(x).to(self.device)).cpu()


def time_with_events(run: Callable[[], object], repeats: int, new_event, elapsed_ms) -> np.ndarray:
    """Time ``run()`` with a pair of CUDA events, after one untimed warm-up call.

    Parameters
    ----------
    run : callable
        Enqueues the device work on the current stream.
    repeats : int
        Number of timed calls.
    new_event : callable
        Returns a new timing-enabled event with ``record()`` and ``synchronize()``.
    elapsed_ms : callable
        ``elapsed_ms(start, stop)`` returns the milliseconds between two events.

    Returns
    -------
    numpy.ndarray
        ``repeats`` times in milliseconds.
    """
    start, stop = new_event(), new_event()
    run()
    times = np.empty(repeats)
    for i in range(repeats):
        start.record()
        run()
        stop.record()
        stop.synchronize()
        times[i] = elapsed_ms(start, stop)
    return times


def time_burst(device_call: DeviceCall, x, repeats: int) -> np.ndarray:
    """Per-call milliseconds of bursts of :data:`BURST` calls on device data, each burst timed
    (wall clock) from its first call to the completion of its device work."""
    device_call.call(x)
    device_call.sync()
    times = np.empty(repeats)
    for i in range(repeats):
        start = time.perf_counter()
        for _ in range(BURST):
            device_call.call(x)
        device_call.sync()
        times[i] = (time.perf_counter() - start) * 1e3 / BURST
    return times


def time_call_latency(device_call: DeviceCall, x) -> np.ndarray:
    """Host milliseconds of :data:`LATENCY_CALLS` single calls (the device is waited for
    between groups of calls, outside the timed region, so its queue stays short)."""
    device_call.call(x)
    device_call.sync()
    times = np.empty(LATENCY_CALLS)
    for i in range(LATENCY_CALLS):
        if i % 100 == 0:
            device_call.sync()
        start = time.perf_counter()
        device_call.call(x)
        times[i] = (time.perf_counter() - start) * 1e3
    device_call.sync()
    return times


def time_wall(function: Callable[[np.ndarray], object], a: np.ndarray, repeats: int) -> np.ndarray:
    """Time ``function(a)`` with :func:`time.perf_counter` after one warm-up call.

    Returns
    -------
    numpy.ndarray
        ``repeats`` times in milliseconds.
    """
    function(a)
    times = np.empty(repeats)
    for i in range(repeats):
        start = time.perf_counter()
        function(a)
        times[i] = (time.perf_counter() - start) * 1e3
    return times


def import_host_peer(module_name: str) -> Library | None:
    """Return the SciPy peer, or None if SciPy is not importable."""
    try:
        return Scipy(importlib.import_module(module_name))
    except ImportError:
        return None


def import_gpu_peer(name: str, device: str) -> Library | None:
    """Return the CuPy, cupyx.scipy.ndimage (``"cupyx"``) or PyTorch peer for ``device``, or None
    if it is not usable."""
    if device == "cpu":
        return None
    try:
        module = importlib.import_module("cupy" if name == "cupyx" else name)
    except ImportError:
        return None
    index = int(device.partition(":")[2])
    if name == "torch":
        return Torch(module, index) if module.cuda.is_available() else None
    try:
        usable = module.cuda.runtime.getDeviceCount() > index
    except module.cuda.runtime.CUDARuntimeError:
        usable = False
    if not usable:
        return None
    return CupyxNdimage(module, index) if name == "cupyx" else Cupy(module, index)


# ---------------------------------------------------------------------------
# Measurements
# ---------------------------------------------------------------------------

def format_size(n: int) -> str:
    """Return ``"2^K"`` for powers of two, else the decimal count."""
    if n > 0 and n & (n - 1) == 0:
        return f"2^{n.bit_length() - 1}"
    return str(n)


def random_array(rng: np.random.Generator, n: int, dtype: np.dtype) -> np.ndarray:
    """Return ``n`` fresh random values of ``dtype`` (small integers, floats in [0, 1))."""
    if dtype == np.bool_:
        return rng.random(n, dtype=np.float32) < 0.5
    if dtype.kind in "iu":
        return rng.integers(0, 100, size=n, dtype=dtype)
    if dtype == np.float64:
        return rng.random(n)
    return rng.random(n, dtype=np.float32).astype(dtype, copy=False)


def bytes_moved(op: str, n: int, dtype: np.dtype) -> int:
    """Return the bytes ``op`` must move for ``n`` elements of ``dtype``.

    Reductions read the input; scans also write an output whose dtype follows
    NumPy's ``cumsum`` (e.g. int32 input gives an int64 output); convolutions
    read their input and write as much ('same' mode).
    """
    if op in CONVOLVE_OPS:
        return 2 * (math.prod(square_shape(n)) if op == "convolve2d" else n) * dtype.itemsize
    nbytes = n * dtype.itemsize
    if op in COPY_OPS:
        return 2 * nbytes
    if op in SCAN_OPS:
        nbytes += n * np.cumsum(np.zeros(0, dtype)).dtype.itemsize
    return nbytes


def e2e_repeats(repeats: int, nbytes: int) -> int:
    """Return the number of end-to-end runs for an input of ``nbytes``.

    Runs are capped so that they process about :data:`E2E_BYTE_BUDGET` bytes,
    but at least :data:`MIN_E2E_REPEATS` (and never more than ``repeats``).
    """
    return min(repeats, max(MIN_E2E_REPEATS, E2E_BYTE_BUDGET // max(nbytes, 1)))


class Benchmark:
    """Runs the measurements and collects rows and notes.

    Parameters
    ----------
    device : str
        ``"cpu"`` or ``"cuda:N"``.
    dtype : numpy.dtype
        Input dtype.
    repeats : int
        Timed runs per kernel measurement.
    kernel, e2e, device_rows : bool
        Which modes to measure; kernel and device modes only apply to CUDA devices.
    """

    def __init__(self, device: str, dtype: np.dtype, repeats: int, kernel: bool, e2e: bool,
                 device_rows: bool = True):
        self.device = device
        self.dtype = dtype
        self.repeats = repeats
        self.kernel = kernel and device != "cpu"
        self.device_rows = device_rows and device != "cpu"
        self.e2e = e2e
        peers = [import_host_peer("scipy.signal")]
        peers += [import_gpu_peer(name, device) for name in ("cupy", "cupyx", "torch")]
        self.libraries = [Gpuprims(device), Numpy()] + [peer for peer in peers if peer]
        self.rng = np.random.default_rng()
        self.rows: list[Row] = []
        self.notes: list[str] = []

    def note(self, message: str) -> None:
        """Record ``message`` for the report and print it to stderr."""
        self.notes.append(message)
        print(f"note: {message}", file=sys.stderr, flush=True)

    def run(self, ops: Sequence[str], sizes: Sequence[int], emit: Callable[[Row], None]) -> None:
        """Measure every op at every size (transpose: at each of its cases), calling ``emit``
        for each new row."""
        for op in ops:
            if op in COPY_OPS:
                inputs = [(math.prod(case.shape), case) for case in self._transpose_cases()]
            else:
                inputs = [(n, None) for n in sizes]
            for n, case in inputs:
                try:
                    a = random_array(self.rng, n, np.dtype(case.dtype) if case else self.dtype)
                except MemoryError:
                    self.note(f"{op} n={format_size(n)}: input does not fit in host memory; skipped")
                    continue
                for row in self.measure(op, a if case is None else a.reshape(case.shape), case):
                    self.rows.append(row)
                    emit(row)
                del a
        if self.device_rows:
            for op in ops:
                for n in LATENCY_SIZES:
                    a, labels = self._latency_input(op, n)
                    for row in self._device_rows(op, a, None, labels, None, LATENCY):
                        self.rows.append(row)
                        emit(row)

    def _latency_input(self, op: str, n: int) -> tuple[np.ndarray, dict]:
        """``(a, row labels)`` of a latency measurement: ``n`` random elements, as a square-ish
        matrix for transpose (a 1-D transpose is a plain copy)."""
        a = random_array(self.rng, n, self.dtype)
        if op not in COPY_OPS:
            return a, {}
        case = TransposeCase(square_shape(n))
        a = a[: math.prod(case.shape)].reshape(case.shape)
        return a, {"case": case.label(a.dtype), "dtype": a.dtype.name}

    def _transpose_cases(self) -> list[TransposeCase]:
        """:data:`TRANSPOSE_CASES` with their dtypes filled in, without repeats."""
        cases = (TransposeCase(case.shape, case.axes, case.dtype or self.dtype.name)
                 for case in TRANSPOSE_CASES)
        return list(dict.fromkeys(cases))

    def measure(self, op: str, a: np.ndarray, case: TransposeCase | None = None) -> list[Row]:
        """Return the rows of one op on one input: kernel rows, then end-to-end rows."""
        axes = None if case is None else case.axes
        labels = {} if case is None else {"case": case.label(a.dtype), "dtype": a.dtype.name}
        rows = self._kernel_rows(op, a, axes, labels) if self.kernel else []
        if self.device_rows:
            memcpy = [row.gbps for row in rows if row.library == MEMCPY]
            rows += self._device_rows(op, a, axes, labels, memcpy[0] if memcpy else None)
        if self.e2e:
            rows += self._e2e_rows(op, a, axes, labels)
            if op in PINNED_OPS and self.device != "cpu":
                rows = self._with_pinned_rows(op, a, axes, labels, rows)
        return rows

    def _kernel_rows(self, op: str, a: np.ndarray, axes, labels: dict) -> list[Row]:
        """Time ``op`` on device-resident data, memcpy roofline first."""
        n, nbytes = a.size, bytes_moved(op, a.size, a.dtype)
        rows = []
        memcpy_ms = self._timed(MEMCPY, op, n, (MemoryError,), lambda: _api._time_memcpy(
            a.nbytes, self.repeats + 1, device=self.device)[1:])
        memcpy_gbps = None
        if memcpy_ms is not None:
            memcpy_gbps = gbps(2 * a.nbytes, memcpy_ms)
            rows.append(Row(op, n, MEMCPY, KERNEL, memcpy_ms, memcpy_gbps, 1.0, **labels))
        for library in self.libraries:
            timer = library.kernel_timer(op, axes)
            if timer is None:
                continue
            ms = self._timed(library.name, op, n, library.skipped_errors,
                             lambda: timer(a, self.repeats))
            if ms is not None:
                rate = gbps(nbytes, ms)
                ratio = None if memcpy_gbps is None else rate / memcpy_gbps
                rows.append(Row(op, n, library.name, KERNEL, ms, rate, ratio, **labels))
        return rows

    def _device_rows(self, op: str, a: np.ndarray, axes, labels: dict, memcpy_gbps: float | None,
                     mode: str = DEVICE) -> list[Row]:
        """Time the public ``op`` call on device-resident copies of ``op_input(op, a)``: bursts
        of calls to completion (``DEVICE``) or the host time of single calls (``LATENCY``)."""
        n, nbytes, x = a.size, bytes_moved(op, a.size, a.dtype), op_input(op, a)
        rows = []
        for library in self.libraries:
            device_call = library.device_call(op, a, axes)
            if device_call is None:
                continue
            if mode == DEVICE:
                measure = lambda: time_burst(device_call, device_call.put(x), self.repeats)  # noqa: E731
            else:
                measure = lambda: time_call_latency(device_call, device_call.put(x))  # noqa: E731
            ms = self._timed(library.name, op, n, library.skipped_errors, measure)
            if ms is not None:
                rate = gbps(nbytes, ms)
                ratio = None if memcpy_gbps is None else rate / memcpy_gbps
                rows.append(Row(op, n, library.name, mode, ms, rate, ratio, **labels))
        return rows

    def _e2e_rows(self, op: str, a: np.ndarray, axes, labels: dict) -> list[Row]:
        """Time ``op`` end to end from the NumPy array ``a``."""
        n, nbytes, x = a.size, bytes_moved(op, a.size, a.dtype), op_input(op, a)
        repeats = e2e_repeats(self.repeats, a.nbytes)
        rows = []
        for library in self.libraries:
            function = library.e2e_function(op, a, axes)
            if function is None:
                continue
            ms = self._timed(library.name, op, n, library.skipped_errors,
                             lambda: time_wall(function, x, repeats))
            if ms is not None:
                rows.append(Row(op, n, library.name, E2E, ms, gbps(nbytes, ms), None, **labels))
        return rows

    def _with_pinned_rows(self, op: str, a: np.ndarray, axes, labels: dict, rows: list[Row]) -> list[Row]:
        """Add the host-to-device roofline and pinned-input rows of ``op``, and rate the
        end-to-end gpuprims rows against the pinned bound."""
        n, repeats = a.size, e2e_repeats(self.repeats, a.nbytes)
        pinned = gpuprims.pinned_copy(op_input(op, a))
        extra = []
        for library, source in (("h2d-pageable", a), ("h2d-pinned", pinned)):
            ms = self._timed(library, op, n, (MemoryError,), lambda: _api._time_host_to_device(
                source, self.repeats, device=self.device))
            if ms is not None:
                extra.append(Row(op, n, library, E2E, ms, gbps(a.nbytes, ms), None, **labels))
        function = Gpuprims(self.device).e2e_function(op, a, axes)
        ms = self._timed("gpuprims-pinned", op, n, (MemoryError,), lambda: time_wall(function, pinned, repeats))
        if ms is not None:
            extra.append(Row(op, n, "gpuprims-pinned", E2E, ms, gbps(bytes_moved(op, n, a.dtype), ms), None,
                             **labels))
        bus = [row.gbps for row in extra if row.library == "h2d-pinned"]
        if not bus:
            return rows + extra
        bound_ms = max(a.nbytes, bytes_moved(op, n, a.dtype) - a.nbytes) / (bus[0] * 1e6)
        rated = [replace(row, x_memcpy=bound_ms / row.time_ms)
                 if row.mode == E2E and row.library.startswith("gpuprims") else row for row in rows + extra]
        return rated

    def crossovers(self) -> list[str]:
        """For each op with end-to-end rows over sizes (not transpose's fixed cases): the smallest
        measured size from which gpuprims beats the host library (SciPy for ``convolve2d``, else
        NumPy) at every larger measured size."""
        lines = []
        for op in dict.fromkeys(row.op for row in self.rows if row.op not in COPY_OPS):
            times = {(row.library, row.n): row.time_ms for row in self.rows
                     if row.op == op and row.mode == E2E}
            host = "scipy" if op == "convolve2d" else "numpy"
            sizes = sorted(n for library, n in times if library == "gpuprims" and (host, n) in times)
            crossover = None
            for n in reversed(sizes):
                if times[("gpuprims", n)] >= times[(host, n)]:
                    break
                crossover = n
            if not sizes:
                if any(library == "gpuprims" for library, _ in times):
                    lines.append(f"{op}: no end-to-end crossover ({host} has no rows to compare with)")
                continue
            measured = ", ".join(format_size(n) for n in sizes)
            lines.append(f"{op}: gpuprims end to end beats {host} from {format_size(crossover)} up"
                         if crossover is not None else
                         f"{op}: gpuprims end to end does not beat {host} at the largest size",)
            lines[-1] += f" (measured: {measured})"
        return lines

    def _timed(self, library: str, op: str, n: int, errors, measure) -> float | None:
        """Return the median of ``measure()``, or None (with a note) on ``errors``."""
        try:
            return float(np.median(measure()))
        except errors as exc:
            reason = "out of memory" if isinstance(exc, MemoryError) else exc
            self.note(f"{library} {op} n={format_size(n)}: skipped ({reason})")
            return None


def gbps(nbytes: int, ms: float) -> float:
    """Return the bandwidth in GB/s (1e9 bytes per second) of ``nbytes`` in ``ms``."""
    return nbytes / (ms * 1e6) if ms > 0 else float("inf")


# ---------------------------------------------------------------------------
# Reporting
# ---------------------------------------------------------------------------

WIDTHS = (13, 10, 13, 7, 11, 9, 8)
PLOT_COLUMNS = 3


def format_line(cells: Sequence[str]) -> str:
    """Return one fixed-width text table line (text left-aligned, numbers right-aligned)."""
    parts = [
        cell.ljust(width) if i in (0, 2, 3) else cell.rjust(width)
        for i, (cell, width) in enumerate(zip(cells, WIDTHS))
    ]
    return "  ".join(parts).rstrip()


def device_name(device: str) -> str:
    """Return a human-readable name for ``device`` from :func:`gpuprims.device_info`."""
    if device == "cpu":
        return f"CPU ({platform.processor() or platform.machine()})"
    index = int(device.partition(":")[2])
    return f"{gpuprims.device_info()['devices'][index]['name']} ({device})"


def versions(libraries: Sequence[Library]) -> str:
    """Return ``"gpuprims X (CUDA Y), numpy Z, ..."`` for the report header."""
    cuda = gpuprims.build_info().get("cuda_version")
    parts = []
    for library in libraries:
        text = f"{library.name} {library.version}"
        if isinstance(library, Gpuprims):
            text += f" (CUDA {cuda})" if cuda else " (CPU-only build)"
        parts.append(text)
    return ", ".join(parts)


def write_markdown(path: Path, bench: Benchmark, header: str) -> None:
    """Write the rows as a Markdown table, after a header and before the notes."""
    align = ("---", "---:", "---", "---", "---:", "---:", "---:")
    lines = [
        "# gpuprims benchmark",
        "",
        header,
        "",
        "Reductions count the bytes read, scans and transposes read + write, memcpy read + write; "
        "`x_memcpy` is a kernel row's GB/s over the device memcpy GB/s.",
        "",
        "| " + " | ".join(COLUMNS) + " |",
        "|" + "|".join(align) + "|",
    ]
    lines += ["| " + " | ".join(row.cells()) + " |" for row in bench.rows]
    if bench.notes:
        lines += ["", "Notes:", ""] + [f"- {message}" for message in bench.notes]
    path.write_text("\n".join(lines) + "\n")


def write_csv(path: Path, rows: Sequence[Row], dtype: np.dtype, device: str) -> None:
    """Write the rows as CSV with raw numbers (element count, not ``2^K``)."""
    with path.open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["op", "n", "dtype", "device", "library", "mode",
                         "time_ms", "gbps", "x_memcpy", "case"])
        for row in rows:
            writer.writerow([row.op, row.n, row.dtype or dtype.name, device, row.library, row.mode,
                             f"{row.time_ms:.6g}", f"{row.gbps:.6g}",
                             "" if row.x_memcpy is None else f"{row.x_memcpy:.4f}", row.case])


def write_plot(path: Path, rows: Sequence[Row], ops: Sequence[str], title: str) -> bool:
    """Plot GB/s against size, one panel per op; return False if matplotlib is missing.

    Kernel rows are plotted when there are any (memcpy dashed), else the
    end-to-end rows.
    """
    try:
        import matplotlib
    except ImportError:
        return False
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    mode = KERNEL if any(row.mode == KERNEL for row in rows) else E2E
    rows = [row for row in rows if row.mode == mode]
    libraries = list(dict.fromkeys(row.library for row in rows))
    colors = dict(zip(libraries, plt.rcParams["axes.prop_cycle"].by_key()["color"]))
    ncols = min(len(ops), PLOT_COLUMNS)
    nrows = -(-len(ops) // ncols)
    fig, axes = plt.subplots(nrows, ncols, figsize=(5 * ncols, 4 * nrows), squeeze=False)
    for ax in axes.flat[len(ops):]:
        ax.set_visible(False)
    for ax, op in zip(axes.flat, ops):
        for library in libraries:
            points = sorted((row.n, row.gbps) for row in rows
                            if row.op == op and row.library == library)
            if points:
                sizes, rates = zip(*points)
                ax.plot(sizes, rates, marker="o", label=library, color=colors[library],
                        linestyle="--" if library == MEMCPY else "-")
        ax.set_xscale("log", base=2)
        ax.set_title(f"{op} ({mode})")
        ax.set_xlabel("elements")
        ax.set_ylabel("GB/s")
        ax.grid(True, which="major", alpha=0.3)
        if ax.lines:
            ax.legend()
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return True


def main(argv: Sequence[str] | None = None) -> list[Row]:
    """Run the benchmark from command-line arguments.

    Parameters
    ----------
    argv : sequence of str, optional
        Arguments without the program name; defaults to ``sys.argv[1:]``.

    Returns
    -------
    list of Row
        All measured rows, in the order printed.
    """
    parser = build_parser()
    args = parser.parse_args(argv)
    device = resolve_device(parser, args.device)
    if not args.e2e and (not args.kernel or device == "cpu"):
        parser.error("nothing to measure: kernel timings need a CUDA device; drop --no-e2e")
    dtype = np.dtype(args.dtype)

    bench = Benchmark(device, dtype, args.repeats, args.kernel, args.e2e, args.device_rows)
    header = (f"Device: {device_name(device)}; dtype {dtype.name}; "
              f"median of {args.repeats} repeats. Versions: {versions(bench.libraries)}")
    print(header)
    print(format_line(COLUMNS))
    print(format_line(["-" * width for width in WIDTHS]))
    bench.run(args.ops, args.sizes,
              emit=lambda row: print(format_line(row.cells()), flush=True))
    for line in bench.crossovers():
        bench.note(line)

    if args.out is not None:
        args.out.mkdir(parents=True, exist_ok=True)
        write_markdown(args.out / "bench.md", bench, header)
        write_csv(args.out / "bench.csv", bench.rows, dtype, device)
        print(f"wrote {args.out / 'bench.md'} and {args.out / 'bench.csv'}")
        title = f"{device_name(device)}, {dtype.name}"
        plotted = [op for op in args.ops if op not in COPY_OPS]  # transpose cases are no size series
        if plotted and write_plot(args.out / "bench.png", bench.rows, plotted, title):
            print(f"wrote {args.out / 'bench.png'}")
        elif plotted:
            print("note: matplotlib is not installed; skipped bench.png")
    return bench.rows


if __name__ == "__main__":
    main()
