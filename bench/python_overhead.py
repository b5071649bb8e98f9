"""What calling gbs from Python costs: gbs.evidence on the 16-d funnel from
Python (vectorize=True and False) against the same call from Go, and the
cost per log-density point of the Python callback.

    .venv/bin/python bench/python_overhead.py [--repeats 15] [--json bench/results/python-overhead.json]

The same call: both sides get the same 2*10^4 exact funnel draws (written
to a file for Go), independent, no bounds, the same seed and n_q (by the
adaptive rule on the Go side), and give the same ln Z (to 1e-9, checked:
the numpy and Go log densities round differently in the last bit).
The Go side is a small program built in a temporary module that `replace`s
this repository (so nothing is added to the module): gbs.Evidence with
problems.ByName("funnel").LogProbBatch. The Python side is gbs.evidence
through libgbs.so with the numpy log density of gbs.problems. Both run with
the same GOMAXPROCS (all cores). Go and Python runs alternate, so that a
change in the machine's load hits both; the table gives the best and the
median over --repeats runs (vectorize=False: a third as many).

Columns: "fit" is the time until the proposal is fitted (no callback is
involved: this is libgbs's Go code running inside the Python process),
"rest" the remaining time (proposal draws, log p through the callback,
the bridge). "in log_prob" is the time spent inside the user's Python
function (summed around each call); "gbs overhead" is the extra time per
point over Go that is neither inside log_prob nor in the fit (noisy: it is
a small difference of large times). The last line measures the callback
machinery directly: the wrapper around a log_prob that does nothing, per
point, and the cost of one callback invocation.
"""

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

import numpy as np

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
sys.path.insert(0, os.path.join(ROOT, "python"))
os.environ.setdefault("GBS_LIBRARY", os.path.join(ROOT, "build", "lib", "libgbs.so"))
import gbs  # noqa: E402
from gbs import problems  # noqa: E402
from provenance import stamp  # noqa: E402  (bench/provenance.py, beside this script)

GO_MAIN = r'''package main

// Times gbs.Evidence on the funnel with draws read from a file (raw
// little-endian float64, n x 16): the Go side of bench/python_overhead.py.

import (
	"context"
	"encoding/binary"
	"flag"
	"fmt"
	"math"
	"os"
	"time"

	"github.com/gbs-evidence/gbs/gbs"
	"github.com/gbs-evidence/gbs/problems"
)

func main() {
	file := flag.String("draws", "", "draws file")
	nq := flag.Int("nq", 0, "n_q (0: adaptive)")
	seed := flag.Uint64("seed", 1, "seed")
	flag.Parse()
	p, err := problems.ByName("funnel")
	if err != nil {
		panic(err)
	}
	raw, err := os.ReadFile(*file)
	if err != nil {
		panic(err)
	}
	x := make([]float64, len(raw)/8)
	for i := range x {
		x[i] = math.Float64frombits(binary.LittleEndian.Uint64(raw[8*i:]))
	}
	s := &gbs.Samples{Dim: p.Dim, Chains: [][]float64{x}, Independent: true}
	var fit time.Duration
	start := time.Now()
	logf := func(m string) {
		if fit == 0 {
			fit = time.Since(start) // "proposal fitted on ... draws"
		}
	}
	res, err := gbs.Evidence(context.Background(), p.LogProbBatch, s, &gbs.Settings{Seed: *seed, NQ: *nq, Log: logf})
	total := time.Since(start)
	if err != nil {
		panic(err)
	}
	fmt.Printf("seconds %.6f fit %.6f logz %.17g n_q %d ncall %d\n", total.Seconds(), fit.Seconds(), res.LogZ, res.NQ, res.NCall)
}
'''


