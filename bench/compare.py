#!/usr/bin/env python3
"""Compare the speed and precision of this checkout with a reference commit.

    make bench-compare REF=2c7375f                  # 16 seeds per case
    make bench-compare REF=2c7375f SEEDS=2 N=20000  # a quick look
    bench/compare.py --ref 2c7375f --seeds 16 --out build/compare

Builds cmd/gbs-bench and cmd/gbs-scale twice: from the working tree ("new")
and from the reference commit, checked out in a git worktree under build/
that is removed once built ("ref"). Then runs both builds on the same
cases and seeds, alternating which goes first from one seed to the next,
one process per run:

  * pipeline: `gbs-bench -methods GBS` (NUTS, then the evidence, as users
    run it) on each reference problem, seeds 777200, 777201, ...;
  * evidence step: `gbs-scale -child d,n,seed` (n exact, independent draws
    of a correlated Gaussian, condition number 100, random rotation,
    ln Z = 0; the default proposal, as users call it, where the build's
    gbs-scale can say so), seeds 1, 2, ...

A flag a build's command lacks is left out (the reference may predate it).
Per case it prints, for each build, the wall time of a run (median and
range), gradient and log-density calls (median), the median reported
error of ln Z and the spread (standard deviation) of ln Z over the seeds,
and the ratios new/ref (of the medians; for wall also the median of the
ratios of the runs of the same seed, which are adjacent in time). The
1-minute load average at the start and end of each run is kept: other
processes on the machine slow both builds and show in it.

Writes, in a new directory under --out: runs.jsonl (one object per run)
and summary.jsonl (one per case and build, and one per case with the
ratios), and summary.md (the printed table), for the documentation.
"""

import argparse
import json
import math
import os
import resource
import shutil
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PROBLEM_LOGZ = {}  # filled from gbs-bench's output (exact)


def sh(cmd, cwd=ROOT, **kw):
    return subprocess.run(cmd, cwd=cwd, check=True, capture_output=True, text=True, **kw).stdout


def build(srcdir, outdir, go):
    os.makedirs(outdir, exist_ok=True)
    subprocess.run([go, "build", "-o", outdir + "/", "./cmd/gbs-bench", "./cmd/gbs-scale"], cwd=srcdir, check=True)


def flags_of(binary):
    """The flags a command accepts, from its -h output."""
    p = subprocess.run([binary, "-h"], capture_output=True, text=True)
    out = p.stdout + p.stderr
    return {line.split()[0].lstrip("-") for line in out.splitlines() if line.strip().startswith("-")}


def loadavg():
    try:
        with open("/proc/loadavg") as f:
            return float(f.read().split()[0])
    except OSError:
        return float("nan")


