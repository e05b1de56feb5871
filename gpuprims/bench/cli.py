"""The command line of ``python -m gpuprims.bench``: its options and what each mode prints and
writes."""

from __future__ import annotations

import argparse
import importlib
import os
from pathlib import Path
from typing import Callable, Sequence

import numpy as np

import gpuprims

from .calibrate import run_calibration
from .dask import DASK_CHUNK, DASK_OPS, DASK_REPEATS, DASK_SIZES, run_dask
from .measure import Benchmark, Row
from .ops import OPS
from .peers import Gpuprims, host_peers
from .timers import MIN_RUNS
from .routing import ROUTING_OPS, ROUTING_SIZES, run_routing
from .report import COLUMNS, cells, device_name, format_line, table_head, versions, write_csv, write_markdown, write_plot

DEFAULT_OPS = ("sum", "max", "prefix_sum", "transpose")
DEFAULT_SIZES = tuple(2**k for k in range(10, 29, 2))
DEFAULT_REPEATS = 20
DTYPES = (
    "bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
    "uint64", "float16", "float32", "float64",
)
EXPONENT_LIMIT = 64
"""Size values below this are power-of-two exponents, others element counts."""


def parse_sizes(text: str) -> list[int]:
    """Parse a comma list of sizes into element counts.

    Parameters
    ----------
    text : str
        Comma-separated values.  ``K`` with ``K < 64`` and ``2^K`` mean ``2**K`` elements; any
        other integer is an element count.

    Returns
    -------
    list of int
        Element counts in the given order.

    Raises
    ------
    argparse.ArgumentTypeError
        If a value is not a non-negative integer or ``2^K``.
    """
    sizes = []
    for token in text.split(","):
        token = token.strip()
        base, caret, exponent = token.partition("^")
        try:
            if caret:
                if base != "2":
                    raise ValueError
                value, is_exponent = int(exponent), True
            else:
                value = int(token)
                is_exponent = value < EXPONENT_LIMIT
        except ValueError:
            raise argparse.ArgumentTypeError(
                f"invalid size {token!r}: use an exponent K < {EXPONENT_LIMIT}, 2^K, or an element count"
            ) from None
        if value < 0:
            raise argparse.ArgumentTypeError(f"invalid size {token!r}: negative")
        sizes.append(2**value if is_exponent else value)
    return sizes


def parse_choices(text: str, choices: Sequence[str], what: str) -> list[str]:
    """Parse a comma list of names from ``choices``, dropping duplicates.

    Raises
    ------
    argparse.ArgumentTypeError
        If a name is not one of ``choices``.
    """
    names = []
    for name in (token.strip() for token in text.split(",")):
        if name not in choices:
            raise argparse.ArgumentTypeError(f"unknown {what} {name!r}; choose from {', '.join(choices)}")
        if name not in names:
            names.append(name)
    return names


def parse_ops(text: str) -> list[str]:
    """Parse a comma list of op names (keys of :data:`~gpuprims.bench.ops.OPS`)."""
    return parse_choices(text, tuple(OPS), "op")


def parse_dtypes(text: str) -> list[str]:
    """Parse a comma list of dtype names (:data:`DTYPES`)."""
    return parse_choices(text, DTYPES, "dtype")


def parse_positive(kind: type) -> Callable[[str], float]:
    """An argparse type: a positive ``kind`` (int or float)."""
    def parse(text: str):
        try:
            value = kind(text)
        except ValueError:
            value = 0
        if not value > 0:
            raise argparse.ArgumentTypeError(f"want a positive number, got {text!r}")
        return value
    parse.__name__ = f"positive {kind.__name__}"
    return parse


