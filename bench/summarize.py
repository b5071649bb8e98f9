#!/usr/bin/env python3
"""Summarize evidence benchmarks: Markdown tables and a figure.

Reads JSON-lines files of benchmark runs, one object per run with the keys

    problem, method, seed, logz, logzerr, exact, ncall, ngrad, seconds

(and "error" for a failed run, "note" for a run flagged otherwise, e.g.
stopped by a call cap). The Go benchmark (cmd/gbs-bench) writes them for
the methods GBS, GBSL, GIS, GHM, WBS, AIS and RAIS, and
bench/dynesty_bench.py for nested sampling (NS). A failed run may have
null, NaN or missing logz and logzerr.

Writes
  * a Markdown file (--markdown): the command lines that made the runs
    (--command, repeatable), a combined short table per method and problem,
    then one table per problem with, per method: runs, bias (mean of
    ln Z - exact), standard deviation of ln Z over runs, median reported
    error, fraction of runs with |ln Z - exact| below one and two reported
    errors, median log-density calls, median gradient calls, median
    seconds, and failed runs; notes and errors are listed below;
  * a PNG figure (--figure) in the manner of Jia & Seljak (2019), Fig. 3:
    per problem (columns), the distribution of ln Z - exact per method
    (box plot with the runs on top, the mean with the median reported
    error beside it, symmetric-log y axis so that outliers stay visible, a
    band at 0), and below it the median numbers of
    log-density and gradient evaluations per method (log scale).

Example:

    .venv/bin/python bench/summarize.py runs.jsonl bench/results/paper-ns.jsonl \\
        --markdown results.md --figure results.png \\
        --command "go run ./cmd/gbs-bench -o runs.jsonl"

The published tables and figure are bench/report.py's (make bench-report),
which uses this module's statistics and figure on the files of
bench/results/.
"""

import argparse
import json
import math
import os
import sys
from collections import defaultdict

import numpy as np

METHOD_ORDER = ["GBS", "GBSL", "GIS", "GHM", "WBS", "AIS", "RAIS", "NS", "DNS"]
PROBLEM_ORDER = ["funnel", "banana", "cauchy", "ring"]
REQUIRED = ("problem", "method", "seed")
METHOD_NOTES = {
    "GBS": "NUTS, then Gaussianized bridge sampling",
    "GBSL": "GBS with half the chains, iterations and flow layers",
    "GIS": "the same flow, importance sampling",
    "GHM": "the same flow, harmonic mean",
    "WBS": "warp-III bridge sampling (Gaussian proposal)",
    "AIS": "annealed importance sampling",
    "RAIS": "reverse annealed importance sampling",
    "NS": "nested sampling, dynesty NestedSampler with default settings",
    "DNS": "dynamic nested sampling, dynesty DynamicNestedSampler with default settings",
}


class InputError(Exception):
    """A problem with the input files, reported without a traceback."""


def _num(v):
    """v as a float; None, strings and the like become NaN."""
    if isinstance(v, bool):
        return float("nan")
    try:
        return float(v)
    except (TypeError, ValueError):
        return float("nan")


def load(paths):
    """Runs from JSON-lines files, as a list of dicts.

    Blank lines are skipped; a malformed line or one without problem,
    method and seed is skipped with a warning on stderr. Numeric fields
    are converted to float (NaN when null or missing).
    """
    runs = []
    for path in paths:
        try:
            f = open(path)
        except OSError as exc:
            raise InputError("cannot read %s: %s" % (path, exc.strerror or exc)) from None
        with f:
            for i, line in enumerate(f, 1):
                line = line.strip()
                if not line:
                    continue
                try:
                    r = json.loads(line)
                except ValueError as exc:
                    print("summarize: %s:%d: skipping a malformed line (%s)" % (path, i, exc), file=sys.stderr)
                    continue
                if not isinstance(r, dict) or any(k not in r for k in REQUIRED):
                    print("summarize: %s:%d: skipping a line without %s" % (path, i, ", ".join(REQUIRED)),
                          file=sys.stderr)
                    continue
                r["problem"], r["method"] = str(r["problem"]), str(r["method"])
                for k in ("logz", "logzerr", "exact", "ncall", "ngrad", "seconds"):
                    r[k] = _num(r.get(k))
                runs.append(r)
    return runs


def ordered(keys, order):
    """keys in the given order first, the others sorted after them."""
    return [k for k in order if k in keys] + sorted(k for k in keys if k not in order)


