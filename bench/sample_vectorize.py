"""gbs.sample from a numpy log density: one callback per point
(vectorize=False) against one callback per step of all chains
(vectorize=True), on a 32-d target with 8 chains.

    .venv/bin/python bench/sample_vectorize.py [--repeats 3] [--warmup 500] [--draws 500]

The target is an AR(1) Gaussian (coefficient 0.9, a tridiagonal precision
evaluated with shifted slices) plus a softplus term, written once for a
point and once for a batch with the same elementwise operations and row
sums, so both give each point the same values bit for bit and the two
paths draw the same chains: the script checks that. It reports wall time
and process CPU time of each path (runs alternate, best and median over
--repeats), the callbacks made, and the time per point inside the user's
function alone.
"""

import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "python"))
os.environ.setdefault("GBS_LIBRARY", os.path.join(os.path.dirname(__file__), "..", "build", "lib", "libgbs.so"))
import gbs  # noqa: E402

D, CHAINS, PHI, SOFT = 32, 8, 0.9, 0.1
# Precision of the stationary AR(1) with unit innovations: diagonal 1 + phi²
# inside, 1 at both ends; off-diagonal -phi.
DIAG = np.full(D, 1 + PHI * PHI)
DIAG[0] = DIAG[-1] = 1.0


def log_prob_and_grad(x):
    """x of shape (d,) or (n, d): log p (scalar or (n,)) and its gradient."""
    qx = DIAG * x
    qx[..., 1:] -= PHI * x[..., :-1]
    qx[..., :-1] -= PHI * x[..., 1:]
    lp = -0.5 * np.sum(x * qx, axis=-1) - SOFT * np.sum(np.logaddexp(0.0, x), axis=-1)
    grad = -qx - SOFT / (1.0 + np.exp(-x))
    return lp, grad


def run(vectorize, args):
    n = [0]

    def f(x):
        n[0] += 1
        return log_prob_and_grad(x)

    w, c = time.perf_counter(), time.process_time()
    s = gbs.sample(f, np.zeros(D), n_chains=CHAINS, n_warmup=args.warmup, n_draws=args.draws,
                   seed=args.seed, vectorize=vectorize)
    return time.perf_counter() - w, time.process_time() - c, n[0], s


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--warmup", type=int, default=500)
    ap.add_argument("--draws", type=int, default=500)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()

    x = np.random.default_rng(0).normal(size=(CHAINS, D))
    lp, g = log_prob_and_grad(x)
    for i in range(CHAINS):
        lpi, gi = log_prob_and_grad(x[i])
        assert lp[i] == lpi and np.array_equal(g[i], gi), "batched values differ from per-point ones"
    reps = 2000
    t = time.perf_counter()
    for _ in range(reps):
        log_prob_and_grad(x[0])
    per_point = (time.perf_counter() - t) / reps
    t = time.perf_counter()
    for _ in range(reps):
        log_prob_and_grad(x)
    per_batch = (time.perf_counter() - t) / reps

    times = {False: [], True: []}
    draws = {}
    for _ in range(args.repeats):
        for vec in (False, True):
            wall, cpu, calls, s = run(vec, args)
            times[vec].append((wall, cpu, calls))
            if vec in draws:
                assert np.array_equal(draws[vec], s.draws), "same seed, different draws"
            draws[vec] = s.draws
            points = s.ncall
    same = np.array_equal(draws[False], draws[True])

    print("gbs.sample, d = %d, %d chains, %d warm-up + %d draws, seed %d, %d repeats (alternating)"
          % (D, CHAINS, args.warmup, args.draws, args.seed, args.repeats))
    print("user function alone: %.1f us at one point, %.1f us at %d points" % (1e6 * per_point, 1e6 * per_batch, CHAINS))
    print("| path | callbacks | points | wall best / median (s) | CPU best / median (s) |")
    print("|---|---|---|---|---|")
    for vec in (False, True):
        walls = sorted(t[0] for t in times[vec])
        cpus = sorted(t[1] for t in times[vec])
        print("| vectorize=%s | %d | %d | %.2f / %.2f | %.2f / %.2f |" % (
            vec, times[vec][0][2], points, walls[0], walls[len(walls) // 2], cpus[0], cpus[len(cpus) // 2]))
    wf = sorted(t[0] for t in times[False])
    wt = sorted(t[0] for t in times[True])
    cf = sorted(t[1] for t in times[False])
    ct = sorted(t[1] for t in times[True])
    print("speed-up: wall %.1fx (best), %.1fx (median); CPU %.1fx (best)" % (
        wf[0] / wt[0], wf[len(wf) // 2] / wt[len(wt) // 2], cf[0] / ct[0]))
    print("draws identical across the two paths: %s" % same)
    if not same:
        sys.exit("the two paths drew different chains")


if __name__ == "__main__":
    main()
