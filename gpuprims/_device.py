"""Devices: which GPUs gpuprims can use, and what a ``device=`` argument names.

A device is ``"cpu"``, ``"cuda"`` (GPU 0) or ``"cuda:N"``.  ``device=None`` means the environment
variable ``GPUPRIMS_DEVICE`` when it is set, else *auto*: each call on host data runs where it
finishes first (the CPU backend or GPU 0, as the planner's cost model says), and calls on
device-resident data run on their GPU.  Internally the CPU is index -1, auto -2 and GPU N is N.
"""
import functools

from . import _core

CPU = -1
AUTO = -2


class DeviceUnavailableError(RuntimeError, ValueError):
    """A CUDA device was requested but no usable GPU (or no CUDA build) is present."""


@functools.lru_cache(maxsize=None)
def _cuda_device_count():
    """(number of usable GPUs, why there are none or None), asked once per process."""
    return _core.cuda_device_count()


def cuda_available():
    """Whether gpuprims can run on a GPU here.

    Returns
    -------
    bool
        True when the extension was built with CUDA and at least one usable GPU is present.
    """
    return _cuda_device_count()[0] > 0


def device_info():
    """Describe the CUDA devices gpuprims can use, or why it can use none.

    Returns
    -------
    dict
        ``available`` (bool), ``reason`` (str, only when unavailable), ``devices`` (a list of
        dicts with ``index``, ``name``, ``compute_capability``, ``total_memory`` in bytes and
        ``multiprocessors``), ``driver_version`` and ``runtime_version`` (CUDA versions as
        integers such as 13000, None when unknown).
    """
    count, reason = _cuda_device_count()
    info = {"available": count > 0, "devices": [], "driver_version": None, "runtime_version": None}
    if count == 0:
        info["reason"] = reason
        return info
    for index in range(count):
        props = _core.cuda_device_properties(index)
        info["driver_version"] = props.pop("driver_version")
        info["runtime_version"] = props.pop("runtime_version")
        info["devices"].append(props)
    return info


def _parse(device, source):
    if not isinstance(device, str):
        raise TypeError(f"device must be a str such as 'cpu', 'cuda' or 'cuda:0', not {type(device).__name__}")
    text = device.strip().lower()
    if text == "cpu":
        return CPU
    if text == "cuda":
        index = 0
    elif text.startswith("cuda:") and text[5:].isdigit():
        index = int(text[5:])
    else:
        raise ValueError(f"unknown device {device!r}{source}: use 'cpu', 'cuda' or 'cuda:N'")
    count, reason = _cuda_device_count()
    if count == 0:
        raise DeviceUnavailableError(f"device {device!r}{source} requested but CUDA is unavailable: {reason}")
    if index >= count:
        raise ValueError(f"device {device!r}{source} does not exist: {count} CUDA device(s) available")
    return index


def default_index():
    """The backend index of device None without GPUPRIMS_DEVICE: auto with a usable GPU, else the
    CPU."""
    return AUTO if cuda_available() else CPU


_resolved = {}  # device strings already parsed: every call names its device again


def resolve_device(device):
    """The backend index for a ``device=`` argument: -1 for the CPU, N for GPU N, and for None
    ``GPUPRIMS_DEVICE`` or else -2 (auto) when a GPU is usable, -1 when not."""
    if device is None:
        device = _core.device_setting()
        if device is None:
            return default_index()
        source = " (from GPUPRIMS_DEVICE)"
    else:
        source = ""
    index = _resolved.get(device) if type(device) is str else None
    if index is None:
        index = _parse(device, source)
        _resolved[device] = index
    return index


def concrete_device(device):
    """The backend index of a call that needs one device: auto means GPU 0 (``to_device``,
    ``memory_info``)."""
    index = resolve_device(device)
    return 0 if index == AUTO else index
