"""gpuprims on Dask arrays: the primitives over chunked arrays, on every worker's GPU.

Each function takes a :class:`dask.array.Array` and returns a lazy one whose computed value is
the single-array gpuprims function (NumPy's and SciPy's semantics) applied to the whole computed
array.  Every chunk is computed by the public gpuprims function (a scan's later chunks by its
form that starts from a carry, ``_scans.carried_prefix_sum``, the same plan), so dtypes, NaN and
wrap-around are decided in one place; the graph only carries what crosses chunk edges:

- **reductions** (``dask.array.reduction``): each chunk reduced with its axes kept, the partials
  reduced again in a tree; ``mean`` carries sums and counts and divides once;
- **scans**: each chunk but the last of its line summed, the totals scanned along each line of
  chunks in one small task, and each chunk scanned once, from its carry (the scan's initial
  values);
- **convolutions**: each output chunk computed from a tile of the input (its own chunk and the
  mask's halo from its neighbours, however many chunks that spans; at the edges the boundary
  rule's rows: mirrored, wrapped, or the image clipped so that gpuprims fills it);
- **transpose**: each output chunk the gpuprims transpose of the matching input chunk.

Chunk types: NumPy chunks are computed on ``device`` (default: each worker's fastest, its GPU
or the CPU backend) and give NumPy chunks; CuPy chunks (any ``__cuda_array_interface__`` chunk)
stay on their GPU and give CuPy chunks, without copies.  The array's ``meta`` says which; a chunk
of another type is a TypeError when it is computed.

``import gpuprims`` does not import this module, nor Dask.
"""
import builtins
import functools
import math
import operator

import numpy as np

try:
    import dask.array as da
    from dask.base import is_dask_collection, tokenize
    from dask.highlevelgraph import HighLevelGraph
except ImportError as error:  # pragma: no cover - the extra is not installed
    raise ImportError("gpuprims.dask needs Dask: pip install 'gpuprims[dask]'") from error

from . import _convolve, _reductions, _scans, _transpose
from ._boundary import SUPPORTED_NAMES, axis_index, reduced_axes, supported
from ._device_array import DeviceArray, device_view

__all__ = ["convolve", "convolve2d", "correlate", "correlate2d", "cumsum", "max", "mean", "min",
           "prefix_sum", "prod", "sum", "transpose"]

_SINGLE = {"sum": _reductions.sum, "prod": _reductions.prod, "min": _reductions.min,
           "max": _reductions.max, "mean": _reductions.mean}


# ---------------------------------------------------------------------------------------------
# inputs and chunk types
# ---------------------------------------------------------------------------------------------

def _dask_input(x, name):
    """`x` if it is a Dask array of a dtype gpuprims supports, else a TypeError."""
    if not isinstance(x, da.Array):
        hint = f"; for an in-memory array use gpuprims.{name}" if not is_dask_collection(x) else ""
        raise TypeError(f"gpuprims.dask.{name} takes a dask.array.Array, not {type(x).__module__}."
                        f"{type(x).__qualname__}{hint}")
    if not supported(x.dtype):
        raise TypeError(f"gpuprims.dask.{name} does not support dtype {x.dtype} (supported: {SUPPORTED_NAMES})")
    return x


class _Chunks:
    """The type of a Dask array's chunks, from its meta: NumPy arrays, or GPU arrays (CuPy, or any
    ``__cuda_array_interface__`` array), whose results are CuPy arrays on the same GPU."""

    __slots__ = ("name", "on_device")

    def __init__(self, x, name):
        self.name = name
        meta = x._meta
        if type(meta) is np.ndarray:
            self.on_device = False
        elif hasattr(meta, "__cuda_array_interface__"):
            self.on_device = True
        else:
            raise TypeError(f"gpuprims.dask.{name}: chunks of type {type(meta).__module__}."
                            f"{type(meta).__qualname__} are not supported (NumPy or CuPy chunks)")

    @property
    def xp(self):
        """The array module of the results: numpy or cupy."""
        if self.on_device:
            import cupy
            return cupy
        return np

    def check(self, chunk):
        """A chunk as gpuprims takes it, or a TypeError when its type is not the array's."""
        if not self.on_device and (type(chunk) is np.ndarray or isinstance(chunk, np.generic)):
            return chunk
        if self.on_device and hasattr(chunk, "__cuda_array_interface__"):
            return chunk
        expected = "GPU (CuPy)" if self.on_device else "NumPy"
        raise TypeError(f"gpuprims.dask.{self.name}: a chunk is a {type(chunk).__module__}."
                        f"{type(chunk).__qualname__}, but the Dask array's meta says {expected} chunks; "
                        "all chunks must be NumPy arrays or all GPU arrays (pass meta= to map_blocks)")

    def result(self, result):
        """A gpuprims result as a chunk: NumPy as it is, a DeviceArray as a CuPy array (no copy)."""
        if isinstance(result, DeviceArray):
            return self.xp.from_dlpack(result)
        return result

    def meta(self, dtype, ndim):
        """An empty array of the result chunks' type, for the Dask array's meta."""
        return self.xp.empty((0,) * ndim, dtype)


