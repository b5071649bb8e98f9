#!/usr/bin/env python3
"""Nested-sampling baseline: dynesty on the paper's reference problems.

Runs dynesty (https://dynesty.readthedocs.io) with its default settings, as
Jia & Seljak (2019) did for their comparison, on the problems of
python/gbs/problems.py, and appends one JSON line per run to --out with the
keys of the Go benchmark (cmd/gbs-bench):

    {"problem", "method": "NS", "seed", "logz", "logzerr", "exact",
     "ncall", "ngrad": 0, "seconds", "dynesty", "commit", "date"}

plus "error" (and null logz/logzerr) when a run fails, and "note" when
--maxcall stopped it before dynesty's own stopping rule (its ln Z is then
that of a truncated run). ncall counts every likelihood call, including
those of the initial live points; seconds is the wall time of one run;
dynesty is its version, commit and date those of this checkout and the
day of the run (bench/provenance.py).

Sampler: ``dynesty.NestedSampler(loglike, prior_transform, ndim,
rstate=numpy.random.default_rng(seed))`` and ``run_nested()``, everything
else at dynesty's defaults: the static sampler (NestedSampler, not the
dynamic one, is dynesty's basic "run with defaults" and what the paper
compares with), 500 live points, multi-ellipsoid bounds, sample='auto'
(dynesty 3: uniform for d < 10, 'rwalk' with d + 20 steps for 10 <= d <=
20, 'rslice' with d + 3 slices for d > 20) and the stopping rule dlogz =
0.509 (1e-3 (nlive - 1) + 0.01, remaining live points added). With
--dynamic it uses DynamicNestedSampler().run_nested() at its defaults
instead and writes method "DNS".

The likelihood is L (``Problem.log_likelihood``) and the prior the flat
box (``Problem.prior_transform``), so dynesty's Z is the problem's exact Z.
Runs are serial (one core each); BLAS threads are limited to one.

Runs take minutes (funnel, 16-d) to hours (ring, 64-d). Several problems
can run at once in separate processes (--jobs), and an interrupted
benchmark resumes: runs whose (problem, seed) already has a line in --out
are skipped. Repeat r of every problem uses the seed --seed + r (as the Go
benchmark does), and the runs are ordered repeat by repeat, so a partial
benchmark covers every problem.

Examples
--------
    .venv/bin/python bench/dynesty_bench.py --problems funnel,banana --repeats 1
    nice -n 10 .venv/bin/python bench/dynesty_bench.py --jobs 2 --out bench/results/paper-ns.jsonl
    .venv/bin/python bench/dynesty_bench.py --problems ring --repeats 1 --maxcall 20000000
"""

import os

# One BLAS thread: the sampler is serial and extra threads only contend.
# Must be set before numpy is imported (here and in spawned workers).
for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import importlib.util  # noqa: E402
import json  # noqa: E402
import math  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
import traceback  # noqa: E402
import warnings  # noqa: E402

from provenance import stamp  # noqa: E402  (bench/provenance.py, beside this script)

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
PROBLEMS_PATH = os.path.join(ROOT, "python", "gbs", "problems.py")
DEFAULT_PROBLEMS = "funnel,banana,cauchy,ring"
DEFAULT_OUT = os.path.join("bench", "results", "paper-ns.jsonl")


def load_problems():
    """Import python/gbs/problems.py by path, without the gbs package (which
    needs the compiled library)."""
    name = "_gbs_problems_standalone"
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, PROBLEMS_PATH)
    if spec is None:
        raise ImportError("cannot load %s" % PROBLEMS_PATH)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


class CountingLikelihood:
    """ln L of a problem for one point, counting the calls."""

    def __init__(self, problem):
        self.problem = problem
        self.ncall = 0

    def __call__(self, x):
        self.ncall += 1
        return self.problem.log_likelihood(x)


