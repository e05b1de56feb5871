"""The streaming path for host arrays (cuda/pipeline.cu) and pinned host arrays.

Streaming is forced on small arrays through the environment (read on every call):
GPUPRIMS_STREAM_MIN_BYTES=0 streams every host call, GPUPRIMS_STREAM_CHUNK_BYTES sets the input
bytes per tile (tiny here, so arrays are cut into many tiles and slabs into rows and column
blocks), GPUPRIMS_MAX_DEVICE_BYTES caps the device memory of a call, GPUPRIMS_STREAM_FAIL_TILE
makes a streamed call fail at a tile.  Results must match NumPy as the short path's do (integers
bit-exact, floats within the summation bound).
"""
import threading

import numpy as np
import pytest

import gpuprims
from gp_testutils import ALL_DTYPES, check_reduce, check_scan, data_kind, gp_call, make_data

cuda = pytest.mark.skipif(not gpuprims.cuda_available(), reason="CUDA not available")

# Input bytes per tile: one or two elements, an odd size that cuts rows, whole slabs.
CHUNKS = [8, 200, 4096]

REDUCE_CASES = [((1009,), None), ((37, 53), 0), ((37, 53), 1), ((5, 7, 11), (0, 2)),
                ((5, 7, 11), 1), ((3, 4, 5), (1, 2)), ((3, 4, 5), (0, 1)), ((2, 3, 4, 5), (1, 3))]
SCAN_CASES = [((1009,), None), ((37, 53), 0), ((37, 53), 1), ((5, 7, 11), 0), ((5, 7, 11), 1),
              ((5, 7, 11), 2)]


def _ids(cases):
    return ["x".join(map(str, shape)) + f"-ax{axis}".replace(" ", "") for shape, axis in cases]


@pytest.fixture
def streamed(monkeypatch):
    """stream(chunk_bytes, max_device_bytes=None): force the streaming path from now on."""
    def stream(chunk_bytes=None, max_device_bytes=None):
        monkeypatch.setenv("GPUPRIMS_STREAM_MIN_BYTES", "0")
        for name, value in (("GPUPRIMS_STREAM_CHUNK_BYTES", chunk_bytes),
                            ("GPUPRIMS_MAX_DEVICE_BYTES", max_device_bytes)):
            if value is None:
                monkeypatch.delenv(name, raising=False)
            else:
                monkeypatch.setenv(name, str(value))
    return stream


@cuda
@pytest.mark.parametrize("chunk", CHUNKS)
@pytest.mark.parametrize("shape,axis", REDUCE_CASES, ids=_ids(REDUCE_CASES))
@pytest.mark.parametrize("name", ["sum", "prod", "min", "max", "mean"])
@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_reduce_streamed(streamed, rng, dtype, name, shape, axis, chunk):
    a = make_data(rng, dtype, shape, data_kind(name))
    streamed(chunk)
    check_reduce(name, a, gp_call(name, a, "cuda", axis=axis), axis=axis)


@cuda
@pytest.mark.parametrize("chunk", CHUNKS)
@pytest.mark.parametrize("exclusive", [False, True])
@pytest.mark.parametrize("shape,axis", SCAN_CASES, ids=_ids(SCAN_CASES))
@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_scan_streamed(streamed, rng, dtype, shape, axis, exclusive, chunk):
    a = make_data(rng, dtype, shape)
    streamed(chunk)
    check_scan(a, gp_call("prefix_sum", a, "cuda", axis=axis, exclusive=exclusive), axis=axis,
               exclusive=exclusive)


@cuda
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_streamed_float_scans_give_the_same_bits_every_run(streamed, rng, dtype):
    """Tiles of 2^16 elements, each several scan tiles long, carried from one to the next: the
    same bits every run (issue 18)."""
    a = make_data(rng, dtype, (2, 2**19 + 5))
    streamed(2**16 * a.itemsize)
    first = gpuprims.prefix_sum(a, device="cuda").tobytes()
    for _ in range(8):
        assert gpuprims.prefix_sum(a, device="cuda").tobytes() == first


