#!/usr/bin/python3
"""The recovery study of `relsim fit` (docs/fit.md, Recovery): logs drawn by
relsim at known (p, q), fitted back, and the 95% intervals checked against
the truth.

    scripts/fit_recovery.py [--relsim build/relsim] [--replicates 1000] [--tasks 2000]
                            [--jobs 2] [--figures docs/figures] [--csv out.csv]

For each point (independent p = q = 0.3; p = 0.3, q = 0.8; p = 0.02, q = 0.9)
and each replicate k, `relsim plan --p P --q Q --policy layered --r 3 --n 4
--max-requests 12 --tasks T --seed k` writes a plan (the requests a client
would send), and `relsim fit PLAN --json` estimates (p, q). It prints, per
point, how often p_ci and q_ci hold the truth, the binomial allowance around
95% (1.96 standard errors of a proportion over the replicates), and how often
the LR test of q = p rejects at 5% (and the order-2 and runs tests, whose
null hypothesis holds at every point); it draws docs/figures/fit_coverage.png,
fit_estimates.png and fit_lr_pvalues.png (matplotlib, Agg). Exits 1 when a
coverage or the false-alarm rate falls outside its allowance.
"""
import argparse
import concurrent.futures
import csv
import json
import math
import os
import subprocess
import sys
import tempfile

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402  (after choosing the backend)

POINTS = [("independent", 0.3, 0.3), ("bursty", 0.3, 0.8), ("rare", 0.02, 0.9)]
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def one(relsim, p, q, tasks, seed, folder):
    plan = os.path.join(folder, f"plan_{p}_{q}_{seed}.jsonl")
    subprocess.run([relsim, "plan", "--p", str(p), "--q", str(q), "--policy", "layered", "--r", "3", "--n", "4",
                    "--max-requests", "12", "--tasks", str(tasks), "--seed", str(seed), "--out", plan], check=True)
    out = subprocess.run([relsim, "fit", plan, "--json"], check=True, capture_output=True, text=True).stdout
    os.remove(plan)
    return json.loads(out)


def allowance(n, level=0.95):
    return 1.96 * math.sqrt(level * (1 - level) / n)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--relsim", default=os.path.join(ROOT, "build", "relsim"))
    ap.add_argument("--replicates", type=int, default=1000)
    ap.add_argument("--tasks", type=int, default=2000)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--figures", default=os.path.join(ROOT, "docs", "figures"))
    ap.add_argument("--csv", default="")
    a = ap.parse_args()
    rows, ok = [], True
    with tempfile.TemporaryDirectory() as folder, concurrent.futures.ThreadPoolExecutor(a.jobs) as pool:
        for name, p, q in POINTS:
            fits = list(pool.map(lambda k: one(a.relsim, p, q, a.tasks, k, folder), range(1, a.replicates + 1)))
            for k, f in enumerate(fits, 1):
                rows.append({"point": name, "p": p, "q": q, "seed": k, "p_hat": f["p"], "q_hat": f["q"],
                             "p_low": f["p_ci"][0], "p_high": f["p_ci"][1], "q_low": f["q_ci"][0],
                             "q_high": f["q_ci"][1], "lr_p_value": f["independence_p_value"],
                             "order2_p_value": f["order2_p_value"], "runs_p_value": f["runs_p_value"],
                             "records": f["records"]})
    n, band = a.replicates, allowance(a.replicates)
    summary = []
    for name, p, q in POINTS:
        mine = [r for r in rows if r["point"] == name]
        cp = sum(r["p_low"] <= p <= r["p_high"] for r in mine) / n
        cq = sum(r["q_low"] <= q <= r["q_high"] for r in mine) / n
        alarms = sum(r["lr_p_value"] < 0.05 for r in mine) / n
        records = sum(r["records"] for r in mine) / n
        order2 = sum(r["order2_p_value"] is not None and r["order2_p_value"] < 0.05 for r in mine) / n
        runs = sum(r["runs_p_value"] is not None and r["runs_p_value"] < 0.05 for r in mine) / n
        summary.append((name, p, q, cp, cq, alarms))
        print(f"{name:12s} p = {p}, q = {q}: {records:.0f} records per log; coverage p {cp:.3f}, q {cq:.3f} "
              f"(allowance 0.95 +- {band:.3f}); at 5% the LR test of q = p rejects {alarms:.3f}, "
              f"order 2 {order2:.3f}, runs {runs:.3f}")
        ok &= abs(cp - 0.95) <= band and abs(cq - 0.95) <= band
        if p == q:
            ok &= abs(alarms - 0.05) <= allowance(n, 0.05)
    if a.csv:
        with open(a.csv, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=list(rows[0]))
            w.writeheader()
            w.writerows(rows)
    figures(a.figures, rows, summary, n, band)
    return 0 if ok else 1


def figures(folder, rows, summary, n, band):
    os.makedirs(folder, exist_ok=True)
    fig, ax = plt.subplots(figsize=(6.4, 3.6))
    xs = range(len(summary))
    ax.axhspan(0.95 - band, 0.95 + band, color="0.85", label=f"95% +- binomial allowance ({n} replicates)")
    ax.plot(xs, [s[3] for s in summary], "o", label="p_ci covers p")
    ax.plot(xs, [s[4] for s in summary], "s", label="q_ci covers q")
    ax.set_xticks(list(xs), [f"p={s[1]}, q={s[2]}" for s in summary])
    ax.set_ylim(0.88, 1.0)
    ax.set_ylabel("coverage of the 95% interval")
    ax.legend(fontsize=8, loc="lower right")
    fig.tight_layout()
    fig.savefig(os.path.join(folder, "fit_coverage.png"), dpi=110)

    fig, axes = plt.subplots(1, len(summary), figsize=(9.6, 3.2))
    for ax, (name, p, q, *_ignored) in zip(axes, summary):
        qs = [r["q_hat"] for r in rows if r["point"] == name]
        ax.hist(qs, bins=40, color="tab:blue", alpha=0.8)
        ax.axvline(q, color="black", lw=1)
        ax.set_title(f"p={p}, q={q}", fontsize=9)
        ax.set_xlabel("fitted q")
    fig.tight_layout()
    fig.savefig(os.path.join(folder, "fit_estimates.png"), dpi=110)

    fig, ax = plt.subplots(figsize=(5.2, 3.2))
    ps = [r["lr_p_value"] for r in rows if r["point"] == "independent"]
    ax.hist(ps, bins=20, range=(0, 1), color="tab:green", alpha=0.8)
    ax.axhline(len(ps) / 20, color="black", lw=1, label="uniform")
    ax.set_xlabel("LR test of q = p: p-value (true q = p = 0.3)")
    ax.set_ylabel("replicates")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(os.path.join(folder, "fit_lr_pvalues.png"), dpi=110)


if __name__ == "__main__":
    sys.exit(main())
