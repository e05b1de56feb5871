"""The one plan shape: a call of a compiled primitive and how its output becomes the user's result.

Every public function builds a :class:`Plan` (NumPy's semantics: axes, dtypes, views) and runs it.
The plan names the core's entry (``_core.reduce``, ``scan``, ``correlate``, ``copy``, ``convert``),
its source (a NumPy array, or a DeviceArray for device-resident data), the primitive's parameters,
the backend output's shape and dtype, and a `finish` step (a cast, a reversal, a division).  Where
and how the call runs is decided once, by the planner in C, from the device index the boundary
found (``_boundary``): this layer never routes.

The common calls (NumPy arrays, the other arguments plain: a reduction of the whole array or along
one axis, a 1-D scan, a transpose with its axes reversed, a correlation with the default boundary)
have a shorter way: the core's quick lane (``_core.quick``) replays the plan that the function's
first such call made for the array's dtype (:meth:`Plan.teach_quick_lane`), without this layer.

The same plan serves the private hooks: :func:`planned` runs a public function as a dry run and
returns its plan, which ``explain`` describes and ``_timing`` times.
"""
import threading

import numpy as np

from . import _core
from ._device import default_index
from ._device_array import DeviceArray
from ._fperrors import check_device_result, device_check

_DESCRIBE, _TILES = -1, -2  # the core's `repeats` values that plan (or tile) without running
# The kinds of recipe the quick lane replays (quick_kind in csrc/glue/calls.c).
_WHOLE, _AXIS, _SCAN, _SCAN_AXIS, _TRANSPOSE, _CORRELATE = range(6)

_LANE_REDUCTIONS = ("sum", "prod", "min", "max", "any", "all", "argmin", "argmax", "mean",
                    "nansum", "nanprod", "nanmin", "nanmax", "nanargmin", "nanargmax")
_LANE_SCANS = ("cumsum", "cumprod", "cummax", "cummin", "nancumsum", "nancumprod")
# The quick lane's slot of each call it serves (the core keeps one recipe per slot and dtype): a
# reduction's whole-array call or a scan's flattened one under its name, its call along one axis
# as "<name>/axis".
QUICK_SLOTS = {name: slot for slot, name in enumerate((
    *_LANE_REDUCTIONS, *(f"{name}/axis" for name in _LANE_REDUCTIONS),
    *_LANE_SCANS, *(f"{name}/axis" for name in _LANE_SCANS),
    "transpose", "convolve", "correlate", "convolve2d", "correlate2d"))}
# The correlation modes the lane replays (others, such as the abbreviations older NumPys accept with
# a warning, keep the full path).
_PLAIN_MODES = ("full", "same", "valid", 0, 1, 2)
QUICK_AXIS_SLOTS = {name: QUICK_SLOTS[f"{name}/axis"] for name in _LANE_REDUCTIONS + _LANE_SCANS}


class _DryRun(threading.local):
    active = False


_dry_run = _DryRun()


class _Planned(Exception):
    """Raised by Plan.run in a dry run, carrying the plan out of the public function."""

    def __init__(self, plan):
        super().__init__()
        self.plan = plan


