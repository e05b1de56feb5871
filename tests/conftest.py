import os
import sys
import zlib

# NumPy's 1-D correlation makes one BLAS dot per output; with a multithreaded OpenBLAS every long
# dot wakes its threads, and under pytest-xdist on a many-core host (15 workers x 16 threads) one
# test's 20011 x 10007 reference took 88 s (H200 host) or more than 150 s (H100 host) instead of
# 0.03 s.  Set before NumPy loads its BLAS; an explicit setting wins.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402
import pytest

# make tests/gp_testutils.py importable whatever pytest's import mode is
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import gpuprims  # noqa: E402
import gp_testutils  # noqa: E402


@pytest.fixture(params=["cpu", "cuda"], ids=["cpu", "cuda"])
def device(request):
    if request.param == "cuda" and not gpuprims.cuda_available():
        pytest.skip("CUDA not available")
    return request.param


@pytest.fixture
def rng(request):
    """A fresh numpy Generator per test, seeded from the test's node id so
    that each test (and each parametrization) is reproducible."""
    seed = zlib.crc32(request.node.nodeid.encode("utf-8"))
    return np.random.default_rng(seed)


@pytest.fixture
def make_data(rng):
    """make_data(dtype, shape, kind="sum"|"prod"|"minmax") -> random ndarray."""
    def _make(dtype, shape, kind="sum"):
        return gp_testutils.make_data(rng, dtype, shape, kind)
    return _make


@pytest.fixture(autouse=True)
def _no_device_env(monkeypatch):
    """Tests pass device= explicitly; make sure a stray GPUPRIMS_DEVICE in the
    environment of whoever runs the suite does not change the default."""
    monkeypatch.delenv("GPUPRIMS_DEVICE", raising=False)


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "large: multi-GB GPU test, runs only with GPUPRIMS_TEST_LARGE=1")
