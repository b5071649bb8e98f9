"""Coverage of gbs's error bar on emcee chains: many independent emcee runs
of a target with exact ln Z, one evidence call per run, and the spread of
ln Z - exact over runs against the reported errors.

    make lib && .venv/bin/python bench/emcee_coverage.py [--runs 96] [--thin 1,10]
        [--no-cross-fit] [--n-q N] [--fixed-draws]

emcee (stretch move, 32 walkers, run r seeded with 1000 + r) samples a 4-d
correlated Gaussian (gbs.problems.correlated_gaussian, ln Z = 0); after
500 burn-in steps it stores 2000 steps (64 000 draws). gbs.evidence runs
on them (every --thin-th draw) with evidence seed r. Printed per thinning:
the standard deviation of ln Z over runs, the mean reported error and its
two parts (sqrt of the mean re2_p and re2_q), gbs's tau, n_q, and the share
of runs within 1 and 2 reported errors of the exact value. With
--fixed-draws every evidence call gets run 0's draws (only the evidence
seed changes), so the spread is that of the proposal side alone. Examples and
results: docs/benchmarks.md ("Error bars on emcee chains").
"""

import argparse
import os
import sys
import time

import numpy as np

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
sys.path.insert(0, os.path.join(ROOT, "python"))
os.environ.setdefault("GBS_LIBRARY", os.path.join(ROOT, "build", "lib", "libgbs.so"))
import emcee  # noqa: E402
import gbs  # noqa: E402

WALKERS, BURN, STEPS, D = 32, 500, 2000, 4


def run_emcee(p, r):
    """emcee run r: its own seeds, walkers started near exact draws."""
    rng = np.random.default_rng(1000 + r)
    sampler = emcee.EnsembleSampler(WALKERS, D, p.log_prob, vectorize=True)
    sampler.random_state = np.random.RandomState(1000 + r).get_state()
    p0 = p.sample(WALKERS, seed=2000 + r) + 0.01 * rng.normal(size=(WALKERS, D))
    sampler.run_mcmc(p0, BURN + STEPS)
    return sampler


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=96, help="independent emcee runs")
    ap.add_argument("--thin", default="1,10", help="comma-separated thinning factors")
    ap.add_argument("--no-cross-fit", action="store_true", help="one bridge pass (cross_fit=False)")
    ap.add_argument("--n-q", type=int, default=None, help="fixed number of proposal draws")
    ap.add_argument("--fixed-draws", action="store_true",
                    help="the draws of emcee run 0 for every evidence seed")
    args = ap.parse_args()
    thins = [int(t) for t in args.thin.split(",")]
    p = gbs.problems.correlated_gaussian(D)
    rows = {t: [] for t in thins}
    t0 = time.perf_counter()
    for r in range(args.runs):
        if r == 0 or not args.fixed_draws:
            sampler = run_emcee(p, 0 if args.fixed_draws else r)
        for thin in thins:
            res = gbs.evidence(p.log_prob, sampler, discard=BURN, thin=thin, vectorize=True, seed=r,
                               cross_fit=not args.no_cross_fit, n_q=args.n_q)
            rows[thin].append((res.logz - p.logz, res.logzerr, res.re2_p, res.re2_q, res.tau, res.n_q))
    print("%d %s (%d walkers x %d stored steps), cross_fit=%s, n_q=%s, %.0f s"
          % (args.runs, "evidence seeds on one emcee run" if args.fixed_draws else "emcee runs", WALKERS, STEPS,
             not args.no_cross_fit, args.n_q or "adaptive", time.perf_counter() - t0))
    print("| draws used | sd of ln Z over runs | mean sigma | sqrt(mean re2_p) | sqrt(mean re2_q) "
          "| gbs tau | n_q | within 1 sigma | within 2 sigma |")
    print("|---|---|---|---|---|---|---|---|---|")
    for thin in thins:
        a = np.array(rows[thin])
        z = np.abs(a[:, 0] / a[:, 1])
        print("| %d (thin %d) | %.5f | %.5f | %.5f | %.5f | %.1f | %.0f | %.0f %% | %.0f %% |" % (
            WALKERS * STEPS // thin, thin, a[:, 0].std(ddof=1), a[:, 1].mean(), np.sqrt(a[:, 2].mean()),
            np.sqrt(a[:, 3].mean()), a[:, 4].mean(), a[:, 5].mean(), 100 * np.mean(z < 1), 100 * np.mean(z < 2)))


if __name__ == "__main__":
    main()
