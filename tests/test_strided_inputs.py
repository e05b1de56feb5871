"""Strided and broadcast host views of row reductions and scans (the whole array, or along its last
axis): the CPU backend reads them in place, piece by piece, so they cost no copy of the view, and
give bit for bit the result of the same call on a contiguous copy.  On the GPU the streamed route
gathers them tile by tile into its pinned staging slots, and the short path's one upload takes a
contiguous copy (at most its crossover, a few MiB): the same bits again, the GPU's result on the
copy."""
import tracemalloc

import numpy as np
import pytest

import gpuprims
from gp_testutils import make_data

PIECE = 16384  # the CPU backend's piece (csrc/cpu/kernels.h): views around its multiples
SCANS = ["cumsum", "cumprod", "nancumsum", "cummax", "cummin"]
REDUCTIONS = ["sum", "prod", "min", "max", "argmin", "argmax", "any", "all", "count_nonzero", "mean", "var",
              "std", "nansum", "nanprod", "nanmin", "nanmax", "nanargmin", "nanargmax", "nanmean", "nanvar"]


def _views(a):
    """Views of the 2-D array a that are not C-contiguous: steps, reversals, a transpose, column
    slices, broadcasts (a row; a column and a scalar, whose zero-stride runs the gather fills)."""
    return {
        "rows stepped": a[::2],
        "columns stepped": a[:, ::3],
        "reversed": a[::-1, ::-1],
        "transposed": a.T,
        "column slice": a[:, 1:-1],
        "one column": a[:, 2],
        "stepped reversed row": a[1, ::-2],
        "broadcast row": np.broadcast_to(a[0, :7], (a.shape[0] * 3, min(a.shape[1], 7))),
        "broadcast column": np.broadcast_to(a[:, :1], (a.shape[0], 9)),
        "broadcast scalar": np.broadcast_to(a[0, 0], (2 * PIECE + 3,)),
    }


def _same(got, expected):
    """Bit for bit, of the same dtype."""
    got, expected = np.asarray(got), np.asarray(expected)
    assert got.dtype == expected.dtype
    assert got.tobytes() == expected.tobytes(), (got, expected)


# Where a result holds NaN these take NumPy's answer on the input as given (_reductions.py), and
# NumPy's own float sums depend on the layout: compared on data without NaN only.
NUMPY_WHERE_NOT_FINITE = {"var", "std", "nanmean", "nanvar"}


@pytest.mark.parametrize("with_nan", [False, True], ids=["numbers", "nan"])
@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "uint8", "float16", "int64", "bool"])
@pytest.mark.parametrize("shape", [(7, 5), (6, PIECE + 1), (3, 2 * PIECE - 1), (2 * PIECE + 5, 3)], ids=str)
def test_views_give_the_contiguous_copys_bits(device, rng, dtype, shape, with_nan):
    a = make_data(rng, dtype, shape)
    if with_nan:
        if a.dtype.kind != "f":
            pytest.skip("no NaN in integers")
        a.reshape(-1)[rng.integers(a.size, size=3)] = np.nan  # NaN in some pieces, not all
    for name, view in _views(a).items():
        copy = np.ascontiguousarray(view)
        for function in REDUCTIONS:
            if (a.dtype.kind != "f" and function.startswith("nan")) or (with_nan and function in NUMPY_WHERE_NOT_FINITE):
                continue
            for axis in (None, -1):
                with np.errstate(all="ignore"):
                    try:
                        expected = getattr(gpuprims, function)(copy, axis=axis, device=device)
                    except ValueError:  # an all-NaN slice of nanargmin/nanargmax
                        with pytest.raises(ValueError):
                            getattr(gpuprims, function)(view, axis=axis, device=device)
                        continue
                    got = getattr(gpuprims, function)(view, axis=axis, device=device)
                _same(got, expected)


@pytest.mark.parametrize("exclusive", [False, True])
@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "uint8", "float16", "bool"])
@pytest.mark.parametrize("shape", [(7, 5), (5, PIECE + 1), (2 * PIECE + 5, 3)], ids=str)
def test_scanned_views_give_the_contiguous_copys_bits(device, rng, dtype, shape, exclusive):
    a = make_data(rng, dtype, shape)
    if a.dtype.kind == "f":
        a.reshape(-1)[rng.integers(a.size, size=3)] = np.nan
    for name, view in _views(a).items():
        copy = np.ascontiguousarray(view)
        for axis in (None, -1):
            _same(gpuprims.prefix_sum(view, axis=axis, exclusive=exclusive, device=device),
                  gpuprims.prefix_sum(copy, axis=axis, exclusive=exclusive, device=device))
            for function in SCANS if not exclusive else ():
                if a.dtype.kind != "f" and function.startswith("nan"):
                    continue
                with np.errstate(all="ignore"):
                    _same(getattr(gpuprims, function)(view, axis=axis, device=device),
                          getattr(gpuprims, function)(copy, axis=axis, device=device))