def _new_array(layers, name, dependencies, chunks, meta):
    """The Dask array of the tasks `layers` (a dict of keys to tasks) named `name`."""
    graph = HighLevelGraph.from_collections(name, layers, dependencies=dependencies)
    return da.Array(graph, name, chunks, meta=meta)


def _line(index, axis, position):
    """A block index (or a shape) with its entry along `axis` replaced by `position`."""
    return index[:axis] + (position,) + index[axis + 1:]


def _along(axis, ndim, selection):
    """An index that applies `selection` along `axis` and keeps every other axis whole."""
    return (slice(None),) * axis + (selection,) + (slice(None),) * (ndim - axis - 1)


# ---------------------------------------------------------------------------------------------
# reductions
# ---------------------------------------------------------------------------------------------

def _partial_dtypes(result_dtype, in_dtype):
    """(dtype of the partial results, dtype the input is cast to first or None).  float16 results
    keep float32 partials, as the single call accumulates float16 in float32 and rounds once."""
    if result_dtype == np.float16:
        return np.dtype(np.float32), (None if in_dtype == np.float16 else np.dtype(np.float16))
    return result_dtype, None


def _reduce_block(op, chunks, dtype_argument, cast, device, x, axis, keepdims):
    """One step of the tree below its root: the gpuprims reduction of a chunk, or of concatenated
    partials, with the axes kept.  min and max of an empty selection keep it empty (it has no
    identity: the root raises NumPy's error if nothing else is left)."""
    x = chunks.check(x)
    if op in ("min", "max") and x.size == 0:
        return x[tuple(slice(0, 1) if d in axis else slice(None) for d in range(x.ndim))]
    if cast is not None:
        x = x.astype(cast)
    return _reduced(op, chunks, dtype_argument, device, x, axis, keepdims)


def _reduced(op, chunks, dtype_argument, device, x, axis, keepdims):
    kwargs = {} if op in ("min", "max") else {"dtype": dtype_argument}
    return chunks.result(_SINGLE[op](x, axis=axis, keepdims=keepdims, device=device, **kwargs))


def _aggregate(op, chunks, partial_dtype, result_dtype, device, x, axis, keepdims):
    """The root of the tree: the partials reduced, in the result's dtype."""
    result = _reduced(op, chunks, partial_dtype, device, chunks.check(x), axis, keepdims)
    return result if result.dtype == result_dtype else result.astype(result_dtype)


def _result_dtype(function, x, *args, **kwargs):
    """The dtype of `function` (a single-array gpuprims function) on a 1-element array of x's
    dtype and ndim, on the CPU: NumPy's errors for bad arguments, raised before any chunk runs."""
    return np.asarray(function(np.zeros((1,) * x.ndim, x.dtype), *args, device="cpu", **kwargs)).dtype


def _reduction(op, x, axis, dtype, keepdims, split_every, device):
    x = _dask_input(x, op)
    chunks = _Chunks(x, op)
    kwargs = {} if op in ("min", "max") else {"dtype": dtype}
    result_dtype = _result_dtype(_SINGLE[op], x, axis=axis, keepdims=keepdims, **kwargs)
    axes = reduced_axes(axis, x.ndim)
    if op in ("min", "max"):
        partial_dtype, cast = result_dtype, None
    else:
        partial_dtype, cast = _partial_dtypes(result_dtype, x.dtype)
    block = functools.partial(_reduce_block, op, chunks, partial_dtype, cast, device)
    combine = functools.partial(_reduce_block, op, chunks, partial_dtype, None, device)
    aggregate = functools.partial(_aggregate, op, chunks, partial_dtype, result_dtype, device)
    return da.reduction(x, block, aggregate, axis=axes, keepdims=keepdims, dtype=result_dtype,
                        split_every=split_every, combine=combine, name=f"gpuprims-{op}",
                        meta=chunks.meta(result_dtype, x.ndim if keepdims else x.ndim - len(axes)))


