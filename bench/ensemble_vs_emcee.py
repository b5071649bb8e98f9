"""gbs's ensemble sampler against emcee 3, side by side: log-density calls
and wall time per effective sample on a 10-d correlated Gaussian and the
2-d banana. Both use the stretch move with 32 walkers, the same number of
steps, a vectorized log density, and emcee's own autocorrelation estimator
on the chains after the same burn-in.

    .venv/bin/python bench/ensemble_vs_emcee.py
"""

import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "python"))
os.environ.setdefault("GBS_LIBRARY", os.path.join(os.path.dirname(__file__), "..", "build", "lib", "libgbs.so"))
import emcee  # noqa: E402
import gbs  # noqa: E402

WALKERS, STEPS, BURN = 32, 20000, 4000


def gaussian10():
    rng = np.random.default_rng(0)
    q, _ = np.linalg.qr(rng.normal(size=(10, 10)))
    cov = q @ np.diag(np.logspace(-1, 1, 10)) @ q.T
    prec = np.linalg.inv(cov)

    def logp(x):
        x = np.atleast_2d(x)
        return -0.5 * np.einsum("ij,jk,ik->i", x, prec, x)

    return "gaussian-10", 10, logp


def banana2():
    def logp(x):
        x = np.atleast_2d(x)
        return -((x[:, 0] ** 2 - x[:, 1]) ** 2 / 0.01 + (x[:, 0] - 1) ** 2)

    return "banana-2", 2, logp


def ess(chain):
    """chain: (steps, walkers, d) after burn-in; ESS of the worst coordinate."""
    tau = emcee.autocorr.integrated_time(chain, quiet=True)
    return chain.shape[0] * chain.shape[1] / np.max(tau), np.max(tau)


def main():
    print("%-12s %-6s %10s %10s %8s %10s %12s" % ("target", "code", "seconds", "calls", "tau", "ESS", "calls/ESS"))
    for name, d, logp in (gaussian10(), banana2()):
        rng = np.random.default_rng(1)
        p0 = 0.1 * rng.normal(size=(WALKERS, d)) + (1.0 if name == "banana-2" else 0.0)

        t0 = time.perf_counter()
        s = gbs.sample_ensemble(logp, p0, steps=STEPS, burn=BURN, thin=1, seed=1, vectorize=True)
        t_gbs = time.perf_counter() - t0
        e_gbs, tau_gbs = ess(np.transpose(s.draws, (1, 0, 2)))

        sampler = emcee.EnsembleSampler(WALKERS, d, lambda x: logp(x), vectorize=True)
        t0 = time.perf_counter()
        sampler.run_mcmc(p0, STEPS, progress=False)
        t_emcee = time.perf_counter() - t0
        e_emcee, tau_emcee = ess(sampler.get_chain(discard=BURN))
        n_emcee = WALKERS * STEPS

        for code, t, n, tau, e in (("gbs", t_gbs, s.ncall, tau_gbs, e_gbs), ("emcee", t_emcee, n_emcee, tau_emcee, e_emcee)):
            print("%-12s %-6s %10.2f %10d %8.1f %10.0f %12.1f   %.1f µs per effective sample"
                  % (name, code, t, n, tau, e, n / e, 1e6 * t / e))


if __name__ == "__main__":
    main()