def failed(r):
    """A run counts as failed if it has an error or no finite ln Z."""
    return bool(r.get("error")) or not math.isfinite(r["logz"]) or not math.isfinite(r["exact"])


def stats(rows):
    """Summary statistics of the runs of one method on one problem.

    Returns a dict with runs, failed, and (when at least one run succeeded)
    ok, bias, sd (NaN for a single run), rmse, err (median reported error),
    cover1, cover2 (fractions of the runs with a finite error bar that
    cover the exact value within one and two errors), ncall, ngrad,
    seconds (medians).
    """
    ok = [r for r in rows if not failed(r)]
    out = {"runs": len(rows), "failed": len(rows) - len(ok), "ok": len(ok)}
    if not ok:
        return out
    dz = np.array([r["logz"] - r["exact"] for r in ok])
    err = np.array([r["logzerr"] for r in ok])
    fin = np.isfinite(err)
    out.update(
        bias=float(dz.mean()),
        sd=float(dz.std(ddof=1)) if len(dz) > 1 else float("nan"),
        rmse=float(np.sqrt(np.mean(dz ** 2))),
        err=float(np.median(err[fin])) if fin.any() else float("nan"),
        cover1=float(np.mean(np.abs(dz[fin]) < err[fin])) if fin.any() else float("nan"),
        cover2=float(np.mean(np.abs(dz[fin]) < 2 * err[fin])) if fin.any() else float("nan"),
        ncall=_median([r["ncall"] for r in ok]),
        ngrad=_median([r["ngrad"] for r in ok]),
        seconds=_median([r["seconds"] for r in ok]),
    )
    return out


def _median(v):
    v = np.array(v, dtype=float)
    v = v[np.isfinite(v)]
    return float(np.median(v)) if len(v) else float("nan")


def fmt(v, spec):
    """v formatted with spec, or an en dash for a missing value."""
    if v is None or (isinstance(v, float) and not math.isfinite(v)):
        return "–"
    return format(v, spec)


def fmt_count(v):
    """An evaluation count: an integer below 1e5, else 3 significant
    digits (1.23e6); an en dash when missing."""
    if v is None or not math.isfinite(v):
        return "–"
    if abs(v) < 1e5:
        return "%d" % round(v)
    mant, exp = ("%.3g" % v).split("e")
    return "%se%d" % (mant, int(exp))


def exact_value(rows, problem):
    vals = np.array([r["exact"] for r in rows if math.isfinite(r["exact"])])
    if not len(vals):
        return float("nan")
    if np.ptp(vals) > 1e-6:
        print("summarize: warning: %s: the runs disagree on the exact ln Z (%.6f to %.6f); using the median"
              % (problem, vals.min(), vals.max()), file=sys.stderr)
    return float(np.median(vals))


def group(runs):
    by = defaultdict(list)
    for r in runs:
        by[(r["problem"], r["method"])].append(r)
    problems = ordered({p for p, _ in by}, PROBLEM_ORDER)
    methods = ordered({m for _, m in by}, METHOD_ORDER)
    return by, problems, methods


