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
GPUs, a ``LocalCUDACluster`` with one worker per GPU: the array generated in the workers' host
memory and persisted first, the scan's result persisted on the workers.
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
    with fewer than two GPUs)."""
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
    rows: list[DaskRow] = []
    gpus = [k for k in (1, 2, 4, 8, 16) if k <= count]
    for k in gpus:
        threads = max(1, len(os.sched_getaffinity(0)) // k)
        with dask_cuda.LocalCUDACluster(CUDA_VISIBLE_DEVICES=list(range(k)), threads_per_worker=threads) as cluster, \
                distributed.Client(cluster):
            for n in sizes:
                x = da.random.default_rng(0).random(n, dtype=np.float32, chunks=chunk).persist()
                distributed.wait(x)
                for op in ops:
                    ms = _timed(functools.partial(_persist_clone, getattr(gd, op), x, clone, distributed.wait),
                                repeats)
                    base = next((row.time_ms for row in rows if row.op == op and row.n == n), ms)
                    row = DaskRow(op, n, chunk, f"gpuprims.dask {k} GPU", "distributed", ms,
                                  speedup=base / ms)
                    rows.append(row)
                    emit(row)
    return rows


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