class GoHarness:
    """The Go program above, built once in a temporary module."""

    def __init__(self, tmp):
        mod = os.path.join(tmp, "gbsbench")
        os.makedirs(mod)
        with open(os.path.join(mod, "main.go"), "w") as f:
            f.write(GO_MAIN)
        with open(os.path.join(mod, "go.mod"), "w") as f:
            f.write("module gbsbench\n\ngo 1.24\n\nrequire github.com/gbs-evidence/gbs v0.0.0\n\n"
                    "replace github.com/gbs-evidence/gbs => %s\n" % ROOT)
        shutil.copy(os.path.join(ROOT, "go.sum"), mod)
        env = dict(os.environ, GOFLAGS="-mod=mod")
        # The repository's dependencies are in the module cache already.
        if subprocess.call(["go", "mod", "tidy"], cwd=mod, env=dict(env, GOPROXY="off"),
                           stderr=subprocess.DEVNULL) != 0:
            subprocess.check_call(["go", "mod", "tidy"], cwd=mod, env=env)
        self.exe = os.path.join(tmp, "gbsbench-go")
        subprocess.check_call(["go", "build", "-o", self.exe, "."], cwd=mod, env=env)

    def run(self, draws_file, seed, nq=0):
        out = subprocess.check_output([self.exe, "-draws", draws_file, "-seed", str(seed), "-nq", str(nq)],
                                      text=True)
        m = re.search(r"seconds (\S+) fit (\S+) logz (\S+) n_q (\d+) ncall (\d+)", out)
        return {"seconds": float(m.group(1)), "fit": float(m.group(2)), "logz": float(m.group(3)),
                "n_q": int(m.group(4)), "ncall": int(m.group(5))}


class Timed:
    """log_prob with the time spent inside it summed."""

    def __init__(self, fn):
        self.fn, self.seconds = fn, 0.0

    def __call__(self, x):
        t = time.perf_counter()
        v = self.fn(x)
        self.seconds += time.perf_counter() - t
        return v


def python_run(x, vectorize, seed, nq):
    f = Timed(problems.funnel().log_prob)
    stamps = []
    t0 = time.perf_counter()
    res = gbs.evidence(f, x, vectorize=vectorize, independent=True, seed=seed, n_q=nq,
                       progress=lambda msg: stamps.append(time.perf_counter() - t0))
    total = time.perf_counter() - t0
    return {"seconds": total, "fit": stamps[0], "in_log_prob": f.seconds, "logz": res.logz,
            "n_q": res.n_q, "ncall": res.ncall}


def wrapper_cost(d=16, n=4096, repeats=20):
    """Seconds per point of gbs's callback wrapper around a log_prob that
    does nothing (returns 0), per batch of n points: the copy of the
    library's buffer, the per-point loop or the batch call, the conversion
    of the values. The C -> Python transition is not included (see
    transition_cost)."""
    import threading
    from gbs.evidence import batch_function
    x = np.random.default_rng(0).normal(size=(n, d))
    out = np.empty(n)
    res = {}
    for vec, fn in ((True, lambda v: np.zeros(len(v))), (False, lambda v: 0.0)):
        f = batch_function(fn, vec, (), {}, None, threading.Event())
        best = None
        for _ in range(repeats):
            t = time.perf_counter()
            f(x.copy(), out)
            t = time.perf_counter() - t
            best = t if best is None else min(best, t)
        res[vec] = best / n
    return res


def transition_cost(nq, d=16, n=20000, repeats=5):
    """Seconds per callback invocation (C -> Python -> C: the GIL, the
    wrapper, the return), from gbs.evidence on a d-dimensional Gaussian with
    1-point batches against 4096-point batches, vectorized, minus what the
    log density itself costs more on one row than per row of a batch."""
    x = np.random.default_rng(0).normal(size=(n, d))
    const = -0.5 * d * np.log(2 * np.pi)

    def lp(v):
        return const - 0.5 * np.einsum("ij,ij->i", v, v)

    times, ncall = {}, None
    for bs in (1, 4096):
        best = None
        for _ in range(repeats):
            t = time.perf_counter()
            res = gbs.evidence(lp, x, vectorize=True, independent=True, seed=1, n_q=nq, batch_size=bs)
            t = time.perf_counter() - t
            best = t if best is None else min(best, t)
        times[bs], ncall = best, res.ncall
    y = x[:4096]
    one_row = min(_time(lambda: [lp(y[i:i + 1]) for i in range(len(y))]) for _ in range(5)) / len(y)
    in_batch = min(_time(lambda: lp(y)) for _ in range(5)) / len(y)
    return (times[1] - times[4096]) / ncall - (one_row - in_batch), times, one_row


