"""The calibration (``python -m gpuprims.bench --calibrate``): the planner's cost constants
measured on this machine, printed as a ``GPUPRIMS_COSTS`` override.

The model (``csrc/planner/costs.c``) estimates a host call of a primitive (``reduce``, ``scan``,
``correlate``, ``copy``) that reads ``in`` bytes, writes ``out`` bytes and does ``macs``
multiply-adds (correlate: outputs x taps), in microseconds, with rates in bytes (or
multiply-adds) per ns:

- on the CPU backend: ``cpu_fixed_us + (in + out) / cpu_gbps + macs / cpu_gmacs``, plus
  ``out / cpu_fresh_gbps`` for results of :data:`FRESH_MIN_BYTES` and more, whose pages fault in as
  they are first written;
- on the GPU's short path: ``cuda_fixed_us + in / h2d_gbps + out / d2h_gbps + macs / cuda_gmacs``
  (``pinned_gbps`` for a pinned input);
- streamed: ``stream_fixed_us + max(in / stream_gbps, out / stream_gbps) + macs / cuda_gmacs``
  (``pinned_gbps`` for the side in page-locked memory).

Each is fitted to end-to-end times of the public calls from NumPy arrays (every op of the table,
grouped by primitive; float32 and int32 by default; medians of adaptive repeats), by relative least
squares with non-negative coefficients:

- CPU: ``device="cpu"``, sizes 2^8 .. 2^22 and (by default) the streamed sizes 2^24 .. 2^26,
  where the CPU competes with streaming, reads from memory rather than cache and writes fresh
  pages (convolutions of more than
  :data:`CPU_MACS_MAX` multiply-adds are left out: seconds each);
- the bus: :func:`gpuprims.to_device` (+ synchronize) of pageable float32 arrays (``h2d_gbps``),
  ``DeviceArray.get`` (``d2h_gbps``), ``to_device`` of pinned arrays (``pinned_gbps``, up to
  2^26), each ``fixed + bytes / rate`` (the fixed part belongs to ``cuda_fixed_us``);
- GPU short path: ``device="cuda"`` with ``GPUPRIMS_STREAM_MIN_BYTES`` huge (nothing streams), the
  copies at the fitted bus rates, ``cuda_fixed_us`` (and ``cuda_gmacs``) fitted to the rest;
- streamed: ``GPUPRIMS_STREAM_MIN_BYTES=0``, sizes 2^24 .. 2^26, ``stream_fixed_us`` and
  ``stream_gbps`` shared by all primitives.

A fitted rate of 0 means the term is not counted (as the model reads it).  On a machine without a
usable GPU only the CPU constants are fitted.
"""

from __future__ import annotations

import contextlib
import csv
import itertools
import os
from dataclasses import astuple, dataclass, fields
from pathlib import Path
from typing import Callable, Iterator, Sequence

import numpy as np

import gpuprims

from .measure import format_size
from .ops import OPS, Elements
from .report import format_line, table_head
from .timers import median_ms

PRIMITIVES = ("reduce", "scan", "correlate", "copy")
CALIBRATION_SIZES = tuple(2**k for k in range(8, 23, 2))
STREAMED_SIZES = (2**24, 2**25, 2**26)
CPU_SIZES = (*CALIBRATION_SIZES, *STREAMED_SIZES)
CPU_MACS_MAX = 2**28
FRESH_MIN_BYTES = 32 * 2**20
"""The model's ``fresh_min_bytes`` (costs.c): glibc maps blocks this large afresh on every call."""
NEVER_STREAM = str(2**62)
RATE_GRID = np.geomspace(0.1, 1000.0, 2001)
"""Candidate streaming rates (bytes per ns) of the streamed fit."""
WIDTHS = (16, 7, 10, 8, 9)
TEXT_COLUMNS = frozenset({0, 4})


@dataclass(frozen=True)
class Sample:
    """One measured call.

    Attributes
    ----------
    path : str
        ``"cpu"``, ``"cuda"`` (short path), ``"streamed"``, or a bus copy: ``"h2d"``, ``"d2h"``,
        ``"pinned"``.
    primitive, op : str
        The planner's primitive and the op (``""`` for bus copies).
    dtype : str
        The input's dtype.
    n : int
        Elements.
    in_bytes, out_bytes : int
        What the call reads and writes, as the planner counts them.
    macs : int
        Multiply-adds (correlate), else 0.
    result_pinned : bool
        Whether a streamed call's result went to page-locked memory.
    us : float
        Median microseconds.
    """

    path: str
    primitive: str
    op: str
    dtype: str
    n: int
    in_bytes: int
    out_bytes: int
    macs: int
    result_pinned: bool
    us: float


