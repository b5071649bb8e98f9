"""Turn benchmark JSON lines (cmd/gbs-bench) into Markdown tables and a figure.

    .venv/bin/python bench/summarize.py bench-out/runs.jsonl \
        --markdown docs/benchmark-results.md --figure docs/benchmarks.png \
        --command "go run ./cmd/gbs-bench ..."

Each input line is a JSON object with the keys problem, method, seed, logz,
logzerr, exact, ncall, ngrad, seconds (and error on failure).
"""

import argparse
import json
import math
from collections import defaultdict

import numpy as np

METHOD_ORDER = ["GBS", "GBSL", "GIS", "GHM", "WBS", "AIS", "RAIS", "NS"]
PROBLEM_ORDER = ["funnel", "banana", "cauchy", "ring"]


def load(paths):
    runs = []
    for path in paths:
        with open(path) as f:
            for line in f:
                line = line.strip()
                if line:
                    runs.append(json.loads(line))
    return runs


def ordered(keys, order):
    return [k for k in order if k in keys] + sorted(k for k in keys if k not in order)


def stats(rows):
    ok = [r for r in rows if not r.get("error") and math.isfinite(r["logz"])]
    out = {"runs": len(rows), "failed": len(rows) - len(ok)}
    if not ok:
        return out
    dz = np.array([r["logz"] - r["exact"] for r in ok])
    err = np.array([r["logzerr"] for r in ok])
    out.update(
        bias=float(dz.mean()), sd=float(dz.std(ddof=1)) if len(dz) > 1 else float("nan"),
        rmse=float(np.sqrt(np.mean(dz ** 2))), err=float(np.median(err)),
        cover1=float(np.mean(np.abs(dz) < err)), cover2=float(np.mean(np.abs(dz) < 2 * err)),
        ncall=float(np.median([r["ncall"] for r in ok])), ngrad=float(np.median([r["ngrad"] for r in ok])),
        seconds=float(np.median([r["seconds"] for r in ok])))
    return out


def fmt(v, spec):
    return "–" if v is None or (isinstance(v, float) and math.isnan(v)) else format(v, spec)


def markdown(runs, commands):
    by = defaultdict(list)
    for r in runs:
        by[(r["problem"], r["method"])].append(r)
    problems = ordered({p for p, _ in by}, PROBLEM_ORDER)
    lines = ["# Benchmark results", ""]
    if commands:
        lines += ["Made by:", "", "```sh"] + commands + ["```", ""]
    lines += ["Columns: bias = mean of ln Z − exact; sd = its standard deviation over runs; "
              "err = median reported error; |Δ|<σ and |Δ|<2σ = fraction of runs whose error "
              "bar covers the exact value; calls = median log-density evaluations of the "
              "evidence stage; grads = median gradient evaluations (sampler, or AIS); s = median "
              "seconds per run (sampling included).", ""]
    for p in problems:
        exact = next(r["exact"] for (q, _), rs in by.items() if q == p for r in rs)
        lines += ["## %s (exact ln Z = %.6f)" % (p, exact), "",
                  "| method | runs | bias | sd | err | abs(Δ)<σ | abs(Δ)<2σ | calls | grads | s | failed |",
                  "|---|---|---|---|---|---|---|---|---|---|---|"]
        for m in ordered({m for q, m in by if q == p}, METHOD_ORDER):
            s = stats(by[(p, m)])
            lines.append("| %s | %d | %s | %s | %s | %s | %s | %s | %s | %s | %d |" % (
                m, s["runs"], fmt(s.get("bias"), "+.4f"), fmt(s.get("sd"), ".4f"), fmt(s.get("err"), ".4f"),
                fmt(s.get("cover1"), ".2f"), fmt(s.get("cover2"), ".2f"), fmt(s.get("ncall"), ".3g"),
                fmt(s.get("ngrad"), ".3g"), fmt(s.get("seconds"), ".1f"), s["failed"]))
        lines.append("")
    return "\n".join(lines)


def figure(runs, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    problems = ordered({r["problem"] for r in runs}, PROBLEM_ORDER)
    methods = ordered({r["method"] for r in runs}, METHOD_ORDER)
    fig, axes = plt.subplots(2, len(problems), figsize=(3.6 * len(problems), 6.5), squeeze=False)
    for j, p in enumerate(problems):
        ax, axc = axes[0, j], axes[1, j]
        for i, m in enumerate(methods):
            rs = [r for r in runs if r["problem"] == p and r["method"] == m
                  and not r.get("error") and math.isfinite(r["logz"])]
            if not rs:
                continue
            dz = np.array([r["logz"] - r["exact"] for r in rs])
            jitter = (np.random.default_rng(i).random(len(dz)) - 0.5) * 0.3
            ax.scatter(i + jitter, dz, s=10, alpha=0.7)
            ax.errorbar(i, np.median(dz), yerr=np.median([r["logzerr"] for r in rs]), fmt="k_", capsize=4)
            axc.bar(i, np.median([r["ncall"] + r["ngrad"] for r in rs]))
        ax.axhline(0, color="k", lw=0.8)
        ax.set_yscale("symlog", linthresh=0.1)
        ax.set_title(p)
        ax.set_xticks(range(len(methods)), methods, rotation=60)
        axc.set_yscale("log")
        axc.set_xticks(range(len(methods)), methods, rotation=60)
        if j == 0:
            ax.set_ylabel(r"$\ln Z - \ln Z_{\rm exact}$")
            axc.set_ylabel("evaluations (median)")
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("inputs", nargs="+", help="JSON-lines files")
    ap.add_argument("--markdown", default="docs/benchmark-results.md")
    ap.add_argument("--figure", default="docs/benchmarks.png")
    ap.add_argument("--command", action="append", default=[], help="command line that made the runs (repeatable)")
    args = ap.parse_args(argv)
    runs = load(args.inputs)
    if not runs:
        ap.error("no runs in %s" % ", ".join(args.inputs))
    with open(args.markdown, "w") as f:
        f.write(markdown(runs, args.command) + "\n")
    figure(runs, args.figure)
    print("wrote %s and %s from %d runs" % (args.markdown, args.figure, len(runs)))


if __name__ == "__main__":
    main()
