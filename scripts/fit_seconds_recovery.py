#!/usr/bin/python3
"""The recovery study of `relsim fit` in seconds (docs/fit.md, Fit in seconds):
logs with timestamps drawn here at known (t_good, t_bad), fitted back by
`relsim fit --json`, and the 95% intervals checked against the truth.

    scripts/fit_seconds_recovery.py [--relsim build/relsim] [--replicates 300] [--tasks 300]
                                    [--requests 12] [--jobs 2] [--figures docs/figures] [--csv out.csv]

The sampler is this script's own, written from the definition in docs/time.md
and nothing of relsim's code: each task's chain starts in the stationary law
(bad with t_bad / (t_good + t_bad)) and runs by exponential holding times of
means t_good and t_bad; the task sends --requests requests, gaps between their
starts uniform in [2, 30] s (an agent's model calls), and a request is bad when
the chain is bad at its start. Each replicate is a CSV (task, time, outcome)
fitted with `relsim fit FILE --json`. Prints, per point, how often t_good_ci
and t_bad_ci hold the truth and how often the calibration check rejects at
5%, against the binomial allowance around 95% (1.96 standard errors over the
replicates); draws docs/figures/fit_seconds_coverage.png. Exits 1 when a
coverage leaves its allowance.
"""
import argparse
import concurrent.futures
import csv
import json
import math
import os
import random
import subprocess
import sys
import tempfile

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402  (after choosing the backend)

# (name, t_good, t_bad): short frequent outages, rare ones, long ones.
POINTS = [("frequent", 300.0, 60.0), ("rare", 1800.0, 90.0), ("long", 600.0, 300.0)]
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GAP_LOW, GAP_HIGH = 2.0, 30.0


def draw(path, t_good, t_bad, tasks, requests, seed):
    rng = random.Random(seed)
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["task", "time", "outcome"])
        for k in range(tasks):
            bad = rng.random() < t_bad / (t_good + t_bad)
            now = 1.7e9 + 10000.0 * k
            change = now + rng.expovariate(1.0 / (t_bad if bad else t_good))
            for i in range(requests):
                if i > 0:
                    now += rng.uniform(GAP_LOW, GAP_HIGH)
                while change <= now:
                    bad = not bad
                    change += rng.expovariate(1.0 / (t_bad if bad else t_good))
                w.writerow([f"t{k}", f"{now:.6f}", "overloaded" if bad else "ok"])


def one(relsim, t_good, t_bad, tasks, requests, seed, folder):
    path = os.path.join(folder, f"log_{t_good}_{t_bad}_{seed}.csv")
    draw(path, t_good, t_bad, tasks, requests, seed)
    out = subprocess.run([relsim, "fit", path, "--json"], check=True, capture_output=True, text=True).stdout
    os.remove(path)
    return json.loads(out)["seconds"]


def allowance(n, level=0.95):
    return 1.96 * math.sqrt(level * (1 - level) / n)


def covers(ci, truth):
    high = math.inf if ci[1] is None else ci[1]
    return ci[0] <= truth <= high


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--relsim", default=os.path.join(ROOT, "build", "relsim"))
    ap.add_argument("--replicates", type=int, default=300)
    ap.add_argument("--tasks", type=int, default=300)
    ap.add_argument("--requests", type=int, default=12)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--figures", default=os.path.join(ROOT, "docs", "figures"))
    ap.add_argument("--csv", default="")
    a = ap.parse_args()
    if a.replicates < 1 or a.tasks < 1 or a.requests < 2 or a.jobs < 1:
        ap.error("--replicates, --tasks and --jobs must be >= 1 and --requests >= 2")
    rows, ok = [], True
    with tempfile.TemporaryDirectory() as folder, concurrent.futures.ThreadPoolExecutor(a.jobs) as pool:
        for name, tg, tb in POINTS:
            fits = list(pool.map(lambda k: one(a.relsim, tg, tb, a.tasks, a.requests, k, folder),
                                 range(1, a.replicates + 1)))
            for k, s in enumerate(fits, 1):
                if not s or not s["identified"]:
                    print(f"{name}: replicate {k} not identified: {s and s['note']}", file=sys.stderr)
                    ok = False
                    continue
                rows.append({"point": name, "t_good": tg, "t_bad": tb, "seed": k, "t_good_hat": s["t_good"],
                             "t_bad_hat": s["t_bad"], "t_good_low": s["t_good_ci"][0],
                             "t_good_high": s["t_good_ci"][1], "t_bad_low": s["t_bad_ci"][0],
                             "t_bad_high": s["t_bad_ci"][1], "check_p_value": s["check_p_value"],
                             "gaps": s["gaps"]})
    n, band = a.replicates, allowance(a.replicates)
    summary = []
    for name, tg, tb in POINTS:
        mine = [r for r in rows if r["point"] == name]
        cg = sum(covers((r["t_good_low"], r["t_good_high"]), tg) for r in mine) / n
        cb = sum(covers((r["t_bad_low"], r["t_bad_high"]), tb) for r in mine) / n
        rejects = sum(r["check_p_value"] is not None and r["check_p_value"] < 0.05 for r in mine) / n
        median = sorted(r["t_bad_hat"] for r in mine)[len(mine) // 2]
        summary.append((name, tg, tb, cg, cb, rejects))
        print(f"{name:9s} t_good = {tg:g} s, t_bad = {tb:g} s: coverage t_good {cg:.3f}, t_bad {cb:.3f} "
              f"(allowance 0.95 +- {band:.3f}); median t_bad estimate {median:.1f} s; "
              f"calibration check rejects at 5%: {rejects:.3f}")
        ok &= abs(cg - 0.95) <= band and abs(cb - 0.95) <= band
    if a.csv:
        with open(a.csv, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=list(rows[0]))
            w.writeheader()
            w.writerows(rows)
    os.makedirs(a.figures, exist_ok=True)
    fig, ax = plt.subplots(figsize=(6.4, 3.6))
    xs = range(len(summary))
    ax.axhspan(0.95 - band, 0.95 + band, color="0.85", label=f"95% +- binomial allowance ({n} replicates)")
    ax.plot(xs, [s[3] for s in summary], "o", label="t_good interval covers t_good")
    ax.plot(xs, [s[4] for s in summary], "s", label="t_bad interval covers t_bad")
    ax.set_xticks(list(xs), [f"t_good={s[1]:g} s\nt_bad={s[2]:g} s" for s in summary])
    ax.set_ylim(0.85, 1.0)
    ax.set_ylabel("coverage of the 95% interval")
    ax.legend(fontsize=8, loc="lower right")
    fig.tight_layout()
    fig.savefig(os.path.join(a.figures, "fit_seconds_coverage.png"), dpi=110)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
