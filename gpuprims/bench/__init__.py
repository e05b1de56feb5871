"""Benchmark gpuprims against NumPy, SciPy, CuPy and PyTorch.

Run as a module::

    python -m gpuprims.bench                       # sum,max,prefix_sum,transpose; 2^10 .. 2^28
    python -m gpuprims.bench --ops sum,mean --sizes 20,24,28 --repeats 50
    python -m gpuprims.bench --sizes 1000000 --device cpu --out results/
    python -m gpuprims.bench --ops convolve,convolve2d --sizes 16,20,24,26
    python -m gpuprims.bench --routing [--sizes 6,8,...,28] [--dtypes float32,int32] [--out DIR]
    python -m gpuprims.bench --calibrate [--sizes 8,10,...,22] [--dtypes float32,int32]
    python -m gpuprims.bench --dask [--sizes 30] [--chunk 26] [--ops sum,prefix_sum] [--out DIR]

Four modes are measured for every operation and size:

``kernel``
    The input already lives on the GPU and only the device work is timed with CUDA events:
    gpuprims (through its timing hook, ``gpuprims._timing.device_times``), CuPy and PyTorch when
    they are importable, and a device-to-device memcpy of the input's bytes as a bandwidth
    roofline (the copy primitive on the flattened input).  Beside ``prefix_sum`` and ``sum``,
    ``cub``: CUB's ``DeviceScan::InclusiveSum`` and ``DeviceReduce::Sum`` (float32, float64 and
    int64), compiled with ``nvcc`` when it and CuPy are there (:mod:`gpuprims.bench.cub`; about
    15 s the first time, then from ``~/.cache/gpuprims``).  Only on a CUDA device.
``device``
    The input already lives on the GPU (a :class:`gpuprims.DeviceArray`, a CuPy array, a PyTorch
    tensor) and the public function is called from Python: each repeat times a burst of
    back-to-back calls up to the completion of the device work (wall clock), so the row is the
    cost of a call in a GPU pipeline, Python overhead and launches included.  Convolutions put
    their image on the device; gpuprims is given the mask as a NumPy array (it reads masks from
    the host), CuPy and PyTorch as arrays of their own.
``latency``
    Small device-resident inputs (2^8, 2^12 and 2^16 elements; 2^8 float32 is 1 KiB; transpose
    takes them as 16 x 16, 64 x 64 and 256 x 256 matrices): the host time of one call, the median
    of many back-to-back calls (the device work is asynchronous and not waited for).
``e2e``
    End to end from a NumPy array on the host, timed with :func:`time.perf_counter`:
    ``gpuprims.<op>(a, device=...)`` on the benchmarked device, ``gpuprims-auto`` (the same call
    with no ``device=``: the planner picks the route), NumPy (SciPy for ``convolve2d``), and, on
    a CUDA device, CuPy (``cupy.asarray`` + op + ``.get()``) and PyTorch
    (``torch.from_numpy(a).cuda()`` + op + ``.cpu()``).  The ``route`` column tells where each
    gpuprims row ran (``gpuprims.explain``: ``cpu``, ``cuda``, ``cuda-streamed``).  For
    ``sum``, ``prefix_sum``, ``transpose``, ``convolve`` and ``convolve2d`` also the
    host-to-device copy roofline (``h2d-pageable``, ``h2d-pinned``: :func:`gpuprims.to_device` of
    the input and :func:`gpuprims.synchronize`, wall clock) and ``gpuprims-pinned`` (the input in
    :func:`gpuprims.empty_pinned` memory); the gpuprims rows' ``x_memcpy`` is the pinned bound
    (the larger of the input and the result bytes over the ``h2d-pinned`` rate: copies in and out
    overlap) over the row's time.  With ``--device cpu`` the roofline is a host ``memcpy`` row
    (:func:`numpy.copyto` of the input's bytes, one core), and every row's ``x_memcpy`` is its
    bandwidth over that row's.

Each reported time is the median of ``--repeats`` runs after one untimed warm-up run (end-to-end
runs use fewer repeats for large inputs).  Bandwidth (GB/s, 1e9 bytes per second) counts the bytes
an op reads plus those it writes, as the planner does: a full reduction reads its input and writes
a scalar, ``sum_axis0`` writes one result per column, scans write an output of the input's length
(in :func:`numpy.cumsum`'s dtype: int32 input gives int64), transposes and 'same' convolutions as
many bytes as they read; the memcpy row reads and writes its buffer.  ``x_memcpy`` of a kernel or
device row is its bandwidth as a fraction of the memcpy row's.

The ops (:data:`gpuprims.bench.ops.OPS`): ``sum``, ``prod``, ``min``, ``max``, ``mean``;
``sum_axis0``, the sum over axis 0 of the elements as a (64, n/64) matrix; ``prefix_sum``;
``transpose``; and the convolutions, a float mask over the input, 'same' mode: ``convolve`` is
:func:`numpy.convolve` with 7 taps, ``convolve_long`` with 4097 taps, ``convolve2d`` is
:func:`scipy.signal.convolve2d` of the largest square-ish image that fits the size (2^24
elements: 4096 x 4096) with a 5 x 5 kernel, zero fill.  Their peers: CuPy (``cupy.convolve``,
``cupyx.scipy.signal.convolve2d``), ``cupyx.scipy.ndimage`` (``convolve1d``, ``convolve``) and
PyTorch (``conv1d``/``conv2d``, which correlate: the mask is flipped).  For every op over sizes
the report ends with the end-to-end crossover: the smallest measured size from which gpuprims
beats NumPy (SciPy for ``convolve2d``) at every larger measured size.

Sizes are given with ``--sizes`` as a comma list: a value below 64 (or written ``2^K``) is a
power-of-two exponent, any other value is an element count, so ``--sizes 10,20,1000000`` means
1024, 1048576 and 1000000 elements.

``transpose`` runs fixed cases (:data:`gpuprims.bench.ops.TRANSPOSE_CASES`: 16384 x 16384 in the
``--dtype`` and in uint8 and float64, 7 x 1,000,003, and 64^4 with axes (3, 1, 2, 0)) whatever
``--sizes`` says; its peers are NumPy's, CuPy's and PyTorch's contiguous copies of the transposed
view.

With ``--out DIR`` the rows are also written to ``DIR/bench.md`` (Markdown, with the device name
and library versions), ``DIR/bench.csv`` and, when matplotlib is importable, ``DIR/bench.png``
(bandwidth against size, one panel per op).

``--routing`` (:mod:`.routing`) tabulates ``device=None`` instead: for each op (default: sum,
prod, min, max, mean, prefix_sum, sum_axis0, convolve, convolve2d and transpose, which takes its
elements as a (64, n/64) matrix here), size (default 2^6 .. 2^28, step 2) and dtype (``--dtypes``,
default float32,int32), end to end from NumPy: the host library, gpuprims ``device="cpu"``,
``device="cuda"`` (with a GPU) and auto, auto's route, auto over the host library, and whether
the route was right (its backend within 10 % of the faster); then a summary: the cases that meet
auto <= 1.2x the host library, and the routes that were right.  Times are medians of adaptive
repeats (``--budget`` seconds per measurement, at least 3 runs).  With ``--out DIR`` it writes
``DIR/routing.md`` and ``DIR/routing.csv``.

``--calibrate`` (:mod:`.calibrate`) measures the constants of the planner's cost model on this
machine (per primitive the CPU backend's and the GPU short path's fixed time and rates, the
bus's copy rates, the streamed calls' fixed time and rate), fitted to end-to-end times of every
op by relative least squares (sizes 2^8 .. 2^22 or ``--sizes``; streamed 2^24 .. 2^26), and
prints a table of the fits (median and largest relative errors) and the ``GPUPRIMS_COSTS``
override that sets them; without a usable GPU only the CPU constants.  With ``--out DIR`` it
writes ``DIR/calibration.md`` and ``DIR/calibration.csv`` (the samples).

``--dask`` (:mod:`.dask`) times :mod:`gpuprims.dask` on a float32 array in host memory (default
2^30 elements in chunks of ``--chunk`` 2^26; ``sum`` and ``prefix_sum``): gpuprims' single call
on the whole array, ``gpuprims.dask`` on the threaded and the synchronous scheduler, Dask with
NumPy chunks and, where CuPy can use the GPU, with CuPy chunks; the graph's task count and each
row's time over the single call's; and where ``dask_cuda`` is installed and several GPUs are
usable, the scaling over 1, 2, 4, ... GPUs (``LocalCUDACluster``).  With ``--out DIR`` it writes
``DIR/dask.md``.

The package: :mod:`.ops` (the table of ops), :mod:`.peers` (the libraries' adapters),
:mod:`.timers`, :mod:`.measure` (the four modes), :mod:`.report`, :mod:`.routing`, :mod:`.calibrate`,
:mod:`.dask`, :mod:`.cli`.
"""

from .cli import main

__all__ = ["main"]
