"""The libraries under test, as adapters that know how to move data and time it (CUDA events,
synchronisation), not which op is which: an op's callable for a library comes from the op table
(:mod:`.ops`), through the column the adapter names.

- :class:`Gpuprims`: the public functions on one device (``device=``), or with no ``device=`` at
  all (``gpuprims-auto``: the planner picks the route); kernel times from the timing hook
  ``gpuprims._timing.device_times``.
- :class:`Host`: NumPy and SciPy (``scipy.signal``), end to end only.
- :class:`Cupy` (CuPy, and ``cupyx.scipy.ndimage``) and :class:`Torch`: GPU libraries, timed with
  their own CUDA events;
- :class:`Cub`: CUB's scan and sum (:mod:`.cub`, compiled with ``nvcc``) on CuPy's arrays, in
  kernel mode.
"""

from __future__ import annotations

import contextlib
import importlib
from dataclasses import dataclass
from typing import Any, Callable, ContextManager

import numpy as np

import gpuprims
from gpuprims._timing import device_times

from .cub import CubLibrary, find_nvcc, nvcc_release
from .ops import Op, Problem
from .timers import time_with_events

KERNEL = "kernel"
DEVICE = "device"
LATENCY = "latency"
E2E = "e2e"
MODES = (KERNEL, DEVICE, LATENCY, E2E)


@dataclass(frozen=True)
class DeviceCall:
    """``call(x)`` runs an op on the device copy ``x = put(host_array)``; ``sync()`` waits for the
    device."""

    put: Callable[[np.ndarray], Any]
    call: Callable[[Any], Any]
    sync: Callable[[], None]


class Peer:
    """A library under test: how to move data to it and time it.

    Attributes
    ----------
    name : str
        Shown in the ``library`` column.
    column : str
        The op table's column (an :class:`~gpuprims.bench.ops.Op` attribute) of its callables.
    module : module
        What the op table's binders call (``peer.module.sum`` ...).
    version : str
        For the report header.
    modes : frozenset of str
        The modes it is measured in.
    skipped_errors : tuple of type
        Exceptions that skip one measurement with a note instead of aborting the run (out of
        memory, unsupported dtype).
    """

    name = ""
    column = ""
    module: Any = None
    version = ""
    modes: frozenset[str] = frozenset()
    skipped_errors: tuple[type[BaseException], ...] = (MemoryError,)

    def offers(self, op: Op) -> bool:
        """Whether the library has a counterpart of ``op``."""
        return getattr(op, self.column) is not None

    def bind(self, op: Op, problem: Problem) -> Callable[[Any], Any]:
        """``call(x)``: ``op`` on the library's copy ``x`` of ``problem.data``."""
        return getattr(op, self.column)(self, problem)

    def put(self, host: np.ndarray) -> Any:
        """``host`` as the library's array (host libraries: itself)."""
        return host

    def sync(self) -> None:
        """Wait for the library's work on its device (device and latency modes)."""
        raise NotImplementedError

    def active(self) -> ContextManager:
        """The context that makes the library's device current (device and latency modes)."""
        raise NotImplementedError

    def kernel_times(self, op: Op, problem: Problem, repeats: int) -> np.ndarray:
        """Milliseconds of ``repeats`` runs of the op's device work on device-resident data
        (kernel mode)."""
        raise NotImplementedError

    def e2e_call(self, op: Op, problem: Problem) -> Callable[[np.ndarray], Any]:
        """``run(x)``: ``op`` end to end from the NumPy array ``x`` to a host result."""
        return self.bind(op, problem)

    def route(self, op: Op, problem: Problem) -> str:
        """The route an end-to-end call takes (``gpuprims.explain``), ``""`` when not told."""
        return ""


class Host(Peer):
    """A host library (NumPy, SciPy): the end-to-end reference."""

    modes = frozenset({E2E})

    def __init__(self, name: str, module: Any, version: str):
        self.name = self.column = name
        self.module = module
        self.version = version


class Gpuprims(Peer):
    """gpuprims' public functions on ``device`` (``"cpu"`` or ``"cuda:N"``), or with no
    ``device=`` (None: ``gpuprims-auto``, end to end only)."""

    column = "gpuprims"
    module = gpuprims
    version = getattr(gpuprims, "__version__", "unknown")

    def __init__(self, device: str | None):
        self.device = device
        self.name = "gpuprims" if device is not None else "gpuprims-auto"
        self.on_device = {} if device is None else {"device": device}
        self.modes = frozenset({E2E} if device in (None, "cpu") else MODES)

    def bind(self, op: Op, problem: Problem) -> Callable[[Any], Any]:
        args, kwargs = problem.args, {**problem.kwargs, **self.on_device}
        return lambda x: op.gpuprims(x, *args, **kwargs)

    def put(self, host: np.ndarray) -> Any:
        return gpuprims.to_device(host, self.device)

    def sync(self) -> None:
        gpuprims.synchronize(self.device)

    def active(self) -> ContextManager:
        return contextlib.nullcontext()  # gpuprims names its device in every call

    def kernel_times(self, op: Op, problem: Problem, repeats: int) -> np.ndarray:
        return device_times(op.gpuprims, problem.data, *problem.args, repeats=repeats, device=self.device,
                            **problem.kwargs)

    def route(self, op: Op, problem: Problem) -> str:
        return op.explain(problem, **self.on_device)["route"]


