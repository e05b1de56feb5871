"""The benchmark's table of ops: for each op, how its input is made, what it moves, and how each
library computes it.

An op's entry (:class:`Op`) holds

- ``make``: the input maker, from ``n`` random elements to a :class:`Problem` (the array that
  moves, plus the call's other arguments: a convolution's mask and mode, a transpose's axes);
- ``out_bytes`` (and ``macs``): what the call writes (and the multiply-adds it does), with the
  bytes it reads being its input's;
- ``gpuprims``: the public function, called as ``gpuprims.<op>(data, *args, **kwargs)``;
- one *binder* per peer library (``numpy``, ``scipy``, ``cupy``, ``cupyx_ndimage``, ``cub``,
  ``torch``; None where the library lacks the op): ``binder(peer, problem)`` returns ``call(x)``,
  the op on the peer's copy ``x`` of the problem's data.  A binder reaches its library as
  ``peer.module`` and moves the problem's other arrays (masks) with ``peer.put``; the peers
  (:mod:`.peers`) know only how to move data and time it.
"""

from __future__ import annotations

import functools
import importlib
import math
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

import numpy as np

import gpuprims

CONVOLVE2D_SHAPE = (5, 5)
MATRIX_ROWS = 64
"""``sum_axis0`` and the size series of ``transpose`` take ``n`` elements as a (64, n/64) matrix."""
MASK_SEED = 7


@dataclass(frozen=True)
class Problem:
    """One input of an op, as every library's callable takes it.

    Attributes
    ----------
    data : numpy.ndarray
        The array that moves (to a GPU, through the bus); its bytes are what the op reads.
    args : tuple
        The call's other positional arguments, in NumPy's and gpuprims' signature: a
        convolution's mask (a NumPy array) and mode, a transpose's axes.
    kwargs : mapping
        The call's keyword arguments (``sum_axis0``: ``axis=0``).
    case : str
        What the report shows instead of the element count for inputs that are not a size series
        (transpose's fixed cases, the latency transposes); ``""`` otherwise.
    """

    data: np.ndarray
    args: tuple = ()
    kwargs: Mapping[str, Any] = field(default_factory=dict)
    case: str = ""


Binder = Callable[[Any, Problem], Callable[[Any], Any]]
"""``binder(peer, problem)`` returns ``call(x)``: the op on the peer's copy ``x`` of the data."""


@dataclass(frozen=True)
class Case:
    """One fixed transpose input: shape, axes, and dtype (None: the run's ``--dtype``)."""

    shape: tuple[int, ...]
    axes: tuple[int, ...] | None = None
    dtype: str | None = None

    def label(self, dtype: np.dtype) -> str:
        """``"16384x16384 uint8"``, with the axes when they are not reversed."""
        text = "x".join(map(str, self.shape))
        if self.axes is not None:
            text += " axes " + ",".join(map(str, self.axes))
        return f"{text} {dtype.name}"

    def problem(self, a: np.ndarray) -> Problem:
        """The transpose of ``a`` (``prod(shape)`` elements) reshaped to this case."""
        data = a.reshape(self.shape)
        return Problem(data, (self.axes,), case=self.label(data.dtype))


TRANSPOSE_CASES = (
    Case((16384, 16384)),
    Case((16384, 16384), dtype="uint8"),
    Case((16384, 16384), dtype="float64"),
    Case((7, 1_000_003)),
    Case((64, 64, 64, 64), (3, 1, 2, 0)),
)