def markdown(runs, commands, inputs=()):
    """The Markdown report as one string."""
    by, problems, methods = group(runs)
    lines = ["# Benchmark results", ""]
    if commands:
        lines += ["Made by:", "", "```sh"] + list(commands) + ["```", ""]
    if inputs:
        lines += ["Inputs: " + ", ".join("`%s`" % p for p in inputs) + " (%d runs)." % len(runs), ""]
    lines += ["Columns: bias = mean of ln Z − exact; sd = its standard deviation over runs; "
              "err = median reported error; abs(Δ)<σ and abs(Δ)<2σ = fraction of runs whose error "
              "bar (one or two reported errors) covers the exact value; calls = median log-density "
              "evaluations (for GBS-type methods those of the evidence stage; for NS every likelihood "
              "call); grads = median gradient evaluations (NUTS sampling, or AIS); s = median "
              "seconds per run (sampling included); failed = runs with an error or no finite ln Z "
              "(excluded from the other columns).", ""]

    # Combined short tables.
    lines += ["## Summary", "", "ln Z − exact: mean ± standard deviation over the successful runs "
              "[successful/all runs]; — when no run succeeded.", ""]
    lines += ["| method | " + " | ".join(problems) + " |", "|---|" + "---|" * len(problems)]
    for m in methods:
        cells = []
        for p in problems:
            rows = by.get((p, m))
            if not rows:
                cells.append("")
                continue
            s = stats(rows)
            if s["ok"] == 0:
                cells.append("— [0/%d]" % s["runs"])
            else:
                cells.append("%s ± %s [%d/%d]" % (fmt(s["bias"], "+.3f"), fmt(s["sd"], ".3f"), s["ok"], s["runs"]))
        lines.append("| %s | %s |" % (m, " | ".join(cells)))
    lines += ["", "Median evaluations per run: log-density calls + gradient calls.", ""]
    lines += ["| method | " + " | ".join(problems) + " |", "|---|" + "---|" * len(problems)]
    for m in methods:
        cells = []
        for p in problems:
            rows = by.get((p, m))
            s = stats(rows) if rows else None
            if not s or s["ok"] == 0:
                cells.append("")
                continue
            cells.append("%s + %s" % (fmt_count(s["ncall"]), fmt_count(s["ngrad"])))
        lines.append("| %s | %s |" % (m, " | ".join(cells)))
    lines.append("")

    # One table per problem.
    notes = []
    for p in problems:
        exact = exact_value([r for (q, _), rs in by.items() if q == p for r in rs], p)
        lines += ["## %s (exact ln Z = %s)" % (p, fmt(exact, ".6f")), "",
                  "| method | runs | bias | sd | err | abs(Δ)<σ | abs(Δ)<2σ | calls | grads | s | failed |",
                  "|---|---|---|---|---|---|---|---|---|---|---|"]
        for m in ordered({m for q, m in by if q == p}, METHOD_ORDER):
            rows = by[(p, m)]
            s = stats(rows)
            lines.append("| %s | %d | %s | %s | %s | %s | %s | %s | %s | %s | %d |" % (
                m, s["runs"], fmt(s.get("bias"), "+.4f"), fmt(s.get("sd"), ".4f"), fmt(s.get("err"), ".4f"),
                fmt(s.get("cover1"), ".2f"), fmt(s.get("cover2"), ".2f"), fmt_count(s.get("ncall")),
                fmt_count(s.get("ngrad")), fmt(s.get("seconds"), ".1f"), s["failed"]))
            for r in sorted(rows, key=lambda r: str(r["seed"])):
                if r.get("error"):
                    notes.append("- %s %s seed %s: error: %s" % (p, m, r["seed"], r["error"]))
                elif r.get("note"):
                    notes.append("- %s %s seed %s: %s" % (p, m, r["seed"], r["note"]))
        lines.append("")
    if notes:
        lines += ["## Notes and errors", ""] + notes + [""]
    used = [m for m in methods if m in METHOD_NOTES]
    if used:
        lines += ["Methods: " + "; ".join("%s = %s" % (m, METHOD_NOTES[m]) for m in used) + ".", ""]
    return "\n".join(lines)


