#!/usr/bin/env python3
"""The benchmark table (scripts/bench.sh): Google Benchmark's JSON to one line
per measured ratio, and docs/performance.md from those lines.

  bench_table.py lines OUT.jsonl RUN.json...   # one JSON line per ratio, for this machine
  bench_table.py doc data/bench/*.jsonl        # docs/performance.md on stdout, a section per machine kind

Every ratio is taken against a baseline measured in the same process run, so
the ratio, not the time, is what carries from one machine to another; the
times are kept beside it for the reader. A line: bench (program), name
(Google Benchmark's, with its arguments), ratio (the counter's value), ratio_of
(the counter), better ("higher" or "lower"), baseline (what the counter divides
by), real_time and time_unit, items_per_second (when the bench counts items),
the machine (cpu model, family and model numbers, cores, x86-64 level, flags
that pick a kernel), the commit and the date.
"""
import json
import os
import re
import subprocess
import sys
from collections import OrderedDict

# counter -> (better, baseline), per bench program. A counter not listed here
# is not a ratio (a count, a time, a log-likelihood) and makes no line.
RATIOS = {
    "bench_simulate": {
        "x_baseline": ("higher", "a straightforward single-threaded simulation on std::mt19937_64 (BM_Baseline)"),
    },
    "bench_simulate_time": {
        "x_baseline": ("higher", "a straightforward single-threaded event loop in seconds on std::mt19937_64 (BM_Baseline)"),
    },
    "bench_hidden": {
        "x_baseline": ("higher", "the textbook scaled forward-backward on Eigen vectors, one thread (BM_EStepBaseline)"),
    },
    "bench_enumerate": {
        "speedup_1t": ("higher", "the naive enumeration, one thread (wall clock)"),
        "speedup_core_2t": ("higher", "the naive enumeration, per core of two threads (wall clock)"),
        "cpu_speedup_1t": ("higher", "the naive enumeration, one thread (process CPU time)"),
    },
    "bench_exact": {
        "default_over_totals": ("lower", "the matrix engine's totals alone, without the distributions"),
        "enumerate_over_matrix": ("higher", "the matrix engine on the same model (enumeration's time over it)"),
    },
    "bench_tune": {
        "time_over_matrix": ("lower", "the same schedules' exact answers on the discrete chain (matrix engine)"),
    },
    "bench_live": {
        "vs_close": ("higher", "the same streams with a connection per request"),
    },
    "bench_proxy": {
        "proxy_vs_direct": ("higher", "the same upstream asked directly (throughput through relsim proxy over direct)"),
    },
    "bench_ui": {
        "vs_direct": ("lower", "the same command run in-process (time over HTTP over direct)"),
    },
}

# What a benchmark's arguments mean, where the name alone does not say.
NOTES = [
    "`kernel:K` in `BM_Simulate`: 0 the automatic choice, 1 scalar, 2 AVX2, 3 AVX-512 (`relsim simulate --kernel`).",
    "`BM_ForwardBackward`'s time is one E-step over 10^6 records: per record, divide by 10^6.",
]

LEVEL_FLAGS = {
    "x86-64-v4": {"avx512f", "avx512bw", "avx512cd", "avx512dq", "avx512vl"},
    "x86-64-v3": {"avx2", "fma", "bmi1", "bmi2", "movbe", "f16c", "abm"},  # abm: LZCNT in /proc/cpuinfo
    "x86-64-v2": {"sse4_2", "ssse3", "popcnt", "cx16"},
}


def machine():
    info = {}
    try:
        with open("/proc/cpuinfo") as f:
            text = f.read()
    except OSError:
        text = ""
    first = text.split("\n\n", 1)[0]
    for line in first.splitlines():
        key, _, value = line.partition(":")
        info[key.strip()] = value.strip()
    flags = set(info.get("flags", "").split())
    level = "x86-64"
    for name in ("x86-64-v4", "x86-64-v3", "x86-64-v2"):
        if LEVEL_FLAGS[name] <= flags:
            level = name
            break
    model = info.get("model name", "unknown cpu")
    kind = f"{model} (family {info.get('cpu family', '?')}, model {info.get('model', '?')}), {os.cpu_count()} cores, {level}"
    return {
        "cpu": model,
        "cpu_family": info.get("cpu family"),
        "cpu_model": info.get("model"),
        "cores": os.cpu_count(),
        "level": level,
        "kernel_flags": sorted(flags & {"avx2", "fma", "bmi2", "avx512f", "avx512dq", "avx512vl"}),
        "kind": kind,
    }