def build_parser() -> argparse.ArgumentParser:
    """Return the argument parser of ``python -m gpuprims.bench``."""
    parser = argparse.ArgumentParser(
        prog="python -m gpuprims.bench",
        description="Time gpuprims reductions, scans, transposes and convolutions against NumPy, SciPy, CuPy "
                    "and PyTorch; or tabulate device=None's routing (--routing); or measure the planner's cost "
                    "constants on this machine (--calibrate); or time gpuprims.dask (--dask).",
        epilog="Sizes: K < 64 or 2^K means 2**K elements, larger values are element counts.",
    )
    what = parser.add_mutually_exclusive_group()
    what.add_argument("--routing", action="store_true",
                      help="time NumPy, gpuprims on the CPU, on the GPU and with device=None (auto) per op, "
                           "size and dtype, and judge auto's route")
    what.add_argument("--calibrate", action="store_true",
                      help="fit the planner's cost constants on this machine and print them as GPUPRIMS_COSTS")
    what.add_argument("--dask", action="store_true",
                      help="time gpuprims.dask against Dask with NumPy and with CuPy chunks (sum, prefix_sum; "
                           "and over GPUs with dask_cuda where several are present)")
    parser.add_argument("--ops", type=parse_ops, default=None,
                        help=f"comma list from {','.join(OPS)} (default: {','.join(DEFAULT_OPS)}; "
                             "--routing: its own list; --calibrate: every op)")
    parser.add_argument("--sizes", type=parse_sizes, default=None,
                        help="comma list of sizes (default: 10,12,...,28; --routing: 6,8,...,28; --calibrate: "
                             "8,10,...,22, and 24,25,26 on the CPU; --dask: 30); transpose runs its own fixed "
                             "cases except in --routing")
    parser.add_argument("--chunk", type=parse_sizes, default=[DASK_CHUNK], metavar="SIZE",
                        help="--dask: elements per chunk, a size as in --sizes (default: 26)")
    parser.add_argument("--dtype", choices=DTYPES, default="float32", metavar="DTYPE",
                        help=f"input dtype, one of {','.join(DTYPES)} (default: float32)")
    parser.add_argument("--dtypes", type=parse_dtypes, default=["float32", "int32"],
                        help="--routing and --calibrate: comma list of input dtypes (default: float32,int32)")
    parser.add_argument("--device", default=None,
                        help='"cpu", "cuda" or "cuda:N" (default: "cuda" when a GPU is usable, else "cpu")')
    parser.add_argument("--repeats", type=parse_positive(int), default=None,
                        help=f"timed runs per measurement; the median is reported (default: {DEFAULT_REPEATS}; "
                             f"--dask: {DASK_REPEATS})")
    parser.add_argument("--budget", type=parse_positive(float), default=0.2, metavar="SECONDS",
                        help="--routing and --calibrate: time per measurement (at least 3 runs; default: 0.2)")
    parser.add_argument("--out", type=Path, metavar="DIR",
                        help="also write the tables to DIR (bench.md, bench.csv, bench.png; routing.md, "
                             "routing.csv; calibration.md, calibration.csv)")
    parser.add_argument("--no-kernel", dest="kernel", action="store_false",
                        help="skip the device-resident kernel timings")
    parser.add_argument("--no-device", dest="device_rows", action="store_false",
                        help="skip the device-resident public-call timings and the latency table")
    parser.add_argument("--no-e2e", dest="e2e", action="store_false",
                        help="skip the end-to-end timings from NumPy arrays")
    return parser


def resolve_device(parser: argparse.ArgumentParser, device: str | None) -> str:
    """Return the device to benchmark, exiting with a usage error if it is unusable.

    Parameters
    ----------
    parser : argparse.ArgumentParser
        Used to report errors.
    device : str or None
        The ``--device`` value; None picks ``"cuda"`` when available, else ``"cpu"``.

    Returns
    -------
    str
        ``"cpu"`` or ``"cuda:N"``.
    """
    if device is None:
        return "cuda:0" if gpuprims.cuda_available() else "cpu"
    if device == "cpu":
        return device
    kind, _, index = device.partition(":")
    if kind != "cuda" or (index and not index.isdigit()):
        parser.error(f'--device must be "cpu", "cuda" or "cuda:N", got {device!r}')
    info = gpuprims.device_info()
    if not gpuprims.cuda_available():
        parser.error(f"--device {device}: CUDA is not available ({info.get('reason', 'no usable GPU')})")
    count = len(info["devices"])
    if int(index or 0) >= count:
        parser.error(f"--device {device}: only {count} CUDA device(s) found")
    return f"cuda:{int(index or 0)}"