@dataclass(frozen=True)
class Op:
    """One op of the benchmark: its input maker, byte counts and one callable per library.

    Attributes
    ----------
    name : str
        The op's name on the command line and in the reports.
    primitive : str
        The planner's primitive that runs it (``"reduce"``, ``"scan"``, ``"correlate"``,
        ``"copy"``): the calibration fits one set of cost constants per primitive.
    make : callable
        ``make(a)``: the :class:`Problem` of the 1-D random array ``a`` (a size series).
    out_bytes : callable
        ``out_bytes(problem)``: the bytes the op writes (the result's, in NumPy's result dtype).
    gpuprims : callable
        The public gpuprims function.
    numpy, scipy, cupy, cupyx_ndimage, cub, torch : Binder or None
        The library's binder, None where the library lacks the op.
    macs : callable or None
        ``macs(problem)``: multiply-adds beyond the memory traffic (convolutions), else None.
    cases : tuple of Case
        Fixed inputs that replace the size series in the ``kernel``/``device``/``e2e`` modes.
    latency_make : callable or None
        The input maker of the latency rows when it is not ``make``.
    pinned_rows : bool
        Whether the ``e2e`` mode adds the pinned-input row and the host-to-device rooflines.
    host_max : int or None
        The largest size at which the routing table times the host library (larger runs take
        minutes).
    """

    name: str
    primitive: str
    make: Callable[[np.ndarray], Problem]
    out_bytes: Callable[[Problem], int]
    gpuprims: Callable[..., Any]
    numpy: Binder | None = None
    scipy: Binder | None = None
    cupy: Binder | None = None
    cupyx_ndimage: Binder | None = None
    cub: Binder | None = None
    torch: Binder | None = None
    macs: Callable[[Problem], int] | None = None
    cases: tuple[Case, ...] = ()
    latency_make: Callable[[np.ndarray], Problem] | None = None
    pinned_rows: bool = False
    host_max: int | None = None

    @property
    def host(self) -> str:
        """The host library gpuprims is compared with: ``"scipy"`` where SciPy has the op,
        else ``"numpy"``."""
        return "scipy" if self.scipy is not None else "numpy"

    def traffic(self, problem: Problem) -> tuple[int, int]:
        """``(bytes read, bytes written)`` by the op on ``problem``."""
        return problem.data.nbytes, self.out_bytes(problem)

    def call(self, problem: Problem, **device: str) -> Any:
        """The public gpuprims call on ``problem`` (``device=...`` as given, none for auto)."""
        return self.gpuprims(problem.data, *problem.args, **problem.kwargs, **device)

    def bound(self, problem: Problem, **device: str) -> Callable[[], Any]:
        """:meth:`call` with its arguments bound once, for timing: a 64-element call takes about
        0.5 us, and merging the keyword arguments on every run would add most of that again."""
        return functools.partial(self.gpuprims, problem.data, *problem.args, **problem.kwargs, **device)

    def explain(self, problem: Problem, **device: str) -> dict[str, Any]:
        """:func:`gpuprims.explain` of :meth:`call`: the planner's route, bytes and estimates."""
        return gpuprims.explain(self.gpuprims, problem.data, *problem.args, **problem.kwargs, **device)


# ---------------------------------------------------------------------------
# Inputs
# ---------------------------------------------------------------------------

def random_array(rng: np.random.Generator, n: int, dtype: np.dtype) -> np.ndarray:
    """Return ``n`` fresh random values of ``dtype`` (small integers, floats in [0, 1))."""
    if dtype == np.bool_:
        return rng.random(n, dtype=np.float32) < 0.5
    if dtype.kind in "iu":
        return rng.integers(0, 100, size=n, dtype=dtype)
    if dtype == np.float64:
        return rng.random(n)
    return rng.random(n, dtype=np.float32).astype(dtype, copy=False)


class Elements:
    """Random 1-D arrays, made once per size and dtype and shared by every op that reads them."""

    def __init__(self) -> None:
        self.rng = np.random.default_rng()
        self.arrays: dict[tuple[int, np.dtype], np.ndarray] = {}

    def __call__(self, n: int, dtype: str | np.dtype) -> np.ndarray:
        """``n`` random elements of ``dtype`` (the same array on every call)."""
        key = (n, np.dtype(dtype))
        if key not in self.arrays:
            self.arrays[key] = random_array(self.rng, n, key[1])
        return self.arrays[key]


@functools.lru_cache(maxsize=None)
def mask(shape: tuple[int, ...], dtype: np.dtype) -> np.ndarray:
    """A convolution's random mask (made once per shape and dtype, so calls do not pay for it)."""
    values = random_array(np.random.default_rng(MASK_SEED), math.prod(shape), dtype).reshape(shape)
    values.flags.writeable = False
    return values


def square_shape(n: int) -> tuple[int, int]:
    """The 2-D shape made of ``n`` elements (the ``convolve2d`` image, the latency transposes):
    ``isqrt(n)`` rows, as many columns as fit."""
    rows = max(1, math.isqrt(n))
    return rows, n // rows


