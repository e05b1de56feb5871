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


def test_empty_pinned_rejects_negative():
    with pytest.raises(ValueError):
        gpuprims.empty_pinned((2, -1), np.float32)


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