class Progress:
    """dynesty print_func that prints one line every `every` seconds and
    remembers the last remaining-evidence estimate of the main loop."""

    def __init__(self, label, every, counter, t0):
        self.label, self.every, self.counter, self.t0 = label, every, counter, t0
        self.next = t0 + every if every > 0 else math.inf
        self.delta_logz = math.inf

    def __call__(self, results, niter, ncall, add_live_it=None, dlogz=None, stop_val=None, nbatch=None,
                 **kwargs):
        dl = getattr(results, "delta_logz", None)
        if add_live_it is None and dl is not None:
            self.delta_logz = float(dl)
        now = time.monotonic()
        if now < self.next:
            return
        self.next = now + self.every
        logz = getattr(results, "logz", float("nan"))
        parts = ["[%s]" % self.label, "iter %d" % niter, "ncall %.3g" % self.counter.ncall,
                 "ln Z %.3f" % logz]
        if nbatch is not None:
            parts.append("batch %d" % nbatch)
        if add_live_it is not None:
            parts.append("adding live points (%d)" % add_live_it)
        elif dl is not None and dlogz is not None:
            parts.append("dlogz %.3g (stop at %.3g)" % (dl, dlogz))
        elif stop_val is not None:
            parts.append("stop %.3g" % stop_val)
        parts.append("%.0f s" % (now - self.t0))
        print("  ".join(parts), file=sys.stderr, flush=True)


def run_one(task):
    """One nested-sampling run; returns the JSON record (never raises,
    except KeyboardInterrupt)."""
    name, seed, opts = task["problem"], task["seed"], task["opts"]
    method = "DNS" if opts["dynamic"] else "NS"
    rec = {"problem": name, "method": method, "seed": seed, "logz": None, "logzerr": None, "exact": None,
           "ncall": 0, "ngrad": 0, "seconds": 0.0}
    t0 = time.monotonic()
    prov = stamp()  # the checkout as the run starts
    counter = None
    try:
        import numpy as np
        import dynesty

        problems = load_problems()
        p = problems.by_name(name)
        rec["problem"], rec["exact"] = p.name, p.logz
        counter = CountingLikelihood(p)
        label = "%s %s seed %d" % (method, p.name, seed)
        progress = Progress(label, opts["progress_every"], counter, t0)
        kw = {"rstate": np.random.default_rng(seed)}
        run_kw = {"print_progress": True, "print_func": progress}
        if opts["maxcall"] is not None:
            run_kw["maxcall"] = opts["maxcall"]
        if opts["dynamic"]:
            if opts["nlive"] is not None:
                run_kw["nlive_init"] = opts["nlive"]
            if opts["dlogz"] is not None:
                run_kw["dlogz_init"] = opts["dlogz"]
            sampler = dynesty.DynamicNestedSampler(counter, p.prior_transform, p.dim, **kw)
        else:
            if opts["nlive"] is not None:
                kw["nlive"] = opts["nlive"]
            if opts["dlogz"] is not None:
                run_kw["dlogz"] = opts["dlogz"]
            sampler = dynesty.NestedSampler(counter, p.prior_transform, p.dim, **kw)
        print("[%s] started: dynesty %s, %s, d = %d, exact ln Z = %.6f" % (
            label, dynesty.__version__, "DynamicNestedSampler" if opts["dynamic"] else "NestedSampler", p.dim,
            p.logz), file=sys.stderr, flush=True)
        with warnings.catch_warnings():
            # dynesty warns when maxcall stops a run early; the record says so.
            warnings.simplefilter("ignore", UserWarning)
            sampler.run_nested(**run_kw)
        res = sampler.results
        logz, logzerr = float(res["logz"][-1]), float(res["logzerr"][-1])
        rec.update(logz=logz, logzerr=logzerr, ncall=counter.ncall, seconds=time.monotonic() - t0,
                   dynesty=dynesty.__version__, **prov)
        if not (math.isfinite(logz) and math.isfinite(logzerr)):
            rec["error"] = "dynesty returned a non-finite ln Z (%r +- %r)" % (logz, logzerr)
            rec["logz"] = rec["logzerr"] = None
        elif opts["maxcall"] is not None and counter.ncall >= opts["maxcall"]:
            if opts["dynamic"]:
                rec["note"] = "stopped by --maxcall %d" % opts["maxcall"]
            else:
                nlive = opts["nlive"] or sampler.nlive
                stop = opts["dlogz"] if opts["dlogz"] is not None else 1e-3 * (nlive - 1) + 0.01
                if progress.delta_logz > stop:
                    rec["note"] = ("stopped by --maxcall %d before dynesty's stopping rule "
                                   "(remaining dlogz %.3g > %.3g): ln Z of a truncated run"
                                   % (opts["maxcall"], progress.delta_logz, stop))
    except KeyboardInterrupt:
        raise
    except Exception as exc:  # the record carries the failure
        rec["error"] = "%s: %s" % (type(exc).__name__, exc)
        rec["seconds"] = time.monotonic() - t0
        if counter is not None:
            rec["ncall"] = counter.ncall
        traceback.print_exc(file=sys.stderr)
    return rec