class GpuPeer(Peer):
    """A GPU library on one device: subclasses say how to move data, sync and make events."""

    modes = frozenset(MODES)

    def get(self, result: Any) -> Any:
        """A device result copied to the host (waits for the device)."""
        raise NotImplementedError

    def new_event(self) -> Any:
        """A timing-enabled CUDA event."""
        raise NotImplementedError

    def elapsed_ms(self, start: Any, stop: Any) -> float:
        """Milliseconds between two recorded events."""
        raise NotImplementedError

    def release(self) -> None:
        """Give the memory the library caches back (between kernel measurements)."""
        raise NotImplementedError

    def kernel_times(self, op: Op, problem: Problem, repeats: int) -> np.ndarray:
        """Milliseconds of ``repeats`` calls on device-resident data, between CUDA events (the
        cached memory given back afterwards)."""
        with self.active():
            try:
                return self._event_times(op, problem, repeats)
            finally:
                self.release()

    def _event_times(self, op: Op, problem: Problem, repeats: int) -> np.ndarray:
        call, x = self.bind(op, problem), self.put(problem.data)
        return time_with_events(lambda: call(x), repeats, self.new_event, self.elapsed_ms)

    def e2e_call(self, op: Op, problem: Problem) -> Callable[[np.ndarray], Any]:
        """Upload, the op (its mask's upload included, as for gpuprims), download."""
        def run(x: np.ndarray) -> Any:
            with self.active():
                return self.get(self.bind(op, problem)(self.put(x)))
        return run


class Cupy(GpuPeer):
    """CuPy on one CUDA device; with ``column="cupyx_ndimage"`` and ``cupyx.scipy.ndimage`` as
    ``module``, its ndimage convolutions."""

    skipped_errors = (MemoryError, TypeError)

    def __init__(self, cupy: Any, index: int, name: str = "cupy", column: str = "cupy", module: Any = None):
        self.cupy = cupy
        self.index = index
        self.name, self.column = name, column
        self.module = cupy if module is None else module
        self.version = cupy.__version__

    def put(self, host: np.ndarray) -> Any:
        return self.cupy.asarray(host)

    def get(self, result: Any) -> Any:
        return result.get()

    def sync(self) -> None:
        self.cupy.cuda.get_current_stream().synchronize()

    def active(self) -> ContextManager:
        return self.cupy.cuda.Device(self.index)

    def new_event(self) -> Any:
        return self.cupy.cuda.Event()

    def elapsed_ms(self, start: Any, stop: Any) -> float:
        return self.cupy.cuda.get_elapsed_time(start, stop)

    def release(self) -> None:
        self.cupy.get_default_memory_pool().free_all_blocks()


class Cub(Cupy):
    """CUB (:class:`~.cub.CubLibrary`) on CuPy's arrays, events and stream, kernel mode only; an
    ``nvcc`` that fails skips its rows with a note."""

    modes = frozenset({KERNEL})
    skipped_errors = (MemoryError, TypeError, RuntimeError)

    def __init__(self, cupy: Any, index: int, nvcc: str):
        super().__init__(cupy, index, "cub", "cub", CubLibrary(cupy, index, nvcc))
        self.version = f"CUDA {nvcc_release(nvcc)}"

    def release(self) -> None:
        self.module.release()
        super().release()


class Torch(GpuPeer):
    """PyTorch on one CUDA device."""

    name = column = "torch"
    skipped_errors = (MemoryError, TypeError, RuntimeError)

    def __init__(self, torch: Any, index: int):
        self.module = torch
        self.device = torch.device("cuda", index)
        self.version = torch.__version__

    def put(self, host: np.ndarray) -> Any:
        return self.module.from_numpy(host).to(self.device)

    def get(self, result: Any) -> Any:
        return result.cpu()

    def sync(self) -> None:
        self.module.cuda.synchronize(self.device)

    def active(self) -> ContextManager:
        return self.module.cuda.device(self.device)

    def new_event(self) -> Any:
        return self.module.cuda.Event(enable_timing=True)

    def elapsed_ms(self, start: Any, stop: Any) -> float:
        return start.elapsed_time(stop)

    def release(self) -> None:
        self.module.cuda.empty_cache()


def host_peers() -> list[Peer]:
    """NumPy, and SciPy's ``scipy.signal`` when SciPy is importable."""
    peers: list[Peer] = [Host("numpy", np, np.__version__)]
    try:
        signal = importlib.import_module("scipy.signal")
    except ImportError:
        return peers
    return peers + [Host("scipy", signal, importlib.import_module("scipy").__version__)]


def gpu_peers(device: str) -> list[Peer]:
    """CuPy, ``cupyx.scipy.ndimage``, CUB (with CuPy and ``nvcc``) and PyTorch on ``device``
    (``"cuda:N"``), those importable and able to use it; none for ``"cpu"``."""
    if device == "cpu":
        return []
    index = int(device.partition(":")[2])
    peers: list[Peer] = []
    try:
        cupy = importlib.import_module("cupy")
    except ImportError:
        cupy = None
    try:
        usable = cupy is not None and cupy.cuda.runtime.getDeviceCount() > index
    except cupy.cuda.runtime.CUDARuntimeError:
        usable = False
    if usable:
        ndimage = importlib.import_module("cupyx.scipy.ndimage")
        peers += [Cupy(cupy, index), Cupy(cupy, index, "cupyx.ndimage", "cupyx_ndimage", ndimage)]
        nvcc = find_nvcc()
        peers += [Cub(cupy, index, nvcc)] if nvcc else []
    try:
        torch = importlib.import_module("torch")
    except ImportError:
        return peers
    return peers + [Torch(torch, index)] if torch.cuda.is_available() else peers
