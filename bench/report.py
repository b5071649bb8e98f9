#!/usr/bin/env python3
"""The published benchmark tables, made from the result files kept in
bench/results/ (one file per kind of run; the methods page of the
documentation gives the command that makes each one).

    .venv/bin/python bench/report.py            # print every table
    .venv/bin/python bench/report.py --write    # and write them into README.md and docs/
    .venv/bin/python bench/report.py --check    # exit 1 where README.md or docs/ differ

`make bench-report` runs --write. A table sits in a page between the
markers

    <!-- bench-report NAME: made by bench/report.py from bench/results; do not edit -->
    ...
    <!-- end bench-report NAME -->

and --write replaces what is between them (the same table may appear in
several pages). Every table ends with the files it was made from, the
command that made them, and the commits and dates their runs record.
--write also draws docs/benchmarks.png from the paper comparison's runs.
--check compares the pages with the tables made now, and bench/results/
with the files the tables use: a result file no table reads is an error.
"""

import argparse
import difflib
import importlib.util
import json
import math
import os
import re
import sys
from collections import OrderedDict, defaultdict

import numpy as np

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
RESULTS = os.path.join("bench", "results")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import summarize  # noqa: E402  (bench/summarize.py: the statistics of the paper comparison)
import compare  # noqa: E402  (bench/compare.py: the table of two builds' runs)
import profile_stages  # noqa: E402  (bench/profile_stages.py: the order of the stages)

# The pages that may hold tables.
PAGES = ["README.md", "docs/benchmarks.md", "docs/benchmark-methods.md", "docs/python.md",
         "docs/diagnostics.md", "docs/index.md", "docs/speed.md"]
FIGURE = "docs/benchmarks.png"

# The result files and the commands that make them (bench/results/ holds
# these and nothing else).
FILES = OrderedDict([
    ("paper-gbs.jsonl", "go run ./cmd/gbs-bench -methods GBS -seed 920000 -o bench/results/paper-gbs.jsonl"),
    ("paper-baselines.jsonl", "go run ./cmd/gbs-bench -methods GIS,GHM,WBS,AIS,RAIS "
                              "-o bench/results/paper-baselines.jsonl"),
    ("paper-ns.jsonl", ".venv/bin/python bench/dynesty_bench.py --repeats 4 --maxcall 30000000 "
                       "--out bench/results/paper-ns.jsonl"),
    ("coverage.jsonl", "go run ./cmd/gbs-coverage -seeds 16 -cases " + ",".join([
        "funnel", "banana", "cauchy", "ring", "gaussian", "student-t", "student-t-heavy", "mixture",
        "funnel-neckless", "student-t-cut15", "student-t-cut5", "mixture-misweighted"])
     + " > bench/results/coverage.jsonl"),
    ("emcee-banana.jsonl", ".venv/bin/python bench/emcee_coverage.py --target banana --runs 32 "
                           "--steps 20000,60000,100000 --thin 10 --keep 10 --out bench/results/emcee-banana.jsonl"),
    ("emcee-banana3.jsonl", ".venv/bin/python bench/emcee_coverage.py --target banana3 --runs 16 --steps 80000 "
                            "--thin 10 --keep 10 --cache DIR --out bench/results/emcee-banana3.jsonl"),
    ("python-overhead.json", ".venv/bin/python bench/python_overhead.py --repeats 15 "
                             "--json bench/results/python-overhead.json"),
    ("profile.jsonl", "make bench-profile REF=d71306a"),
    ("speed-compare.jsonl", "make bench-compare REF=2c7375f RUNS=bench/results/speed-compare.jsonl with SEEDS=16 "
                            "PROBLEMS=funnel SCALE=; SEEDS=16 PROBLEMS=banana,cauchy,ring SCALE=; "
                            "SEEDS=16 PROBLEMS= SCALE=16:100000,256:100000; SEEDS=1 PROBLEMS= SCALE=1000:20000"),
    ("python-run.json", ".venv/bin/python bench/python_run.py --seeds 8 --seed 777200 "
                        "--out bench/results/python-run.json"),
    ("false-alarms.jsonl", "GOMAXPROCS=1 go run ./cmd/gbs-coverage -first 5000 -seeds 200 -cases student-t-100 "
                           "(likewise student-t-200 and gaussian-100; -first 2037 -seeds 157 -cases gaussian-200), "
                           "each set run in parts side by side, and GOMAXPROCS=1 go run ./cmd/gbs-bench -methods GBS "
                           "-problems funnel -repeats-gbs 64 -seed 996000 -o F (the last 32 without GOMAXPROCS; -problems banana,cauchy,ring: "
                           "-repeats-gbs 48 -seed 997000 and -repeats-gbs 16 -seed 994000), all appended to "
                           "bench/results/false-alarms.jsonl"),
])

# What the method's original implementation reports on the paper's
# problems (docs/problems.md: its published example runs, 8 NUTS chains
# of 2500 iterations each).
ORIGINAL_ERROR = {"funnel": "0.02", "banana": "0.05, two σ off", "cauchy": "0.09", "ring": "0.06"}