def sum(x, axis=None, dtype=None, keepdims=False, *, split_every=None, device=None):
    """Sum over the given axes, as :func:`gpuprims.sum` (and :func:`numpy.sum`) of the whole array.

    Parameters
    ----------
    x : dask.array.Array
        NumPy or CuPy chunks of bool, integers, float16, float32 or float64.
    axis : None or int or tuple of ints, optional
        Axes to sum over; None sums all elements.
    dtype : dtype, optional
        Accumulator and result dtype, with NumPy's default (small integers as int64 or uint64,
        wrapping; float16 accumulated in float32, here across chunks too).
    keepdims : bool, optional
        Keep the reduced axes as dimensions of size one.
    split_every : int or dict, optional
        How many partials one task of the tree combines, as in :func:`dask.array.reduction`.
    device : {None, "cpu", "cuda", "cuda:N"}, optional
        Where each worker computes NumPy chunks (None: its fastest); GPU chunks run on their GPU.

    Returns
    -------
    dask.array.Array
        Lazy; NumPy chunks give NumPy chunks, GPU chunks CuPy chunks.

    Raises
    ------
    TypeError
        For input that is not a Dask array (use :func:`gpuprims.sum` for in-memory arrays), chunks
        that are neither NumPy nor GPU arrays, and unsupported dtypes.
    numpy.exceptions.AxisError
        For an axis out of range.
    """
    return _reduction("sum", x, axis, dtype, keepdims, split_every, device)


def prod(x, axis=None, dtype=None, keepdims=False, *, split_every=None, device=None):
    """Product over the given axes, as :func:`gpuprims.prod` of the whole array; parameters as
    :func:`gpuprims.dask.sum`.

    Returns
    -------
    dask.array.Array
    """
    return _reduction("prod", x, axis, dtype, keepdims, split_every, device)


def min(x, axis=None, keepdims=False, *, split_every=None, device=None):
    """Minimum over the given axes, as :func:`gpuprims.min` of the whole array (NaN propagates;
    an empty selection raises ValueError when computed).  Parameters as :func:`gpuprims.dask.sum`.

    Returns
    -------
    dask.array.Array
    """
    return _reduction("min", x, axis, None, keepdims, split_every, device)


def max(x, axis=None, keepdims=False, *, split_every=None, device=None):
    """Maximum over the given axes, as :func:`gpuprims.max` of the whole array.  Parameters as
    :func:`gpuprims.dask.min`.

    Returns
    -------
    dask.array.Array
    """
    return _reduction("max", x, axis, None, keepdims, split_every, device)


def _mean_block(chunks, sum_dtype, device, x, axis, keepdims):
    """A chunk's (sum, count) partial: the count of elements summed into each output."""
    x = chunks.check(x)
    total = chunks.result(_reductions.sum(x, axis=axis, dtype=sum_dtype, keepdims=True, device=device))
    return total, math.prod(x.shape[d] for d in axis)


def _joined(chunks, parts, axes):
    """The sums of a nested list of (sum, count) partials (one level per reduced axis, as
    dask.array.reduction hands them over with concatenate=False) concatenated, and their count."""
    if not isinstance(parts, list):
        return parts
    joined = [_joined(chunks, part, axes[1:]) for part in parts]
    return (chunks.xp.concatenate([total for total, _ in joined], axis=axes[0]),
            builtins.sum(count for _, count in joined))


def _mean_combine(chunks, sum_dtype, device, parts, axis, keepdims):
    total, count = _joined(chunks, parts, sorted(axis))
    return _mean_block(chunks, sum_dtype, device, total, axis, True)[0], count


