"""The benchmark's reports: the printed table, and with ``--out`` bench.md, bench.csv and
bench.png; the device's name and the libraries' versions for their headers."""

from __future__ import annotations

import csv
import platform
from pathlib import Path
from typing import Sequence

import gpuprims

from .measure import E2E, KERNEL, MEMCPY, Row, format_size
from .peers import Gpuprims, Peer

COLUMNS = ("op", "size", "library", "mode", "time_ms", "GB/s", "x_memcpy", "route")
WIDTHS = (13, 10, 15, 7, 11, 9, 8, 13)
TEXT_COLUMNS = frozenset({0, 2, 3, 7})
"""Columns aligned left (the others are numbers, aligned right)."""
PLOT_COLUMNS = 3


def cells(row: Row) -> tuple[str, ...]:
    """The row formatted as strings, in :data:`COLUMNS` order."""
    ratio = "-" if row.x_memcpy is None else f"{row.x_memcpy:.2f}"
    return (row.op, row.case or format_size(row.n), row.library, row.mode, f"{row.time_ms:.4f}",
            f"{row.gbps:.2f}", ratio, row.route or "-")


def format_line(values: Sequence[str], widths: Sequence[int] = WIDTHS,
                text_columns: frozenset[int] = TEXT_COLUMNS) -> str:
    """One fixed-width text table line (text left-aligned, numbers right-aligned)."""
    parts = [value.ljust(width) if i in text_columns else value.rjust(width)
             for i, (value, width) in enumerate(zip(values, widths))]
    return "  ".join(parts).rstrip()


def table_head(columns: Sequence[str], widths: Sequence[int] = WIDTHS,
               text_columns: frozenset[int] = TEXT_COLUMNS) -> list[str]:
    """The header line and the rule below it of a text table."""
    return [format_line(columns, widths, text_columns), format_line(["-" * width for width in widths], widths)]


def markdown_table(columns: Sequence[str], rows: Sequence[Sequence[str]],
                   text_columns: frozenset[int] = TEXT_COLUMNS) -> list[str]:
    """The lines of a Markdown table (text columns aligned left, numbers right)."""
    align = ["---" if i in text_columns else "---:" for i in range(len(columns))]
    return ["| " + " | ".join(columns) + " |", "|" + "|".join(align) + "|"] + \
           ["| " + " | ".join(values) + " |" for values in rows]


def device_name(device: str) -> str:
    """A human-readable name for ``device`` (``"cpu"`` or ``"cuda:N"``)."""
    if device == "cpu":
        return f"CPU ({platform.processor() or platform.machine()})"
    index = int(device.partition(":")[2])
    return f"{gpuprims.device_info()['devices'][index]['name']} ({device})"


def versions(peers: Sequence[Peer]) -> str:
    """``"gpuprims X (CUDA Y), numpy Z, ..."`` for a report header."""
    cuda = gpuprims.build_info().get("cuda_version")
    parts = []
    for peer in peers:
        text = f"{peer.name} {peer.version}"
        if isinstance(peer, Gpuprims):
            text += f" (CUDA {cuda})" if cuda else " (CPU-only build)"
        parts.append(text)
    return ", ".join(parts)


def write_markdown(path: Path, rows: Sequence[Row], notes: Sequence[str], header: str) -> None:
    """Write the rows as a Markdown table, after a header and before the notes."""
    lines = [
        "# gpuprims benchmark",
        "",
        header,
        "",
        "Bytes: what an op reads plus what it writes (a full reduction's result is a few bytes); "
        "memcpy reads + writes its buffer. `x_memcpy`: a kernel or device row's GB/s over the device "
        "memcpy's; an end-to-end gpuprims row's pinned host-to-device bound over its time. `route`: "
        "where gpuprims ran the end-to-end call (`gpuprims.explain`).",
        "",
        *markdown_table(COLUMNS, [cells(row) for row in rows]),
    ]
    if notes:
        lines += ["", "Notes:", ""] + [f"- {message}" for message in notes]
    path.write_text("\n".join(lines) + "\n")


def write_csv(path: Path, rows: Sequence[Row], device: str) -> None:
    """Write the rows as CSV with raw numbers (element count, not ``2^K``)."""
    with path.open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["op", "n", "dtype", "device", "library", "mode", "time_ms", "gbps", "x_memcpy", "case",
                         "route"])
        for row in rows:
            writer.writerow([row.op, row.n, row.dtype, device, row.library, row.mode, f"{row.time_ms:.6g}",
                             f"{row.gbps:.6g}", "" if row.x_memcpy is None else f"{row.x_memcpy:.4f}", row.case,
                             row.route])


def write_plot(path: Path, rows: Sequence[Row], ops: Sequence[str], title: str) -> bool:
    """Plot GB/s against size, one panel per op; return False if matplotlib is missing.

    Kernel rows are plotted when there are any (memcpy dashed), else the end-to-end rows.
    """
    try:
        import matplotlib
    except ImportError:
        return False
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    mode = KERNEL if any(row.mode == KERNEL for row in rows) else E2E
    rows = [row for row in rows if row.mode == mode]
    libraries = list(dict.fromkeys(row.library for row in rows))
    colors = dict(zip(libraries, plt.rcParams["axes.prop_cycle"].by_key()["color"] * 2))
    ncols = min(len(ops), PLOT_COLUMNS)
    nrows = -(-len(ops) // ncols)
    fig, axes = plt.subplots(nrows, ncols, figsize=(5 * ncols, 4 * nrows), squeeze=False)
    for ax in axes.flat[len(ops):]:
        ax.set_visible(False)
    for ax, op in zip(axes.flat, ops):
        for library in libraries:
            points = sorted((row.n, row.gbps) for row in rows if row.op == op and row.library == library)
            if points:
                sizes, rates = zip(*points)
                ax.plot(sizes, rates, marker="o", label=library, color=colors[library],
                        linestyle="--" if library == MEMCPY else "-")
        ax.set_xscale("log", base=2)
        ax.set_title(f"{op} ({mode})")
        ax.set_xlabel("elements")
        ax.set_ylabel("GB/s")
        ax.grid(True, which="major", alpha=0.3)
        if ax.lines:
            ax.legend()
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return True