def run_benchmark(args: argparse.Namespace, device: str) -> list[Row]:
    """The ``kernel``/``device``/``latency``/``e2e`` modes: print the rows as they come, the
    crossovers, and with ``--out`` write bench.md, bench.csv and bench.png."""
    dtype = np.dtype(args.dtype)
    ops = args.ops or list(DEFAULT_OPS)
    repeats = args.repeats or DEFAULT_REPEATS
    bench = Benchmark(device, dtype, repeats, args.kernel, args.e2e, args.device_rows)
    header = (f"Device: {device_name(device)}; dtype {dtype.name}; median of {repeats} repeats. "
              f"Versions: {versions(bench.libraries)}")
    print(header)
    print("\n".join(table_head(COLUMNS)))
    bench.run(ops, args.sizes or list(DEFAULT_SIZES), emit=lambda row: print(format_line(cells(row)), flush=True))
    for line in bench.crossovers():
        bench.note(line)
    if args.out is not None:
        args.out.mkdir(parents=True, exist_ok=True)
        write_markdown(args.out / "bench.md", bench.rows, bench.notes, header)
        write_csv(args.out / "bench.csv", bench.rows, device)
        print(f"wrote {args.out / 'bench.md'} and {args.out / 'bench.csv'}")
        plotted = [name for name in ops if not OPS[name].cases]  # fixed cases are no size series
        title = f"{device_name(device)}, {dtype.name}"
        if plotted and write_plot(args.out / "bench.png", bench.rows, plotted, title):
            print(f"wrote {args.out / 'bench.png'}")
        elif plotted:
            print("note: matplotlib is not installed; skipped bench.png")
    return bench.rows


def main(argv: Sequence[str] | None = None) -> list:
    """Run the benchmark, the routing table, the calibration or the Dask rows from command-line
    arguments.

    Parameters
    ----------
    argv : sequence of str, optional
        Arguments without the program name; defaults to ``sys.argv[1:]``.

    Returns
    -------
    list
        What was measured, in the order printed: the benchmark's rows (:class:`Row`), the
        routing table's cases (:class:`~gpuprims.bench.routing.RoutingCase`), or the Dask rows
        (:class:`~gpuprims.bench.dask.DaskRow`).
    """
    parser = build_parser()
    args = parser.parse_args(argv)
    device = resolve_device(parser, args.device)
    if args.routing:
        gpu = f'and device="{device}" ({device_name(device)})' if device != "cpu" else "(no GPU)"
        header = (f'Routing: gpuprims with device=None against NumPy/SciPy, gpuprims device="cpu" {gpu}; '
                  f"dtypes {','.join(args.dtypes)}; medians over "
                  f"{args.budget:g} s per measurement (at least {MIN_RUNS} runs). "
                  f"Versions: {versions([Gpuprims(device), *host_peers()])}")
        return run_routing(args.ops or list(ROUTING_OPS), args.sizes or list(ROUTING_SIZES), args.dtypes,
                           None if device == "cpu" else device, args.budget, header, args.out)
    if args.calibrate:
        header = (f"Calibration of the planner's cost model on {device_name(device)}"
                  + (" and the CPU" if device != "cpu" else "")
                  + f"; dtypes {','.join(args.dtypes)}; medians over {args.budget:g} s per measurement. "
                  f"Versions: {versions([Gpuprims(device)])}")
        run_calibration(args.sizes, args.dtypes, None if device == "cpu" else device,
                        args.budget, header, args.out)
        return []
    if args.dask:
        ops = args.ops or list(DASK_OPS)
        if any(op not in DASK_OPS for op in ops):
            parser.error(f"--dask measures {', '.join(DASK_OPS)}")
        if len(args.chunk) != 1 or args.chunk[0] < 1:
            parser.error("--chunk takes one positive size")
        try:
            dask_version = importlib.import_module("dask").__version__
        except ImportError:
            parser.error("--dask needs Dask: pip install 'gpuprims[dask]'")
        repeats = args.repeats or DASK_REPEATS
        header = (f"gpuprims.dask on {device_name(device)}, {len(os.sched_getaffinity(0))} host cores; float32; "
                  f"median of {repeats} repeats. Versions: {versions([Gpuprims(device), *host_peers()])}, "
                  f"dask {dask_version}")
        return run_dask(ops, args.sizes or list(DASK_SIZES), args.chunk[0], repeats, device, header, args.out)
    if not args.e2e and (not args.kernel or device == "cpu"):
        parser.error("nothing to measure: kernel timings need a CUDA device; drop --no-e2e")
    return run_benchmark(args, device)