def _mean_aggregate(chunks, in_dtype, dtype_argument, sum_dtype, device, parts, axis, keepdims):
    """sum / count, divided as gpuprims.mean (numpy.mean) divides; no elements: NumPy's nan and
    warning."""
    total, count = _mean_combine(chunks, sum_dtype, device, parts, axis, keepdims)
    if count == 0:
        empty = np.empty(tuple(0 if d in axis else size for d, size in enumerate(total.shape)), in_dtype)
        result = _reductions.mean(empty, axis=axis, dtype=dtype_argument, keepdims=keepdims, device="cpu")
        return chunks.xp.asarray(result) if chunks.on_device else result
    total = chunks.check(total)
    if not keepdims:
        total = total.reshape(tuple(size for d, size in enumerate(total.shape) if d not in axis))
    if not chunks.on_device and total.ndim == 0:
        total = total[()]  # numpy.mean divides a scalar sum as a scalar
    finish = _reductions.mean_division(count, dtype_argument is None and in_dtype == np.float16)
    return chunks.result(finish(device_view(total) if chunks.on_device else total))


def mean(x, axis=None, dtype=None, keepdims=False, *, split_every=None, device=None):
    """Arithmetic mean over the given axes, as :func:`gpuprims.mean` of the whole array.

    Each chunk gives its sum and its count; sums and counts are added up the tree and divided
    once, as :func:`numpy.mean` divides (integers and bool in float64, float16 summed in float32).
    An empty selection gives NaN with NumPy's RuntimeWarning.  Parameters as
    :func:`gpuprims.dask.sum`.

    Returns
    -------
    dask.array.Array
    """
    x = _dask_input(x, "mean")
    chunks = _Chunks(x, "mean")
    result_dtype = _result_dtype(_reductions.mean, x, axis=axis, dtype=dtype, keepdims=keepdims)
    axes = reduced_axes(axis, x.ndim)
    sum_dtype = _reductions.mean_sum_dtype(x.dtype, dtype)
    return da.reduction(
        x, functools.partial(_mean_block, chunks, sum_dtype, device),
        functools.partial(_mean_aggregate, chunks, x.dtype, dtype, sum_dtype, device), axis=axes,
        keepdims=keepdims, dtype=result_dtype, split_every=split_every,
        combine=functools.partial(_mean_combine, chunks, sum_dtype, device), name="gpuprims-mean",
        concatenate=False, meta=chunks.meta(result_dtype, x.ndim if keepdims else x.ndim - len(axes)))


# ---------------------------------------------------------------------------------------------
# scans
# ---------------------------------------------------------------------------------------------

def _chunk_total(chunks, axis, partial_dtype, cast, device, x):
    """A chunk's total along `axis` (the gpuprims sum in the partials' dtype, of size 1 there).
    It reports no floating-point error: an overflow is the chunk's scan's to report, which then
    reaches the same inf."""
    x = chunks.check(x)
    if cast is not None:
        x = x.astype(cast)
    with np.errstate(over="ignore", invalid="ignore"):
        return chunks.result(_reductions.sum(x, axis=axis, dtype=partial_dtype, keepdims=True, device=device))


def _carries(chunks, axis, partial_dtype, device, totals):
    """The carries of a line of chunks along `axis` from the totals of all its chunks but the
    last: the inclusive scan of those totals, whose k-th entry is the carry of chunk k + 1."""
    stacked = chunks.xp.concatenate(totals, axis=axis)
    scanned = chunks.result(_scans.prefix_sum(stacked, axis=axis, dtype=partial_dtype, device=device))
    return [scanned[_along(axis, scanned.ndim, slice(k, k + 1))] for k in range(len(totals))]


def _scan_block(chunks, axis, partial_dtype, cast, exclusive, device, result_dtype, position, x, carries):
    """A chunk's gpuprims scan in the partials' dtype, the chunks before it on its line (position
    > 0) carried in as the scan's initial values."""
    x = chunks.check(x)
    if cast is not None:
        x = x.astype(cast)
    if position:
        scanned = _scans.carried_prefix_sum(x, carries[position - 1], axis, dtype=partial_dtype,
                                            exclusive=exclusive, device=device)
    else:
        scanned = _scans.prefix_sum(x, axis=axis, dtype=partial_dtype, exclusive=exclusive, device=device)
    scanned = chunks.result(scanned)
    return scanned if scanned.dtype == result_dtype else scanned.astype(result_dtype)