@cuda
@pytest.mark.parametrize("offset", [-1, 0, 1])
@pytest.mark.parametrize("tiles", [1, 2, 3, 7])
@pytest.mark.parametrize("dtype", ["int32", "float32", "float16", "uint8"])
def test_chunk_boundaries(streamed, rng, dtype, tiles, offset):
    """Sizes one element either side of whole tiles: where a carry or a partial is lost."""
    chunk = 16384
    n = tiles * chunk // np.dtype(dtype).itemsize + offset
    a = make_data(rng, dtype, (n,))
    streamed(chunk)
    check_scan(a, gpuprims.prefix_sum(a, device="cuda"))
    check_scan(a, gpuprims.prefix_sum(a, exclusive=True, device="cuda"), exclusive=True)
    check_reduce("sum", a, gpuprims.sum(a, device="cuda"))
    check_reduce("max", a, gpuprims.max(a, device="cuda"))


@cuda
@pytest.mark.parametrize("dtype", ["int64", "float32"])
def test_array_larger_than_device_cap(streamed, rng, dtype):
    """A 4 MiB input under a 1 MiB device cap: the short path cannot run, the stream must."""
    a = make_data(rng, dtype, (1 << 20) // np.dtype(dtype).itemsize * 4 + 7)
    streamed(max_device_bytes=1 << 20)
    check_reduce("sum", a, gpuprims.sum(a, device="cuda"))
    check_reduce("min", a, gpuprims.min(a, device="cuda"))
    check_scan(a, gpuprims.prefix_sum(a, device="cuda"))
    b = a[: a.size // 509 * 509].reshape(-1, 509)
    check_reduce("sum", b, gpuprims.sum(b, axis=0, device="cuda"), axis=0)
    check_scan(b, gpuprims.prefix_sum(b, axis=0, device="cuda"), axis=0)


@cuda
def test_cap_decides_without_forcing(monkeypatch, rng):
    """With only the cap set, a small array that fits takes the short path and one that does
    not fit streams; both are right."""
    monkeypatch.setenv("GPUPRIMS_MAX_DEVICE_BYTES", str(64 << 10))
    for n in (1000, 100_003):
        a = make_data(rng, "int32", (n,))
        check_scan(a, gpuprims.prefix_sum(a, device="cuda"))
        check_reduce("sum", a, gpuprims.sum(a, device="cuda"))


@cuda
def test_cap_too_small_is_memory_error(streamed, rng):
    a = make_data(rng, "float64", (1000,))
    streamed(max_device_bytes=16)
    with pytest.raises(MemoryError, match="GPUPRIMS_MAX_DEVICE_BYTES"):
        gpuprims.sum(a, device="cuda")
    streamed(chunk_bytes=512)
    check_reduce("sum", a, gpuprims.sum(a, device="cuda"))


@cuda
@pytest.mark.parametrize("fail_tile", [0, 3, 40])
def test_failure_mid_stream_then_next_call_works(streamed, monkeypatch, rng, fail_tile):
    a = make_data(rng, "int32", (50_000,))
    streamed(4096)
    monkeypatch.setenv("GPUPRIMS_STREAM_FAIL_TILE", str(fail_tile))
    for call in (lambda: gpuprims.sum(a, device="cuda"), lambda: gpuprims.prefix_sum(a, device="cuda"),
                 lambda: gpuprims.sum(a.reshape(-1, 100), axis=0, device="cuda")):
        with pytest.raises(RuntimeError, match="GPUPRIMS_STREAM_FAIL_TILE"):
            call()
    monkeypatch.delenv("GPUPRIMS_STREAM_FAIL_TILE")
    check_scan(a, gpuprims.prefix_sum(a, device="cuda"))
    check_reduce("sum", a, gpuprims.sum(a, device="cuda"))
    before = gpuprims.memory_info()["in_use"]
    gpuprims.prefix_sum(a, device="cuda")
    assert gpuprims.memory_info()["in_use"] == before  # no device buffer left behind


@cuda
def test_two_threads_stream_at_once(streamed, rng):
    streamed(8192)
    inputs = [make_data(rng, dtype, (200_003,)) for dtype in ("int32", "float64")]
    errors = []

    def work(a):
        try:
            for _ in range(4):
                check_scan(a, gpuprims.prefix_sum(a, device="cuda"))
                check_reduce("sum", a, gpuprims.sum(a, device="cuda"))
                b = a[:200_000].reshape(400, 500)
                check_reduce("max", b, gpuprims.max(b, axis=0, device="cuda"), axis=0)
        except BaseException as error:  # reported by the main thread
            errors.append(error)

    threads = [threading.Thread(target=work, args=(a,)) for a in inputs]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors, errors


@cuda
def test_streamed_results_are_pinned_and_independent(streamed, rng):
    """Large streamed results live in cached pinned blocks: each result keeps its own block while
    alive, and a block reused after its result died is fully rewritten."""
    streamed(1 << 16)
    a, b = make_data(rng, "int32", (300_007,)), make_data(rng, "int32", (300_007,))
    first = gpuprims.prefix_sum(a, device="cuda")  # int64: 2.4 MB
    second = gpuprims.prefix_sum(b, device="cuda")
    assert gpuprims.is_pinned(first) and gpuprims.is_pinned(second)
    check_scan(a, first)
    check_scan(b, second)
    del first
    third = gpuprims.prefix_sum(a[::-1], device="cuda")
    check_scan(a[::-1], third)
    check_scan(b, second)
    small = gpuprims.prefix_sum(a[:1000], device="cuda")
    assert not gpuprims.is_pinned(small)
    del third
    gpuprims.empty_cache()  # frees the cached blocks; live results keep theirs
    check_scan(b, second)
    check_scan(a, gpuprims.prefix_sum(a, device="cuda"))


@cuda
def test_pinned_results_at_once_stay_within_the_cache(streamed, rng):
    """Results alive at once hold at most the pinned cache's GiB: a fifth streamed 256 MiB result
    gets pageable memory rather than a fresh pinned block (0.1 s to pin), and the blocks come back
    for reuse when the results die."""
    streamed()
    gpuprims.empty_cache()
    a = make_data(rng, "float32", (1 << 26,))
    results = [gpuprims.prefix_sum(a, device="cuda") for _ in range(5)]
    assert [gpuprims.is_pinned(r) for r in results] == [True] * 4 + [False]
    check_scan(a, results[-1])
    del results
    again = gpuprims.prefix_sum(a, device="cuda")
    assert gpuprims.is_pinned(again)
    check_scan(a, again)
    del again
    gpuprims.empty_cache()


# ---- pinned arrays ------------------------------------------------------------------------------

@pytest.mark.parametrize("shape", [(), 0, 7, (3, 0), (4, 5, 6)])
@pytest.mark.parametrize("dtype", ["uint8", "float32", "complex128"])
def test_empty_pinned_shape_dtype(shape, dtype):
    a = gpuprims.empty_pinned(shape, dtype)
    expected = np.empty(shape, dtype)
    assert a.shape == expected.shape and a.dtype == expected.dtype
    assert a.flags.c_contiguous and a.flags.writeable
    a[...] = 1
    assert np.all(a == 1)
    assert gpuprims.is_pinned(a) == (gpuprims.cuda_available() and a.size > 0)


def test_pinned_like_and_copy(rng):
    a = make_data(rng, "int16", (9, 11))[:, ::2]
    like = gpuprims.pinned_like(a)
    assert like.shape == a.shape and like.dtype == a.dtype
    copy = gpuprims.pinned_copy(a)
    assert np.array_equal(copy, a) and copy.flags.c_contiguous
    assert gpuprims.is_pinned(copy) == gpuprims.cuda_available()
    assert not gpuprims.is_pinned(a)


def test_empty_pinned_rejects_bad_arguments():
    """As numpy.empty, except that object dtypes are refused everywhere (pinned memory holds bytes)."""
    with pytest.raises(ValueError):
        gpuprims.empty_pinned((2, -1), np.float32)
    for shape in (2.0, (3, 1.5), "3"):
        with pytest.raises(TypeError):
            np.empty(shape)
        with pytest.raises(TypeError):
            gpuprims.empty_pinned(shape)
    for dtype in (object, [("name", "U3"), ("value", object)]):
        with pytest.raises(TypeError, match="Python objects"):
            gpuprims.empty_pinned(4, dtype)
    assert gpuprims.empty_pinned(np.array([2, 3]), "f4").shape == (2, 3)


@cuda
def test_pinned_view_outlives_its_base(rng):
    view = gpuprims.pinned_copy(make_data(rng, "float64", (1000,)))[10:500]
    expected = view.copy()
    assert gpuprims.is_pinned(view)
    check_reduce("sum", expected, gpuprims.sum(view, device="cuda"))


@cuda
@pytest.mark.parametrize("chunk", [200, 65536, None])
@pytest.mark.parametrize("dtype", ["float32", "int64", "float16"])
def test_pinned_inputs_streamed(streamed, rng, dtype, chunk):
    """Pinned inputs skip staging: whole, column-block (2-D copies) and offset views."""
    base = gpuprims.pinned_copy(make_data(rng, dtype, (301, 257)))
    streamed(chunk)
    for a in (base, base[1:], base[:, 3:]):
        pinned_input = a if a.flags.c_contiguous else None
        if pinned_input is not None:
            assert gpuprims.is_pinned(pinned_input)
        for axis in (None, 0, 1):
            check_reduce("sum", a, gpuprims.sum(a, axis=axis, device="cuda"), axis=axis)
            check_reduce("max", a, gpuprims.max(a, axis=axis, device="cuda"), axis=axis)
            check_scan(a, gpuprims.prefix_sum(a, axis=axis, device="cuda"), axis=axis)


# ---- convolution and transpose ------------------------------------------------------------------
#
# A streamed convolution launches the same kernels on tiles of rows (or blocks of rows by columns)
# with their halo, and a streamed transpose the same copy on blocks, so their results must be
# bit-identical to the short path's (which tests/test_convolve.py and tests/test_transpose.py check against SciPy and NumPy).

def _same_bytes(got, want, what):
    assert got.dtype == want.dtype and got.shape == want.shape, what
    assert got.tobytes() == want.tobytes(), f"{what}: streamed result differs from the short path's"


def _short_then_streamed(streamed, call, chunk, max_device_bytes=None):
    """call() on the short path (streaming switched off), then streamed: both results."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("GPUPRIMS_STREAM_MIN_BYTES", str(1 << 60))
        patch.delenv("GPUPRIMS_MAX_DEVICE_BYTES", raising=False)
        want = call()
    streamed(chunk, max_device_bytes)
    return call(), want


# Images and masks: masks taller or wider than the image (wrap and symm reach around it more than
# once), one-row masks (the row kernel), the unrolled square masks and runtime-shaped ones.
IMAGE_MASKS = [((37, 53), (3, 3)), ((37, 53), (5, 5)), ((29, 16), (4, 7)), ((41, 33), (1, 6)),
               ((11, 40), (9, 2)), ((6, 23), (13, 3)), ((1, 97), (3, 4)), ((2, 5), (7, 7))]


@cuda
@pytest.mark.parametrize("chunk", [8, 700, 4096])
@pytest.mark.parametrize("boundary", ["fill", "wrap", "symm"])
@pytest.mark.parametrize("mode", ["full", "same", "valid"])
@pytest.mark.parametrize("shapes", IMAGE_MASKS, ids=lambda s: f"{s[0][0]}x{s[0][1]}-{s[1][0]}x{s[1][1]}")
@pytest.mark.parametrize("name", ["convolve2d", "correlate2d"])
def test_convolve2d_streamed(streamed, rng, name, shapes, mode, boundary, chunk):
    image, mask = make_data(rng, "float32", shapes[0]), make_data(rng, "float32", shapes[1])
    if mode == "valid" and (mask.shape[0] > image.shape[0] or mask.shape[1] > image.shape[1]):
        mask = mask[: image.shape[0], : image.shape[1]]
    call = lambda: getattr(gpuprims, name)(image, mask, mode, boundary, 1.5, device="cuda")  # noqa: E731
    got, want = _short_then_streamed(streamed, call, chunk)
    _same_bytes(got, want, f"{name} {shapes} {mode} {boundary} chunk {chunk}")


@cuda
@pytest.mark.parametrize("boundary", ["fill", "wrap", "symm"])
@pytest.mark.parametrize("dtype", [d for d in ALL_DTYPES if d not in ("bool", "float16")])  # SciPy's
def test_convolve2d_streamed_dtypes(streamed, rng, dtype, boundary):
    image, mask = make_data(rng, dtype, (45, 67)), make_data(rng, dtype, (5, 5))
    call = lambda: gpuprims.convolve2d(image, mask, "same", boundary, device="cuda")  # noqa: E731
    for chunk in (1, 3 * 67 * np.dtype(dtype).itemsize):
        got, want = _short_then_streamed(streamed, call, chunk)
        _same_bytes(got, want, f"{dtype} {boundary} chunk {chunk}")


@cuda
@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_convolve_streamed_dtypes(streamed, rng, dtype):
    a, v = make_data(rng, dtype, (3001,)), make_data(rng, dtype, (9,))
    call = lambda: gpuprims.convolve(a, v, "same", device="cuda")  # noqa: E731
    for chunk in (1, 100 * np.dtype(dtype).itemsize):
        got, want = _short_then_streamed(streamed, call, chunk)
        _same_bytes(got, want, f"{dtype} chunk {chunk}")


# (n, m, chunk): one sample per tile, masks longer than a tile, tiles of thousands of samples.
SIGNALS = [(1, 1, 4), (2, 5, 4), (1009, 7, 4), (1009, 7, 1000), (2003, 64, 100), (3001, 2500, 1000),
           (5003, 64, 16384), (40_000, 1, 16384)]


@cuda
@pytest.mark.parametrize("mode", ["full", "same", "valid"])
@pytest.mark.parametrize("n,m,chunk", SIGNALS, ids=["x".join(map(str, c)) for c in SIGNALS])
@pytest.mark.parametrize("name", ["convolve", "correlate"])
def test_convolve_1d_streamed(streamed, rng, name, n, m, chunk, mode):
    """Tiles of samples: the halo crosses several tiles when the mask is longer than a tile."""
    for dtype in ("float32", "int16", "float64"):
        a, v = make_data(rng, dtype, (n,)), make_data(rng, dtype, (m,))
        call = lambda: getattr(gpuprims, name)(a, v, mode, device="cuda")  # noqa: E731
        got, want = _short_then_streamed(streamed, call, chunk)
        _same_bytes(got, want, f"{name} n={n} m={m} {mode} {dtype} chunk {chunk}")


@cuda
@pytest.mark.parametrize("boundary", ["wrap", "symm"])
@pytest.mark.parametrize("n,m", [(1009, 7), (20, 45), (3, 8)])
def test_signal_rows_wrap_and_symm_streamed(streamed, rng, n, m, boundary):
    """One-row images under one-row masks stream along the samples; wrap and symm gather them."""
    image, mask = make_data(rng, "float32", (1, n)), make_data(rng, "float32", (1, m))
    for mode in ("full", "same"):
        call = lambda: gpuprims.correlate2d(image, mask, mode, boundary, device="cuda")  # noqa: E731
        for chunk in (4, 64):
            got, want = _short_then_streamed(streamed, call, chunk)
            _same_bytes(got, want, f"1x{n} mask 1x{m} {mode} {boundary} chunk {chunk}")


TRANSPOSE_CASES = [((37, 53), None), ((5, 7, 11), (2, 0, 1)), ((5, 7, 11), (1, 2, 0)), ((3, 4, 5, 6), (3, 1, 0, 2)),
                   ((2, 1, 9), (2, 0, 1)), ((1009,), None), ((4, 5, 6), (0, 1, 2))]


@cuda
@pytest.mark.parametrize("chunk", [1, 100, 4096])
@pytest.mark.parametrize("shape,axes", TRANSPOSE_CASES, ids=_ids(TRANSPOSE_CASES))
@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_transpose_streamed(streamed, rng, dtype, shape, axes, chunk):
    a = make_data(rng, dtype, shape)
    streamed(chunk)
    got = gpuprims.transpose(a, axes, device="cuda")
    assert got.tobytes() == np.ascontiguousarray(np.transpose(a, axes)).tobytes()


@cuda
@pytest.mark.parametrize("chunk", [1, 333, 8192])
def test_transpose_views_streamed(streamed, rng, chunk):
    """Reversed, stepped, broadcast and byte-swapped sources (negative and zero strides)."""
    base = make_data(rng, "int32", (40, 70, 9))
    plane = base[:, :, 0]
    cases = [plane[::-1], plane[:, ::-1], plane[::-3, ::-2], base[1::2, ::-5, 2::3], plane.T,
             np.broadcast_to(plane[:1], (50, 70)), np.broadcast_to(plane[:, None, :5], (40, 3, 5)),
             plane.astype(">i4"), np.asfortranarray(plane), base[0, 0, 0]]
    streamed(chunk)
    for a in cases:
        for axes in (None, tuple(range(a.ndim))):
            got = gpuprims.transpose(a, axes, device="cuda")
            want = np.ascontiguousarray(np.transpose(a, axes))
            assert got.dtype == want.dtype and got.tobytes() == want.tobytes(), (a.shape, a.strides, axes)


@cuda
def test_convolve_and_transpose_larger_than_device_cap(streamed, rng):
    """Inputs of 1-4 MiB under a 256 KiB device cap: only the stream can run them."""
    image, mask = make_data(rng, "float32", (700, 500)), make_data(rng, "float32", (5, 5))
    signal, taps = make_data(rng, "float64", (300_001,)), make_data(rng, "float64", (9,))
    matrix = make_data(rng, "float32", (1031, 997))
    calls = {"convolve2d": lambda: gpuprims.convolve2d(image, mask, "same", "symm", device="cuda"),
             "convolve": lambda: gpuprims.convolve(signal, taps, device="cuda")}
    for what, call in calls.items():
        got, want = _short_then_streamed(streamed, call, None, max_device_bytes=256 << 10)
        _same_bytes(got, want, what)
    streamed(max_device_bytes=256 << 10)
    assert gpuprims.transpose(matrix, device="cuda").tobytes() == matrix.T.copy().tobytes()
    streamed(max_device_bytes=16)  # not even one element in and one out per slot
    with pytest.raises(MemoryError, match="GPUPRIMS_MAX_DEVICE_BYTES"):
        gpuprims.transpose(matrix, device="cuda")
    with pytest.raises(MemoryError, match="GPUPRIMS_MAX_DEVICE_BYTES"):
        gpuprims.convolve2d(image, mask, device="cuda")


@cuda
@pytest.mark.parametrize("boundary", ["fill", "wrap", "symm"])
@pytest.mark.parametrize("mode", ["full", "same", "valid"])
@pytest.mark.parametrize("mask_shape", [(3, 3), (4, 5), (2, 9)])
def test_convolve2d_wide_rows_under_device_cap(streamed, rng, mask_shape, mode, boundary):
    """Rows of 120 KB under a 64 KiB device cap: tiles cut the columns too, gathering the
    wrapped or mirrored columns at the image's left and right edges."""
    image, mask = make_data(rng, "float32", (7, 30_011)), make_data(rng, "float32", mask_shape)
    call = lambda: gpuprims.correlate2d(image, mask, mode, boundary, -2.5, device="cuda")  # noqa: E731
    got, want = _short_then_streamed(streamed, call, None, max_device_bytes=64 << 10)
    _same_bytes(got, want, f"{mask_shape} {mode} {boundary}")


@cuda
@pytest.mark.parametrize("shape,axes", [((3, 100_003), None), ((100_003, 3), None), ((2, 5, 40_009), (2, 0, 1)),
                                        ((40_009, 2, 5), (1, 2, 0))])
def test_transpose_wide_rows_under_device_cap(streamed, rng, shape, axes):
    """Rows far wider than a 64 KiB device cap: blocks cut them too."""
    a = make_data(rng, "float32", shape)
    streamed(max_device_bytes=64 << 10)
    want = np.ascontiguousarray(np.transpose(a, axes))
    for source in (a, gpuprims.pinned_copy(a)):
        assert gpuprims.transpose(source, axes, device="cuda").tobytes() == want.tobytes()


@cuda
@pytest.mark.parametrize("chunk", [4096, 1 << 16])
def test_transpose_pinned_blocks(streamed, rng, chunk):
    """Pinned sources, reversed and stepped, and results of 1 MiB and more (pinned themselves) whose
    blocks are runs of rows of slabs: the copy engines move every kind of box."""
    a = make_data(rng, "float32", (64, 67, 65))
    source = gpuprims.pinned_copy(a)
    streamed(chunk)
    for view, axes in ((source, (2, 1, 0)), (source, (1, 2, 0)), (source[::-1, :, ::-1], (2, 0, 1)),
                       (source[:, ::-2], (2, 1, 0)), (source.reshape(64 * 67, 65), None)):
        got = gpuprims.transpose(view, axes, device="cuda")
        want = np.ascontiguousarray(np.transpose(view, axes))
        assert got.tobytes() == want.tobytes(), (view.shape, view.strides, axes)
    assert gpuprims.is_pinned(gpuprims.transpose(source, (2, 1, 0), device="cuda"))


@cuda
@pytest.mark.parametrize("fail_tile", [0, 5])
def test_convolve_and_transpose_failure_mid_stream(streamed, monkeypatch, rng, fail_tile):
    image, mask = make_data(rng, "float32", (300, 200)), make_data(rng, "float32", (3, 3))
    matrix = make_data(rng, "int16", (300, 500))
    calls = [lambda: gpuprims.convolve2d(image, mask, device="cuda"),
             lambda: gpuprims.convolve(image.ravel(), mask[0], device="cuda"),
             lambda: gpuprims.transpose(matrix, device="cuda")]
    wants = [call() for call in calls]
    streamed(4096)
    monkeypatch.setenv("GPUPRIMS_STREAM_FAIL_TILE", str(fail_tile))
    for call in calls:
        with pytest.raises(RuntimeError, match="GPUPRIMS_STREAM_FAIL_TILE"):
            call()
    monkeypatch.delenv("GPUPRIMS_STREAM_FAIL_TILE")
    before = gpuprims.memory_info()["in_use"]
    for call, want in zip(calls, wants):
        _same_bytes(call(), want, "after a failed stream")
    assert gpuprims.memory_info()["in_use"] == before  # no device buffer left behind


@cuda
@pytest.mark.parametrize("chunk", [200, 65536])
def test_convolve_and_transpose_pinned_streamed(streamed, rng, chunk):
    """Pinned inputs go straight to the device, pinned results straight back (2-D copies for the
    panels of a transpose); large streamed results are pinned themselves."""
    image = gpuprims.pinned_copy(make_data(rng, "float32", (301, 257)))
    mask = make_data(rng, "float32", (5, 5))
    calls = [lambda: gpuprims.correlate2d(image, mask, "same", "wrap", device="cuda"),
             lambda: gpuprims.convolve(image[7], mask[0], device="cuda"),
             lambda: gpuprims.transpose(image, device="cuda"),
             lambda: gpuprims.transpose(image.reshape(7, 43, 257), (2, 0, 1), device="cuda")]
    for call in calls:
        got, want = _short_then_streamed(streamed, call, chunk)
        _same_bytes(got, want, f"pinned chunk {chunk}")
    streamed(1 << 16)
    big = make_data(rng, "float32", (700, 600))  # 1.7 MB result
    assert gpuprims.is_pinned(gpuprims.transpose(big, device="cuda"))
    assert gpuprims.is_pinned(gpuprims.convolve2d(big, mask, "same", device="cuda"))