def read_done(path, method, retry_failed):
    """(problem, seed) pairs already in the output file for this method.

    Failed runs count as done unless retry_failed; then their lines are
    removed from the file (rewritten atomically) so that the new attempt
    replaces them.
    """
    done, keep, dropped = set(), [], 0
    if not os.path.exists(path):
        return done
    with open(path) as f:
        lines = f.read().splitlines()
    for i, line in enumerate(lines):
        if not line.strip():
            continue
        try:
            r = json.loads(line)
            key = (r["problem"], int(r["seed"]))
        except (ValueError, KeyError, TypeError):
            print("dynesty_bench: %s:%d: ignoring a malformed line" % (path, i + 1), file=sys.stderr)
            keep.append(line)
            continue
        if r.get("method") == method:
            if r.get("error") and retry_failed:
                dropped += 1
                continue
            done.add(key)
        keep.append(line)
    if dropped:
        tmp = path + ".tmp"
        with open(tmp, "w") as f:
            f.write("".join(line + "\n" for line in keep))
        os.replace(tmp, path)
        print("dynesty_bench: removed %d failed run(s) from %s to retry them" % (dropped, path), file=sys.stderr)
    return done


def append_record(path, rec):
    """Append one JSON line, starting on a new line if the file does not end
    with one (e.g. after a crash)."""
    need_nl = False
    if os.path.exists(path) and os.path.getsize(path) > 0:
        with open(path, "rb") as f:
            f.seek(-1, os.SEEK_END)
            need_nl = f.read(1) != b"\n"
    with open(path, "a") as f:
        f.write(("\n" if need_nl else "") + json.dumps(rec, allow_nan=False) + "\n")
        f.flush()
        os.fsync(f.fileno())


def report(rec):
    if rec.get("error"):
        line = "%-8s %s seed %d: FAILED after %.1f s: %s" % (rec["problem"], rec["method"], rec["seed"],
                                                            rec["seconds"], rec["error"])
    else:
        line = "%-8s %s seed %d: ln Z = %.4f +- %.4f (exact %.4f, diff %+.4f)  ncall %d  %.1f s%s" % (
            rec["problem"], rec["method"], rec["seed"], rec["logz"], rec["logzerr"], rec["exact"],
            rec["logz"] - rec["exact"], rec["ncall"], rec["seconds"],
            ("  [" + rec["note"] + "]") if rec.get("note") else "")
    print(line, flush=True)