class Plan:
    """One call of a compiled primitive.

    Parameters
    ----------
    entry : callable or None
        The core's entry (``_core.reduce`` ...); None when NumPy computes the result (`finish`
        then does).
    source : numpy.ndarray or DeviceArray
        The input.  A DeviceArray source must be C-contiguous, except for ``_core.copy``.
    params : tuple
        The entry's arguments after the common four (src, out, device, repeats).
    out_shape : tuple or None
        The backend output's shape (None: 1-D, or a copy's source shape).
    out_dtype : numpy.dtype
        The backend output's dtype (used to allocate a device output).
    device : int
        Backend device index: -1 CPU, -2 auto (host data only), N GPU N.
    finish : callable or None
        Turns the backend's output into the user's result.
    """

    __slots__ = ("entry", "source", "params", "out_shape", "out_dtype", "device", "finish")

    def __init__(self, entry, source, params, out_shape, out_dtype, device, finish=None):
        self.entry = entry
        self.source = source
        self.params = params
        self.out_shape = out_shape
        self.out_dtype = out_dtype
        self.device = device
        self.finish = finish

    @classmethod
    def by_numpy(cls, compute):
        """A plan whose result NumPy computes, compute() (NumPy's answers for empty inputs, with
        its warnings and errors), when it runs."""
        return cls(None, None, (), None, None, -1, lambda _: compute())

    def run(self, out=None):
        """The user's result; with `out` (checked by check_out), the result written into `out`,
        which is returned: by the backend itself where `out` has its output's dtype and layout (a
        pinned host `out` is then written by the copy engine), else cast into it."""
        if _dry_run.active:
            raise _Planned(self)
        source = self.source
        if out is not None and self._writes_into(out):
            if type(source) is np.ndarray:
                self.entry(source, out, self.device, 0, *self.params)
            else:
                self._call(0, out)
            return out
        if type(source) is np.ndarray:  # host data, the common case: one call of the core
            output = self.entry(source, self.out_shape, self.device, 0, *self.params)
        elif self.entry is None:
            output = None
        else:
            output = self._call(0)
        result = output if self.finish is None else self.finish(output)
        return result if out is None else cast_into(out, result)

    def teach_quick_lane(self, slot, a, *arguments, mean_of=None):
        """Teach the core's quick lane this plan, made for the common call of the function in
        `slot` on the NumPy array `a`, when it replays for every such call on arrays of a's dtype.

        The caller vouches for the call's other arguments: none (a whole reduction, a scan of the
        flattened array, a transpose that reverses the axes), `axis` (a reduction or scan along
        it), or `mask, mode, flip, overlaps_only` (a correlation with a zero fill: the mask
        reversed when `flip`, finite masks only when `overlaps_only`; replayed for operands of
        these shapes and this mode).
        Plans that cast, move or swap their operands, or finish their result, are not taught,
        except a sum that numpy.mean divides by the count (`mean_of`: the mean's result dtype).
        """
        if self.finish is not None or type(a) is not np.ndarray or not a.dtype.isnative:
            return
        recipe = None
        if self.entry is _core.reduce and self.source is a and (arguments or self.out_shape == ()):
            op, out_typenum, _, _, _, _, skip_nan = self.params  # the nan-functions' NaN rule travels too
            recipe = (_AXIS if arguments else _WHOLE, op, out_typenum, skip_nan, -1 if mean_of is None else mean_of.num)
        elif self.entry is _core.scan and self.source is a:
            out_typenum, _, _, _, exclusive, op, skip_nan, _ = self.params  # no initial values: self.source is a
            recipe = (_SCAN_AXIS if arguments else _SCAN, op, out_typenum, exclusive, skip_nan)
        elif self.entry is _core.copy:
            recipe = (_TRANSPOSE,)
        elif self.entry is _core.correlate:
            mask, mode, flip, overlaps_only = arguments
            image = self.source
            # The image is `a` itself (1-D: as one row), not the mask swapped in, and nothing is cast.
            if (type(mask) is np.ndarray and type(mode) in (str, int) and mode in _PLAIN_MODES
                    and a.ndim >= 1 and mask.ndim >= 1  # numpy.convolve reads 0-d operands as 1-D: not taught
                    and mask.dtype == a.dtype == image.dtype
                    and image.size == a.size
                    and image.shape[-1] == a.shape[-1]
                    and (image is a or image.base is (a if a.base is None else a.base))):
                _, _, out_rows, out_cols, row_offset, col_offset, _ = self.params
                recipe = (_CORRELATE, a.shape, mask.shape, mode, flip, overlaps_only, out_rows, out_cols,
                          row_offset, col_offset)
        if recipe is not None:
            _core.learn_quick(slot, a.dtype.num, recipe[0], default_index(), *recipe[1:])

    def _writes_into(self, out):
        """Whether the backend's output can go straight into `out`: no finish step; `out` of the
        output's dtype (native), C-contiguous and writeable, where the source is; and `out` apart
        from the source or, for a scan, the source itself (each element is read before it is
        written).  Another `out` that overlaps the source gets the result through a buffer, as
        NumPy's does."""
        if self.entry is None or self.finish is not None or out.dtype != self.out_dtype:
            return False
        source = self.source
        if isinstance(out, DeviceArray):
            if not (isinstance(source, DeviceArray) and out.is_c_contiguous and not out.readonly):
                return False
        else:
            flags = out.flags
            if not (type(source) is np.ndarray and flags.c_contiguous and flags.aligned and flags.writeable):
                return False
        return not _may_share_memory(source, out) or (self.entry is _core.scan and _same_elements(source, out))

    def _call(self, repeats, out=None):
        """The core's entry on the plan's source: the output (repeats 0; into the DeviceArray `out`
        when given), times (repeats > 0), or a description (repeats < 0)."""
        source = self.source
        if not isinstance(source, DeviceArray):
            return self.entry(source, self.out_shape, self.device, repeats, *self.params)
        if out is None and repeats >= 0:
            out = DeviceArray._empty(self.out_shape, self.out_dtype, source.device_index)
        check = device_check(self.entry, self.params, self.out_dtype) if repeats == 0 else None
        flag = (True,) if check == "accumulate" else ()  # the scan kernels' non-finite flag, returned
        result = self.entry(source._operand(), out.ptr if out is not None else 0, source.device_index, repeats,
                            *self.params, *flag)
        if repeats != 0:
            return result
        if check is not None:
            check_device_result(check, self.params, out, source, result)  # the host's floating-point check
        return out

    def time(self, repeats):
        """Milliseconds of `repeats` runs of the call's work (on a GPU: its device work, the input
        uploaded once), after one untimed run."""
        if self.entry is None:
            raise ValueError("this call computes nothing (NumPy answers it)")
        return np.asarray(self._call(int(repeats)), dtype=np.float64)

    def describe(self):
        """The planner's decision: route, device, bytes moved, pinning, cost estimates."""
        if self.entry is None:
            return {"primitive": None, "route": "numpy", "device": "cpu", "in_bytes": 0, "out_bytes": 0,
                    "input_pinned": False, "result_pinned": False, "result_touched": False, "cpu_us": None,
                    "cuda_us": None}
        return self._call(_DESCRIBE)

    def tiles(self):
        """The tiles the streamed route would cut the call into (boxes of its view)."""
        return self._call(_TILES)