def prefix_sum(x, axis=None, dtype=None, exclusive=False, *, device=None):
    """Cumulative sum along an axis, as :func:`gpuprims.prefix_sum` of the whole array.

    Each chunk but the last of its line is summed by gpuprims; one small task per line of chunks
    along the axis scans their totals, and each chunk is then scanned by gpuprims from its carry,
    in one pass.
    ``exclusive=True`` is exclusive across chunk edges too: the first element of a chunk is the
    sum of everything before it.

    Parameters
    ----------
    x : dask.array.Array
        NumPy or CuPy chunks of a supported dtype.
    axis : int, optional
        Axis to scan; None scans the flattened array (C order), as :func:`numpy.cumsum`.
    dtype : dtype, optional
        Accumulator and result dtype, with :func:`numpy.cumsum`'s default.
    exclusive : bool, optional
        Element i is the sum of the elements before i (the first is 0).
    device : {None, "cpu", "cuda", "cuda:N"}, optional
        Where each worker computes NumPy chunks; GPU chunks run on their GPU.

    Returns
    -------
    dask.array.Array
        With `x`'s chunks along the axis (1-D when axis is None).

    Raises
    ------
    TypeError
        As :func:`gpuprims.dask.sum`; numpy.exceptions.AxisError for a bad axis.
    """
    x = _dask_input(x, "prefix_sum")
    chunks = _Chunks(x, "prefix_sum")
    result_dtype = _result_dtype(_scans.prefix_sum, x, axis=axis, dtype=dtype, exclusive=exclusive)
    if axis is None or x.ndim == 0:  # NumPy scans the flattened array (a 0-d one as 1-d)
        # an empty array as one chunk first: dask's reshape refuses the chunks of most empty arrays
        x, axis = (x.rechunk(-1) if x.size == 0 else x).reshape(-1), 0
    axis = axis_index(axis, x.ndim)
    partial_dtype, cast = _partial_dtypes(result_dtype, x.dtype)
    token = tokenize(x, axis, dtype, exclusive, device)
    total_name, carry_name, name = (f"gpuprims-prefix_sum-{part}{token}" for part in ("total-", "carry-", ""))
    last = x.numblocks[axis] - 1  # the last chunk of a line: no chunk after it needs its total
    layers = {}
    for index in np.ndindex(*x.numblocks):
        position = index[axis]
        line = _line(index, axis, 0)
        if position < last:
            layers[(total_name,) + index] = (functools.partial(_chunk_total, chunks, axis, partial_dtype, cast,
                                                               device), (x.name,) + index)
        if position == 0 and last > 0:
            layers[(carry_name,) + line] = (
                functools.partial(_carries, chunks, axis, partial_dtype, device),
                [(total_name,) + _line(index, axis, k) for k in range(last)])
        layers[(name,) + index] = (
            functools.partial(_scan_block, chunks, axis, partial_dtype, cast, bool(exclusive), device, result_dtype,
                              position), (x.name,) + index, (carry_name,) + line if position else None)
    return _new_array(layers, name, [x], x.chunks, chunks.meta(result_dtype, x.ndim))


def cumsum(x, axis=None, dtype=None, *, device=None):
    """Cumulative sum, as :func:`numpy.cumsum` (the inclusive :func:`gpuprims.dask.prefix_sum`).

    Returns
    -------
    dask.array.Array
    """
    return prefix_sum(x, axis=axis, dtype=dtype, device=device)


# ---------------------------------------------------------------------------------------------
# transpose
# ---------------------------------------------------------------------------------------------

def _transpose_block(chunks, order, device, x):
    return chunks.result(_transpose.transpose(chunks.check(x), order, device=device))


def transpose(x, axes=None, *, device=None):
    """Permute the axes, as :func:`gpuprims.transpose` of the whole array: each output chunk is
    the gpuprims transpose of the matching input chunk (a new C-contiguous array).

    Parameters
    ----------
    x : dask.array.Array
    axes : None or sequence of int, optional
        A permutation of ``range(x.ndim)``; None reverses the axes.
    device : {None, "cpu", "cuda", "cuda:N"}, optional
        Where each worker copies NumPy chunks; GPU chunks stay on their GPU.

    Returns
    -------
    dask.array.Array
        The permuted array; a 0-d input gives shape ``(1,)``, as gpuprims does.

    Raises
    ------
    TypeError, ValueError, numpy.exceptions.AxisError
        As :func:`gpuprims.transpose`, and TypeError for input that is not a Dask array.
    """
    x = _dask_input(x, "transpose")
    chunks = _Chunks(x, "transpose")
    order = _transpose.permutation(axes, x.ndim)
    if x.ndim == 0:
        x, order = x.reshape(1), (0,)
    return da.blockwise(functools.partial(_transpose_block, chunks, order, device), order, x, tuple(range(x.ndim)),
                        dtype=x.dtype, meta=chunks.meta(x.dtype, x.ndim),
                        name=f"gpuprims-transpose-{tokenize(x, order, device)}")