def parse_args(argv):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--problems", default=DEFAULT_PROBLEMS,
                    help="comma-separated problem names of gbs.problems.by_name (default %(default)s)")
    ap.add_argument("--repeats", type=int, default=8, help="runs per problem (default %(default)s)")
    ap.add_argument("--seed", type=int, default=1000,
                    help="seed of the first repeat; repeat r uses seed + r (default %(default)s)")
    ap.add_argument("--out", default=DEFAULT_OUT,
                    help="JSON-lines file, appended to; existing (problem, seed) runs are skipped "
                         "(default %(default)s)")
    ap.add_argument("--maxcall", type=int, default=None,
                    help="cap on likelihood calls per run (default: none, dynesty's stopping rule alone); "
                         "a capped run gets a 'note'")
    ap.add_argument("--nlive", type=int, default=None, help="live points (default: dynesty's, 500)")
    ap.add_argument("--dlogz", type=float, default=None,
                    help="stopping tolerance (default: dynesty's, 1e-3 (nlive-1) + 0.01; "
                         "with --dynamic dlogz_init, default 0.01)")
    ap.add_argument("--dynamic", action="store_true",
                    help="DynamicNestedSampler instead of NestedSampler (method 'DNS')")
    ap.add_argument("--jobs", type=int, default=1,
                    help="runs in parallel, one process each (default %(default)s)")
    ap.add_argument("--progress-every", type=float, default=60.0,
                    help="seconds between progress lines on stderr, 0 for none (default %(default)s)")
    ap.add_argument("--retry-failed", action="store_true",
                    help="run failed (problem, seed) pairs again, replacing their lines")
    args = ap.parse_args(argv)
    if args.repeats < 1:
        ap.error("--repeats must be >= 1")
    if args.jobs < 1:
        ap.error("--jobs must be >= 1")
    if args.maxcall is not None and args.maxcall < 1:
        ap.error("--maxcall must be >= 1")
    if args.nlive is not None and args.nlive < 2:
        ap.error("--nlive must be >= 2")
    if args.dlogz is not None and not args.dlogz > 0:
        ap.error("--dlogz must be > 0")
    names = [n.strip() for n in args.problems.split(",") if n.strip()]
    if not names:
        ap.error("--problems is empty")
    problems = load_problems()
    canonical = []
    for n in names:
        try:
            p = problems.by_name(n)
        except ValueError as exc:
            ap.error(str(exc))
        if p.bounds is None:
            ap.error("problem %s has no prior box; nested sampling needs one" % p.name)
        canonical.append(p.name)
    args.names = canonical
    return args


def main(argv=None):
    args = parse_args(argv)
    try:
        import dynesty
    except ImportError:
        print("dynesty_bench: dynesty is not installed: pip install -r bench/requirements.txt", file=sys.stderr)
        return 1
    method = "DNS" if args.dynamic else "NS"
    out_dir = os.path.dirname(os.path.abspath(args.out))
    os.makedirs(out_dir, exist_ok=True)
    done = read_done(args.out, method, args.retry_failed)
    opts = {"maxcall": args.maxcall, "nlive": args.nlive, "dlogz": args.dlogz, "dynamic": args.dynamic,
            "progress_every": args.progress_every}
    tasks = [{"problem": n, "seed": args.seed + r, "opts": opts}
             for r in range(args.repeats) for n in args.names]
    todo = [t for t in tasks if (t["problem"], t["seed"]) not in done]
    print("dynesty_bench: dynesty %s, %s, %d run(s) to do, %d already in %s, %d job(s), maxcall %s" % (
        dynesty.__version__, "DynamicNestedSampler" if args.dynamic else "NestedSampler", len(todo),
        len(tasks) - len(todo), args.out, args.jobs, args.maxcall or "none"), file=sys.stderr, flush=True)
    failed = 0
    try:
        if args.jobs == 1 or len(todo) <= 1:
            for t in todo:
                rec = run_one(t)
                append_record(args.out, rec)
                report(rec)
                failed += bool(rec.get("error"))
        else:
            import concurrent.futures as cf
            import multiprocessing as mp

            # spawn: a fresh interpreter per worker, nothing inherited that
            # could hang (threads, a loaded Go runtime).
            with cf.ProcessPoolExecutor(max_workers=min(args.jobs, len(todo)),
                                        mp_context=mp.get_context("spawn")) as pool:
                futures = {pool.submit(run_one, t): t for t in todo}
                try:
                    for fut in cf.as_completed(futures):
                        t = futures[fut]
                        try:
                            rec = fut.result()
                        except Exception as exc:  # a worker died
                            rec = {"problem": t["problem"], "method": method, "seed": t["seed"], "logz": None,
                                   "logzerr": None, "exact": None, "ncall": 0, "ngrad": 0, "seconds": 0.0,
                                   "error": "worker failed: %s: %s" % (type(exc).__name__, exc)}
                        append_record(args.out, rec)
                        report(rec)
                        failed += bool(rec.get("error"))
                except KeyboardInterrupt:
                    for f in futures:
                        f.cancel()
                    raise
    except KeyboardInterrupt:
        print("dynesty_bench: interrupted; finished runs are in %s, run again to resume" % args.out,
              file=sys.stderr)
        return 130
    if failed:
        print("dynesty_bench: %d run(s) failed (see 'error' in %s)" % (failed, args.out), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
