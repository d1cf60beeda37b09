#!/usr/bin/env python3
"""Replays the cost model's choices against a recorded run, without running anything else.

For every emulated layout of a bench/results.sh run (cluster_<layout>.csv with every algorithm
measured, and the calibration_<layout>.txt it was measured with), asks lanes-model which
algorithm it chooses for each collective and count today, and looks that algorithm up among the
run's own measurements of all of them: its average over the best one's. A change to the model
can so be judged on recorded data first; the run's `auto` rows measure the choice of the build
that ran.

  bench/model_replay.py [--results bench/results] [--model build/lib/tools/lanes-model]
                        [--calibration FILE] [--over 1.10]

--calibration replaces every layout's recorded calibration (to try parameters). Prints the
rows whose choice is more than --over times the best, and per layout how many rows there are.
"""
import argparse
import collections
import csv
import os
import re
import subprocess
import sys


def layouts_of(results):
    """(name, nodes, ppn, rails) of every layout with a CSV and a calibration."""
    out = []
    for name in sorted(os.listdir(results)):
        m = re.fullmatch(r"cluster_(\w+(?:-\w+)?)\.csv", name)
        if not m:
            continue
        layout = m.group(1)
        cal = os.path.join(results, f"calibration_{layout}.txt")
        if not os.path.exists(cal):
            continue
        rails = 1
        for line in open(cal):
            if line.startswith("rails "):
                rails = int(float(line.split()[1]))
        out.append((layout, os.path.join(results, name), cal, rails))
    return out


def choice(model, coll, nodes, ppn, rails, nbytes, cal):
    text = subprocess.run(
        [model, "--collective", coll, "--nodes", str(nodes), "--ppn", str(ppn), "--rails",
         str(rails), "--bytes", str(nbytes), "--calibration", cal],
        capture_output=True, text=True, check=True).stdout
    for line in text.splitlines():
        if line.startswith("chosen:"):
            return line.split()[1]
    return None


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--results", default=os.path.join(here, "results"))
    ap.add_argument("--model", default=os.path.join(here, "..", "build", "lib", "tools",
                                                    "lanes-model"))
    ap.add_argument("--calibration", default="")
    ap.add_argument("--over", type=float, default=1.10)
    args = ap.parse_args()
    total = collections.Counter()
    over = []
    for layout, path, cal, rails in layouts_of(args.results):
        times = collections.defaultdict(dict)
        shape = None
        for r in csv.DictReader(open(path)):
            if r["impl"] != "lanes" or r["algorithm"] == "auto" or int(r["lanes"]) != rails:
                continue
            shape = (int(r["nodes"]), int(r["ppn"]))
            times[(r["collective"], int(r["count"]))][r["algorithm"]] = float(r["avg_us"])
        if shape is None:
            continue
        for (coll, count), algs in sorted(times.items()):
            if len(algs) < 2:
                continue
            chosen = choice(args.model, coll, shape[0], shape[1], rails, 4 * count,
                            args.calibration or cal)
            if chosen not in algs:
                continue
            best = min(algs, key=algs.get)
            ratio = algs[chosen] / algs[best]
            total[layout] += 1
            if ratio > args.over:
                over.append((ratio, layout, coll, count, chosen, algs[chosen], best, algs[best]))
    if not total:
        sys.exit(f"no layout with every algorithm measured in {args.results}")
    print(f"| layout | collective | count | model's choice | µs | best | µs | choice/best |")
    print("|---|---|---:|---|---:|---|---:|---:|")
    for ratio, layout, coll, count, chosen, t, best, tb in sorted(over, reverse=True):
        print(f"| {layout} | {coll} | {count} | {chosen} | {t:.1f} | {best} | {tb:.1f} | "
              f"{ratio:.2f} |")
    rows = sum(total.values())
    print(f"\n{len(over)} of {rows} rows over {args.over:.2f}x the best "
          f"({', '.join(f'{k}: {v} rows' for k, v in sorted(total.items()))})")


if __name__ == "__main__":
    main()