# ---------------------------------------------------------------------------------------------
# convolutions
# ---------------------------------------------------------------------------------------------
#
# Output chunk b along an axis holds the outputs [lo, hi) that line up with input chunk b (the
# last one also the outputs past the input's end, in 'full' mode).  Output j reads the input rows
# [j + offset, j + offset + m), so chunk b reads [lo + offset, hi + offset + m - 1): its tile.
# Under wrap and symm the tile's rows outside the input are the boundary rule's rows, so the tile
# is complete and gpuprims' 'valid' correlation of it is the chunk.  Under fill the tile is
# clipped to the input and gpuprims' 'full' correlation, which fills (or, in NumPy's 1-D
# functions, skips) what lies outside, is cut to the chunk's outputs.

def _runs(first, stop, n, rule):
    """The rows [first, stop) of an axis of length n as `rule` reads them: (count, start, step)
    runs of in-array rows; under fill the rows are clipped to the array."""
    if rule == _convolve.FILL:
        first, stop = builtins.max(first, 0), builtins.min(stop, n)
        return [(stop - first, first, 1)] if stop > first else []
    runs = []
    while first < stop:
        period = first // n  # wrap repeats the axis; symm alternates it forwards and backwards
        end = builtins.min(stop, (period + 1) * n)
        if rule == _convolve.WRAP or period % 2 == 0:
            runs.append((end - first, first - period * n, 1))
        else:
            runs.append((end - first, (period + 1) * n - 1 - first, -1))
        first = end
    return runs


def _pieces(runs, bounds):
    """The runs cut at the chunk bounds: (chunk, slice of the chunk, count), in tile order."""
    pieces = []
    for count, start, step in runs:
        low, high = (start, start + count) if step == 1 else (start - count + 1, start + 1)
        blocks = [b for b in range(len(bounds) - 1) if bounds[b] < high and bounds[b + 1] > low]
        for b in (blocks if step == 1 else reversed(blocks)):
            a, z = builtins.max(low, bounds[b]) - bounds[b], builtins.min(high, bounds[b + 1]) - bounds[b]
            pieces.append((b, slice(a, z) if step == 1 else slice(z - 1, a - 1 if a else None, -1), z - a))
    return pieces


def _axis_tiles(sizes, m, length, offset, rule):
    """Along one axis: the output chunk sizes, and per output chunk (its input pieces, whether its
    tile is complete, the tile's 'full' outputs that are the chunk's)."""
    bounds = [0]
    for size in sizes:
        bounds.append(bounds[-1] + size)
    out_sizes, tiles = [], []
    for b in range(len(sizes)):
        low = builtins.min(bounds[b], length)
        high = length if b == len(sizes) - 1 else builtins.min(bounds[b + 1], length)
        out_sizes.append(high - low)
        first, stop = low + offset, high + offset + m - 1
        runs = _runs(first, stop, bounds[-1], rule) if high > low else []
        tile_first = builtins.max(first, 0) if rule == _convolve.FILL else first
        complete = builtins.sum(count for count, _, _ in runs) == stop - first
        window = slice(first - tile_first + m - 1, first - tile_first + m - 1 + high - low)
        tiles.append((_pieces(runs, bounds), complete, window))
    return tuple(out_sizes), tiles


def _correlate_tile(chunks, function, mask, options, device, tile_shape, places, windows, pieces):
    """One output chunk: its tile assembled from the pieces, correlated by gpuprims ('valid' when
    the tile is complete, else 'full', cut to `windows`)."""
    pieces = [chunks.check(piece) for piece in pieces]
    if len(pieces) == 1:
        tile = pieces[0]
    else:
        tile = chunks.xp.empty(tile_shape, pieces[0].dtype)
        for place, piece in zip(places, pieces):
            tile[place] = piece
    result = chunks.result(function(tile, mask, "valid" if windows is None else "full", **options, device=device))
    return result if windows is None else chunks.xp.ascontiguousarray(result[windows])


def _empty_chunk(chunks, shape, dtype):
    return chunks.xp.empty(shape, dtype)


