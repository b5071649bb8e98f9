"""Coverage of gbs's error bar on emcee chains: many independent emcee runs
of a target with exact ln Z, one evidence call per run, and the spread of
ln Z - exact over runs against the reported errors.

    make lib && .venv/bin/python bench/emcee_coverage.py [--runs 96] [--thin 1,10]
        [--no-cross-fit] [--n-q N] [--fixed-draws]
    .venv/bin/python bench/emcee_coverage.py --target banana --runs 32 --steps 5000,20000

emcee (stretch move, 32 walkers, run r seeded with 1000 + r) samples a 4-d
correlated Gaussian (gbs.problems.correlated_gaussian, ln Z = 0); after
500 burn-in steps it stores 2000 steps (64 000 draws). gbs.evidence runs
on them (every --thin-th draw) with evidence seed r. Printed per thinning:
the standard deviation of ln Z over runs, the mean reported error and its
two parts (sqrt of the mean re2_p and re2_q), gbs's tau, n_q, and the share
of runs within 1 and 2 reported errors of the exact value. With
--fixed-draws every evidence call gets run 0's draws (only the evidence
seed changes), so the spread is that of the proposal side alone.

--target banana (issue 23) is the curved 2-d target x ~ N(0, 3^2),
y | x ~ N(x^2, 1), ln Z = ln(6 pi), sampled as a user would: 32 walkers
started in a ball of radius 1e-2 about the mode (0, 0), the default stretch
move, each run of --steps steps (a list: one emcee run of the longest, its
first S steps for each S), gbs.evidence(lp, sampler-like chains,
discard=S/5, thin=the first --thin). Printed per length: sd of the z-scores (ln Z - exact)/sigma,
shares within 1 and 2 sigma, the largest |z| with and without a warning
about the chains' length or tau, gbs's tau (median, range) and emcee's
own tau of the walkers (emcee.autocorr.integrated_time, in steps), against
which emcee's rule asks for walkers of 50 tau. --cache DIR keeps the emcee
runs (every --keep-th step) for a second pass over the same chains.
--target banana3 (issue 39) is the banana with a third coordinate
w ~ N(0, 1) independent of it, ln Z = ln(6 pi) + (1/2) ln(2 pi), run the
same way (seeds 7000 + r, cache files banana3_run<r>_<steps>.npz).
emcee's tau of x and y is then about 1000 steps, so 80 000 steps with a
fifth discarded are about 60 tau. The published table is made from
bench/results/emcee-banana3.jsonl by bench/report.py.
--out FILE appends one JSON line per evidence call (run, steps, z, the
error bar and its parts, both taus, the warnings, commit and date): the
published table is made from bench/results/emcee-banana.jsonl by
bench/report.py.

Commands and results: the benchmark pages of the documentation ("Error
bars on emcee chains").
"""

import argparse
import json
import logging
import os
import sys
import time
import warnings

import numpy as np

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
sys.path.insert(0, os.path.join(ROOT, "python"))
os.environ.setdefault("GBS_LIBRARY", os.path.join(ROOT, "build", "lib", "libgbs.so"))
import emcee  # noqa: E402
import gbs  # noqa: E402
from provenance import stamp  # noqa: E402  (bench/provenance.py, beside this script)

WALKERS, BURN, STEPS, D = 32, 500, 2000, 4


def run_emcee(p, r):
    """emcee run r: its own seeds, walkers started near exact draws."""
    rng = np.random.default_rng(1000 + r)
    sampler = emcee.EnsembleSampler(WALKERS, D, p.log_prob, vectorize=True)
    sampler.random_state = np.random.RandomState(1000 + r).get_state()
    p0 = p.sample(WALKERS, seed=2000 + r) + 0.01 * rng.normal(size=(WALKERS, D))
    sampler.run_mcmc(p0, BURN + STEPS)
    return sampler


def banana_lp(x):
    x = np.atleast_2d(x)
    return -x[:, 0] ** 2 / 18 - 0.5 * (x[:, 1] - x[:, 0] ** 2) ** 2


BANANA_LOGZ = float(np.log(6 * np.pi))