def _time(fn):
    t = time.perf_counter()
    fn()
    return time.perf_counter() - t


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeats", type=int, default=15)
    ap.add_argument("--n", type=int, default=20000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--json", help="also write the numbers to this file")
    a = ap.parse_args()
    prov = stamp()  # the checkout as the run starts

    x = problems.funnel().sample(a.n, seed=a.seed)
    runs = {"go": [], True: [], False: []}
    with tempfile.TemporaryDirectory() as tmp:
        draws_file = os.path.join(tmp, "draws.bin")
        x.astype("<f8").tofile(draws_file)
        go = GoHarness(tmp)
        first = go.run(draws_file, a.seed)  # warm-up; its n_q for both sides
        nq, ncall = first["n_q"], first["ncall"]
        python_run(x, True, a.seed, nq)  # warm-up
        for r in range(a.repeats):
            runs["go"].append(go.run(draws_file, a.seed, nq))
            runs[True].append(python_run(x, True, a.seed, nq))
            if r % 3 == 0:
                runs[False].append(python_run(x, False, a.seed, nq))
    for name, rs in runs.items():
        for r in rs:
            # The same computation; the numpy and Go log densities round
            # differently in the last bit.
            assert abs(r["logz"] - first["logz"]) < 1e-9 and r["ncall"] == ncall, (name, r, first)

    def stat(rs, key, f):
        return float(f([r[key] for r in rs]))

    go_best, go_med = stat(runs["go"], "seconds", np.min), stat(runs["go"], "seconds", np.median)
    go_fit = stat(runs["go"], "fit", np.median)
    out = {**prov, "threads": gbs.set_threads(0), "cpus": os.cpu_count(), "repeats": a.repeats,
           "n": a.n, "n_q": nq, "ncall": ncall, "logz": first["logz"], "runs": {}}
    print("gbs.evidence on the 16-d funnel: %d exact draws, n_q = %d, %d log-density calls, "
          "%d threads, %d runs (ln Z = %.6f on both sides)"
          % (a.n, nq, ncall, out["threads"], a.repeats, first["logz"]))
    print()
    print("| path | best | median | vs Go (median) | fit (median) | rest (median) "
          "| extra per point | in log_prob | gbs overhead |")
    print("|---|---|---|---|---|---|---|---|---|")
    print("| Go | %.3f s | %.3f s | | %.3f s | %.3f s | | | |"
          % (go_best, go_med, go_fit, go_med - go_fit))
    out["runs"]["go"] = runs["go"]
    for vec in (True, False):
        rs = runs[vec]
        best, med = stat(rs, "seconds", np.min), stat(rs, "seconds", np.median)
        fit, inside = stat(rs, "fit", np.median), stat(rs, "in_log_prob", np.median)
        rest = med - fit
        extra = (med - go_med) / ncall
        gbs_over = ((rest - (go_med - go_fit)) - inside) / ncall
        print("| Python, vectorize=%s | %.3f s | %.3f s | %+.1f %% | %.3f s | %.3f s | %.2f µs | %.2f µs "
              "| %.2f µs |" % (vec, best, med, 100 * (med / go_med - 1), fit, rest, 1e6 * extra,
                               1e6 * inside / ncall, 1e6 * gbs_over))
        out["runs"]["python_vectorize_%s" % str(vec).lower()] = rs
    w = wrapper_cost()
    per_call, times, one_row = transition_cost(nq)
    out["wrapper_seconds_per_point"] = {"vectorize_true": w[True], "vectorize_false": w[False]}
    out["callback_invocation_seconds"] = per_call
    print()
    print("Callback machinery alone: per point, a log_prob that returns 0 (batch of 4096, d = 16): "
          "%.3f µs with vectorize=True, %.3f µs with vectorize=False. Per callback invocation "
          "(C -> Python -> C; a 16-d Gaussian with 1-point against 4096-point batches: %.3f s against "
          "%.3f s, log_prob on one row %.2f µs): %.1f µs."
          % (1e6 * w[True], 1e6 * w[False], times[1], times[4096], 1e6 * one_row, 1e6 * per_call))
    if a.json:
        with open(a.json, "w") as f:
            json.dump(out, f, indent=1)


if __name__ == "__main__":
    main()
