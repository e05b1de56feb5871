"""``--dask``: :mod:`gpuprims.dask` against Dask with NumPy and with CuPy chunks, and over GPUs.

For each size (default 2^30 float32, 4 GiB) in NumPy chunks (default 2^26 elements), ``sum`` and
``prefix_sum``, end to end from host memory, medians of ``--repeats`` runs after a warm-up:

- ``gpuprims`` one call on the whole NumPy array (the reference of the chunks' overhead);
- ``gpuprims.dask`` on the threaded scheduler (all cores), and on the synchronous one (one
  thread: what the threads overlap);
- ``dask+numpy``: ``x.sum()`` and ``x.cumsum(0)`` on the threaded scheduler;
- ``dask+cupy``, where CuPy can use the GPU: ``x.map_blocks(cupy.asarray)`` then the same Dask
  calls, results back with ``.get()`` (``cupy.asnumpy`` per chunk for the scan).

A scan's chunks are written into one preallocated, already touched NumPy array
(``dask.array.store``), the same sink for every library, so the times are those of the scans and
not of fresh result memory.  The ``tasks`` column counts the graph's tasks (the input's included),
``x_single`` is the row's time over gpuprims' single call, ``speedup`` is the row's time over
``gpuprims.dask``'s (threaded).

Where ``dask_cuda`` is importable and more than one GPU is usable, the same two ops on 1, 2, 4, ...
GPUs, a ``LocalCUDACluster`` with one worker per GPU (scheduler column ``k GPU, kind``): on NumPy
chunks generated in the workers' host memory and persisted first, and on CuPy chunks persisted on
the workers' GPUs; ``convolve2d`` (5 x 5, ``'same'``) of an image of the same size, checked against
SciPy in windows at its corners and chunk seams; results persisted on the workers.  There
``speedup`` is the one-GPU time over the row's.  What bounds them is printed beside the rows: every
worker's pinned host-to-device copies at once, and Dask+NumPy's ``sum`` on the same workers (host
memory reads).
"""

from __future__ import annotations

import functools
import importlib
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np

import gpuprims

from .peers import gpu_peers
from .report import format_line, markdown_table, table_head
from .timers import time_wall

DASK_OPS = ("sum", "prefix_sum")
DASK_SIZES = (2**30,)
DASK_CHUNK = 2**26
DASK_REPEATS = 3
COLUMNS = ("op", "size", "chunk", "library", "scheduler", "time_ms", "tasks", "x_single", "speedup")
WIDTHS = (10, 10, 9, 14, 12, 11, 6, 9, 8)
TEXT_COLUMNS = frozenset({0, 3, 4})


@dataclass
class DaskRow:
    """One measurement: `library` computing `op` of `n` float32 elements in chunks of `chunk`."""

    op: str
    n: int
    chunk: int
    library: str
    scheduler: str
    time_ms: float
    tasks: int = 0
    x_single: float | None = None
    speedup: float | None = None

    def cells(self) -> tuple[str, ...]:
        return (self.op, f"2^{self.n.bit_length() - 1}" if self.n & (self.n - 1) == 0 else str(self.n),
                str(self.chunk), self.library, self.scheduler, f"{self.time_ms:.2f}", str(self.tasks or "-"),
                "-" if self.x_single is None else f"{self.x_single:.2f}",
                "-" if self.speedup is None else f"{self.speedup:.2f}")


def _usable_cupy(device: str) -> Any:
    """CuPy when it can use `device`'s GPU, else None."""
    return next((peer.cupy for peer in gpu_peers(device) if peer.name == "cupy"), None)


def _graph_tasks(collection: Any) -> int:
    return len(collection.__dask_graph__())


def _timed(run: Callable[[], object], repeats: int) -> float:
    return float(np.median(time_wall(run, repeats)))


def _local_rows(op: str, a: np.ndarray, chunk: int, repeats: int, device: str, sink: np.ndarray) -> list[DaskRow]:
    """The single-machine rows of one op: gpuprims, gpuprims.dask (threads, sync), Dask+NumPy,
    Dask+CuPy."""
    da = importlib.import_module("dask.array")
    gd = importlib.import_module("gpuprims.dask")
    x = da.from_array(a, chunks=chunk, name=False)  # a random name: no hashing of the data
    cupy = _usable_cupy(device)
    single = getattr(gpuprims, op)
    if op == "sum":
        graphs = {"gpuprims.dask": gd.sum(x), "dask+numpy": x.sum()}
    else:
        graphs = {"gpuprims.dask": gd.prefix_sum(x), "dask+numpy": x.cumsum(0)}
    if cupy is not None:
        on_gpu = x.map_blocks(cupy.asarray, meta=cupy.empty((0,), a.dtype))
        graphs["dask+cupy"] = (on_gpu.sum() if op == "sum"
                               else on_gpu.cumsum(0).map_blocks(cupy.asnumpy, meta=np.empty((0,), sink.dtype)))

    def run(library: str, scheduler: str) -> Callable[[], object]:
        graph = graphs[library]
        if op == "prefix_sum":
            return lambda: da.store(graph, sink[:a.size], lock=False, scheduler=scheduler)
        if library == "dask+cupy":
            return lambda: graph.compute(scheduler=scheduler).get()
        return lambda: graph.compute(scheduler=scheduler)

    n = a.size
    single_ms = _timed(lambda: single(a), repeats)
    rows = [DaskRow(op, n, n, "gpuprims", "one call", single_ms, 0, 1.0)]
    cases = [("gpuprims.dask", "threads"), ("gpuprims.dask", "sync"), ("dask+numpy", "threads")]
    cases += [("dask+cupy", "threads")] if cupy is not None else []
    reference = None
    for library, scheduler in cases:
        ms = _timed(run(library, scheduler), repeats)
        reference = reference or ms
        rows.append(DaskRow(op, n, chunk, library, scheduler, ms, _graph_tasks(graphs[library]), ms / single_ms,
                            ms / reference))
    return rows