PROBLEMS = ["funnel", "banana", "cauchy", "ring"]
BASELINES = ["GIS", "GHM", "WBS", "AIS", "RAIS"]


def _problems_module():
    """python/gbs/problems.py, loaded by path (it needs numpy only)."""
    spec = importlib.util.spec_from_file_location("gbs_problems", os.path.join(ROOT, "python", "gbs",
                                                                               "problems.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


_DIMS = {}


def dim(problem):
    if problem not in _DIMS:
        _DIMS[problem] = _problems_module().by_name(problem).dim
    return _DIMS[problem]


# -- reading -----------------------------------------------------------------

def read_lines(name):
    path = os.path.join(ROOT, RESULTS, name)
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def read_runs(name):
    """Runs of the paper comparison, as bench/summarize.py reads them."""
    return summarize.load([os.path.join(ROOT, RESULTS, name)])


# -- formatting ----------------------------------------------------------------

def signed(v, digits):
    """+0.0012 / −0.0012 (a true minus sign), en dash when missing."""
    if v is None or not math.isfinite(v):
        return "–"
    s = "%+.*f" % (digits, v)
    return s.replace("-", "−")


def num(v, digits):
    if v is None or not math.isfinite(v):
        return "–"
    return "%.*f" % (digits, v)


def pct(v):
    return "–" if v is None or not math.isfinite(v) else "%.0f %%" % (100 * v)


def count(v):
    """A count with thin spaces between thousands (as the pages write them)."""
    if v is None or not math.isfinite(v):
        return "–"
    v = int(round(v))
    if abs(v) >= 10 ** 6:
        return "%.2f M" % (v / 1e6)
    return "{:,}".format(v).replace(",", " ")


def short(v):
    """Two significant digits, without an exponent (0.43, 29, 154)."""
    return "%.0f" % v if abs(v) >= 99.5 else "%.2g" % v


def table(head, rows):
    out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    out += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
    return out


def provenance(rows, key=None):
    """The commits and dates the runs record: 'commit X, D' when they
    agree; else grouped by key(row) ('funnel: commit X, D; banana: ...'),
    or without a key, the commits and the range of dates."""
    groups = OrderedDict()
    for r in rows:
        c, d = r.get("commit", "unknown"), r.get("date", "unknown")
        groups.setdefault((c, d), []).append(key(r) if key else None)
    if len(groups) == 1:
        (c, d), = groups
        return "commit %s, %s" % (c, d)
    if key is None:
        commits = list(OrderedDict.fromkeys(c for c, _ in groups))
        dates = sorted({d for _, d in groups})
        return "commits %s; %s" % (", ".join(commits),
                                   dates[0] if len(dates) == 1 else "%s to %s" % (dates[0], dates[-1]))
    parts = []
    for (c, d), keys in groups.items():
        names = list(OrderedDict.fromkeys(keys))
        parts.append("%s: commit %s, %s" % (", ".join(names), c, d))
    return "; ".join(parts)


def source_line(name, rows, key=None, extra=""):
    return ("Runs: `%s/%s`%s, made by `%s` (%s)." % (RESULTS, name, extra, FILES[name],
                                                      provenance(rows, key)))


# -- the tables ----------------------------------------------------------------

def _gbs_stats(rows):
    ok = [r for r in rows if not summarize.failed(r)]
    dz = np.array([r["logz"] - r["exact"] for r in ok])
    err = np.array([r["logzerr"] for r in ok])
    z = dz / err
    return {
        "runs": len(rows), "ok": len(ok), "bias": float(dz.mean()), "sd": float(dz.std(ddof=1)),
        "err": float(np.median(err)), "zsd": float(z.std(ddof=1)), "cover1": float(np.mean(np.abs(z) < 1)),
        "cover2": float(np.mean(np.abs(z) < 2)), "maxz": float(np.max(np.abs(z))),
        "warned": sum(1 for r in ok if r.get("warnings")),
        "ncall": float(np.mean([r["ncall"] for r in ok])), "ngrad": float(np.mean([r["ngrad"] for r in ok])),
        "seconds": float(np.median([r["seconds"] for r in ok])),
        "accept": (float(np.median([r["global_accept"] for r in ok if "global_accept" in r]))
                   if any("global_accept" in r for r in ok) else float("nan")),
        "seeds": (min(int(r["seed"]) for r in rows), max(int(r["seed"]) for r in rows)),
    }


def _by_problem(runs, method=None):
    by = defaultdict(list)
    for r in runs:
        if method is None or r["method"] == method:
            by[r["problem"]].append(r)
    return by


def paper_gbs():
    """GBS on the paper's four problems with the defaults: the README's
    table."""
    runs = read_runs("paper-gbs.jsonl")
    ns = _by_problem(read_runs("paper-ns.jsonl"), "NS")
    by = _by_problem(runs, "GBS")
    rows = []
    for p in PROBLEMS:
        s = _gbs_stats(by[p])
        nsr = [r for r in ns.get(p, []) if not summarize.failed(r)]
        ns_cell = ("%s (%d runs)" % (signed(np.mean([r["logz"] - r["exact"] for r in nsr]), 2), len(nsr))
                   if nsr else "–")
        rows.append(["%s, %d-d" % (p, dim(p)), "%s ± %s" % (signed(s["bias"], 4), num(s["sd"], 4)),
                     num(s["err"], 4), "%s / %s" % (pct(s["cover1"]), pct(s["cover2"])), num(s["maxz"], 2),
                     "%d of %d" % (s["warned"], s["runs"]), num(s["seconds"], 1), ORIGINAL_ERROR[p], ns_cell])
    lo, hi = _gbs_stats(runs)["seeds"]
    out = table(["problem", "ln Z − exact: mean ± sd over runs", "median error bar σ",
                 "runs within 1σ / 2σ", "largest abs z", "runs with a warning",
                 "seconds per run (median, sampling included)", "original implementation's σ",
                 "nested sampling (dynesty): ln Z − exact"], rows)
    ns_rows = [r for rs in ns.values() for r in rs]
    out += ["", source_line("paper-gbs.jsonl", runs, key=lambda r: r["problem"],
                            extra=" (%d runs per problem, seeds %d to %d)" % (len(by[PROBLEMS[0]]), lo, hi))
            + " Nested sampling: " + source_line("paper-ns.jsonl", ns_rows)[len("Runs: "):]
            + " dynesty %s, default settings." % ns_rows[0].get("dynesty", "?")]
    return "\n".join(out)


def paper_gbs_detail():
    """The same runs, every column."""
    runs = read_runs("paper-gbs.jsonl")
    by = _by_problem(runs, "GBS")
    rows = []
    for p in PROBLEMS:
        s = _gbs_stats(by[p])
        rows.append(["%s, %d-d" % (p, dim(p)), s["runs"], signed(s["bias"], 4), num(s["sd"], 4),
                     num(s["err"], 4), num(s["zsd"], 2), pct(s["cover1"]), pct(s["cover2"]),
                     num(s["maxz"], 2), s["warned"], count(s["ngrad"]), count(s["ncall"]),
                     "%.2g" % s["accept"] if math.isfinite(s["accept"]) else "–", num(s["seconds"], 1)])
    out = table(["problem", "runs", "bias", "sd", "median σ", "sd of z", "within 1σ", "within 2σ",
                 "largest abs z", "runs with a warning", "gradient calls (mean)",
                 "log-density calls (mean)", "global moves accepted (median)", "seconds (median)"], rows)
    out += ["", source_line("paper-gbs.jsonl", runs, key=lambda r: r["problem"])]
    return "\n".join(out)


def paper_methods():
    """Every method on the paper's four problems: GBS against the other
    estimators and nested sampling."""
    gbs_runs = read_runs("paper-gbs.jsonl")
    base = read_runs("paper-baselines.jsonl")
    ns = read_runs("paper-ns.jsonl")
    runs = gbs_runs + base + ns
    by, problems, methods = summarize.group(runs)
    out = ["ln Z − exact: mean ± standard deviation over the runs [successful / all runs].", ""]
    rows = []
    for m in methods:
        cells = [m]
        for p in problems:
            s = summarize.stats(by.get((p, m), []))
            cells.append("– [0/%d]" % s["runs"] if s["ok"] == 0 else
                         "%s ± %s [%d/%d]" % (signed(s["bias"], 3), num(s["sd"], 3), s["ok"], s["runs"]))
        rows.append(cells)
    out += table(["method"] + problems, rows)
    out += ["", "Per problem: bias (mean of ln Z − exact), sd over runs, median reported error σ, the "
            "runs whose error bar covers the exact value within one and two σ, median log-density and "
            "gradient calls, median seconds per run (sampling included).", ""]
    rows = []
    for p in problems:
        for m in methods:
            if (p, m) not in by:
                continue
            s = summarize.stats(by[(p, m)])
            rows.append([p, m, s["runs"], signed(s.get("bias"), 4), num(s.get("sd"), 4), num(s.get("err"), 4),
                         pct(s.get("cover1")), pct(s.get("cover2")), summarize.fmt_count(s.get("ncall")),
                         summarize.fmt_count(s.get("ngrad")), num(s.get("seconds"), 1)])
    out += table(["problem", "method", "runs", "bias", "sd", "σ", "within 1σ", "within 2σ", "log-density calls",
                  "gradient calls", "seconds"], rows)
    out += ["", "Methods: " + "; ".join("%s = %s" % (m, summarize.METHOD_NOTES[m]) for m in methods
                                        if m in summarize.METHOD_NOTES) + "."]
    out += ["", source_line("paper-gbs.jsonl", gbs_runs, key=lambda r: r["problem"]),
            source_line("paper-baselines.jsonl", base),
            source_line("paper-ns.jsonl", ns) + " dynesty %s." % ns[0].get("dynesty", "?")]
    return "\n".join(out)


COVERAGE_CASES = OrderedDict([
    ("funnel", "funnel, exact draws (d = 16)"),
    ("banana", "banana, exact draws (d = 32)"),
    ("cauchy", "Cauchy, exact draws (d = 48)"),
    ("ring", "ring, NUTS draws of the pipeline (d = 64)"),
    ("funnel-nuts", "funnel, NUTS draws of the pipeline"),
    ("gaussian", "correlated Gaussian, d = 10"),
    ("student-t", "Student-t, d = 6, ν = 4"),
    ("student-t-heavy", "Student-t, d = 10, ν = 2"),
    ("mixture", "Gaussian mixture, d = 4"),
    ("funnel-neckless", "funnel without its neck (x1 < −1.5 cut: 7 % of p)"),
    ("student-t-cut15", "Student-t, d = 6, ν = 4, largest 15 % of radii cut"),
    ("student-t-cut5", "the same, 5 % cut"),
    ("mixture-misweighted", "the mixture drawn at weights 0.5 / 0.5 (p: 0.3 / 0.7)"),
])


def coverage():
    """The coverage check's harness: false alarms on draws that cover p,
    power on draws that miss part of it."""
    runs = read_lines("coverage.jsonl")
    by = defaultdict(list)
    for r in runs:
        by[r["case"]].append(r)
    rows = []
    for case in list(COVERAGE_CASES) + sorted(set(by) - set(COVERAGE_CASES)):
        rs = [r for r in by.get(case, []) if not r.get("error")]
        if not rs:
            continue
        ratio = np.array([r["frac"] / r["limit"] if r["limit"] > 0 else 0.0 for r in rs])
        z = np.array([r["dlogz"] / r["logzerr"] for r in rs])
        rows.append([COVERAGE_CASES.get(case, case), "yes" if rs[0]["clean"] else "no",
                     len(by[case]), sum(r["warned"] for r in rs), sum(r["noted"] for r in rs),
                     "%s, %s" % (short(np.median(ratio)), short(ratio.max())), sum(r["ks_warned"] for r in rs),
                     sum(1 for r in rs if r["other_warnings"]), signed(float(np.median(z)), 1),
                     num(float(np.median([r["calls"] / r["nq"] for r in rs])), 3)])
    out = table(["draws", "covers p", "runs", "coverage warnings (edge)", "notes instead (ln Z accounts for it)",
                 "edge statistic / limit: median, max", "two-sample warnings", "runs with another warning",
                 "ln Z − exact, median, in σ", "the check's calls / n_q"], rows)
    n = len(runs)
    out += ["", source_line("coverage.jsonl", runs, extra=" (%d runs)" % n)]
    return "\n".join(out)


FALSE_ALARM_CASES = OrderedDict([
    ("gaussian-100", "standard normal, d = 100, 20 000 exact draws as 8 chains"),
    ("gaussian-200", "standard normal, d = 200, the same"),
    ("student-t-100", "Student-t, ν = 5, d = 100, the same"),
    ("student-t-200", "Student-t, ν = 5, d = 200, the same"),
    ("funnel", "funnel, the default pipeline (NUTS, global moves, reruns)"),
    ("banana", "banana, the default pipeline"),
    ("cauchy", "Cauchy, the default pipeline"),
    ("ring", "ring, the default pipeline"),
])


def seed_ranges(seeds):
    """Sorted seeds as ranges of consecutive ones: '1–6, 2000–2036'."""
    out, start = [], seeds[0]
    for a, b in zip(seeds, seeds[1:] + [None]):
        if b != a + 1:
            out.append("%d–%d" % (start, a) if a != start else "%d" % a)
            start = b
    return ", ".join(out)


def false_alarms():
    """Warnings on draws that cover p, at seeds no other run used: exact
    draws in high dimension (cmd/gbs-coverage rows, with the coverage
    check's own columns) and the default pipeline (cmd/gbs-bench rows)."""
    runs = read_lines("false-alarms.jsonl")
    by = defaultdict(list)
    for r in runs:
        by[r.get("case") or r["problem"]].append(r)
    rows = []
    for case in list(FALSE_ALARM_CASES) + sorted(set(by) - set(FALSE_ALARM_CASES)):
        rs = by.get(case)
        if not rs:
            continue
        seeds = sorted(int(r["seed"]) for r in rs)
        if "case" in rs[0]:
            warned = sum(1 for r in rs if r["warned"] or r["ks_warned"] or r["other_warnings"])
            coverage = sum(1 for r in rs if r["warned"] or r["ks_warned"])
            noted = str(sum(r["noted"] for r in rs))
            z = np.array([r["dlogz"] / r["logzerr"] for r in rs])
            ratio = short(max(r["frac"] / r["limit"] if r["limit"] > 0 else 0.0 for r in rs))
        else:
            warned = sum(1 for r in rs if r.get("warnings"))
            coverage, noted, ratio = "–", "–", "–"
            z = np.array([(r["logz"] - r["exact"]) / r["logzerr"] for r in rs])
        rows.append([FALSE_ALARM_CASES.get(case, case), seed_ranges(seeds), len(rs), warned, coverage,
                     noted, ratio, num(float(z.std(ddof=1)), 2), num(float(np.abs(z).max()), 2)])
    out = table(["draws", "seeds", "runs", "runs with a warning", "of them by the coverage check",
                 "coverage notes (effect within σ)", "edge statistic / limit, largest",
                 "sd of z", "largest abs z"], rows)
    out += ["", source_line("false-alarms.jsonl", runs, key=lambda r: r.get("case") or r["problem"])]
    return "\n".join(out)


def pipeline_spread():
    """The default pipeline's ln Z over many seeds per problem (the
    cmd/gbs-bench rows of false-alarms.jsonl): its spread, the median
    reported error, the bias and the standardized errors."""
    runs = [r for r in read_lines("false-alarms.jsonl") if "problem" in r]
    by = _by_problem(runs)
    rows = []
    for p in PROBLEMS:
        s = _gbs_stats(by[p])
        rows.append(["%s, %d-d" % (p, dim(p)), s["runs"], num(s["sd"], 4), num(s["err"], 4), signed(s["bias"], 4),
                     num(s["zsd"], 2), num(s["maxz"], 2), "%d of %d" % (s["warned"], s["runs"])])
    out = table(["problem", "runs", "spread of ln Z (sd)", "reported σ, median", "bias", "sd of z",
                 "largest abs z", "runs with a warning"], rows)
    out += ["", source_line("false-alarms.jsonl", runs, key=lambda r: r["problem"])]
    return "\n".join(out)


def emcee_banana():
    """Error bars on emcee chains of the 2-d banana, against the walkers'
    length."""
    runs = read_lines("emcee-banana.jsonl")
    by = defaultdict(list)
    for r in runs:
        by[r["steps"]].append(r)
    rows = []
    for steps in sorted(by):
        rs = by[steps]
        z = np.array([r["z"] for r in rs])
        warned = np.array([bool(r["warnings"]) for r in rs])
        tau = np.array([r["tau"] for r in rs])
        etau = np.array([r["emcee_tau"] for r in rs])
        quiet = np.abs(z[~warned])
        rows.append([count(steps), len(rs), num(float(z.std(ddof=1)), 2), signed(float(z.mean()), 2),
                     pct(np.mean(np.abs(z) < 1)), pct(np.mean(np.abs(z) < 2)),
                     num(float(quiet.max()), 2) if len(quiet) else "– (all warned)", int(warned.sum()),
                     "%.0f (%.0f–%.0f)" % (np.median(tau), tau.min(), tau.max()),
                     "%.0f (%.0f–%.0f)" % (np.median(etau), etau.min(), etau.max()),
                     "%.0f" % ((steps - steps // 5) / 50)])
    out = table(["steps per walker", "runs", "sd of z", "mean z", "within 1σ", "within 2σ",
                 "largest abs z without a warning", "runs warned", "gbs τ (thinned steps): median (range)",
                 "emcee's τ of the walkers (steps): median (range)",
                 "largest τ that 50 τ per walker allows (steps)"], rows)
    out += ["", source_line("emcee-banana.jsonl", runs, key=lambda r: "%d steps" % r["steps"],
                            extra=" (z = (ln Z − exact) / σ; each run's shorter lengths are the first steps of "
                                  "its longest)")]
    return "\n".join(out)


def emcee_banana3():
    """Error bars on emcee chains of the 3-d banana at 80 000 steps, one
    row per commit (the same emcee runs, from the cache, at each)."""
    runs = read_lines("emcee-banana3.jsonl")
    by = OrderedDict()
    for r in runs:
        by.setdefault(r["commit"], []).append(r)
    rows = []
    for commit, rs in by.items():
        z = np.array([r["z"] for r in rs])
        warned = np.array([bool(r["warnings"]) for r in rs])
        err = np.array([r["logzerr"] for r in rs])
        etau = np.array([r["emcee_tau"] for r in rs])
        quiet = np.abs(z[~warned])
        rows.append([commit, len(rs), num(float(z.std(ddof=1)), 2), signed(float(z.mean()), 2),
                     pct(np.mean(np.abs(z) < 2)), num(float(quiet.max()), 2) if len(quiet) else "– (all warned)",
                     int(warned.sum()), num(float(np.median(err)), 4),
                     "%.0f (%.0f–%.0f)" % (np.median(etau), etau.min(), etau.max())])
    out = table(["commit", "runs", "sd of z", "mean z", "within 2σ", "largest abs z without a warning",
                 "runs warned", "median σ", "emcee's τ of the walkers (steps): median (range)"], rows)
    out += ["", source_line("emcee-banana3.jsonl", runs, extra=" (z = (ln Z − exact) / σ; the same 16 emcee runs "
                                                                 "read at each commit)")]
    return "\n".join(out)


def python_overhead():
    """What calling gbs from Python costs, against the same call in Go."""
    with open(os.path.join(ROOT, RESULTS, "python-overhead.json"), encoding="utf-8") as f:
        d = json.load(f)
    go = d["runs"]["go"]
    go_med = float(np.median([r["seconds"] for r in go]))
    go_fit = float(np.median([r["fit"] for r in go]))
    rows = [["Go (`gbs.Evidence`, the same draws)", num(go_med, 2), num(float(np.min([r["seconds"] for r in go])), 2),
             "", num(go_fit, 2), num(go_med - go_fit, 2), "", ""]]
    for key, label in (("python_vectorize_true", "Python, `vectorize=True`"),
                       ("python_vectorize_false", "Python, `vectorize=False`")):
        rs = d["runs"][key]
        med = float(np.median([r["seconds"] for r in rs]))
        fit = float(np.median([r["fit"] for r in rs]))
        inside = float(np.median([r["in_log_prob"] for r in rs]))
        over = ((med - fit) - (go_med - go_fit) - inside) / d["ncall"]
        rows.append([label, num(med, 2), num(float(np.min([r["seconds"] for r in rs])), 2),
                     "%+.0f %%" % (100 * (med / go_med - 1)), num(fit, 2), num(med - fit, 2),
                     "%.2f µs" % (1e6 * inside / d["ncall"]), "%s µs" % signed(1e6 * over, 2)])
    out = table(["path", "seconds (median)", "best", "vs Go", "fit (median)", "rest (median)",
                 "per point: in log_prob", "per point: gbs's overhead"], rows)
    w = d["wrapper_seconds_per_point"]
    out += ["", "%d exact draws of the 16-d funnel, n_q = %s, %s log-density calls, %d threads on %s cores, "
            "%d runs of each side (vectorize=False: every third), the same ln Z on both sides. The callback "
            "machinery alone costs %.3f µs per point with `vectorize=True` and %.2f µs without, and %.1f µs "
            "per call from the library into Python and back."
            % (d["n"], count(d["n_q"]), count(d["ncall"]), d["threads"], d.get("cpus", "?"), d["repeats"],
               1e6 * w["vectorize_true"], 1e6 * w["vectorize_false"], 1e6 * d["callback_invocation_seconds"]),
            "", "Runs: `%s/python-overhead.json`, made by `%s` (%s)."
            % (RESULTS, FILES["python-overhead.json"], provenance([d]))]
    return "\n".join(out)


def profile():
    """CPU per stage, before and after, from bench/profile_runs.py."""
    rows = read_lines("profile.jsonl")
    stage_order = profile_stages.ORDER
    out = []
    cases = list(OrderedDict.fromkeys(r["case"] for r in rows))
    titles = {"funnel": "pipeline, funnel", "banana": "pipeline, banana", "cauchy": "pipeline, Cauchy",
              "ring": "pipeline, ring", "d16": "evidence step, d = 16, 10^5 exact draws",
              "d256": "evidence step, d = 256, 10^5 exact draws"}
    for case in cases:
        rs = [r for r in rows if r["case"] == case]
        tot = {b: {r["stage"]: r["seconds"] for r in rs if r["build"] == b and not r["part"]} for b in ("before", "after")}
        stages = sorted(set(tot["before"]) | set(tot["after"]),
                        key=lambda v: (stage_order.index(v) if v in stage_order else len(stage_order), v))
        body = []
        for st in stages:
            x, y = tot["before"].get(st, 0.0), tot["after"].get(st, 0.0)
            body.append([st, num(x, 2) if x else "—", num(y, 2) if y else "—", num(y / x, 2) if x and y else ""])
        tb, ta = sum(tot["before"].values()), sum(tot["after"].values())
        # The cross-fitting passes by part (each candidate layer of the
        # flow's fit, the draws from q, log q, the coverage check), both
        # passes added, where a part is at least 2 % of the total before.
        parts = {b: defaultdict(float) for b in ("before", "after")}
        for r in rs:
            if r["stage"].startswith("evidence: cross-fit pass") and r["part"] and r["part"] != "smaller parts":
                parts[r["build"]][r["part"]] += r["seconds"]
        names = sorted(set(parts["before"]) | set(parts["after"]), key=lambda v: -parts["before"].get(v, 0.0))
        at = max((i + 1 for i, row in enumerate(body) if row[0].startswith("evidence: cross-fit pass")), default=len(body))
        split = []
        for part in names:
            x, y = parts["before"].get(part, 0.0), parts["after"].get(part, 0.0)
            if max(x, y) >= 0.02 * tb:
                split.append(["↳ passes: " + part, num(x, 2) if x else "—", num(y, 2) if y else "—",
                              num(y / x, 2) if x and y else ""])
        body[at:at] = split
        body.append(["**total**", "**%s**" % num(tb, 2), "**%s**" % num(ta, 2), "**%s**" % num(ta / tb, 2)])
        cmd = next(r["command"] for r in rs if r["build"] == "after")
        out += ["**%s** (`%s`)" % (titles.get(case, case), cmd), ""]
        out += table(["stage", "CPU s before", "CPU s after", "after/before"], body)
        out.append("")
    out.append("CPU seconds of the whole process, from its CPU profile; the rows marked ↳ split the two "
               "cross-fitting passes together by part. Runs: `%s/profile.jsonl`, made by `%s` (%s)." % (
                   RESULTS, FILES["profile.jsonl"], provenance(rows, key=lambda r: r["build"])))
    return "\n".join(out)


def speed_compare():
    """Wall time, calls and spread of ln Z of two builds on the same seeds
    (bench/compare.py's runs)."""
    rows = read_lines("speed-compare.jsonl")
    results = OrderedDict()
    for r in rows:
        results.setdefault((r["case"], r["build"]), []).append(r)
    cases = list(OrderedDict.fromkeys(c for c, _ in results))
    lines, _ = compare.tabulate(results, cases)
    by_commit = OrderedDict()
    for r in rows:
        if r["build"] == "new":
            by_commit.setdefault(r["commit"][:12], OrderedDict())[r["case"]] = True
    new = ("commit %s" % next(iter(by_commit)) if len(by_commit) == 1 else
           "; ".join("commit %s (%s)" % (c, ", ".join(cs)) for c, cs in by_commit.items()))
    refs = list(OrderedDict.fromkeys(r["commit"][:12] for r in rows if r["build"] == "ref"))
    seeds = OrderedDict()
    for (case, b), rs in results.items():
        seeds.setdefault(len(rs), []).append(case)
    loads = [r["load"] for r in rows]
    lines += ["", "new = %s; ref = commit %s; %s; runs of the two builds alternated, the same seeds. "
              "The 1-minute load average during the runs was %.1f to %.1f (median %.1f) on 2 cores, where the runs "
              "themselves make about 2; more load slows both builds alike but not exactly: read the ratios, "
              "not the seconds."
              % (new, ", ".join(refs),
                 "; ".join("%d seeds per build: %s" % (n, ", ".join(OrderedDict.fromkeys(cs)))
                           for n, cs in seeds.items()),
                 min(loads), max(loads), float(np.median(loads))),
              "", "Runs: `%s/speed-compare.jsonl`, made by `%s`." % (RESULTS, FILES["speed-compare.jsonl"])]
    return "\n".join(lines)


def python_run():
    """gbs.run from Python (a numpy density, and the library's native one)
    against the Go pipeline, seed by seed."""
    with open(os.path.join(ROOT, RESULTS, "python-run.json"), encoding="utf-8") as f:
        d = json.load(f)
    runs = d["runs"]
    go = runs["go"]
    sides = [k for k in ("native", "python") if k in runs]
    label = {"native": "native", "python": "numpy"}

    def z(r):
        return (r["logz"] - r["exact"]) / r["logzerr"]

    rows = []
    for i, g in enumerate(go):
        row = [str(g["seed"]), signed(z(g), 2), num(g["logzerr"], 4), num(g["seconds"], 1)]
        for k in sides:
            p = runs[k][i]
            row += [signed(z(p), 2), num(p["logzerr"], 4), num(p["seconds"], 1), "%.2f" % (p["seconds"] / g["seconds"])]
        row.append(" / ".join(", ".join(r["warnings"]) or "none" for r in [g] + [runs[k][i] for k in sides]))
        rows.append(row)
    head = ["seed", "Go: z", "σ", "seconds"]
    for k in sides:
        head += ["%s: z" % label[k], "σ", "seconds", "%s / Go" % label[k]]
    head.append("warnings (Go / %s)" % " / ".join(label[k] for k in sides))
    out = table(head, rows)
    tg, cg = sum(r["seconds"] for r in go), sum(r["cpu_seconds"] for r in go)
    what = {"native": "`gbs.run(f.native())`, the library's own funnel (a `gbs.NativeDensity`: no Python per "
                      "point)",
            "python": "`gbs.run(f.log_prob_and_grad, bounds=f.bounds, vectorize=True)`, the numpy funnel of "
                      "`gbs.problems` (one call into Python per leapfrog step)"}
    parts = []
    for k in sides:
        r = runs[k]
        tp, cp = sum(x["seconds"] for x in r), sum(x["cpu_seconds"] for x in r)
        parts.append("%s: %s; largest |z| %.2f, %d of %d runs warned, σ at most %.4f; total time %.0f s against "
                     "Go's %.0f s (%.2f×), CPU time %.0f s against %.0f s (%.2f×)."
                     % (label[k].capitalize(), what[k], max(abs(z(x)) for x in r),
                        sum(bool(x["warnings"]) for x in r), len(r), max(x["logzerr"] for x in r), tp, tg,
                        tp / tg, cp, cg, cp / cg))
    load = d["load_average"]
    out += ["", "The 16-d funnel, %d NUTS chains of %d iterations (%d of them warm-up); z = (ln Z − exact) / σ. "
            "Go: `gbs-bench -methods GBS -problems funnel`, the same seeds, runs alternating. %s "
            "%d threads on %s cores, shared with other work: load average %.1f to %.1f over the runs."
            % (d["chains"], d["iters"], d["warmup"], " ".join(parts), d["threads"], d["cpus"],
               min(load), max(load)),
            "", "Runs: `%s/python-run.json`, made by `%s` (%s)." % (RESULTS, FILES["python-run.json"],
                                                                    provenance([d]))]
    return "\n".join(out)


TABLES = OrderedDict([
    ("paper-gbs", paper_gbs),
    ("paper-gbs-detail", paper_gbs_detail),
    ("paper-methods", paper_methods),
    ("coverage", coverage),
    ("emcee-banana", emcee_banana),
    ("emcee-banana3", emcee_banana3),
    ("python-overhead", python_overhead),
    ("profile", profile),
    ("speed-compare", speed_compare),
    ("python-run", python_run),
    ("false-alarms", false_alarms),
    ("pipeline-spread", pipeline_spread),
])

# The files each table reads (for the check that bench/results holds
# nothing else).
READS = {
    "paper-gbs": ["paper-gbs.jsonl", "paper-ns.jsonl"],
    "paper-gbs-detail": ["paper-gbs.jsonl"],
    "paper-methods": ["paper-gbs.jsonl", "paper-baselines.jsonl", "paper-ns.jsonl"],
    "coverage": ["coverage.jsonl"],
    "emcee-banana": ["emcee-banana.jsonl"],
    "emcee-banana3": ["emcee-banana3.jsonl"],
    "python-overhead": ["python-overhead.json"],
    "profile": ["profile.jsonl"],
    "speed-compare": ["speed-compare.jsonl"],
    "python-run": ["python-run.json"],
    "false-alarms": ["false-alarms.jsonl"],
    "pipeline-spread": ["false-alarms.jsonl"],
}

BLOCK = re.compile(r"(<!-- bench-report (?P<name>[\w-]+):[^\n]*-->\n)(?P<body>.*?)(<!-- end bench-report (?P=name) -->)",
                   re.S)


def render(page_text, made):
    """page_text with every marked block replaced by its table; the names
    of unknown blocks."""
    unknown = []

    def sub(m):
        name = m.group("name")
        if name not in made:
            unknown.append(name)
            return m.group(0)
        return m.group(1) + "\n" + made[name] + "\n\n" + m.group(4)

    return BLOCK.sub(sub, page_text), unknown


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    mode = ap.add_mutually_exclusive_group()
    mode.add_argument("--write", action="store_true", help="write the tables into the pages and draw the figure")
    mode.add_argument("--check", action="store_true", help="exit 1 if a page or bench/results disagrees")
    args = ap.parse_args(argv)

    made = OrderedDict((name, fn()) for name, fn in TABLES.items())
    problems = []
    present = sorted(os.listdir(os.path.join(ROOT, RESULTS)))
    used = sorted({f for fs in READS.values() for f in fs})
    for f in present:
        if f not in used:
            problems.append("%s/%s: no table reads it (keep only the files the docs render)" % (RESULTS, f))
    placed = set()
    for page in PAGES:
        path = os.path.join(ROOT, page)
        if not os.path.exists(path):
            continue
        with open(path, encoding="utf-8") as f:
            text = f.read()
        new, unknown = render(text, made)
        placed.update(m.group("name") for m in BLOCK.finditer(text))
        for name in unknown:
            problems.append("%s: unknown table %r" % (page, name))
        if new != text:
            if args.check:
                diff = difflib.unified_diff(text.splitlines(), new.splitlines(), page, page + " (bench/report.py)",
                                            lineterm="", n=1)
                problems.append("%s differs from the tables made from bench/results (run make bench-report):\n%s"
                                % (page, "\n".join(diff)))
            elif args.write:
                with open(path, "w", encoding="utf-8") as f:
                    f.write(new)
                print("bench/report.py: wrote %s" % page, file=sys.stderr)
    for name in made:
        if name not in placed:
            problems.append("table %s is on no page" % name)
    if args.write:
        runs = (read_runs("paper-gbs.jsonl") + read_runs("paper-baselines.jsonl") + read_runs("paper-ns.jsonl"))
        summarize.figure(runs, os.path.join(ROOT, FIGURE))
        print("bench/report.py: drew %s" % FIGURE, file=sys.stderr)
    if not args.check:
        for name, text in made.items():
            print("## %s\n\n%s\n" % (name, text))
    for p in problems:
        print("bench/report.py: %s" % p, file=sys.stderr)
    return 1 if problems and (args.check or any("unknown" in p for p in problems)) else 0


if __name__ == "__main__":
    sys.exit(main())
