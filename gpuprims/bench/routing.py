"""The routing table (``python -m gpuprims.bench --routing``): the evidence for ``device=None``.

For each op, dtype and size it times, end to end from a NumPy array: the host library (NumPy,
SciPy for ``convolve2d``), gpuprims with ``device="cpu"``, with ``device="cuda"`` (when a GPU is
usable), and with no ``device=`` (auto), and records the route auto took (``gpuprims.explain``).
Two questions are answered: is auto at most :data:`AUTO_TARGET` times the host library's time,
and did auto take the faster backend (*right*: the chosen backend's time is within
:data:`ROUTE_TOLERANCE` of the faster one's)?

Each time is the median of adaptive repeats (runs until ``--budget`` seconds are spent, at least
three), after one warm-up call.  The CPU backend is not timed above :data:`CPU_MAX` elements, nor
the host library above the op's ``host_max`` (SciPy's ``convolve2d``): each would take minutes.
"""

from __future__ import annotations

import csv
import functools
import os
from dataclasses import astuple, dataclass, fields
from pathlib import Path
from typing import Callable, Sequence

from .measure import format_size
from .ops import OPS, Elements, Op, Problem
from .peers import host_peers
from .report import format_line, markdown_table, table_head
from .timers import median_ms

ROUTING_OPS = ("sum", "prod", "min", "max", "mean", "prefix_sum", "sum_axis0", "convolve", "convolve2d",
               "transpose")
ROUTING_SIZES = tuple(2**k for k in range(6, 29, 2))
CPU_MAX = 2**24
AUTO_TARGET = 1.2
"""Issue 13's target: device=None on host arrays at most this times NumPy's time."""
ROUTE_TOLERANCE = 0.10
"""A route is right when its backend's time is within this fraction of the faster backend's."""
WIDTHS = (8, 6, 10, 10, 10, 10, 13, 8, 5)
TEXT_COLUMNS = frozenset({0, 1, 6, 8})


@dataclass(frozen=True)
class RoutingCase:
    """One line of the routing table: one op on one size and dtype.

    Attributes
    ----------
    op, dtype : str
        The op and the input's dtype.
    n : int
        Elements.
    host : str
        The host library (``"numpy"`` or ``"scipy"``).
    host_ms, cpu_ms, cuda_ms : float or None
        Median milliseconds of the host library, gpuprims ``device="cpu"`` and ``device="cuda"``;
        None where not timed.
    auto_ms : float
        Median milliseconds of gpuprims with no ``device=``.
    route : str
        The route auto took.
    """

    op: str
    dtype: str
    n: int
    host: str
    host_ms: float | None
    cpu_ms: float | None
    cuda_ms: float | None
    auto_ms: float
    route: str

    @property
    def ratio(self) -> float | None:
        """Auto's time over the host library's (None when the host was not timed)."""
        return None if self.host_ms is None else self.auto_ms / self.host_ms

    @property
    def right(self) -> bool | None:
        """Whether auto's backend was the faster (within :data:`ROUTE_TOLERANCE`); None when
        either backend was not timed."""
        if self.cpu_ms is None or self.cuda_ms is None:
            return None
        chosen = self.cpu_ms if self.route == "cpu" else self.cuda_ms
        return chosen <= (1 + ROUTE_TOLERANCE) * min(self.cpu_ms, self.cuda_ms)

    def cells(self) -> tuple[str, ...]:
        """The printed line's values, in :func:`columns` order."""
        def ms(value: float | None) -> str:
            return "-" if value is None else f"{value:.4g}"
        right = {None: "-", True: "yes", False: "NO"}[self.right]
        ratio = "-" if self.ratio is None else f"{self.ratio:.2f}"
        return (self.dtype, format_size(self.n), ms(self.host_ms), ms(self.cpu_ms), ms(self.cuda_ms),
                ms(self.auto_ms), self.route, ratio, right)


def columns(host: str) -> tuple[str, ...]:
    """The routing table's column names for an op compared with ``host``."""
    return ("dtype", "size", f"{host}_ms", "cpu_ms", "cuda_ms", "auto_ms", "route", f"auto/{host}", "right")


class Routing:
    """Measures routing cases.

    Parameters
    ----------
    cuda : str or None
        The GPU gpuprims is timed on with ``device=`` (``"cuda:N"``), None for no GPU.
    budget_s : float
        Seconds per measurement (at least three runs).
    """

    def __init__(self, cuda: str | None, budget_s: float):
        self.cuda = cuda
        self.budget_s = budget_s
        self.hosts = {peer.name: peer for peer in host_peers()}
        self.elements = Elements()

    def measure(self, op: Op, dtype: str, n: int) -> RoutingCase:
        """Time ``op`` on ``n`` elements of ``dtype`` every way, and ask auto's route."""
        problem = op.make(self.elements(n, dtype))
        host = self.hosts.get(op.host)
        host_ms = None
        if host is not None and (op.host_max is None or n <= op.host_max):
            call = host.bind(op, problem)
            host_ms = median_ms(functools.partial(call, problem.data), self.budget_s)
        cpu_ms = self._gpuprims_ms(op, problem, device="cpu") if n <= CPU_MAX else None
        cuda_ms = self._gpuprims_ms(op, problem, device=self.cuda) if self.cuda is not None else None
        route = op.explain(problem)["route"]
        return RoutingCase(op.name, dtype, n, op.host, host_ms, cpu_ms, cuda_ms, self._gpuprims_ms(op, problem), route)

    def _gpuprims_ms(self, op: Op, problem: Problem, **device: str) -> float:
        return median_ms(op.bound(problem, **device), self.budget_s)


