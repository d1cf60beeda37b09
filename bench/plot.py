#!/usr/bin/python3
"""Charts of lanes-bench results.

    /usr/bin/python3 bench/plot.py --out DIR results.csv [more.csv ...] [--metric avg|min]

Reads one or more CSV files written by `lanes-bench --csv` and writes, per (collective, nodes,
processes per node):

  DIR/<collective>_<nodes>x<ppn>_time.png     time per call vs count, log-log, one line per
                                              (impl, algorithm, lanes)
  DIR/<collective>_<nodes>x<ppn>_speedup.png  native time / lanes time vs count, log x
                                              (only when the MPI library's rows are present)

Rows that repeat (the same variant, shape and count in several files) are averaged. The shape
is lanes-bench's nodes and ppn (processes on the largest node), so an irregular run (3 processes
as nodes of 2 and 1) shares the shape of a 2 x 2 run: plot such files into their own directory. Counts of 0
cannot sit on a log axis and are left out. Prints the files it writes, one a line.
Needs matplotlib (Debian: python3-matplotlib); renders without a display (Agg).
"""

import argparse
import csv
import os
import sys
from collections import defaultdict

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

HEADER = ["collective", "impl", "algorithm", "lanes", "nodes", "ppn", "count", "bytes",
          "avg_us", "min_us", "median_us"]


def read_rows(paths):
    """(collective, nodes, ppn) -> variant -> count -> list of (avg_us, min_us)."""
    table = defaultdict(lambda: defaultdict(lambda: defaultdict(list)))
    for path in paths:
        with open(path, newline="") as f:
            reader = csv.reader(f)
            header = next(reader, None)
            if header != HEADER:
                raise ValueError(f"{path}: header is {header}, expected {','.join(HEADER)}")
            for line, row in enumerate(reader, start=2):
                if not row:
                    continue
                if len(row) != len(HEADER):
                    raise ValueError(f"{path}:{line}: {len(row)} fields, expected {len(HEADER)}")
                r = dict(zip(HEADER, row))
                shape = (r["collective"], int(r["nodes"]), int(r["ppn"]))
                variant = (r["impl"], r["algorithm"], int(r["lanes"]))
                table[shape][variant][int(r["count"])].append(
                    (float(r["avg_us"]), float(r["min_us"])))
    return table


def series(per_count, metric):
    """Sorted counts (> 0) and the metric per count, repeated rows averaged."""
    index = 0 if metric == "avg" else 1
    counts = sorted(c for c in per_count if c > 0)
    values = [sum(v[index] for v in per_count[c]) / len(per_count[c]) for c in counts]
    return counts, values


def label(variant):
    impl, algorithm, lanes = variant
    if impl == "native":
        return f"native ({algorithm})"
    return f"lanes {algorithm} k={lanes}"


def ordered(variants):
    """The MPI library first, then lanes variants by algorithm and lanes."""
    return sorted(variants, key=lambda v: (v[0] != "native", v[1], v[2]))


def style(ax, i, n):
    colors = plt.get_cmap("tab20" if n > 10 else "tab10")
    markers = "os^vD<>ph*"
    return {"color": colors(i % colors.N), "marker": markers[i % len(markers)], "markersize": 4}


def finish(fig, ax, title, path):
    ax.set_title(title)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize="small", loc="center left", bbox_to_anchor=(1.01, 0.5))
    fig.savefig(path, dpi=120, bbox_inches="tight")
    plt.close(fig)
    print(path)


def plot_shape(out, shape, variants, metric):
    collective, nodes, ppn = shape
    stem = os.path.join(out, f"{collective}_{nodes}x{ppn}")
    where = f"{collective}, {nodes} node{'s' if nodes != 1 else ''} x {ppn} processes"
    names = ordered(variants)
    written = 0

    fig, ax = plt.subplots(figsize=(8, 5))
    for i, v in enumerate(names):
        counts, values = series(variants[v], metric)
        if counts:
            ax.plot(counts, values, label=label(v), **style(ax, i, len(names)))
            written += 1
    if written == 0:
        plt.close(fig)
        return
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("count (MPI_INT elements per process)")
    ax.set_ylabel(f"time per call, {metric} over repetitions (us)")
    finish(fig, ax, f"{where}: time", stem + "_time.png")

    native = [v for v in names if v[0] == "native"]
    if not native:
        return
    base_counts, base_values = series(variants[native[0]], metric)
    base = dict(zip(base_counts, base_values))
    fig, ax = plt.subplots(figsize=(8, 5))
    plotted = 0
    for i, v in enumerate(names):
        if v[0] == "native":
            continue
        counts, values = series(variants[v], metric)
        points = [(c, base[c] / t) for c, t in zip(counts, values) if c in base and t > 0]
        if points:
            ax.plot([c for c, _ in points], [s for _, s in points], label=label(v),
                    **style(ax, i, len(names)))
            plotted += 1
    if plotted == 0:
        plt.close(fig)
        return
    ax.axhline(1.0, color="black", linewidth=0.8, linestyle="--")
    ax.set_xscale("log")
    ax.set_xlabel("count (MPI_INT elements per process)")
    ax.set_ylabel(f"speedup vs native ({native[0][1]} {metric} / lanes {metric})")
    finish(fig, ax, f"{where}: speedup over the MPI library", stem + "_speedup.png")


def main(argv):
    parser = argparse.ArgumentParser(description="Charts of lanes-bench CSV results.")
    parser.add_argument("--out", required=True, help="directory for the PNG files")
    parser.add_argument("--metric", choices=["avg", "min"], default="avg",
                        help="time per call to plot: average (default) or minimum")
    parser.add_argument("csv", nargs="+", help="lanes-bench --csv files")
    args = parser.parse_args(argv)
    try:
        table = read_rows(args.csv)
    except (OSError, ValueError) as e:
        print(f"plot.py: {e}", file=sys.stderr)
        return 2
    if not table:
        print("plot.py: no rows in " + ", ".join(args.csv), file=sys.stderr)
        return 1
    os.makedirs(args.out, exist_ok=True)
    for shape in sorted(table):
        plot_shape(args.out, shape, table[shape], args.metric)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