def figure(runs, path, band=0.1, linthresh=0.1):
    """Save the figure to path (PNG): row 1, ln Z - exact per method and
    problem; row 2, median evaluation counts."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    by, problems, methods = group(runs)
    colors = {m: plt.get_cmap("tab10")(i % 10) for i, m in enumerate(methods)}
    fig, axes = plt.subplots(2, len(problems), figsize=(max(4.0, 3.4 * len(problems)), 7.0), squeeze=False,
                             gridspec_kw={"height_ratios": [2.2, 1]})
    for j, p in enumerate(problems):
        ax, axc = axes[0, j], axes[1, j]
        ms = [m for m in methods if (p, m) in by]
        ax.axhspan(-band, band, color="0.85", zorder=0, label="±%g" % band)
        ax.axhline(0, color="k", lw=0.8, zorder=1)
        ymax = band
        for i, m in enumerate(ms):
            rows = by[(p, m)]
            ok = [r for r in rows if not failed(r)]
            nfail = len(rows) - len(ok)
            if ok:
                dz = np.array([r["logz"] - r["exact"] for r in ok])
                ymax = max(ymax, float(np.max(np.abs(dz))))
                if len(dz) >= 3:
                    ax.boxplot(dz, positions=[i], widths=0.6, showfliers=False, zorder=2,
                               medianprops={"color": "k"}, boxprops={"color": "0.3"},
                               whiskerprops={"color": "0.3"}, capprops={"color": "0.3"})
                jitter = (np.random.default_rng(i).random(len(dz)) - 0.5) * 0.35
                flagged = np.array([bool(r.get("note")) for r in ok])
                c = colors[m]
                ax.scatter(i + jitter[~flagged], dz[~flagged], s=12, color=c, alpha=0.8, zorder=3)
                if flagged.any():
                    ax.scatter(i + jitter[flagged], dz[flagged], s=16, facecolors="none", edgecolors=c, zorder=3)
                # Mean with the median reported error: calibration at a glance.
                err = _median([r["logzerr"] for r in ok])
                if math.isfinite(err):
                    ax.errorbar(i + 0.38, dz.mean(), yerr=err, fmt="_", color="k", ms=5, lw=1, capsize=2,
                                zorder=4)
            if nfail:
                ax.annotate("%d failed" % nfail, (i, 1.0), xycoords=("data", "axes fraction"),
                            xytext=(0, -3), textcoords="offset points", ha="center", va="top", fontsize=7,
                            color="firebrick")
            # Median evaluation counts, log scale; zero counts are not drawn.
            if ok:
                nc = _median([r["ncall"] for r in ok])
                ng = _median([r["ngrad"] for r in ok])
                if nc > 0:
                    axc.bar(i - 0.2, nc, width=0.4, color=colors[m])
                if ng > 0:
                    axc.bar(i + 0.2, ng, width=0.4, color=colors[m], alpha=0.45, hatch="//", edgecolor="0.3")
        ax.set_yscale("symlog", linthresh=linthresh, linscale=1.0)
        lim = 1.15 * ymax
        ax.set_ylim(-lim, lim)
        exact = exact_value([r for m in ms for r in by[(p, m)]], p)
        ax.set_title("%s (ln Z = %s)" % (p, fmt(exact, ".3f")), fontsize=10)
        for a in (ax, axc):
            a.set_xticks(range(len(ms)))
            a.set_xticklabels(ms, rotation=60, fontsize=8)
            a.set_xlim(-0.6, len(ms) - 0.4)
        ax.tick_params(axis="y", labelsize=8)
        axc.set_yscale("log")
        axc.tick_params(axis="y", labelsize=8)
        if j == 0:
            ax.set_ylabel(r"$\ln Z - \ln Z_{\rm exact}$ (symlog)")
            axc.set_ylabel("median evaluations")
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch
    handles = [Patch(color="0.5", label="log-density calls"),
               Patch(facecolor="0.5", alpha=0.45, hatch="//", edgecolor="0.3", label="gradient calls"),
               Patch(color="0.85", label="|Δ| < %g" % band),
               Line2D([], [], color="k", marker="_", lw=1, label="mean ± median reported error")]
    fig.legend(handles=handles, loc="lower center", ncol=4, fontsize=8, frameon=False)
    fig.tight_layout(rect=(0, 0.04, 1, 1))
    fig.savefig(path, dpi=110)
    plt.close(fig)


def _ensure_dir(path):
    d = os.path.dirname(os.path.abspath(path))
    os.makedirs(d, exist_ok=True)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("inputs", nargs="+", help="JSON-lines files of runs")
    ap.add_argument("--markdown", default="results.md", help="Markdown output (default %(default)s)")
    ap.add_argument("--figure", default="results.png", help="PNG output (default %(default)s)")
    ap.add_argument("--no-figure", action="store_true", help="write the Markdown only")
    ap.add_argument("--command", action="append", default=[],
                    help="command line that made the runs, printed at the top (repeatable)")
    ap.add_argument("--band", type=float, default=0.1,
                    help="half-width of the band drawn around 0 in the figure, in nats (default %(default)s)")
    ap.add_argument("--linthresh", type=float, default=0.1,
                    help="linear range of the symmetric-log y axis, in nats (default %(default)s)")
    args = ap.parse_args(argv)
    if not args.band >= 0 or not args.linthresh > 0:
        ap.error("--band must be >= 0 and --linthresh > 0")
    try:
        runs = load(args.inputs)
    except InputError as exc:
        print("summarize: %s" % exc, file=sys.stderr)
        return 1
    if not runs:
        print("summarize: no runs in %s" % ", ".join(args.inputs), file=sys.stderr)
        return 1
    try:
        _ensure_dir(args.markdown)
        with open(args.markdown, "w") as f:
            f.write(markdown(runs, args.command, args.inputs) + "\n")
        wrote = [args.markdown]
        if not args.no_figure:
            _ensure_dir(args.figure)
            figure(runs, args.figure, band=args.band, linthresh=args.linthresh)
            wrote.append(args.figure)
    except OSError as exc:
        print("summarize: cannot write %s: %s" % (exc.filename, exc.strerror), file=sys.stderr)
        return 1
    print("summarize: wrote %s from %d runs" % (" and ".join(wrote), len(runs)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
