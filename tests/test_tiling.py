"""The streaming tilers, unit-tested without a GPU: the core's entries list the tiles a streamed call
on GPU 0 would be cut into (their describe-tiles mode), computed by the same C++ tilers as the
streamed calls, without touching a device.  Each tile is (box, input boxes): reduce and scan tiles
name boxes of the input's (outer, n, inner) view, correlate and copy tiles boxes of the output, and
every tile lists the boxes of the input it is packed from.  The properties checked: the tiles cover
the call exactly once, in the order the carries need, within the chunk and device-memory limits."""
import itertools
import math

import numpy as np
import pytest

import gpuprims
from gpuprims import _core

pytestmark = pytest.mark.skipif(not gpuprims.build_info()["cuda"], reason="the tilers are in the CUDA build")
TILES = -2  # the entries' `repeats` value that lists the streamed tiles


@pytest.fixture
def settings(monkeypatch):
    """settings(chunk_bytes, max_device_bytes): the streaming settings the tiles are cut under."""
    def apply(chunk_bytes=None, max_device_bytes=None):
        for name, value in (("GPUPRIMS_STREAM_CHUNK_BYTES", chunk_bytes), ("GPUPRIMS_MAX_DEVICE_BYTES", max_device_bytes)):
            if value is None:
                monkeypatch.delenv(name, raising=False)
            else:
                monkeypatch.setenv(name, str(value))
    monkeypatch.delenv("GPUPRIMS_STREAM_MIN_BYTES", raising=False)
    apply()
    return apply


def cells(box):
    """The (o, k, i) elements of a box."""
    o0, oc, k0, kc, i0, ic = box
    return itertools.product(range(o0, o0 + oc), range(k0, k0 + kc), range(i0, i0 + ic))


def count(box):
    return box[1] * box[3] * box[5]


def assert_partition(boxes, shape):
    """The boxes cover the (outer, n, inner) `shape` exactly once."""
    seen = np.zeros(shape, np.int64)
    for box in boxes:
        o0, oc, k0, kc, i0, ic = box
        assert oc > 0 and kc > 0 and ic > 0, box
        assert 0 <= o0 and o0 + oc <= shape[0] and 0 <= k0 and k0 + kc <= shape[1] and 0 <= i0 and i0 + ic <= shape[2], box
        seen[o0:o0 + oc, k0:k0 + kc, i0:i0 + ic] += 1
    assert (seen == 1).all(), f"covered {seen.min()}..{seen.max()} times"


def reduce_tiles(shape, dtype="float32", out_dtype=None):
    a = np.zeros(math.prod(shape), dtype)
    out = np.dtype(out_dtype or dtype)
    return _core.reduce(a, (), 0, TILES, 0, out.num, *shape)


def scan_tiles(shape, dtype="float32", out_dtype=None):
    a = np.zeros(math.prod(shape), dtype)
    out = np.dtype(out_dtype or dtype)
    return _core.scan(a, (), 0, TILES, out.num, *shape, False)


SHAPES = [(1, 1009, 1), (37, 53, 1), (1, 37, 53), (5, 7, 11), (3, 4, 5), (2, 1, 3), (64, 1, 1), (1, 1, 300)]