def banana3_lp(x):
    x = np.atleast_2d(x)
    return banana_lp(x[:, :2]) - 0.5 * x[:, 2] ** 2


BANANA3_LOGZ = BANANA_LOGZ + 0.5 * float(np.log(2 * np.pi))

# --target: the log density, its dimension, exact ln Z, the seed base of
# the emcee runs and the cache files' prefix.
CURVED = {
    "banana": (banana_lp, 2, BANANA_LOGZ, 5000, "run"),
    "banana3": (banana3_lp, 3, BANANA3_LOGZ, 7000, "banana3_run"),
}


class Chain:
    """The first steps of an emcee run, read as gbs reads a sampler: what
    get_chain and get_log_prob of that sampler return. The run's chain may
    be stored every keep-th step (--cache); discard and thin are then
    multiples of keep, and the draws are the same."""

    def __init__(self, chain, lp, steps, keep=1):
        self.chain, self.lp, self.keep = chain[:steps // keep], lp[:steps // keep], keep

    def _steps(self, discard, thin):
        assert discard % self.keep == 0 and thin % self.keep == 0, (discard, thin, self.keep)
        return slice(discard // self.keep, None, thin // self.keep)

    def get_chain(self, discard=0, thin=1, flat=False):
        assert not flat
        return self.chain[self._steps(discard, thin)]

    def get_log_prob(self, discard=0, thin=1, flat=False):
        assert not flat
        return self.lp[self._steps(discard, thin)]


def banana_run(r, steps, cache, keep, target="banana"):
    """emcee run r of the curved target (banana: seeds 5000 + r, banana3:
    7000 + r): its chain and log p, every keep-th step, from cache (a
    directory) when stored there."""
    lp_fn, dim, _, base, prefix = CURVED[target]
    path = cache and os.path.join(cache, "%s%d_%d.npz" % (prefix, r, steps))
    if path and os.path.exists(path):
        d = np.load(path)
        assert int(d["keep"]) == keep, (path, int(d["keep"]), keep)
        return d["chain"], d["lp"]
    rng = np.random.default_rng(base + r)
    sampler = emcee.EnsembleSampler(WALKERS, dim, lp_fn, vectorize=True)
    sampler.random_state = np.random.RandomState(base + r).get_state()
    sampler.run_mcmc(0.01 * rng.normal(size=(WALKERS, dim)), steps)
    chain, lp = sampler.get_chain()[::keep], sampler.get_log_prob()[::keep]
    if path:
        np.savez(path, chain=chain, lp=lp, keep=keep)
    return chain, lp


def short_warning(res):
    """The warnings about chains too short for their autocorrelation time
    (the walkers' 50-tau rule, the passes' rule on the summands' tau)."""
    return [f for f in res.findings if f.is_warning and f.check in ("ensemble-walkers", "short-chains")]


def banana(args):
    # The warnings are counted from res.warnings; emcee's own "chain is
    # shorter than 50 tau" log lines would repeat them.
    warnings.simplefilter("ignore", gbs.GbsWarning)
    logging.getLogger("emcee").setLevel(logging.ERROR)
    steps = [int(s) for s in args.steps.split(",")]
    thins = [int(t) for t in args.thin.split(",")]
    rows = {s: [] for s in steps}
    t0 = time.perf_counter()
    keep = args.keep
    prov = stamp()
    lp_fn, dim, exact = CURVED[args.target][:3]
    for r in range(args.first, args.first + args.runs):
        chain, lp = banana_run(r, max(steps), args.cache, keep, args.target)
        for n in steps:
            c = Chain(chain, lp, n, keep)
            res = gbs.evidence(lp_fn, c, discard=n // 5, thin=thins[0], vectorize=True,
                               seed=r, cross_fit=not args.no_cross_fit)
            z = (res.logz - exact) / res.logzerr
            # emcee's own tau of the walkers (the largest over the coordinates), in steps.
            kept = c.get_chain(discard=n // 5, thin=keep)
            etau = keep * max(float(emcee.autocorr.integrated_time(kept[:, :, k], quiet=True)[0])
                              for k in range(dim))
            rows[n].append((z, res.tau, bool(short_warning(res)), len(res.warnings), etau))
            if args.out:
                with open(args.out, "a") as f:
                    f.write(json.dumps({
                        "target": args.target, "run": r, "steps": n, "z": z, "logzerr": res.logzerr,
                        "sqrt_re2_p": float(np.sqrt(res.re2_p)), "sqrt_re2_q": float(np.sqrt(res.re2_q)),
                        "tau": res.tau, "emcee_tau": etau, "burnin_z": res.diagnostics.burnin_z,
                        "warnings": res.warnings, **prov}) + "\n")
            if args.verbose:
                print("run %d steps %d: z %+.2f sigma %.4f sqrt(re2_p) %.4f sqrt(re2_q) %.4f tau %.0f "
                      "emcee tau %.0f steps, burn-in z %.1f warnings %s"
                      % (r, n, z, res.logzerr, np.sqrt(res.re2_p), np.sqrt(res.re2_q), res.tau, etau,
                         res.diagnostics.burnin_z, res.warnings), flush=True)
    print("%s, %d emcee runs (%d walkers, discard = steps/5, thin %d), cross_fit=%s, %.0f s"
          % (args.target, args.runs, WALKERS, thins[0], not args.no_cross_fit, time.perf_counter() - t0))
    print("| steps | sd of z | within 1 sigma | within 2 sigma | max abs z, no tau warning "
          "| max abs z, warned | max abs z, no warning at all | runs warned (tau) | runs with any warning | gbs tau median (range) "
          "| emcee tau in steps, median (range) | steps per walker after discard / 50 |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for n in steps:
        a = np.array(rows[n], dtype=float)
        z, tau, short, nw, etau = a[:, 0], a[:, 1], a[:, 2] > 0, a[:, 3], a[:, 4]
        az = np.abs(z)
        quiet = nw == 0
        print("| %d | %.2f | %.0f %% | %.0f %% | %s | %s | %s | %d | %d | %.0f (%.0f-%.0f) | %.0f (%.0f-%.0f) | %.0f |" % (
            n, z.std(ddof=1), 100 * np.mean(az < 1), 100 * np.mean(az < 2),
            "%.1f" % az[~short].max() if (~short).any() else "-",
            "%.1f" % az[short].max() if short.any() else "-",
            "%.1f" % az[quiet].max() if quiet.any() else "-", short.sum(), (nw > 0).sum(),
            np.median(tau), tau.min(), tau.max(), np.median(etau), etau.min(), etau.max(),
            (n - n // 5) / 50))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=96, help="independent emcee runs")
    ap.add_argument("--thin", default=None, help="comma-separated thinning factors (default 1,10; "
                    "banana: the first one, default 1)")
    ap.add_argument("--no-cross-fit", action="store_true", help="one bridge pass (cross_fit=False)")
    ap.add_argument("--n-q", type=int, default=None, help="fixed number of proposal draws")
    ap.add_argument("--fixed-draws", action="store_true",
                    help="the draws of emcee run 0 for every evidence seed")
    ap.add_argument("--target", default="gaussian", choices=["gaussian", "banana", "banana3"])
    ap.add_argument("--steps", default="5000,20000", help="banana: comma-separated chain lengths")
    ap.add_argument("--verbose", action="store_true", help="banana: one line per evidence call")
    ap.add_argument("--first", type=int, default=0, help="banana: the first run's number r (seeds 5000 + r)")
    ap.add_argument("--cache", default=None, help="banana: a directory that keeps each emcee run "
                    "(run<r>_<steps>.npz), reused when the script runs again")
    ap.add_argument("--out", default=None, help="banana: append one JSON line per evidence call to this file")
    ap.add_argument("--keep", type=int, default=1, help="banana: keep every keep-th step of each emcee run "
                    "(in memory and in --cache); thin and steps/5 must be multiples of it")
    args = ap.parse_args()
    if args.target in CURVED:
        args.thin = args.thin or "1"
        banana(args)
        return
    args.thin = args.thin or "1,10"
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