def _extent(array):
    """The device addresses [first, end) that the DeviceArray's elements span."""
    if array.size == 0:
        return array.ptr, array.ptr
    first = end = array.ptr
    for size, stride in zip(array.shape, array.strides):
        if stride < 0:
            first += (size - 1) * stride
        else:
            end += (size - 1) * stride
    return first, end + array.itemsize


def _may_share_memory(a, b):
    """Whether two arrays of the same kind may share memory (NumPy's bounds check; device arrays:
    the address ranges they span on one device)."""
    if not isinstance(a, DeviceArray):
        return np.may_share_memory(a, b)
    (a_first, a_end), (b_first, b_end) = _extent(a), _extent(b)
    return a.device_index == b.device_index and a_first < b_end and b_first < a_end


def _same_elements(source, out):
    """Whether the C-contiguous `out` holds the source's elements in their order, in the same dtype:
    where a scan can write its result in place."""
    if isinstance(source, DeviceArray):
        contiguous, source_address, out_address = source.is_c_contiguous, source.ptr, out.ptr
    else:
        contiguous = source.flags.c_contiguous
        source_address, out_address = source.__array_interface__["data"][0], out.__array_interface__["data"][0]
    return contiguous and source.dtype == out.dtype and source.size == out.size and source_address == out_address


def check_out_is_array(name, out):
    """NumPy's first check of an out= argument, made before any result is computed: TypeError for
    one that is not an array (check_out checks the rest once the result's shape is known)."""
    if out is not None and not isinstance(out, (np.ndarray, DeviceArray)):
        raise TypeError(f"gpuprims.{name}: out must be an array, not {type(out).__name__}")