def timed(cmd):
    """Runs cmd; returns (stdout, wall seconds, CPU seconds of the child)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.monotonic()
    p = subprocess.run(cmd, capture_output=True, text=True)
    wall = time.monotonic() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if p.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed ({p.returncode}): {p.stderr.strip()[-2000:]}")
    return p.stdout, wall, cpu


def run_pipeline(binary, flags, problem, seed, iters, tmp):
    out = os.path.join(tmp, "run.jsonl")
    cmd = [binary, "-problems", problem, "-methods", "GBS", "-repeats-gbs", "1", "-repeats", "0", "-seed", str(seed), "-o", out]
    if iters:
        cmd += ["-iters", str(iters)]
    _, wall, cpu = timed(cmd)
    with open(out) as f:
        r = json.loads(f.readline())
    if r.get("error"):
        raise RuntimeError(f"{problem} seed {seed}: {r['error']}")
    return {"logz": r["logz"], "logzerr": r["logzerr"], "exact": r["exact"], "ngrad": r.get("ngrad", 0),
            "ncall": r.get("ncall", 0), "seconds": r.get("seconds"), "sampling_seconds": r.get("sampling_seconds"),
            "evidence_seconds": r.get("evidence_seconds"), "wall": wall, "cpu": cpu, "warnings": len(r.get("warnings") or []),
            "global_accept": r.get("global_accept"), "global_warmup_accept": r.get("global_warmup_accept"),
            "global_move_calls": r.get("global_move_calls"), "global_stopped": r.get("global_stopped", 0),
            "info": r.get("info")}


def run_scale(binary, flags, d, n, seed):
    cmd = [binary, "-child", f"{d},{n},{seed}"]
    if "timers" in flags:
        cmd.append("-timers=false")
    stdout, wall, cpu = timed(cmd)
    r = json.loads(stdout)
    if r.get("Error"):
        raise RuntimeError(f"d={d} n={n} seed {seed}: {r['Error']}")
    return {"logz": r["LogZ"], "logzerr": r["LogZErr"], "exact": r["Exact"], "ngrad": 0, "ncall": r["NCall"],
            "seconds": r["Evidence"], "evidence_cpu": r.get("EvidenceCPU"), "wall": wall, "cpu": cpu,
            "warnings": len(r.get("Warnings") or [])}


def med(v):
    v = [x for x in v if x is not None and not (isinstance(x, float) and math.isnan(x))]
    return statistics.median(v) if v else float("nan")


def summarize(case, build, runs):
    logz = [r["logz"] for r in runs]
    return {
        "case": case, "build": build, "runs": len(runs),
        "seconds_median": med([r["seconds"] for r in runs]),
        "seconds_min": min(r["seconds"] for r in runs), "seconds_max": max(r["seconds"] for r in runs),
        "wall_median": med([r["wall"] for r in runs]), "cpu_median": med([r["cpu"] for r in runs]),
        "ngrad_median": med([r["ngrad"] for r in runs]), "ncall_median": med([r["ncall"] for r in runs]),
        "logzerr_median": med([r["logzerr"] for r in runs]),
        "spread": statistics.stdev(logz) if len(logz) > 1 else float("nan"),
        "bias": statistics.fmean(l - r["exact"] for l, r in zip(logz, runs)),
        "max_abs_z": max(abs(r["logz"] - r["exact"]) / r["logzerr"] for r in runs),
        "warned_runs": sum(1 for r in runs if r["warnings"]),
        "load_median": med([r["load"] for r in runs]),
    }


def fmt_s(x):
    return "—" if x is None or math.isnan(x) else (f"{x:.3g}" if x < 10 else f"{x:.1f}")


def fmt_n(x):
    if x is None or math.isnan(x) or x == 0:
        return "—"
    return f"{x / 1e6:.2f} M" if x >= 1e6 else f"{x / 1e3:.0f} k"


def tabulate(results, cases):
    """The table's lines and the summary objects (per case and build, and
    the ratios new/ref) of the runs results[(case, build)], cases in the
    given order."""
    lines = [
        "| case | build | wall, median (range) | CPU | gradient calls | log-density calls | reported σ | spread of ln Z | bias | max \\|z\\| | load |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    summary = []
    for case in cases:
        sm = {b: summarize(case, b, results[(case, b)]) for b in ("ref", "new")}
        summary += [sm["ref"], sm["new"]]
        for b in ("ref", "new"):
            s = sm[b]
            lines.append(f"| {case} | {b} | {fmt_s(s['seconds_median'])} s ({fmt_s(s['seconds_min'])}–{fmt_s(s['seconds_max'])}) | "
                         f"{fmt_s(s['cpu_median'])} s | {fmt_n(s['ngrad_median'])} | {fmt_n(s['ncall_median'])} | "
                         f"{s['logzerr_median']:.2g} | {s['spread']:.2g} | {s['bias']:+.2g} | {s['max_abs_z']:.2f} | {s['load_median']:.1f} |")
        pairs = [n["seconds"] / r["seconds"] for n, r in zip(results[(case, "new")], results[(case, "ref")])]
        ratio = {
            "case": case, "build": "new/ref",
            "seconds": sm["new"]["seconds_median"] / sm["ref"]["seconds_median"],
            "seconds_paired_median": med(pairs), "seconds_paired_min": min(pairs), "seconds_paired_max": max(pairs),
            "cpu": sm["new"]["cpu_median"] / sm["ref"]["cpu_median"],
            "ngrad": (sm["new"]["ngrad_median"] / sm["ref"]["ngrad_median"]) if sm["ref"]["ngrad_median"] else float("nan"),
            "ncall": sm["new"]["ncall_median"] / sm["ref"]["ncall_median"],
            "logzerr": sm["new"]["logzerr_median"] / sm["ref"]["logzerr_median"],
            "spread": sm["new"]["spread"] / sm["ref"]["spread"] if sm["ref"]["spread"] else float("nan"),
        }
        summary.append(ratio)
        lines.append(f"| {case} | **new/ref** | **{ratio['seconds']:.2f}** (per seed {ratio['seconds_paired_median']:.2f}, "
                     f"{ratio['seconds_paired_min']:.2f}–{ratio['seconds_paired_max']:.2f}) | {ratio['cpu']:.2f} | "
                     f"{ratio['ngrad']:.2f} | {ratio['ncall']:.2f} | {ratio['logzerr']:.2f} | {ratio['spread']:.2f} | | | |")
    return lines, summary


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--ref", required=True, help="the reference commit (anything git rev-parse takes)")
    ap.add_argument("--seeds", type=int, default=16, help="seeds per case (default 16)")
    ap.add_argument("--problems", default="funnel,banana,cauchy,ring", help="pipeline cases ('' for none)")
    ap.add_argument("--scale", default="16:100000,256:100000,1000:20000",
                    help="evidence-step cases d:n, comma-separated ('' for none)")
    ap.add_argument("-n", type=int, default=0, help="draws of every evidence-step case (0: as in --scale)")
    ap.add_argument("--iters", type=int, default=0, help="NUTS iterations per chain of the pipeline (0: gbs-bench's default)")
    ap.add_argument("--pipeline-seed", type=int, default=777200, help="seed of the first pipeline run")
    ap.add_argument("--out", default=os.path.join(ROOT, "build", "compare"), help="parent directory of the results")
    ap.add_argument("--runs", help="also append each run to this file (JSON lines)")
    ap.add_argument("--go", default=os.environ.get("GO", "go"))
    a = ap.parse_args()

    ref = sh(["git", "rev-parse", a.ref]).strip()
    head = sh(["git", "rev-parse", "HEAD"]).strip()
    dirty = bool(sh(["git", "status", "--porcelain", "--untracked-files=no"]).strip())
    stamp = time.strftime("%Y%m%d-%H%M%S")
    outdir = os.path.join(a.out, stamp)
    bins = os.path.join(outdir, "bin")
    os.makedirs(outdir)
    print(f"new: {head[:12]}{' + uncommitted changes' if dirty else ''}; ref: {ref[:12]}; results in {outdir}", file=sys.stderr)

    build(ROOT, os.path.join(bins, "new"), a.go)
    wt = os.path.join(ROOT, "build", f"compare-ref-{ref[:12]}")
    if os.path.exists(wt):
        subprocess.run(["git", "worktree", "remove", "--force", wt], cwd=ROOT)
        shutil.rmtree(wt, ignore_errors=True)
    sh(["git", "worktree", "add", "--detach", wt, ref])
    try:
        build(wt, os.path.join(bins, "ref"), a.go)
    finally:
        subprocess.run(["git", "worktree", "remove", "--force", wt], cwd=ROOT, check=False)
        shutil.rmtree(wt, ignore_errors=True)
        subprocess.run(["git", "worktree", "prune"], cwd=ROOT, check=False)

    builds = {}
    for b in ("new", "ref"):
        bb = os.path.join(bins, b, "gbs-bench")
        bs = os.path.join(bins, b, "gbs-scale")
        builds[b] = {"bench": bb, "scale": bs, "bench_flags": flags_of(bb), "scale_flags": flags_of(bs)}

    cases = []
    for p in filter(None, a.problems.split(",")):
        cases.append(("pipeline " + p, lambda b, s, p=p: run_pipeline(builds[b]["bench"], builds[b]["bench_flags"], p, a.pipeline_seed + s, a.iters, outdir)))
    for c in filter(None, a.scale.split(",")):
        d, n = (int(v) for v in c.split(":"))
        n = a.n or n
        cases.append((f"evidence d={d} n={n}", lambda b, s, d=d, n=n: run_scale(builds[b]["scale"], builds[b]["scale_flags"], d, n, 1 + s)))

    meta = {"new": head, "new_dirty": dirty, "ref": ref, "seeds": a.seeds, "iters": a.iters, "started": stamp,
            "host_cpus": os.cpu_count()}
    runs_f = open(os.path.join(outdir, "runs.jsonl"), "w")
    results = {}
    for case, fn in cases:
        for s in range(a.seeds):
            order = ("ref", "new") if s % 2 == 0 else ("new", "ref")
            for b in order:
                l0 = loadavg()
                r = fn(b, s)
                r.update({"case": case, "build": b, "seed_index": s, "load": max(l0, loadavg()), "commit": meta[b]})
                results.setdefault((case, b), []).append(r)
                runs_f.write(json.dumps(r) + "\n")
                runs_f.flush()
                if a.runs:
                    with open(a.runs, "a") as f:
                        f.write(json.dumps(r) + "\n")
                print(f"{case:28s} {b:3s} seed {s:2d}: ln Z - exact = {r['logz'] - r['exact']:+.4f} ± {r['logzerr']:.4f}"
                      f"  {r['seconds']:7.2f} s  (wall {r['wall']:.2f}, load {r['load']:.1f})", file=sys.stderr)
    runs_f.close()

    header = (f"new = {head[:12]}{' (with uncommitted changes)' if dirty else ''}, ref = {ref[:12]}; {a.seeds} seeds per case, "
              f"runs alternated (ref first on even seeds); {os.cpu_count()} CPUs.")
    lines, summary = tabulate(results, [case for case, _ in cases])
    lines = [header, ""] + lines
    with open(os.path.join(outdir, "summary.jsonl"), "w") as f:
        f.write(json.dumps({"meta": meta}) + "\n")
        for s in summary:
            f.write(json.dumps(s) + "\n")
    table = "\n".join(lines) + "\n"
    with open(os.path.join(outdir, "summary.md"), "w") as f:
        f.write(table)
    print(table)
    shutil.rmtree(bins, ignore_errors=True)


if __name__ == "__main__":
    main()