def _cluster_rows(ops: Sequence[str], sizes: Sequence[int], chunk: int, repeats: int, emit: Callable) -> list:
    """The rows over 1, 2, 4, ... GPUs with dask_cuda.LocalCUDACluster (none without dask_cuda or
    with fewer than two GPUs): for each count, the ops on NumPy chunks in the workers' host memory
    and on CuPy chunks on their GPUs, ``convolve2d`` of an image of the same size, and what bounds
    them (Dask+NumPy's ``sum`` on the same workers reads host memory; every worker's pinned copies
    to its GPU at once)."""
    count = len(gpuprims.device_info()["devices"])
    try:
        dask_cuda = importlib.import_module("dask_cuda")
        distributed = importlib.import_module("distributed")
    except ImportError:
        return []
    if count < 2:
        return []
    da = importlib.import_module("dask.array")
    clone = importlib.import_module("dask.graph_manipulation").clone
    gd = importlib.import_module("gpuprims.dask")
    cupy = _usable_cupy("cuda:0")
    rows: list[DaskRow] = []
    one_gpu: dict[tuple, float] = {}  # (op, n, library, chunk kind): the time on one GPU

    def add(op: str, n: int, library: str, gpus: int, kind: str, ms: float) -> None:
        base = one_gpu.setdefault((op, n, library, kind), ms)
        row = DaskRow(op, n, chunk, library, f"{gpus} GPU, {kind}", ms, speedup=base / ms)
        rows.append(row)
        emit(row)

    for k in [k for k in (1, 2, 4, 8, 16) if k <= count]:
        threads = max(1, len(os.sched_getaffinity(0)) // k)
        with dask_cuda.LocalCUDACluster(CUDA_VISIBLE_DEVICES=list(range(k)), threads_per_worker=threads) as cluster, \
                distributed.Client(cluster) as client:
            print(f"({k} GPU: pinned host-to-device copies, every worker at once: "
                  f"{_pinned_copy_rate(client):.1f} GB/s together)", flush=True)
            for n in sizes:
                x = da.random.default_rng(0).random(n, dtype=np.float32, chunks=chunk).persist()
                distributed.wait(x)
                add("sum", n, "dask+numpy", k, "numpy",
                    _timed(lambda: x.sum().compute(), repeats))
                chunk_kinds = {"numpy": x}
                if cupy is not None:
                    chunk_kinds["cupy"] = x.map_blocks(cupy.asarray, meta=cupy.empty((0,), np.float32)).persist()
                    distributed.wait(chunk_kinds["cupy"])
                for kind, chunks in chunk_kinds.items():
                    for op in ops:
                        ms = _timed(functools.partial(_persist_clone, getattr(gd, op), chunks, clone,
                                                      distributed.wait), repeats)
                        add(op, n, "gpuprims.dask", k, kind, ms)
                del chunk_kinds, x
                image = _image(da, n, chunk).persist()
                distributed.wait(image)
                mask = np.random.default_rng(1).random((5, 5), dtype=np.float32)
                convolve = functools.partial(gd.convolve2d, in2=mask, mode="same")
                add("convolve2d", n, "gpuprims.dask", k, "numpy",
                    _timed(functools.partial(_persist_clone, convolve, image, clone, distributed.wait), repeats))
                print(f"({k} GPU: convolve2d 5x5 'same' of {image.shape[0]} x {image.shape[1]} in chunks of "
                      f"{image.chunksize[0]} x {image.chunksize[1]}: {_windows_against_scipy(image, mask)})",
                      flush=True)
    return rows


def _image(da: Any, n: int, chunk: int) -> Any:
    """A float32 image of about n pixels, as square as powers of two allow, in tiles of `chunk`."""
    rows = 1 << ((n.bit_length() - 1) // 2)
    tile = 1 << ((chunk.bit_length() - 1) // 2)
    return da.random.default_rng(2).random((rows, n // rows), dtype=np.float32,
                                           chunks=(tile, max(1, chunk // tile)))


def _windows_against_scipy(image: Any, mask: np.ndarray) -> str:
    """convolve2d(image, mask, 'same') on the cluster (mask: square, of odd size), checked against
    SciPy in windows of 64 x 64 at the image's corners and across chunk seams (where the halos come
    in): one line saying how far apart they were."""
    signal = importlib.import_module("scipy.signal")
    result = importlib.import_module("gpuprims.dask").convolve2d(image, mask, mode="same")
    rows, cols = image.shape
    seam_r, seam_c = image.chunks[0][0], image.chunks[1][0]
    starts = [(0, 0), (rows - 64, cols - 64), (seam_r - 32, seam_c - 32), (seam_r - 32, cols - 64),
              (rows - 64, seam_c - 32)]
    half = mask.shape[0] // 2
    worst = 0.0
    for r, c in starts:  # the window's inputs and halo, the part past the image zeros ('fill')
        r0, r1 = max(r - half, 0), min(r + 64 + half, rows)
        c0, c1 = max(c - half, 0), min(c + 64 + half, cols)
        padded = np.pad(image[r0:r1, c0:c1].compute(), ((r0 - (r - half), r + 64 + half - r1),
                                                        (c0 - (c - half), c + 64 + half - c1)))
        want = signal.convolve2d(padded.astype(np.float64), mask.astype(np.float64), mode="valid")
        got = np.asarray(result[r:r + 64, c:c + 64].compute(), np.float64)
        worst = max(worst, float(np.max(np.abs(got - want) / (np.abs(want) + 1.0))))
    verdict = "match" if worst < 1e-5 else "MISMATCH"
    return f"{len(starts)} windows at corners and seams {verdict} SciPy (float64), largest relative difference {worst:.1e}"


def _pinned_copy_rate(client: Any) -> float:
    """Every worker copies 1 GiB from pinned host memory to its GPU four times, all starting at
    the same moment: the bytes over the span from the first start to the last end, in GB/s."""
    start_at = time.time() + 2.0
    spans = client.run(_pinned_copies, start_at, 1 << 30, 4)
    first = min(begin for begin, _ in spans.values())
    last = max(end for _, end in spans.values())
    return len(spans) * 4 * (1 << 30) / (last - first) / 1e9


def _pinned_copies(start_at: float, nbytes: int, times: int) -> tuple[float, float]:
    """On a worker: wait for `start_at`, then `times` copies of `nbytes` pinned bytes to the
    worker's GPU (CuPy); the wall-clock start and end."""
    cupy = importlib.import_module("cupy")
    host = np.frombuffer(cupy.cuda.alloc_pinned_memory(nbytes), np.uint8, nbytes)
    device = cupy.empty(nbytes, np.uint8)
    device.set(host)
    cupy.cuda.runtime.deviceSynchronize()
    time.sleep(max(0.0, start_at - time.time()))
    begin = time.time()
    for _ in range(times):
        device.set(host)
    cupy.cuda.runtime.deviceSynchronize()
    return begin, time.time()


def _persist_clone(function: Callable, x: Any, clone: Callable, wait: Callable) -> None:
    """function(x) computed on the cluster and kept there, under new keys each run (a clone): no
    run reuses the last one's results."""
    wait(clone(function(x), omit=x).persist())


def run_dask(ops: Sequence[str], sizes: Sequence[int], chunk: int, repeats: int, device: str, header: str,
             out_dir: Path | None) -> list[DaskRow]:
    """Measure, print the rows as they come, and with `out_dir` write ``dask.md``.

    Parameters
    ----------
    ops : sequence of str
        From :data:`DASK_OPS`.
    sizes : sequence of int
        Element counts (float32).
    chunk : int
        Elements per NumPy chunk.
    repeats : int
        Timed runs per row (the median is reported).
    device : str
        ``"cpu"`` or ``"cuda:N"``: the GPU whose CuPy rows are measured (gpuprims chooses its own
        device, as a Dask worker's would).
    header : str
        The report's first line.
    out_dir : Path or None
        Where to write ``dask.md``.

    Returns
    -------
    list of DaskRow
    """
    print(header)
    print("\n".join(table_head(COLUMNS, WIDTHS, TEXT_COLUMNS)))

    def emit(row: DaskRow) -> None:
        print(format_line(row.cells(), WIDTHS, TEXT_COLUMNS), flush=True)

    rng = np.random.default_rng(0)
    rows: list[DaskRow] = []
    for n in sizes:
        start = time.perf_counter()
        a = rng.random(n, dtype=np.float32)
        sink = np.ones(n, np.float32)  # the scans' preallocated result, its pages touched
        print(f"(data: {n} float32 in {time.perf_counter() - start:.1f} s)", flush=True)
        for op in ops:
            for row in _local_rows(op, a, min(chunk, n), repeats, device, sink):
                rows.append(row)
                emit(row)
        del a, sink
    rows += _cluster_rows(ops, sizes, chunk, repeats, emit)
    if out_dir is not None:
        out_dir.mkdir(parents=True, exist_ok=True)
        path = out_dir / "dask.md"
        path.write_text("\n".join([header, ""] + markdown_table(COLUMNS, [row.cells() for row in rows],
                                                                 TEXT_COLUMNS)) + "\n")
        print(f"wrote {path}")
    return rows