def check_out(name, out, shape, source):
    """A function's out= argument checked as NumPy does (TypeError for one that is not an array of
    the source's kind or of a supported dtype, ValueError for another shape, or a device array on
    another device or not C-contiguous): `out`, or None."""
    if out is None:
        return None
    from ._boundary import supported
    on_device = isinstance(source, DeviceArray)
    kind = DeviceArray if on_device else np.ndarray
    if not isinstance(out, kind):
        raise TypeError(f"gpuprims.{name}: out must be a {kind.__module__.split('.')[0]}.{kind.__name__} "
                        f"for {'device' if on_device else 'host'} data, not {type(out).__name__}")
    if not supported(out.dtype):
        raise TypeError(f"gpuprims.{name}: out has an unsupported dtype {out.dtype}")
    if tuple(out.shape) != tuple(shape):
        raise ValueError(f"gpuprims.{name}: out has shape {tuple(out.shape)}, the result {tuple(shape)}")
    if on_device and (out.device_index != source.device_index or not out.is_c_contiguous or out.readonly):
        raise ValueError(f"gpuprims.{name}: out must be a writeable C-contiguous array on {source.device}")
    if not on_device and not out.flags.writeable:
        raise ValueError(f"gpuprims.{name}: out is read-only")
    return out


def out_loop_dtype(dtype, in_dtype, out):
    """The dtype NumPy's ufunc reductions and accumulations (sum, prod, cumsum, cumprod and their
    nan-forms) compute in: `dtype` when given; else, with an array `out`, the promotion of its dtype
    and the input's (numpy.sum of int64 into a float64 `out` adds floats and does not wrap around;
    numpy.min folds `initial` in it); else None, the function's own rule.  A promotion gpuprims has
    no backend for (complex) leaves the function's own rule, its result cast into `out`."""
    out_dtype = getattr(out, "dtype", None) if dtype is None else None
    if not isinstance(out_dtype, np.dtype):
        return dtype
    from ._boundary import supported
    promoted = np.promote_types(in_dtype, out_dtype)
    return promoted if supported(promoted) else None


def cast_into(out, result):
    """`result` copied into `out` (checked by check_out) with NumPy's unsafe cast; `out`."""
    if isinstance(out, DeviceArray):
        _core.convert(result.contiguous()._operand(), out.ptr, out.device_index, 0, out.dtype.num, 0)
    else:
        np.copyto(out, result, casting="unsafe")
    return out


def planned(function, *args, **kwargs):
    """The plan ``function(*args, **kwargs)`` would run (a dry run: arguments are checked and the
    call is planned, but no primitive runs)."""
    _dry_run.active = True
    _core.pause_quick(True)
    try:
        function(*args, **kwargs)
    except _Planned as planned_call:
        return planned_call.plan
    finally:
        _core.pause_quick(False)
        _dry_run.active = False
    raise TypeError(f"{getattr(function, '__name__', function)!r} is not a gpuprims computation")


def explain(function, *args, **kwargs):
    """How gpuprims would run ``function(*args, **kwargs)``, without running it.

    Parameters
    ----------
    function : callable
        A gpuprims computation (``gpuprims.sum``, ``gpuprims.prefix_sum``,
        ``gpuprims.convolve2d`` ...).
    *args, **kwargs
        Its arguments, as for the call itself.

    Returns
    -------
    dict
        ``function`` (its name); ``primitive`` (the compiled primitive: ``"reduce"``, ``"scan"``,
        ``"correlate"``, ``"copy"``, or None when NumPy answers, as for empty inputs);
        ``route``: ``"cpu"`` (the CPU backend), ``"cuda"`` (one copy each way), ``"cuda-streamed"``
        (tiles through pinned buffers), ``"cuda-resident"`` (device-resident data) or ``"numpy"``;
        ``device`` (``"cpu"`` or ``"cuda:N"``); ``in_bytes`` and ``out_bytes`` (what the call reads
        and writes); ``input_pinned`` and ``result_pinned``; ``result_touched`` (a new result
        large enough to come in fresh pages has them faulted in by all the host threads before the
        call writes it); ``cpu_us`` and ``cuda_us``, the cost
        model's estimates in microseconds when it chose the route (``device=None`` on host data
        with a usable GPU), else None.  When the CPU wins even against a pinned input, ``cuda_us``
        is that estimate: the planner does not ask whether the input is pinned.

    Raises
    ------
    TypeError
        When `function` is not a gpuprims computation; otherwise what the call itself would raise
        for its arguments.
    """
    description = planned(function, *args, **kwargs).describe()
    return {"function": getattr(function, "__name__", repr(function)), **description}
