#!/usr/bin/env python3
"""Requests per call for several clients, from `relsim audit --out` CSVs.

    scripts/plot_audit.py [--out docs/figures/audit_requests_per_call.png] [--title TEXT] \\
        sdk_only=sdk_only.csv naive_loop=naive.csv layered_loop=layered.csv

Each CSV is one audit's per-task file; its column requests_per_call holds the
requests each call of the task sent, space-separated ("1 3": the first call
took one request, the second three). The figure has one group of bars per
request count, one bar per client: how many calls sent that many requests
(log scale, so the rare 9-request calls show). docs/audit.md shows the
figure for the three TypeScript harnesses of examples/harnesses/.
"""
import argparse
import collections
import csv
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402  (after choosing the backend)


def requests_per_call(path):
    counts = collections.Counter()
    with open(path, newline="") as f:
        reader = csv.DictReader(f)
        if "requests_per_call" not in (reader.fieldnames or []):
            sys.exit(f"plot_audit: {path} has no column requests_per_call (is it a relsim audit --out CSV?)")
        for row in reader:
            for word in (row["requests_per_call"] or "").split():
                counts[int(word)] += 1
    return counts


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("runs", nargs="+", metavar="NAME=CSV", help="a client's name and its audit CSV")
    parser.add_argument("--out", default="docs/figures/audit_requests_per_call.png")
    parser.add_argument("--title", default="Requests per model call, reference plan (400 tasks, 2 calls each)")
    args = parser.parse_args()
    runs = []
    for item in args.runs:
        name, sep, path = item.partition("=")
        if not sep or not name or not path:
            sys.exit(f"plot_audit: '{item}' is not NAME=CSV")
        runs.append((name, requests_per_call(path)))

    most = max(max(c, default=1) for _, c in runs)
    xs = list(range(1, most + 1))
    width = 0.8 / len(runs)
    fig, ax = plt.subplots(figsize=(8, 4.2), dpi=120)
    for i, (name, counts) in enumerate(runs):
        total = sum(counts.values())
        mean = sum(k * v for k, v in counts.items()) / total if total else 0
        label = f"{name} ({total} calls, mean {mean:.2f}, most {max(counts, default=0)})"
        ax.bar([x - 0.4 + width * (i + 0.5) for x in xs], [counts.get(x, 0) for x in xs], width, label=label)
    ax.set_yscale("log")
    ax.set_xticks(xs)
    ax.set_xlabel("requests sent by one call")
    ax.set_ylabel("calls (log scale)")
    ax.set_title(args.title)
    ax.legend(fontsize=8)
    ax.grid(axis="y", alpha=0.3)
    fig.tight_layout()
    fig.savefig(args.out)
    print(f"plot_audit: wrote {args.out}")


if __name__ == "__main__":
    main()