@pytest.mark.parametrize("chunk", [4, 8, 200, 4096, None])
@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "x".join(map(str, s)))
@pytest.mark.parametrize("tiles_of", [reduce_tiles, scan_tiles], ids=["reduce", "scan"])
def test_reduce_and_scan_tiles_cover_the_array_in_carry_order(settings, tiles_of, shape, chunk):
    settings(chunk)
    tiles = tiles_of(shape)
    boxes = [box for box, _ in tiles]
    assert all(inputs == [box] for box, inputs in tiles), "a reduce or scan tile reads its own box"
    assert_partition(boxes, shape)
    count_all = math.prod(shape)
    limit = max(1, min((chunk or 8 << 20) // 4, -(-count_all // 4)))  # the chunk, and a 4th of the array
    assert all(count(box) <= limit for box in boxes), (limit, boxes)
    # the carries: the tiles of one (slab, column block) come one after another along n, in order
    for (o0, oc, k0, kc, i0, ic), (p0, pc, l0, lc, j0, jc) in zip(boxes, boxes[1:]):
        if (o0, oc, i0, ic) == (p0, pc, j0, jc) and l0 != 0:
            assert l0 == k0 + kc
    assert len(tiles) >= min(4, count_all), "at least four tiles, so that copies overlap"


@pytest.mark.parametrize("shape", [(1, 4097, 1), (9, 100, 33)], ids=lambda s: "x".join(map(str, s)))
def test_device_cap_bounds_reduce_and_scan_tiles(settings, shape):
    """Under GPUPRIMS_MAX_DEVICE_BYTES a tile's slots (4 in flight, in + out, and workspace) fit."""
    for cap in (1 << 12, 1 << 14):
        settings(max_device_bytes=cap)
        for tiles_of, out_bytes in ((reduce_tiles, 0), (scan_tiles, 8)):
            tiles = tiles_of(shape, "float32", "float64")
            assert_partition([box for box, _ in tiles], shape)
            per_element = 4 * (4 + out_bytes) + 2
            assert all(count(box) * per_element <= cap for box, _ in tiles)
    settings(max_device_bytes=16)
    with pytest.raises(MemoryError, match="GPUPRIMS_MAX_DEVICE_BYTES"):
        reduce_tiles(shape)


def correlate_tiles(rows, cols, mask_rows, mask_cols, mode, boundary):
    """The tiles of scipy.signal.correlate2d(image, mask, mode, boundary) (a 1-D signal: rows 1)."""
    image = np.zeros((rows, cols), np.float32)
    mask = np.ones((mask_rows, mask_cols), np.float32)
    if mode == "full":
        out_rows, out_cols, row_offset, col_offset = rows + mask_rows - 1, cols + mask_cols - 1, 1 - mask_rows, 1 - mask_cols
    elif mode == "same":
        out_rows, out_cols, row_offset, col_offset = rows, cols, -((mask_rows - 1) // 2), -((mask_cols - 1) // 2)
    else:
        out_rows, out_cols, row_offset, col_offset = rows - mask_rows + 1, cols - mask_cols + 1, 0, 0
    tiles = _core.correlate(image, (), 0, TILES, mask, np.zeros((), np.float32), out_rows, out_cols, row_offset,
                            col_offset, {"fill": 0, "wrap": 1, "symm": 2}[boundary])
    return tiles, (1, out_rows, out_cols)


@pytest.mark.parametrize("boundary", ["fill", "wrap", "symm"])
@pytest.mark.parametrize("mode", ["full", "same", "valid"])
@pytest.mark.parametrize("geometry", [(37, 41, 5, 5), (1, 1000, 1, 7), (1, 5000, 1, 63), (200, 3, 3, 3), (9, 9, 9, 9)],
                         ids=lambda g: "x".join(map(str, g)))
@pytest.mark.parametrize("chunk", [64, 1000, None])
def test_correlate_tiles_cover_the_output(settings, geometry, mode, boundary, chunk):
    settings(chunk)
    rows, cols, mask_rows, mask_cols = geometry
    tiles, out_shape = correlate_tiles(rows, cols, mask_rows, mask_cols, mode, boundary)
    assert_partition([box for box, _ in tiles], out_shape)
    for box, inputs in tiles:
        assert inputs, box
        for o0, oc, k0, kc, i0, ic in inputs:  # the packed input lies inside the image
            assert (o0, oc) == (0, 1) and 0 <= k0 and k0 + kc <= rows and 0 <= i0 and i0 + ic <= cols
        # a tile reads at most its outputs plus the mask's halo (whole image axes when it spans them)
        _, _, _, kc, _, ic = box
        need_rows = rows if kc == out_shape[1] else kc + mask_rows - 1
        need_cols = cols if ic == out_shape[2] else ic + mask_cols - 1
        assert sum(count(i) for i in inputs) <= need_rows * need_cols


def copy_tiles(view):
    return _core.copy(view, view.shape, 0, TILES)


COPY_CASES = [((300, 500), (1, 0)), ((7, 1003), (1, 0)), ((64, 64, 64), (2, 0, 1)), ((5, 6, 7, 8), (3, 1, 2, 0)),
              ((4000,), (0,)), ((33, 1), (1, 0))]


@pytest.mark.parametrize("chunk", [64, 4096, None])
@pytest.mark.parametrize("shape,axes", COPY_CASES, ids=[f"{'x'.join(map(str, s))}-{a}" for s, a in COPY_CASES])
def test_copy_tiles_cover_the_output(settings, shape, axes, chunk):
    settings(chunk)
    a = np.zeros(shape, np.float32)
    view = a.transpose(axes)
    tiles = copy_tiles(view)
    total = sum(count(box) for box, _ in tiles)
    assert total == view.size
    boxes = [box for box, _ in tiles]
    outer = max(o0 + oc for o0, oc, *_ in boxes)
    n = max(k0 + kc for _, _, k0, kc, _, _ in boxes)
    inner = max(i0 + ic for *_, i0, ic in boxes)
    assert outer * n * inner == view.size
    assert_partition(boxes, (outer, n, inner))
    span = a.size  # the source is dense: every tile reads inside it
    for box, inputs in tiles:
        assert 0 < sum(count(i) for i in inputs) <= span


def test_copy_tiles_of_a_reversed_view(settings):
    settings(256)
    a = np.zeros((40, 50), np.float64)
    tiles = copy_tiles(a[::-1, ::-1].T)
    assert sum(count(box) for box, _ in tiles) == a.size
    assert len(tiles) >= 4