@dataclass(frozen=True)
class Fit:
    """One fitted part of the model: its constants (``GPUPRIMS_COSTS`` names) and the relative
    errors of its samples."""

    name: str
    constants: dict[str, float]
    errors: np.ndarray

    def cells(self) -> tuple[str, ...]:
        """The printed line's values."""
        constants = "  ".join(f"{name}={value:.4g}" for name, value in self.constants.items())
        return (self.name, str(self.errors.size), f"{np.median(self.errors):.1%}", f"{self.errors.max():.1%}",
                constants)


def fit(us: np.ndarray, columns: np.ndarray, known: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Non-negative coefficients ``c`` of ``us ~ known + columns @ c`` by relative least squares.

    Parameters
    ----------
    us : numpy.ndarray
        Measured times, shape (samples,).
    columns : numpy.ndarray
        The model's regressors, shape (samples, k) (a column of ones for a fixed term).
    known : numpy.ndarray, optional
        The part of each time the model already knows (0 if None).

    Returns
    -------
    (numpy.ndarray, numpy.ndarray)
        The coefficients (k,), and each sample's relative error ``|model - us| / us``.  Every
        subset of the columns is solved and the best non-negative solution kept (k is small).
    """
    us = np.asarray(us, dtype=np.float64)
    columns = np.asarray(columns, dtype=np.float64).reshape(us.size, -1)
    known = np.zeros_like(us) if known is None else np.asarray(known, dtype=np.float64)
    best = None
    for used in itertools.product((True, False), repeat=columns.shape[1]):
        coefficients = np.zeros(columns.shape[1])
        if any(used):
            solution = np.linalg.lstsq(columns[:, list(used)] / us[:, None], (us - known) / us, rcond=None)[0]
            coefficients[list(used)] = solution
        if (coefficients < 0).any():
            continue
        errors = np.abs(known + columns @ coefficients - us) / us
        if best is None or (errors**2).sum() < (best[1]**2).sum():
            best = coefficients, errors
    return best


def rate(coefficient: float) -> float:
    """A rate in units per ns from microseconds per unit (0: not counted, as the model reads it)."""
    return 1 / (coefficient * 1e3) if coefficient > 0 else 0.0


def transfer_us(units: np.ndarray, per_ns: float) -> np.ndarray:
    """Microseconds to move ``units`` at ``per_ns`` (none at a rate of 0), as costs.c does."""
    return np.asarray(units, dtype=np.float64) / (per_ns * 1e3) if per_ns > 0 else np.zeros(np.shape(units))


@contextlib.contextmanager
def environment(name: str, value: str) -> Iterator[None]:
    """Set an environment variable (gpuprims reads it on every call) for the block."""
    previous = os.environ.get(name)
    os.environ[name] = value
    try:
        yield
    finally:
        if previous is None:
            del os.environ[name]
        else:
            os.environ[name] = previous


class Calibration:
    """Measures samples and fits the model's constants.

    Parameters
    ----------
    sizes : sequence of int
        Sizes of the GPU short-path samples.
    cpu_sizes : sequence of int
        Sizes of the CPU samples.
    dtypes : sequence of str
        Input dtypes.
    cuda : str or None
        The GPU (``"cuda:N"``), None to fit the CPU constants only.
    budget_s : float
        Seconds per measurement.
    """

    def __init__(self, sizes: Sequence[int], cpu_sizes: Sequence[int], dtypes: Sequence[str], cuda: str | None,
                 budget_s: float):
        self.sizes = sizes
        self.cpu_sizes = cpu_sizes
        self.dtypes = dtypes
        self.cuda = cuda
        self.budget_s = budget_s
        self.elements = Elements()
        self.samples: list[Sample] = []

    def _calls(self, path: str, primitive: str, sizes: Sequence[int], **device: str) -> list[Sample]:
        """Samples of every op of ``primitive`` at ``sizes`` in every dtype, on ``device``."""
        samples = []
        ops = [op for op in OPS.values() if op.primitive == primitive]
        for op, dtype, n in itertools.product(ops, self.dtypes, sizes):
            problem = op.make(self.elements(n, dtype))
            macs = op.macs(problem) if op.macs is not None else 0
            if path == "cpu" and macs > CPU_MACS_MAX:
                continue
            plan = op.explain(problem, **device)
            expected = "cuda-streamed" if path == "streamed" else path
            if plan["route"] != expected:
                raise RuntimeError(f"calibration: {op.name} {dtype} {format_size(n)} is planned for "
                                   f"{plan['route']}, not {expected}")
            us = 1e3 * median_ms(op.bound(problem, **device), self.budget_s)
            samples.append(Sample(path, primitive, op.name, dtype, n, plan["in_bytes"], plan["out_bytes"], macs,
                                  plan["result_pinned"], us))
        self.samples += samples
        return samples

    def _copies(self, path: str, sizes: Sequence[int], run: Callable[[np.ndarray], Callable[[], object]]) -> list[Sample]:
        """Samples of a bus copy of float32 arrays: ``run(array)`` returns the copy to time."""
        samples = []
        for n in sizes:
            array = self.elements(n, "float32")
            us = 1e3 * median_ms(run(array), self.budget_s)
            samples.append(Sample(path, "", "", "float32", n, array.nbytes, array.nbytes, 0, False, us))
        self.samples += samples
        return samples

    def cpu(self, primitive: str) -> Fit:
        """``<primitive>.cpu_fixed_us``, ``cpu_gbps``, ``cpu_fresh_gbps`` (and ``cpu_gmacs`` for
        correlate)."""
        samples = self._calls("cpu", primitive, self.cpu_sizes, device="cpu")
        us, traffic, macs = _arrays(samples)
        out_bytes = np.array([s.out_bytes for s in samples], dtype=np.float64)
        fresh = np.where(out_bytes >= FRESH_MIN_BYTES, out_bytes, 0.0)
        columns = [np.ones_like(us), traffic] + ([macs] if primitive == "correlate" else []) + [fresh]
        coefficients, errors = fit(us, np.column_stack(columns))
        constants = {f"{primitive}.cpu_fixed_us": coefficients[0], f"{primitive}.cpu_gbps": rate(coefficients[1])}
        if primitive == "correlate":
            constants[f"{primitive}.cpu_gmacs"] = rate(coefficients[2])
        constants[f"{primitive}.cpu_fresh_gbps"] = rate(coefficients[-1])
        return Fit(f"{primitive} cpu", constants, errors)

    def bus(self) -> list[Fit]:
        """``h2d_gbps``, ``d2h_gbps`` and ``pinned_gbps``: ``fixed + bytes / rate`` of each copy."""
        device = self.cuda

        def upload(array: np.ndarray) -> Callable[[], object]:
            return lambda: (gpuprims.to_device(array, device), gpuprims.synchronize(device))

        def download(array: np.ndarray) -> Callable[[], object]:
            return gpuprims.to_device(array, device).get

        def pinned_upload(array: np.ndarray) -> Callable[[], object]:
            return upload(gpuprims.pinned_copy(array))

        fits = []
        for name, sizes, run in (("h2d", self.sizes, upload), ("d2h", self.sizes, download),
                                 ("pinned", (*self.sizes, *STREAMED_SIZES), pinned_upload)):
            samples = self._copies(name, sizes, run)
            us = np.array([sample.us for sample in samples])
            coefficients, errors = fit(us, np.column_stack([np.ones_like(us), [s.in_bytes for s in samples]]))
            fits.append(Fit(name, {f"{name}_gbps": rate(coefficients[1])}, errors))
        return fits

    def cuda_short(self, primitive: str, h2d: float, d2h: float) -> Fit:
        """``<primitive>.cuda_fixed_us`` (and ``cuda_gmacs`` for correlate), the copies at the bus's
        fitted rates."""
        with environment("GPUPRIMS_STREAM_MIN_BYTES", NEVER_STREAM):
            samples = self._calls("cuda", primitive, self.sizes, device=self.cuda)
        us, _, macs = _arrays(samples)
        known = transfer_us([s.in_bytes for s in samples], h2d) + transfer_us([s.out_bytes for s in samples], d2h)
        columns = [np.ones_like(us)] + ([macs] if primitive == "correlate" else [])
        coefficients, errors = fit(us, np.column_stack(columns), known)
        constants = {f"{primitive}.cuda_fixed_us": coefficients[0]}
        if primitive == "correlate":
            constants[f"{primitive}.cuda_gmacs"] = rate(coefficients[1])
        return Fit(f"{primitive} cuda", constants, errors)

    def streamed(self, pinned: float, cuda_gmacs: float) -> Fit:
        """``stream_fixed_us`` and ``stream_gbps``, over every primitive: the rate by a search over
        :data:`RATE_GRID` (a pinned result's side moves at ``pinned``), the fixed part by least
        squares at each rate."""
        with environment("GPUPRIMS_STREAM_MIN_BYTES", "0"):
            samples = [sample for primitive in PRIMITIVES
                       for sample in self._calls("streamed", primitive, STREAMED_SIZES, device=self.cuda)]
        us, _, macs = _arrays(samples)
        in_bytes = np.array([s.in_bytes for s in samples], dtype=np.float64)
        out_bytes = np.array([s.out_bytes for s in samples], dtype=np.float64)
        pinned_out = transfer_us(out_bytes, pinned)
        compute = transfer_us(macs, cuda_gmacs)
        best = None
        for candidate in RATE_GRID:
            out = np.where([s.result_pinned for s in samples], pinned_out, transfer_us(out_bytes, candidate))
            known = np.maximum(transfer_us(in_bytes, candidate), out) + compute
            coefficients, errors = fit(us, np.ones((us.size, 1)), known)
            if best is None or (errors**2).sum() < (best[2]**2).sum():
                best = candidate, coefficients[0], errors
        candidate, fixed, errors = best
        return Fit("streamed", {"stream_fixed_us": fixed, "stream_gbps": candidate}, errors)

    def run(self, emit: Callable[[Fit], None]) -> list[Fit]:
        """Every fit this machine allows, in order, calling ``emit`` for each."""
        fits = []

        def done(result: Fit) -> Fit:
            fits.append(result)
            emit(result)
            return result

        for primitive in PRIMITIVES:
            done(self.cpu(primitive))
        if self.cuda is None:
            return fits
        bus = {}
        for result in self.bus():
            bus.update(done(result).constants)
        gpu = {}
        for primitive in PRIMITIVES:
            gpu.update(done(self.cuda_short(primitive, bus["h2d_gbps"], bus["d2h_gbps"])).constants)
        done(self.streamed(bus["pinned_gbps"], gpu["correlate.cuda_gmacs"]))
        return fits


def _arrays(samples: Sequence[Sample]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(microseconds, bytes read + written, multiply-adds) of ``samples``."""
    return (np.array([s.us for s in samples]), np.array([s.in_bytes + s.out_bytes for s in samples], dtype=np.float64),
            np.array([s.macs for s in samples], dtype=np.float64))


def costs_setting(fits: Sequence[Fit]) -> str:
    """The ``GPUPRIMS_COSTS`` value of the fitted constants: ``"name=value,..."``."""
    return ",".join(f"{name}={value:.4g}" for result in fits for name, value in result.constants.items())


def run_calibration(sizes: Sequence[int] | None, dtypes: Sequence[str], cuda: str | None, budget_s: float,
                    header: str, out: Path | None) -> str:
    """Measure, fit and print the constants (one line per fit as it completes), then the
    ``GPUPRIMS_COSTS`` line; with ``out`` also write calibration.md and calibration.csv (the
    samples).  ``sizes`` None: :data:`CALIBRATION_SIZES` (:data:`CPU_SIZES` for the CPU).  Returns
    the ``GPUPRIMS_COSTS`` value."""
    calibration = Calibration(sizes or CALIBRATION_SIZES, sizes or CPU_SIZES, dtypes, cuda, budget_s)
    names = ("fit", "samples", "median err", "max err", "constants")
    lines = [header]
    if cuda is None:
        lines.append("No usable GPU: only the CPU constants are fitted (the others keep the planner's values).")
    lines += table_head(names, WIDTHS, TEXT_COLUMNS)
    print("\n".join(lines), flush=True)

    def emit(result: Fit) -> None:
        lines.append(format_line(result.cells(), WIDTHS, TEXT_COLUMNS))
        print(lines[-1], flush=True)

    setting = costs_setting(calibration.run(emit))
    lines += ["", f"GPUPRIMS_COSTS={setting}"]
    print("\n".join(lines[-2:]))
    if out is not None:
        out.mkdir(parents=True, exist_ok=True)
        (out / "calibration.md").write_text("# gpuprims calibration\n\n```\n" + "\n".join(lines) + "\n```\n")
        with (out / "calibration.csv").open("w", newline="") as handle:
            writer = csv.writer(handle)
            writer.writerow([field.name for field in fields(Sample)])
            writer.writerows(astuple(sample) for sample in calibration.samples)
        print(f"wrote {out / 'calibration.md'} and {out / 'calibration.csv'}")
    return setting