@pytest.mark.parametrize("function", ["sum", "max", "argmin", "var", "count_nonzero"])
def test_views_agree_with_numpy(device, rng, function):
    a = make_data(rng, "float64", (9, 3 * PIECE + 7))
    for name, view in _views(a).items():
        for axis in (None, -1):
            expected = getattr(np, function)(view, axis=axis)
            got = getattr(gpuprims, function)(view, axis=axis, device=device)
            n = view.size if axis is None else view.shape[-1]
            atol = 1e-15 * n * np.abs(view).max()  # sums that cancel
            np.testing.assert_allclose(got, expected, rtol=1e-12, atol=atol, err_msg=f"{name} axis={axis}")


def _peak_bytes(call):
    call()  # the quick lane learns the call; then its replay is measured too
    tracemalloc.start()
    try:
        call()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


@pytest.mark.parametrize("function", ["sum", "max", "argmax", "mean"])
def test_views_are_read_without_a_copy(device, rng, function, monkeypatch):
    """A 32 MiB strided view and a 512 MiB broadcast one: no NumPy allocation beyond the result
    (a copy would be the view's size); on the GPU through the streamed route (forced: the short path
    copies views up to its crossover)."""
    monkeypatch.setenv("GPUPRIMS_STREAM_MIN_BYTES", "0")
    base = make_data(rng, "float32", (1 << 23,))
    for view in (base[::-1], base[::2], np.broadcast_to(base[:3], (1 << 27, 3))[:, 1]):
        for axis in (None, -1):
            assert _peak_bytes(lambda: getattr(gpuprims, function)(view, axis=axis, device=device)) < 1 << 16


@pytest.mark.parametrize("function", ["cumsum", "cummax"])
def test_scanned_views_are_read_without_a_copy(device, rng, function, monkeypatch):
    """The result is the only allocation (a copy of the view would double it)."""
    monkeypatch.setenv("GPUPRIMS_STREAM_MIN_BYTES", "0")
    base = make_data(rng, "float32", (1 << 22,))
    for view in (base[::-1], base.reshape(1024, -1)[:, ::2]):
        result_bytes = view.size * 4
        peak = _peak_bytes(lambda: getattr(gpuprims, function)(view, axis=None, device=device))
        assert peak < result_bytes + (1 << 16), (peak, result_bytes)


@pytest.mark.skipif(not gpuprims.cuda_available(), reason="CUDA not available")
@pytest.mark.parametrize("pinned", [False, True], ids=["pageable", "pinned base"])
@pytest.mark.parametrize("chunk_bytes", [None, 200, 4096], ids=["default tiles", "200 B tiles", "4 KiB tiles"])
@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "uint8", "float16"])
def test_streamed_views_give_the_contiguous_copys_bits(rng, dtype, chunk_bytes, pinned, monkeypatch):
    """The GPU's streamed route gathers each tile of the view (tiles cut rows, parts of a tile's copy
    cut runs, a pinned base is still gathered) and gives the contiguous copy's streamed bits."""
    device = "cuda"
    monkeypatch.setenv("GPUPRIMS_STREAM_MIN_BYTES", "0")
    if chunk_bytes is not None:
        monkeypatch.setenv("GPUPRIMS_STREAM_CHUNK_BYTES", str(chunk_bytes))
    shape = (3, 2 * PIECE + 5) if chunk_bytes is not None else (5, (1 << 20) + 3)  # 1 MiB tiles: copy parts
    a = make_data(rng, dtype, shape)
    if pinned:
        a = gpuprims.pinned_copy(a)
    if a.dtype.kind == "f":
        a.reshape(-1)[rng.integers(a.size, size=3)] = np.nan
    for name, view in _views(a).items():
        copy = np.ascontiguousarray(view)
        for axis in (None, -1):
            with np.errstate(all="ignore"):
                for function in ("sum", "max", "argmin", "cumsum", "cummax"):
                    _same(getattr(gpuprims, function)(view, axis=axis, device=device),
                          getattr(gpuprims, function)(copy, axis=axis, device=device))
                _same(gpuprims.prefix_sum(view, axis=axis, exclusive=True, device=device),
                      gpuprims.prefix_sum(copy, axis=axis, exclusive=True, device=device))


def test_misaligned_and_byteswapped_views_still_copied(rng):
    """Views the CPU loops cannot read in place (unaligned, other byte order) are copied first, with
    the same results."""
    a = make_data(rng, "float64", (4001,))
    raw = np.zeros(a.nbytes + 1, np.uint8)
    unaligned = raw[1:].view(np.float64)
    unaligned[:] = a
    swapped = a.astype(a.dtype.newbyteorder())
    for view, copy in ((unaligned[::3], a[::3].copy()), (swapped[::-2], a[::-2].copy())):
        for function in ("sum", "argmax", "var"):
            _same(getattr(gpuprims, function)(view, device="cpu"), getattr(gpuprims, function)(copy, device="cpu"))