def summary(cases: Sequence[RoutingCase]) -> list[str]:
    """The summary lines: how many cases meet the target, how many routes were right, and the
    cases that did not."""
    rated = [case for case in cases if case.ratio is not None]
    judged = [case for case in cases if case.right is not None]
    slow = [case for case in rated if case.ratio > AUTO_TARGET]
    wrong = [case for case in judged if not case.right]
    lines = [f"auto <= {AUTO_TARGET}x the host library (NumPy; SciPy for convolve2d): "
             f"{len(rated) - len(slow)} of {len(rated)} cases",
             f"routing right (the chosen backend within {ROUTE_TOLERANCE:.0%} of the faster): "
             f"{len(judged) - len(wrong)} of {len(judged)} judged cases"
             + (f" ({len(cases) - len(judged)} not judged: a backend not timed)" if len(judged) < len(cases) else "")]
    lines += _grouped(f"over {AUTO_TARGET}x", slow, lambda case: f"{case.ratio:.2f}x {case.route}")
    lines += _grouped("wrong route", wrong, lambda case: f"{case.route} (cpu {case.cpu_ms:.3g} ms, "
                                                         f"cuda {case.cuda_ms:.3g} ms)")
    return lines


def _grouped(title: str, cases: Sequence[RoutingCase], describe: Callable[[RoutingCase], str]) -> list[str]:
    """One line per op and dtype listing ``cases``: ``"title: sum float32: 2^6 <describe>, ..."``."""
    groups: dict[tuple[str, str], list[str]] = {}
    for case in cases:
        groups.setdefault((case.op, case.dtype), []).append(f"{format_size(case.n)} {describe(case)}")
    return [f"{title}: {op} {dtype}: {', '.join(items)}" for (op, dtype), items in groups.items()]


def write_markdown(path: Path, cases: Sequence[RoutingCase], header: str) -> None:
    """Write one table per op and the summary as Markdown."""
    lines = ["# gpuprims routing", "", header]
    for name in dict.fromkeys(case.op for case in cases):
        op_cases = [case for case in cases if case.op == name]
        lines += ["", f"## {name}", "", *markdown_table(columns(op_cases[0].host),
                                                          [case.cells() for case in op_cases], TEXT_COLUMNS)]
    lines += ["", "## Summary", ""] + [f"- {line}" for line in summary(cases)]
    path.write_text("\n".join(lines) + "\n")


def _csv_value(value: object) -> object:
    """A CSV cell: empty for None, floats to 6 significant digits."""
    return "" if value is None else f"{value:.6g}" if isinstance(value, float) else value


def write_csv(path: Path, cases: Sequence[RoutingCase]) -> None:
    """Write every case with raw numbers, and ``ratio`` and ``right``."""
    with path.open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow([field.name for field in fields(RoutingCase)] + ["ratio", "right"])
        for case in cases:
            writer.writerow([_csv_value(value) for value in astuple(case)]
                            + ["" if case.ratio is None else f"{case.ratio:.4f}",
                               "" if case.right is None else case.right])


def run_routing(ops: Sequence[str], sizes: Sequence[int], dtypes: Sequence[str], cuda: str | None,
                budget_s: float, header: str, out: Path | None) -> list[RoutingCase]:
    """Measure and print the routing table of ``ops`` (one table per op, lines as they come),
    then the summary; with ``out`` also write routing.md and routing.csv there."""
    routing = Routing(cuda, budget_s)
    print(header)
    for setting in ("GPUPRIMS_DEVICE", "GPUPRIMS_COSTS", "GPUPRIMS_STREAM_MIN_BYTES"):
        if os.environ.get(setting):
            print(f"note: {setting}={os.environ[setting]} is set: auto follows it")
    cases = []
    for op in map(OPS.__getitem__, ops):
        print(f"\n{op.name} (ms)")
        print("\n".join(table_head(columns(op.host), WIDTHS, TEXT_COLUMNS)))
        for dtype in dtypes:
            for n in sizes:
                cases.append(routing.measure(op, dtype, n))
                print(format_line(cases[-1].cells(), WIDTHS, TEXT_COLUMNS), flush=True)
    print()
    print("\n".join(summary(cases)))
    if out is not None:
        out.mkdir(parents=True, exist_ok=True)
        write_markdown(out / "routing.md", cases, header)
        write_csv(out / "routing.csv", cases)
        print(f"wrote {out / 'routing.md'} and {out / 'routing.csv'}")
    return cases
