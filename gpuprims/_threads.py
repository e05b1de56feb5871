"""The CPU backend's threads: ``set_num_threads`` and ``get_num_threads``.

The CPU backend runs large calls on a pool of host threads created once per process (the
streaming engine's staging copies on GPU machines use the same pool).  Its size defaults to the
cores this process may run on (``os.sched_getaffinity``), or to ``GPUPRIMS_NUM_THREADS`` when that
is set (read once, at the first call that needs the pool).  Results do not depend on it: work is
cut into fixed pieces whose partial results are combined in a fixed order, so floats come out
bit-identical with 1 thread or 16.
"""
import operator

from . import _core

MAX_THREADS = 256


def set_num_threads(n):
    """Set how many threads the CPU backend may use.

    Parameters
    ----------
    n : int
        From 1 (every call on the calling thread) to 256.  More than the cores available is
        allowed (the threads then share them).

    Raises
    ------
    TypeError
        When `n` is not an integer (bools are refused too).
    ValueError
        When `n` is below 1 or above 256.

    Notes
    -----
    Calls smaller than the backend's parallel threshold (about 128 KiB of input) run on the
    calling thread whatever `n` is.  The setting applies to the whole process and overrides
    ``GPUPRIMS_NUM_THREADS``; a call running meanwhile on another thread finishes first.
    """
    if isinstance(n, bool):
        raise TypeError("the number of threads must be an integer, not bool")
    try:
        count = operator.index(n)
    except TypeError:
        raise TypeError(f"the number of threads must be an integer, not {type(n).__name__}") from None
    if not 1 <= count <= MAX_THREADS:
        raise ValueError(f"the number of threads must be from 1 to {MAX_THREADS}, not {count}")
    _core.set_num_threads(count)


def get_num_threads():
    """How many threads the CPU backend may use.

    Returns
    -------
    int
        The last :func:`set_num_threads` value, else ``GPUPRIMS_NUM_THREADS``, else the number of
        cores this process may run on (``len(os.sched_getaffinity(0))``).
    """
    return _core.get_num_threads()
