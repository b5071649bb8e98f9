"""gbs.run from Python against the Go pipeline it calls: the 16-d funnel at
the paper's budget (8 NUTS chains of 2500 iterations, 500 of them warm-up),
the same seeds on every side, runs alternating so that a change in the
machine's load hits all.

    .venv/bin/python bench/python_run.py [--seeds 8] [--seed 777200] [--out bench/results/python-run.json]

Two Python sides. "python" is ``gbs.run(f.log_prob_and_grad,
bounds=f.bounds, n_chains=8, n_draws=2000, n_warmup=500, vectorize=True,
seed=s)`` with the numpy funnel of gbs.problems, through libgbs.so (the
batched entry point: one callback per leapfrog step with the current point
of every chain, and the evidence stage's points 4096 at a time). "native"
is ``gbs.run(f.native(), ...)`` with the same budget: the library's own
funnel (a gbs.NativeDensity), so no Python runs per point. Their time is
the call's wall time. The Go side is ``gbs-bench -methods GBS -problems funnel`` (built
from this checkout), the same pipeline with the Go funnel, chains in
parallel threads; its time is the pipeline's own (sampling and evidence,
every run), as gbs-bench reports it. Both use every core (GOMAXPROCS);
the table says how many there were and how loaded the machine was. The CPU
time of each side (the Python process's during the call, the gbs-bench
process's) is recorded too: on a loaded machine it compares the work done
better than wall time, which depends on the share of the cores each side
gets (Go samples its chains in parallel threads, the batched Python
sampler in one).
"""

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
import warnings

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
sys.path.insert(0, os.path.join(ROOT, "python"))
os.environ.setdefault("GBS_LIBRARY", os.path.join(ROOT, "build", "lib", "libgbs.so"))
import gbs  # noqa: E402
from provenance import stamp  # noqa: E402  (bench/provenance.py, beside this script)

CHAINS, ITERS, WARMUP = 8, 2500, 500


def python_run(seed, native=False):
    f = gbs.problems.funnel(16)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", gbs.GbsWarning)
        t0, c0 = time.perf_counter(), time.process_time()
        if native:
            res = gbs.run(f.native(), n_chains=CHAINS, n_draws=ITERS - WARMUP, n_warmup=WARMUP, seed=seed)
        else:
            res = gbs.run(f.log_prob_and_grad, bounds=f.bounds, n_chains=CHAINS, n_draws=ITERS - WARMUP,
                          n_warmup=WARMUP, vectorize=True, seed=seed)
        seconds, cpu = time.perf_counter() - t0, time.process_time() - c0
    return {"seed": seed, "logz": res.logz, "logzerr": res.logzerr, "exact": f.logz, "seconds": seconds,
            "cpu_seconds": cpu,
            "warnings": [w.message.check for w in caught if isinstance(w.message, gbs.GbsWarning)],
            "reruns": len(res.found("rerun")), "target_accept": res.sampling["target_accept"],
            "lengthened": res.sampling["lengthened"], "grad_calls": res.sampling["grad_calls"],
            "sampling_seconds": res.sampling["sampling_seconds"],
            "evidence_seconds": res.sampling["evidence_seconds"]}


def go_run(binary, seed):
    with tempfile.NamedTemporaryFile("r", suffix=".jsonl") as out:
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.perf_counter()
        subprocess.run([binary, "-methods", "GBS", "-problems", "funnel", "-repeats-gbs", "1", "-repeats", "0",
                        "-seed", str(seed), "-chains", str(CHAINS), "-iters", str(ITERS),
                        "-warmup", str(WARMUP / ITERS), "-o", out.name], check=True, cwd=ROOT,
                       stderr=subprocess.DEVNULL)
        wall = time.perf_counter() - t0
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
        r = json.loads(out.read().strip().splitlines()[0])
    return {"seed": seed, "logz": r["logz"], "logzerr": r["logzerr"], "exact": r["exact"],
            "seconds": r["seconds"], "process_seconds": wall, "cpu_seconds": cpu, "warnings": r.get("warnings") or [],
            "grad_calls": r["ngrad"]}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seeds", type=int, default=8)
    ap.add_argument("--seed", type=int, default=777200)
    ap.add_argument("--out", default=os.path.join(ROOT, "bench", "results", "python-run.json"))
    ap.add_argument("--sides", default="python,native,go",
                    help="comma-separated sides to run (default all three: python, native, go)")
    args = ap.parse_args()
    sides = [x for x in args.sides.split(",") if x]
    if not sides or set(sides) - {"python", "native", "go"}:
        ap.error("--sides: give some of python, native, go")
    out = dict(stamp())  # the checkout as the runs start
    tmp = tempfile.mkdtemp(prefix="gbs-bench-")
    binary = os.path.join(tmp, "gbs-bench")
    subprocess.run(["go", "build", "-o", binary, "./cmd/gbs-bench"], check=True, cwd=ROOT)
    runs = {side: [] for side in sides}
    loads = []
    for i in range(args.seeds):
        s = args.seed + i
        # Rotate which side goes first, so none always follows another.
        k = i % len(sides)
        order = sides[k:] + sides[:k]
        for side in order:
            loads.append(os.getloadavg()[0])
            r = go_run(binary, s) if side == "go" else python_run(s, native=side == "native")
            runs[side].append(r)
            print("%-6s seed %d: ln Z = %.4f ± %.4f (z %+.2f) %6.1f s %s" % (
                side, s, r["logz"], r["logzerr"], (r["logz"] - r["exact"]) / r["logzerr"], r["seconds"],
                r["warnings"] or ""), file=sys.stderr, flush=True)
    out.update({"cpus": os.cpu_count(), "threads": gbs.set_threads(0), "chains": CHAINS, "iters": ITERS,
                "warmup": WARMUP, "load_average": loads, "runs": runs})
    with open(args.out, "w", encoding="utf-8") as f:
        json.dump(out, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