def commit():
    try:
        out = subprocess.run(["git", "rev-parse", "--short=12", "HEAD"], capture_output=True, text=True, check=True)
        # What bench.sh itself rewrites does not make the code measured differ from the commit.
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no", "--", ".", ":!data/bench", ":!docs/performance.md"],
            capture_output=True, text=True)
        return out.stdout.strip() + ("+changes" if dirty.stdout.strip() else "")
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def lines(out_path, runs):
    here = machine()
    rev = commit()
    rows = []
    for path in runs:
        with open(path) as f:
            run = json.load(f)
        program = os.path.basename(run.get("context", {}).get("executable", path)).removesuffix(".json")
        ratios = RATIOS.get(program, {})
        for b in run.get("benchmarks", []):
            if b.get("error_occurred"):
                continue
            for counter, (better, baseline) in ratios.items():
                if counter not in b:
                    continue
                row = OrderedDict(
                    bench=program,
                    name=b["name"],
                    ratio=round(float(b[counter]), 4),
                    ratio_of=counter,
                    better=better,
                    baseline=baseline,
                    real_time=round(float(b["real_time"]), 4),
                    time_unit=b.get("time_unit", "ns"),
                )
                if "items_per_second" in b:
                    row["items_per_second"] = float(f"{b['items_per_second']:.4g}")
                row["machine"] = here
                row["commit"] = rev
                row["date"] = run.get("context", {}).get("date", "")
                rows.append(row)
    if not rows:
        print("bench_table.py: no ratio in " + " ".join(runs) + " (these programs time no baseline)", file=sys.stderr)
    tmp = out_path + ".tmp"
    with open(tmp, "w") as f:
        for row in rows:
            f.write(json.dumps(row) + "\n")
    os.replace(tmp, out_path)
    print(f"bench_table.py: {len(rows)} ratios to {out_path}", file=sys.stderr)


def doc(paths):
    by_kind = OrderedDict()
    for path in sorted(paths):
        with open(path) as f:
            for n, line in enumerate(f, 1):
                line = line.strip()
                if not line:
                    continue
                try:
                    row = json.loads(line)
                except json.JSONDecodeError as e:
                    sys.exit(f"bench_table.py: {path}:{n}: not JSON ({e.msg})")
                by_kind.setdefault(row["machine"]["kind"], []).append(row)
    out = [
        "# Performance",
        "",
        "Generated by `scripts/bench.sh` from `data/bench/*.jsonl` (one file per machine kind);",
        "do not edit by hand. Every ratio is against a baseline timed in the same",
        "process run, so it carries from one run to the next better than a time does;",
        "times are the benchmark's own (per iteration). `scripts/bench.sh` runs every",
        "program in `bench/`; `scripts/bench.sh bench_simulate` one of them.",
        "",
    ]
    for kind, rows in by_kind.items():
        m = rows[0]["machine"]
        commits = sorted({r["commit"] for r in rows})
        dates = sorted({r["date"][:10] for r in rows if r.get("date")})
        out += [
            f"## {kind}",
            "",
            f"Kernel flags: {', '.join(m['kernel_flags']) or 'none'}. Commit {', '.join(commits)}; {', '.join(dates)}.",
            "",
            "| benchmark | ratio | better | against | time |",
            "|---|---|---|---|---|",
        ]
        for r in rows:
            out.append(
                f"| `{r['name']}` | {r['ratio']:.3g} ({r['ratio_of']}) | {r['better']} | {r['baseline']} | "
                f"{r['real_time']:.4g} {r['time_unit']} |"
            )
        out.append("")
    out += ["Reading the names:", ""] + [f"- {n}" for n in NOTES] + [""]
    sys.stdout.write("\n".join(out))


def main(argv):
    if len(argv) >= 3 and argv[1] == "lines":
        lines(argv[2], argv[3:])
    elif len(argv) >= 2 and argv[1] == "doc":
        doc(argv[2:])
    else:
        sys.exit("usage: bench_table.py lines OUT.jsonl RUN.json... | doc FILE.jsonl...")


if __name__ == "__main__":
    main(sys.argv)
