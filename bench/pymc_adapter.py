"""Time of gbs.from_pymc (transforms and a vectorized log density, one
compiled call per batch) against the same evidence through a hand-written
per-point callback (model.compile_logp on a point dict), on a 10-parameter
model: a linear regression with 9 coefficients and an unknown noise
variance (normal-inverse-gamma prior, exact ln Z), 4 x 1000 exact
posterior draws.

    .venv/bin/python bench/pymc_adapter.py [--repeats 3]

Prints the median wall and CPU time of each path, the first (compiling)
from_pymc call apart, both ln Z against the exact value, and the log
densities alone at the draws (batched against per point).
"""

import argparse
import os
import sys
import time
import warnings

import numpy as np

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
sys.path.insert(0, os.path.join(ROOT, "python"))
sys.path.insert(0, os.path.join(ROOT, "tests", "python"))
os.environ.setdefault("GBS_LIBRARY", os.path.join(ROOT, "build", "lib", "libgbs.so"))

warnings.filterwarnings("ignore", category=UserWarning)
import arviz as az  # noqa: E402
import conjugate  # noqa: E402
import pymc as pm  # noqa: E402

import gbs  # noqa: E402


def timed(fn):
    w, c = time.perf_counter(), time.process_time()
    out = fn()
    return out, time.perf_counter() - w, time.process_time() - c


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=3)
    a = ap.parse_args()
    data, logz, draws = conjugate.regression(seed=0, n=200, k=9)
    with pm.Model() as m:
        sigma2 = pm.InverseGamma("sigma2", data["a0"], data["b0"])
        beta = pm.Normal("beta", 0, pm.math.sqrt(sigma2 * data["v0"]), shape=9)
        pm.Normal("y", pm.math.dot(data["X"], beta), pm.math.sqrt(sigma2), observed=data["y"])
    idata = az.from_dict(posterior=draws)

    # The adapter: first call compiles, later calls reuse the compiled functions.
    r, w, c = timed(lambda: gbs.from_pymc(idata, m, seed=1))
    print("from_pymc, first call (compiles): %.2f s wall, %.2f s CPU; ln Z = %.4f +/- %.4f"
          % (w, c, r.logz, r.logzerr))
    rows = [timed(lambda: gbs.from_pymc(idata, m, seed=1)) for _ in range(a.repeats)]
    fast = rows[0][0]

    # By hand: the transforms (log for sigma2), the flat vector, and a
    # per-point callback on PyMC's compiled log density with the Jacobian.
    logp = m.compile_logp(jacobian=True)
    x = np.concatenate([np.log(draws["sigma2"])[..., None], draws["beta"]], axis=2)

    def log_prob(v):
        return float(logp({"sigma2_log__": v[0], "beta": v[1:]}))

    slow_rows = [timed(lambda: gbs.evidence(log_prob, x, seed=1)) for _ in range(a.repeats)]
    slow = slow_rows[0][0]

    def med(rs, k):
        return float(np.median([r[k] for r in rs]))

    # The log densities alone, at the 4000 draws: one batched call against
    # a loop of per-point calls (what the estimator's callbacks cost).
    from gbs.adapters.pymc import _density
    dens = _density(m, list(m.free_RVs), [(), (9,)], {})
    pts = x.reshape(-1, x.shape[2])
    batched = [timed(lambda: dens.logp(pts)) for _ in range(5)]
    looped = [timed(lambda: [log_prob(p) for p in pts]) for _ in range(5)]
    np.testing.assert_allclose(batched[0][0], looped[0][0], rtol=1e-10)
    print("log p at %d points: batched %.2f ms CPU, per-point %.1f ms CPU (%.0fx)"
          % (len(pts), 1e3 * med(batched, 2), 1e3 * med(looped, 2), med(looped, 2) / med(batched, 2)))

    print("exact ln Z = %.4f" % logz)
    print("from_pymc (compiled):   %.3f s wall, %.3f s CPU, ln Z = %.4f +/- %.4f, %d evaluations"
          % (med(rows, 1), med(rows, 2), fast.logz, fast.logzerr, fast.ncall))
    print("per-point callback:     %.3f s wall, %.3f s CPU, ln Z = %.4f +/- %.4f, %d evaluations"
          % (med(slow_rows, 1), med(slow_rows, 2), slow.logz, slow.logzerr, slow.ncall))
    print("speed-up (wall): %.1fx" % (med(slow_rows, 1) / med(rows, 1)))


if __name__ == "__main__":
    main()