def _leading(a: np.ndarray, shape: tuple[int, int]) -> np.ndarray:
    """The first ``prod(shape)`` elements of ``a`` as a C-contiguous array of that shape."""
    return a[: math.prod(shape)].reshape(shape)


def as_matrix(a: np.ndarray) -> np.ndarray:
    """``a`` as a (64, n/64) matrix (fewer rows when ``n < 64``; a remainder is dropped)."""
    rows = min(MATRIX_ROWS, max(a.size, 1))
    return _leading(a, (rows, a.size // rows))


def vector(a: np.ndarray) -> Problem:
    """The problem of a 1-D op: ``a`` itself."""
    return Problem(a)


def matrix_sum(a: np.ndarray) -> Problem:
    """``sum_axis0``'s problem: the sum over axis 0 of ``a`` as a (64, n/64) matrix."""
    return Problem(as_matrix(a), kwargs={"axis": 0})


def square_along(axis: int) -> Callable[[np.ndarray], Problem]:
    """The input maker of a reduction along ``axis`` of ``a`` as a square-ish matrix (2^28
    elements: 16384 x 16384, issue 17's axis forms)."""
    def make(a: np.ndarray) -> Problem:
        return Problem(_leading(a, square_shape(a.size)), kwargs={"axis": axis})
    return make


def matrix_transpose(a: np.ndarray) -> Problem:
    """The transpose of ``a`` as a (64, n/64) matrix (the size series of ``transpose``)."""
    return Problem(as_matrix(a), (None,))


def square_transpose(a: np.ndarray) -> Problem:
    """The transpose of ``a`` as a square-ish matrix (the latency rows: a 1-D transpose is a plain
    copy), labelled with its shape."""
    return Case(square_shape(a.size)).problem(a[: math.prod(square_shape(a.size))])


def convolution(taps: int) -> Callable[[np.ndarray], Problem]:
    """The input maker of :func:`numpy.convolve` of ``a`` with a random mask of ``taps``,
    'same' mode."""
    def make(a: np.ndarray) -> Problem:
        return Problem(a, (mask((taps,), a.dtype), "same"))
    return make


def image_convolution(a: np.ndarray) -> Problem:
    """``convolve2d``'s problem: the largest square-ish image of ``a`` and a 5 x 5 mask, 'same'
    mode, zero fill."""
    return Problem(_leading(a, square_shape(a.size)), (mask(CONVOLVE2D_SHAPE, a.dtype), "same"))


# ---------------------------------------------------------------------------
# Byte and multiply-add counts
# ---------------------------------------------------------------------------

@functools.lru_cache(maxsize=None)
def result_itemsize(function: str, dtype: np.dtype) -> int:
    """The itemsize of NumPy's result dtype of ``numpy.<function>`` on ``dtype`` (a sum of int32
    is int64, a mean of integers float64)."""
    return np.asarray(getattr(np, function)(np.ones(1, dtype))).dtype.itemsize


def reduced_bytes(function: str) -> Callable[[Problem], int]:
    """``out_bytes`` of a reduction: one result per slice along ``kwargs["axis"]`` (all: one)."""
    def out_bytes(problem: Problem) -> int:
        axis = problem.kwargs.get("axis")
        count = 1 if axis is None else problem.data.size // problem.data.shape[axis]
        return count * result_itemsize(function, problem.data.dtype)
    return out_bytes


def scanned_bytes(function: str) -> Callable[[Problem], int]:
    """``out_bytes`` of a scan: one result of ``numpy.<function>`` per element."""
    def out_bytes(problem: Problem) -> int:
        return problem.data.size * result_itemsize(function, problem.data.dtype)
    return out_bytes


def same_bytes(problem: Problem) -> int:
    """``out_bytes`` of a copy or a 2-D 'same' convolution: as many bytes as the input."""
    return problem.data.nbytes


def convolved_bytes(problem: Problem) -> int:
    """``out_bytes`` of :func:`numpy.convolve`, 'same' mode: the longer operand's length."""
    return max(problem.data.size, problem.args[0].size) * problem.data.itemsize


def convolution_macs(problem: Problem) -> int:
    """Multiply-adds of a 'same' convolution: one per output and tap."""
    return problem.data.size * problem.args[0].size


# ---------------------------------------------------------------------------
# Binders: how each library computes an op
# ---------------------------------------------------------------------------

def _moved_args(peer, problem: Problem) -> tuple:
    """The problem's positional arguments with its arrays (masks) moved to the peer."""
    return tuple(peer.put(arg) if isinstance(arg, np.ndarray) else arg for arg in problem.args)


def array_call(name: str, module: str | None = None) -> Binder:
    """The binder of ``<module>.<name>(x, *args, **kwargs)`` in NumPy's signature: NumPy, SciPy,
    CuPy and ``cupyx.scipy`` spell it the same.  ``module`` names the module when it is not the
    peer's own (CuPy's ``convolve2d`` lives in ``cupyx.scipy.signal``)."""
    def bind(peer, problem: Problem) -> Callable[[Any], Any]:
        function = getattr(importlib.import_module(module) if module else peer.module, name)
        args, kwargs = _moved_args(peer, problem), problem.kwargs
        return lambda x: function(x, *args, **kwargs)
    return bind


def array_transpose(peer, problem: Problem) -> Callable[[Any], Any]:
    """NumPy's and CuPy's transpose: the contiguous copy of the permuted view."""
    xp, (axes,) = peer.module, problem.args
    return lambda x: xp.ascontiguousarray(xp.transpose(x, axes))


def ufunc_accumulate(name: str) -> Binder:
    """The binder of ``<peer>.<name>.accumulate(x)`` (NumPy's cumulative max and min)."""
    def bind(peer, problem: Problem) -> Callable[[Any], Any]:
        return getattr(peer.module, name).accumulate
    return bind


def ndimage_call(name: str) -> Binder:
    """The binder of ``cupyx.scipy.ndimage.<name>(x, mask, mode="constant")`` (zero fill).  Its
    result keeps the input's shape, so a mask longer than the input along an axis, where 'same'
    mode is the mask's length, raises TypeError (the run skips that measurement)."""
    def bind(peer, problem: Problem) -> Callable[[Any], Any]:
        if any(taps > size for taps, size in zip(problem.args[0].shape, problem.data.shape)):
            raise TypeError("cupyx.scipy.ndimage keeps the input's shape: no 'same' result for a mask longer than it")
        function, weights = getattr(peer.module, name), peer.put(problem.args[0])
        return lambda x: function(x, weights, mode="constant")
    return bind


def torch_call(name: str, *, result_field: str | None = None, **fixed) -> Binder:
    """The binder of ``torch.<name>(x, **kwargs)`` (NumPy's ``axis`` is PyTorch's ``dim``), or of
    its result's ``result_field`` where torch returns a named tuple (``cummax``'s values and
    indices)."""
    def bind(peer, problem: Problem) -> Callable[[Any], Any]:
        function = getattr(peer.module, name)
        kwargs = {("dim" if key == "axis" else key): value for key, value in problem.kwargs.items()}
        kwargs.update(fixed)
        if result_field is None:
            return lambda x: function(x, **kwargs)
        return lambda x: getattr(function(x, **kwargs), result_field)
    return bind


def torch_mean(peer, problem: Problem) -> Callable[[Any], Any]:
    """``torch.mean``: NumPy averages integers and bools in float64, which torch asks for."""
    torch = peer.module
    return lambda x: torch.mean(x, dtype=None if x.is_floating_point() else torch.float64)


def torch_permute(peer, problem: Problem) -> Callable[[Any], Any]:
    """PyTorch's transpose: the contiguous copy of the permuted view."""
    (axes,) = problem.args
    return lambda x: x.permute(*(axes or range(x.ndim - 1, -1, -1))).contiguous()


def torch_convolution(peer, problem: Problem) -> Callable[[Any], Any]:
    """``torch.nn.functional.conv1d``/``conv2d``, 'same' mode: they correlate, so the mask is
    flipped; the input and mask gain batch and channel axes of one, which the result drops."""
    torch, taps = peer.module, problem.args[0]
    convolve = getattr(torch.nn.functional, f"conv{taps.ndim}d")
    weight = peer.put(np.ascontiguousarray(np.flip(taps))).view(1, 1, *taps.shape)
    padding = tuple(size // 2 for size in taps.shape)
    return lambda x: convolve(x.view(1, 1, *x.shape), weight, padding=padding)[0, 0]


def _reduction(name: str, torch: Binder | None = None, cub: Binder | None = None, pinned_rows: bool = False) -> Op:
    """The entry of a full reduction named the same in gpuprims, NumPy, CuPy and PyTorch."""
    return Op(name, "reduce", vector, reduced_bytes(name), getattr(gpuprims, name),
              numpy=array_call(name), cupy=array_call(name), torch=torch or torch_call(name), cub=cub,
              pinned_rows=pinned_rows)


_CONVOLUTIONS = dict(numpy=array_call("convolve"), cupy=array_call("convolve"),
                     cupyx_ndimage=ndimage_call("convolve1d"), torch=torch_convolution, macs=convolution_macs)

OPS: dict[str, Op] = {op.name: op for op in (
    _reduction("sum", cub=array_call("sum"), pinned_rows=True),
    _reduction("prod"),
    _reduction("min"),
    _reduction("max"),
    _reduction("mean", torch=torch_mean),
    Op("sum_axis0", "reduce", matrix_sum, reduced_bytes("sum"), gpuprims.sum,
       numpy=array_call("sum"), cupy=array_call("sum"), torch=torch_call("sum")),
    _reduction("argmin"),
    _reduction("argmax"),
    *(Op(f"argmax_axis{axis}", "reduce", square_along(axis), reduced_bytes("argmax"), gpuprims.argmax,
         numpy=array_call("argmax"), cupy=array_call("argmax"), torch=torch_call("argmax")) for axis in (0, 1)),
    _reduction("any"),
    _reduction("all"),
    _reduction("count_nonzero"),
    _reduction("nansum"),
    # PyTorch has no nanmax: no PyTorch peer
    Op("nanmax", "reduce", vector, reduced_bytes("nanmax"), gpuprims.nanmax,
       numpy=array_call("nanmax"), cupy=array_call("nanmax")),
    _reduction("var", torch=torch_call("var", correction=0)),  # NumPy's ddof=0; PyTorch's default is 1
    _reduction("std", torch=torch_call("std", correction=0)),
    Op("prefix_sum", "scan", vector, scanned_bytes("cumsum"), gpuprims.prefix_sum,
       numpy=array_call("cumsum"), cupy=array_call("cumsum"), torch=torch_call("cumsum", dim=0),
       cub=array_call("inclusive_sum"), pinned_rows=True),
    Op("cumprod", "scan", vector, scanned_bytes("cumprod"), gpuprims.cumprod,
       numpy=array_call("cumprod"), cupy=array_call("cumprod"), torch=torch_call("cumprod", dim=0)),
    # CuPy's ufunc accumulate supports only add and multiply: no CuPy peer for cummax
    Op("cummax", "scan", vector, same_bytes, gpuprims.cummax,
       numpy=ufunc_accumulate("maximum"), torch=torch_call("cummax", result_field="values", dim=0)),
    Op("nancumsum", "scan", vector, scanned_bytes("nancumsum"), gpuprims.nancumsum,
       numpy=array_call("nancumsum"), cupy=array_call("nancumsum")),
    Op("transpose", "copy", matrix_transpose, same_bytes, gpuprims.transpose,
       numpy=array_transpose, cupy=array_transpose, torch=torch_permute,
       cases=TRANSPOSE_CASES, latency_make=square_transpose, pinned_rows=True),
    Op("convolve", "correlate", convolution(7), convolved_bytes, gpuprims.convolve, pinned_rows=True,
       **_CONVOLUTIONS),
    Op("convolve_long", "correlate", convolution(4097), convolved_bytes, gpuprims.convolve, **_CONVOLUTIONS),
    Op("convolve2d", "correlate", image_convolution, same_bytes, gpuprims.convolve2d,
       scipy=array_call("convolve2d"), cupy=array_call("convolve2d", "cupyx.scipy.signal"),
       cupyx_ndimage=ndimage_call("convolve"), torch=torch_convolution, macs=convolution_macs,
       pinned_rows=True, host_max=2**24),
)}
"""Every op of the benchmark, by name."""