def _whole(chunks, function, mask, mode, options, device, x):
    return chunks.result(function(chunks.check(x), mask, mode, **options, device=device))


def _concrete_mask(v, name):
    """The mask as a host array: it must be small and concrete (a GPU mask is copied down once)."""
    if is_dask_collection(v):
        raise TypeError(f"gpuprims.dask.{name}: the mask must be a concrete array, not a Dask "
                        f"collection ({type(v).__qualname__}); compute it first (it is small)")
    view = device_view(v)
    return view.get() if view is not None else np.asarray(v)


def _convolution(name, x, v, mode, options, device):
    """gpuprims.dask.<name>(x, v, mode, **options): validated by gpuprims itself on a 1-element
    stand-in of x, then tiled, or computed in one chunk where NumPy or SciPy would swap the
    operands (the Dask one is then the smaller, and the mask is in memory)."""
    x = _dask_input(x, name)
    chunks = _Chunks(x, name)
    mask = _concrete_mask(v, name)
    function = getattr(_convolve, name)
    if name == "convolve" and mask.ndim == 0:  # numpy.convolve takes a scalar as one element
        mask = mask.reshape(1)
    if any(math.isnan(size) for size in x.shape):
        raise ValueError(f"gpuprims.dask.{name} needs known chunk sizes: call x.compute_chunk_sizes() first")
    stand_in = np.zeros(tuple(builtins.min(size, 1) for size in x.shape), x.dtype)
    result_dtype = function(stand_in, mask, mode, **options, device="cpu").dtype
    if x.ndim == 0:
        x = x.reshape(1)
    out_name = f"gpuprims-{name}-{tokenize(x, mask, mode, options, device)}"
    meta = chunks.meta(result_dtype, x.ndim)
    if options:
        swapped = _convolve.inputs_swap_needed(mode, x.shape, mask.shape)
        rule = _convolve.SCIPY_BOUNDARIES[options["boundary"]]
        windows = [_convolve.scipy_window(n, m, _convolve.SCIPY_MODES[mode], name == "convolve2d")
                   for n, m in zip(x.shape, mask.shape)]
        if rule != _convolve.FILL:
            options = {"boundary": "fill", "fillvalue": 0}  # complete tiles read nothing outside
    else:
        swapped, rule = mask.size > x.shape[0], _convolve.FILL
        windows = [_convolve.numpy_window(x.shape[0], mask.size, _convolve.numpy_mode(mode))]
    if swapped:
        out_shape = function(np.zeros(x.shape, x.dtype), mask, mode, **options, device="cpu").shape
        return x.rechunk(-1).map_blocks(functools.partial(_whole, chunks, function, mask, mode, options, device),
                                        chunks=tuple((size,) for size in out_shape), dtype=result_dtype,
                                        meta=meta, name=out_name)
    axes = [_axis_tiles(sizes, m, length, offset, rule)
            for sizes, m, (length, offset) in zip(x.chunks, mask.shape, windows)]
    layers = {}
    tile = functools.partial(_correlate_tile, chunks, function, mask, options, device)
    for index in np.ndindex(*x.numblocks):
        out_shape = tuple(axes[d][0][b] for d, b in enumerate(index))
        if 0 in out_shape:
            layers[(out_name,) + index] = (functools.partial(_empty_chunk, chunks, out_shape, result_dtype),)
            continue
        tiles = [axes[d][1][b] for d, b in enumerate(index)]
        places, refs = _tile_pieces(x, tiles, (out_name + "-piece",) + index, layers)
        tile_shape = tuple(builtins.sum(count for _, _, count in pieces) for pieces, _, _ in tiles)
        windows_here = None if all(complete for _, complete, _ in tiles) else tuple(w for _, _, w in tiles)
        layers[(out_name,) + index] = (functools.partial(tile, tile_shape, places, windows_here), refs)
    return _new_array(layers, out_name, [x], tuple(sizes for sizes, _ in axes), meta)


