"""What gbs.evidence costs in new log-density calls after an emcee run with
autocorrelated draws: the adaptive n_q rule against the number of stored
draws, with and without thinning, over several evidence seeds.

    .venv/bin/python examples/emcee_calls.py [--seeds 8] [--steps 2000]

emcee (stretch move, 32 walkers, seeded) samples a 4-d correlated Gaussian
with exact ln Z = 0 (gbs.problems.correlated_gaussian); after a burn-in of
500 steps it stores walkers x steps draws (64 000 by default). gbs.evidence
then runs on all of them and on every 10th, from --seeds seeds; the table
gives the mean new log-density calls (res.ncall), n_q, the mean error bar
and the largest |ln Z - 0| / sigma. Point GBS_LIBRARY at a libgbs.so to
compare builds.
"""

import argparse
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "python"))
os.environ.setdefault("GBS_LIBRARY", os.path.join(os.path.dirname(__file__), "..", "build", "lib", "libgbs.so"))
import emcee  # noqa: E402
import gbs  # noqa: E402

WALKERS, BURN, D = 32, 500, 4


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seeds", type=int, default=8)
    ap.add_argument("--steps", type=int, default=2000, help="stored steps per walker after burn-in")
    args = ap.parse_args()
    p = gbs.problems.correlated_gaussian(D)
    rng = np.random.default_rng(1)
    sampler = emcee.EnsembleSampler(WALKERS, D, p.log_prob, vectorize=True)
    sampler.random_state = np.random.RandomState(1).get_state()
    p0 = p.sample(WALKERS, seed=2) + 0.01 * rng.normal(size=(WALKERS, D))
    sampler.run_mcmc(p0, BURN + args.steps)
    chain = sampler.get_chain(discard=BURN)  # (steps, walkers, d)
    tau = np.max(emcee.autocorr.integrated_time(chain, quiet=True))
    print("library: %s" % os.environ["GBS_LIBRARY"])
    print("emcee: %d walkers x %d stored steps = %d draws, tau (emcee, max over coordinates) = %.1f"
          % (WALKERS, args.steps, WALKERS * args.steps, tau))
    print("| draws used | new log-density calls (mean) | n_q (mean) | gbs tau (mean) | sigma (mean) | max abs(dlnZ)/sigma |")
    print("|---|---|---|---|---|---|")
    for thin in (1, 10):
        calls, nq, taus, sig, z = [], [], [], [], []
        for s in range(args.seeds):
            res = gbs.evidence(p.log_prob, sampler, discard=BURN, thin=thin, vectorize=True, seed=100 + s)
            calls.append(res.ncall)
            nq.append(res.n_q)
            taus.append(res.tau)
            sig.append(res.logzerr)
            z.append(abs(res.logz - p.logz) / res.logzerr)
        print("| %d (thin %d) | %.0f | %.0f | %.1f | %.4f | %.2f |" % (
            WALKERS * args.steps // thin, thin, np.mean(calls), np.mean(nq), np.mean(taus), np.mean(sig),
            np.max(z)))


if __name__ == "__main__":
    main()
