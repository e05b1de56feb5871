"""How the benchmark times a call: CUDA events around device work, wall-clock bursts and single
calls on device data, and wall-clock runs from the host (a fixed count, or as many as fit a time
budget).  Every timer makes one untimed warm-up call first and returns milliseconds, one per run."""

from __future__ import annotations

import time
from typing import Any, Callable

import numpy as np

import gpuprims

BURST = 10
"""Back-to-back calls per repeat of a device-mode measurement."""
LATENCY_CALLS = 2000
LATENCY_SYNC_EVERY = 100
"""Latency calls between waits for the device (outside the timed region: its queue stays short)."""
MIN_RUNS = 3
"""Timed runs at the least of a measurement under a time budget."""


def time_with_events(run: Callable[[], object], repeats: int, new_event: Callable[[], Any],
                     elapsed_ms: Callable[[Any, Any], float]) -> np.ndarray:
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


def time_burst(call: Callable[[Any], object], x: Any, sync: Callable[[], None], repeats: int) -> np.ndarray:
    """Per-call milliseconds of bursts of :data:`BURST` calls ``call(x)`` on device data, each burst
    timed (wall clock) from its first call to the completion of its device work (``sync()``)."""
    call(x)
    sync()
    times = np.empty(repeats)
    for i in range(repeats):
        start = time.perf_counter()
        for _ in range(BURST):
            call(x)
        sync()
        times[i] = (time.perf_counter() - start) * 1e3 / BURST
    return times


def time_call_latency(call: Callable[[Any], object], x: Any, sync: Callable[[], None]) -> np.ndarray:
    """Host milliseconds of :data:`LATENCY_CALLS` single calls ``call(x)`` (the device is waited
    for every :data:`LATENCY_SYNC_EVERY` calls, outside the timed region)."""
    call(x)
    sync()
    times = np.empty(LATENCY_CALLS)
    for i in range(LATENCY_CALLS):
        if i % LATENCY_SYNC_EVERY == 0:
            sync()
        start = time.perf_counter()
        call(x)
        times[i] = (time.perf_counter() - start) * 1e3
    sync()
    return times


def time_wall(run: Callable[[], object], repeats: int, budget_s: float = 0.0) -> np.ndarray:
    """Time ``run()`` with :func:`time.perf_counter` after one warm-up call.

    Parameters
    ----------
    run : callable
        The work, host to host (it waits for any device work it starts).
    repeats : int
        Timed runs at the least.
    budget_s : float, optional
        Keep running until the timed runs add up to this many seconds (adaptive repeats).

    Returns
    -------
    numpy.ndarray
        Milliseconds, one per run: ``repeats`` of them, or more to fill ``budget_s``.
    """
    run()
    times = []
    total = 0.0
    while len(times) < repeats or total < budget_s:
        start = time.perf_counter()
        run()
        elapsed = time.perf_counter() - start
        times.append(elapsed * 1e3)
        total += elapsed
    return np.array(times)


def median_ms(run: Callable[[], object], budget_s: float) -> float:
    """The median milliseconds of ``run()`` over adaptive repeats: :func:`time_wall` with
    ``budget_s`` seconds and at least :data:`MIN_RUNS` runs."""
    return float(np.median(time_wall(run, MIN_RUNS, budget_s)))


def time_to_device(source: np.ndarray, device: str, repeats: int, budget_s: float = 0.0) -> np.ndarray:
    """Milliseconds of host-to-device copies of ``source`` (:func:`gpuprims.to_device`, then
    :func:`gpuprims.synchronize`; the device allocation included), as :func:`time_wall` runs."""
    def run() -> None:
        gpuprims.to_device(source, device)
        gpuprims.synchronize(device)
    return time_wall(run, repeats, budget_s)