def _tile_pieces(x, tiles, piece_prefix, layers):
    """(where each piece goes in the tile, the piece's key) for one output chunk: whole input
    chunks by their keys, parts of chunks (halos) as getitem tasks added to `layers`, so that only
    the halo travels between workers."""
    places, refs = [], []
    for combination in np.ndindex(*(len(pieces) for pieces, _, _ in tiles)):
        place, block, selection = [], [], []
        for d, k in enumerate(combination):
            pieces = tiles[d][0]
            start = builtins.sum(count for _, _, count in pieces[:k])
            b, where, count = pieces[k]
            place.append(slice(start, start + count))
            block.append(b)
            selection.append(where)
        key = (x.name,) + tuple(block)
        if any(where != slice(0, x.chunks[d][b]) for d, (b, where) in enumerate(zip(block, selection))):
            layers[piece_prefix + (len(refs),)] = (operator.getitem, key, tuple(selection))
            key = piece_prefix + (len(refs),)
        places.append(tuple(place))
        refs.append(key)
    return tuple(places), refs


def convolve(a, v, mode="full", *, device=None):
    """Convolution of a 1-D Dask array with a concrete mask, as :func:`gpuprims.convolve` (and
    :func:`numpy.convolve`) of the whole array.

    Parameters
    ----------
    a : dask.array.Array
        The 1-D signal, NumPy or CuPy chunks.
    v : array_like
        The mask: a concrete (in-memory, small) array, NumPy or GPU; not a Dask array.  When it is
        longer than `a`, NumPy swaps them: `a` is then computed in one chunk.
    mode : {'full', 'same', 'valid'} or {2, 1, 0}, optional
        NumPy's modes, output lengths included.
    device : {None, "cpu", "cuda", "cuda:N"}, optional
        Where each worker computes NumPy chunks; GPU chunks run on their GPU.

    Returns
    -------
    dask.array.Array
        dtype ``numpy.result_type(a, v)``; output chunk b lines up with input chunk b (the last
        also holds the outputs past the input's end in 'full' mode; in 'valid' mode the last
        chunks may be shorter, or empty).

    Raises
    ------
    TypeError
        For input that is not a Dask array, a mask that is a Dask collection, unsupported dtypes.
    ValueError
        As :func:`gpuprims.convolve` (empty or multi-dimensional operands, bad modes), and for
        unknown chunk sizes.
    """
    return _convolution("convolve", a, v, mode, {}, device)


def correlate(a, v, mode="valid", *, device=None):
    """Cross-correlation of a 1-D Dask array with a concrete mask, as :func:`gpuprims.correlate`
    (and :func:`numpy.correlate`) of the whole array; parameters as :func:`gpuprims.dask.convolve`.

    Returns
    -------
    dask.array.Array
    """
    return _convolution("correlate", a, v, mode, {}, device)


def convolve2d(in1, in2, mode="full", boundary="fill", fillvalue=0, *, device=None):
    """2-D convolution of a Dask array with a concrete mask, as :func:`gpuprims.convolve2d` (and
    :func:`scipy.signal.convolve2d`) of the whole array.

    Parameters
    ----------
    in1 : dask.array.Array
        The 2-D image, NumPy or CuPy chunks.
    in2 : array_like
        The mask: a concrete 2-D array, not a Dask array.  In 'valid' mode, when it is the larger,
        SciPy swaps them: `in1` is then computed in one chunk.
    mode : {'full', 'valid', 'same'}, optional
    boundary : {'fill', 'wrap', 'symm'}, optional
        SciPy's rules (and aliases).  Near the edges, a chunk's tile takes the rows and columns
        the rule reads (periodically, or mirrored with the edge repeated, as far as the mask
        reaches), or is clipped for 'fill'.
    fillvalue : scalar, optional
    device : {None, "cpu", "cuda", "cuda:N"}, optional
        Where each worker computes NumPy chunks; GPU chunks run on their GPU.

    Returns
    -------
    dask.array.Array
        SciPy's dtype and shape; output chunks line up with input chunks as in
        :func:`gpuprims.dask.convolve`.

    Raises
    ------
    TypeError, ValueError
        As :func:`gpuprims.convolve2d`, and as :func:`gpuprims.dask.convolve`.
    """
    return _convolution("convolve2d", in1, in2, mode, {"boundary": boundary, "fillvalue": fillvalue}, device)


def correlate2d(in1, in2, mode="full", boundary="fill", fillvalue=0, *, device=None):
    """2-D cross-correlation, as :func:`gpuprims.correlate2d` (and
    :func:`scipy.signal.correlate2d`) of the whole array; parameters as
    :func:`gpuprims.dask.convolve2d`.

    Returns
    -------
    dask.array.Array
    """
    return _convolution("correlate2d", in1, in2, mode, {"boundary": boundary, "fillvalue": fillvalue}, device)
