"""The benchmark's four modes (``kernel``, ``device``, ``latency``, ``e2e``): each op of the table
on each input, every library that offers it, one :class:`Row` per measurement."""

from __future__ import annotations

import math
import sys
from dataclasses import dataclass, replace
from typing import Callable, Sequence

import numpy as np

import gpuprims
from gpuprims._timing import device_times

from .ops import OPS, Case, Op, Problem, random_array
from .peers import DEVICE, E2E, KERNEL, LATENCY, Gpuprims, Peer, gpu_peers, host_peers
from .timers import time_burst, time_call_latency, time_to_device, time_wall

MEMCPY = "memcpy"
LATENCY_SIZES = (2**8, 2**12, 2**16)
E2E_BYTE_BUDGET = 2**30
"""End-to-end runs per size are capped so that they process about this many bytes."""
MIN_E2E_REPEATS = 3


@dataclass(frozen=True)
class Row:
    """One measurement: the median time of one library running one op on one input.

    Attributes
    ----------
    op : str
        Operation name, a key of :data:`~gpuprims.bench.ops.OPS`.
    n : int
        Number of elements the input was made of.
    library : str
        ``"gpuprims"``, ``"gpuprims-auto"``, ``"gpuprims-pinned"``, ``"numpy"``, ``"scipy"``,
        ``"cupy"``, ``"cupyx.ndimage"``, ``"torch"``, ``"memcpy"``, ``"h2d-pageable"`` or
        ``"h2d-pinned"``.
    mode : str
        ``"kernel"`` (device work alone), ``"device"`` and ``"latency"`` (public calls on
        device-resident data) or ``"e2e"`` (from a NumPy array).
    time_ms : float
        Median time in milliseconds.
    gbps : float
        Effective bandwidth in GB/s (see the package docstring for the byte counts).
    x_memcpy : float or None
        Kernel and device rows: ``gbps`` over the device memcpy's at this size; end-to-end
        gpuprims rows: the pinned host-to-device bound's time over ``time_ms``; every
        end-to-end row with ``--device cpu``: ``gbps`` over the host memcpy's; else None.
    case : str
        For inputs that are not a size series (transpose), what the size column shows instead.
    dtype : str
        The input's dtype.
    route : str
        The route gpuprims took end to end (``gpuprims.explain``), ``""`` for other rows.
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
    route: str = ""


def gbps(nbytes: int, ms: float) -> float:
    """Return the bandwidth in GB/s (1e9 bytes per second) of ``nbytes`` in ``ms``."""
    return nbytes / (ms * 1e6) if ms > 0 else float("inf")


def format_size(n: int) -> str:
    """Return ``"2^K"`` for powers of two, else the decimal count."""
    if n > 0 and n & (n - 1) == 0:
        return f"2^{n.bit_length() - 1}"
    return str(n)


def e2e_repeats(repeats: int, nbytes: int) -> int:
    """Return the number of end-to-end runs for an input of ``nbytes``.

    Runs are capped so that they process about :data:`E2E_BYTE_BUDGET` bytes, but at least
    :data:`MIN_E2E_REPEATS` (and never more than ``repeats``).
    """
    return min(repeats, max(MIN_E2E_REPEATS, E2E_BYTE_BUDGET // max(nbytes, 1)))


class Benchmark:
    """Runs the measurements and collects rows and notes.

    Parameters
    ----------
    device : str
        ``"cpu"`` or ``"cuda:N"``.
    dtype : numpy.dtype
        Input dtype (transpose cases may name their own).
    repeats : int
        Timed runs per measurement.
    kernel, e2e, device_rows : bool
        Which modes to measure; kernel, device and latency modes only apply to CUDA devices.
    """

    def __init__(self, device: str, dtype: np.dtype, repeats: int, kernel: bool, e2e: bool,
                 device_rows: bool = True):
        self.device = device
        self.dtype = dtype
        self.repeats = repeats
        self.kernel = kernel and device != "cpu"
        self.device_rows = device_rows and device != "cpu"
        self.e2e = e2e
        self.gpuprims = Gpuprims(device)
        self.peers: list[Peer] = [self.gpuprims, Gpuprims(None), *host_peers(), *gpu_peers(device)]
        self.rng = np.random.default_rng()
        self.rows: list[Row] = []
        self.notes: list[str] = []

    @property
    def libraries(self) -> list[Peer]:
        """The libraries measured, one per name (the auto row is gpuprims too)."""
        return [peer for peer in self.peers if peer.name != "gpuprims-auto"]

    def note(self, message: str) -> None:
        """Record ``message`` for the report and print it to stderr."""
        self.notes.append(message)
        print(f"note: {message}", file=sys.stderr, flush=True)

    def run(self, ops: Sequence[str], sizes: Sequence[int], emit: Callable[[Row], None]) -> None:
        """Measure every op at every size (an op with fixed cases: at each case), then the latency
        rows, calling ``emit`` for each new row."""
        for op in map(OPS.__getitem__, ops):
            if op.cases:
                inputs = [(math.prod(case.shape), np.dtype(case.dtype), case.problem) for case in self._cases(op)]
            else:
                inputs = [(n, self.dtype, op.make) for n in sizes]
            for n, dtype, make in inputs:
                try:
                    problem = make(random_array(self.rng, n, dtype))
                except MemoryError:
                    self.note(f"{op.name} n={format_size(n)}: input does not fit in host memory; skipped")
                    continue
                self._add(self.measure(op, n, problem), emit)
                del problem
        if self.device_rows:
            for op in map(OPS.__getitem__, ops):
                for n in LATENCY_SIZES:
                    problem = (op.latency_make or op.make)(random_array(self.rng, n, self.dtype))
                    self._add(self._device_rows(op, n, problem, None, LATENCY), emit)

    def _add(self, rows: list[Row], emit: Callable[[Row], None]) -> None:
        """Keep ``rows`` and ``emit`` each."""
        for row in rows:
            self.rows.append(row)
            emit(row)

    def _cases(self, op: Op) -> list[Case]:
        """The op's fixed cases with their dtypes filled in, without repeats."""
        cases = (replace(case, dtype=case.dtype or self.dtype.name) for case in op.cases)
        return list(dict.fromkeys(cases))

    def measure(self, op: Op, n: int, problem: Problem) -> list[Row]:
        """Return the rows of one op on one input: kernel, device, then end-to-end rows."""
        rows = self._kernel_rows(op, n, problem) if self.kernel else []
        if self.device_rows:
            memcpy = [row.gbps for row in rows if row.library == MEMCPY]
            rows += self._device_rows(op, n, problem, memcpy[0] if memcpy else None, DEVICE)
        if self.e2e:
            rows += self._e2e_rows(op, n, problem)
            if self.device == "cpu":
                rows = self._with_host_memcpy(op, n, problem, rows)
            elif op.pinned_rows:
                rows = self._with_pinned_rows(op, n, problem, rows)
        return rows

    def _row(self, op: Op, n: int, problem: Problem, library: str, mode: str, ms: float, nbytes: int,
             x_memcpy: float | None = None, route: str = "") -> Row:
        """The row of ``ms`` for ``library`` running ``op`` on ``problem`` (``nbytes`` moved)."""
        return Row(op.name, n, library, mode, ms, gbps(nbytes, ms), x_memcpy, problem.case,
                   problem.data.dtype.name, route)

    def _kernel_rows(self, op: Op, n: int, problem: Problem) -> list[Row]:
        """Time ``op`` on device-resident data, the device memcpy roofline first."""
        flat = problem.data.reshape(-1)
        rows = []
        memcpy_ms = self._timed(MEMCPY, op, n, (MemoryError,), lambda: device_times(
            gpuprims.transpose, flat, repeats=self.repeats, device=self.device))
        memcpy_gbps = None
        if memcpy_ms is not None:
            memcpy_gbps = gbps(2 * flat.nbytes, memcpy_ms)
            rows.append(self._row(op, n, problem, MEMCPY, KERNEL, memcpy_ms, 2 * flat.nbytes, 1.0))
        return rows + self._peer_rows(op, n, problem, KERNEL,
                                      lambda peer: peer.kernel_times(op, problem, self.repeats), memcpy_gbps)

    def _device_rows(self, op: Op, n: int, problem: Problem, memcpy_gbps: float | None, mode: str) -> list[Row]:
        """Time the public call on device-resident copies of the problem's data: bursts of calls
        to completion (``DEVICE``) or the host time of single calls (``LATENCY``)."""
        def measure(peer: Peer) -> np.ndarray:
            with peer.active():
                call, x = peer.bind(op, problem), peer.put(problem.data)
                if mode == DEVICE:
                    return time_burst(call, x, peer.sync, self.repeats)
                return time_call_latency(call, x, peer.sync)
        return self._peer_rows(op, n, problem, mode, measure, memcpy_gbps)

    def _e2e_rows(self, op: Op, n: int, problem: Problem) -> list[Row]:
        """Time ``op`` end to end from the problem's NumPy array, with gpuprims' routes."""
        repeats = e2e_repeats(self.repeats, problem.data.nbytes)

        def measure(peer: Peer) -> np.ndarray:
            call = peer.e2e_call(op, problem)
            return time_wall(lambda: call(problem.data), repeats)
        return self._peer_rows(op, n, problem, E2E, measure)

    def _peer_rows(self, op: Op, n: int, problem: Problem, mode: str, measure: Callable[[Peer], np.ndarray],
                   memcpy_gbps: float | None = None) -> list[Row]:
        """One row per peer measured in ``mode`` that offers ``op``: the median of
        ``measure(peer)``, its bandwidth over ``memcpy_gbps`` (when given), and end to end the
        route gpuprims took."""
        nbytes = sum(op.traffic(problem))
        rows = []
        for peer in self._peers(op, mode):
            ms = self._timed(peer.name, op, n, peer.skipped_errors, lambda: measure(peer))
            if ms is not None:
                ratio = None if memcpy_gbps is None else gbps(nbytes, ms) / memcpy_gbps
                route = peer.route(op, problem) if mode == E2E else ""
                rows.append(self._row(op, n, problem, peer.name, mode, ms, nbytes, ratio, route))
        return rows

    def _with_host_memcpy(self, op: Op, n: int, problem: Problem, rows: list[Row]) -> list[Row]:
        """Put the host memcpy roofline first (:func:`numpy.copyto` of the input's bytes into a
        buffer: libc's memcpy on one core) and rate the end-to-end rows against it."""
        source = problem.data.reshape(-1)
        target = np.empty_like(source)
        ms = self._timed(MEMCPY, op, n, (MemoryError,),
                         lambda: time_wall(lambda: np.copyto(target, source), e2e_repeats(self.repeats, source.nbytes)))
        if ms is None:
            return rows
        memcpy = self._row(op, n, problem, MEMCPY, E2E, ms, 2 * source.nbytes, 1.0)
        return [memcpy] + [replace(row, x_memcpy=row.gbps / memcpy.gbps) for row in rows]

    def _with_pinned_rows(self, op: Op, n: int, problem: Problem, rows: list[Row]) -> list[Row]:
        """Add the host-to-device rooflines and the pinned-input row of ``op``, and rate the
        end-to-end gpuprims rows against the pinned bound."""
        in_bytes, out_bytes = op.traffic(problem)
        repeats = e2e_repeats(self.repeats, in_bytes)
        pinned = replace(problem, data=gpuprims.pinned_copy(problem.data))
        extra = []
        for library, source in (("h2d-pageable", problem.data), ("h2d-pinned", pinned.data)):
            ms = self._timed(library, op, n, (MemoryError,), lambda: time_to_device(source, self.device, self.repeats))
            if ms is not None:
                extra.append(self._row(op, n, problem, library, E2E, ms, in_bytes))
        call = self.gpuprims.e2e_call(op, pinned)
        ms = self._timed("gpuprims-pinned", op, n, (MemoryError,), lambda: time_wall(lambda: call(pinned.data), repeats))
        if ms is not None:
            extra.append(self._row(op, n, problem, "gpuprims-pinned", E2E, ms, in_bytes + out_bytes,
                                   route=self.gpuprims.route(op, pinned)))
        bus = [row.gbps for row in extra if row.library == "h2d-pinned"]
        if not bus:
            return rows + extra
        bound_ms = max(in_bytes, out_bytes) / (bus[0] * 1e6)
        return [replace(row, x_memcpy=bound_ms / row.time_ms)
                if row.mode == E2E and row.library.startswith("gpuprims") else row for row in rows + extra]

    def _peers(self, op: Op, mode: str) -> list[Peer]:
        """The peers measured in ``mode`` that offer ``op``."""
        return [peer for peer in self.peers if mode in peer.modes and peer.offers(op)]

    def crossovers(self) -> list[str]:
        """For each op with end-to-end rows over sizes (not fixed cases): the smallest measured
        size from which gpuprims beats the host library (SciPy for ``convolve2d``, else NumPy) at
        every larger measured size."""
        lines = []
        for op in dict.fromkeys(OPS[row.op] for row in self.rows if not row.case):
            times = {(row.library, row.n): row.time_ms for row in self.rows
                     if row.op == op.name and row.mode == E2E}
            sizes = sorted(n for library, n in times if library == "gpuprims" and (op.host, n) in times)
            if not sizes:
                if any(library == "gpuprims" for library, _ in times):
                    lines.append(f"{op.name}: no end-to-end crossover ({op.host} has no rows to compare with)")
                continue
            crossover = None
            for n in reversed(sizes):
                if times[("gpuprims", n)] >= times[(op.host, n)]:
                    break
                crossover = n
            measured = ", ".join(format_size(n) for n in sizes)
            lines.append((f"{op.name}: gpuprims end to end beats {op.host} from {format_size(crossover)} up"
                          if crossover is not None else
                          f"{op.name}: gpuprims end to end does not beat {op.host} at the largest size")
                         + f" (measured: {measured})")
        return lines

    def _timed(self, library: str, op: Op, n: int, errors: tuple[type[BaseException], ...],
               measure: Callable[[], np.ndarray]) -> float | None:
        """Return the median of ``measure()``, or None (with a note) on ``errors``."""
        try:
            return float(np.median(measure()))
        except errors as exc:
            reason = "out of memory" if isinstance(exc, MemoryError) else exc
            self.note(f"{library} {op.name} n={format_size(n)}: skipped ({reason})")
            return None
