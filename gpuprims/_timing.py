"""The one private timing hook, for the benchmark (``gpuprims.bench``).

``device_times(gpuprims.sum, a, repeats=20, device="cuda")`` plans the call exactly as the public
function does (a dry run, ``_plan.planned``) and times its work instead of running it once: on a
GPU, the input is uploaded once and each run of the device work (every launch and workspace
allocation of the call) is bracketed by CUDA events; on the CPU, each run of the backend is timed
with the host's monotonic clock.  One untimed run comes first.  A device-memcpy roofline is the
copy primitive on a contiguous array: ``device_times(gpuprims.transpose, a.reshape(-1), ...)``.
"""
from ._plan import planned


def device_times(function, *args, repeats, device="cuda", **kwargs):
    """Milliseconds of `repeats` runs of the work of ``function(*args, device=device, **kwargs)``.

    Parameters
    ----------
    function : callable
        A gpuprims computation (``gpuprims.sum``, ``gpuprims.convolve2d`` ...).
    *args, **kwargs
        Its arguments.
    repeats : int
        Timed runs (at least 1).
    device : str, optional
        Where to time: ``"cuda"``, ``"cuda:N"`` or ``"cpu"``.

    Returns
    -------
    numpy.ndarray
        float64 milliseconds, one per run.
    """
    if int(repeats) < 1:
        raise ValueError("repeats must be at least 1")
    return planned(function, *args, device=device, **kwargs).time(int(repeats))
