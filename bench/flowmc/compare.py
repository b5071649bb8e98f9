"""flowMC (RQSpline + MALA bundle) on the two-mode target and the funnel,
for the comparison with gbs's flow-enhanced NUTS in docs/benchmark-methods.md.

Run in its own venv (bench/flowmc/requirements.txt), with gbs importable for
the evidence of flowMC's draws and for the reference problems:

    PYTHONPATH=python GBS_LIBRARY=build/lib/libgbs.so \\
      /work/venvs/flowmc/bin/python bench/flowmc/compare.py --problem two-modes --seeds 2

Prints one JSON line per run: accuracy (minor-mode weight for two-modes; ln Z
from gbs.evidence on flowMC's production draws for both), log-density and
gradient calls (counted from the bundle's schedule: one gradient per chain and
MALA step, one density per chain and global step) and wall time (JIT
compilation included, and reported apart).
"""

import argparse
import json
import time

import jax
import jax.numpy as jnp
import numpy as np

jax.config.update("jax_enable_x64", True)

from flowMC.resource_strategy_bundle.RQSpline_MALA import RQSpline_MALA_Bundle  # noqa: E402
from flowMC.Sampler import Sampler  # noqa: E402

import gbs  # noqa: E402


def two_modes_logpdf(d):
    """0.2 N(-4·1, I) + 0.8 N(+4·1, I) in the box (-10, 10)^d with its flat
    prior: problems.TwoModesN."""
    def logpdf(x, data):
        a = jnp.log(0.2) - 0.5 * jnp.sum((x + 4) ** 2)
        b = jnp.log(0.8) - 0.5 * jnp.sum((x - 4) ** 2)
        lp = jnp.logaddexp(a, b) - d * (0.5 * jnp.log(2 * jnp.pi) + jnp.log(20.0))
        inside = jnp.all(jnp.abs(x) < 10)
        return jnp.where(inside, lp, -jnp.inf)
    return logpdf


def funnel_logpdf(d):
    """Neal's funnel of problems.FunnelN: x1 ~ N(0, 1), x_i ~ N(0, exp(x1)²),
    flat prior x1 in (-4, 4), x_i in (-30, 30)."""
    def logpdf(x, data):
        x1, rest = x[0], x[1:]
        lp = -0.5 * x1 ** 2 - 0.5 * jnp.log(2 * jnp.pi)
        lp += jnp.sum(-0.5 * rest ** 2 * jnp.exp(-2 * x1) - x1 - 0.5 * jnp.log(2 * jnp.pi))
        lp -= jnp.log(8.0) + (d - 1) * jnp.log(60.0)
        inside = (jnp.abs(x1) < 4) & jnp.all(jnp.abs(rest) < 30)
        return jnp.where(inside, lp, -jnp.inf)
    return logpdf


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--problem", default="two-modes", choices=["two-modes", "funnel"])
    ap.add_argument("--chains", type=int, default=8)
    ap.add_argument("--local", type=int, default=10, help="MALA steps per loop")
    ap.add_argument("--global-steps", type=int, default=10, help="flow proposals per loop")
    ap.add_argument("--train-loops", type=int, default=20)
    ap.add_argument("--prod-loops", type=int, default=20)
    ap.add_argument("--epochs", type=int, default=5)
    ap.add_argument("--seeds", type=int, default=1)
    ap.add_argument("--seed", type=int, default=1000)
    ap.add_argument("--step", type=float, default=0.1, help="initial MALA step size")
    args = ap.parse_args()

    if args.problem == "two-modes":
        d, name = 8, "two-modes"
        logpdf = two_modes_logpdf(d)
        lower, upper = np.full(d, -10.0), np.full(d, 10.0)
        # problems.TwoModesN's closed form: d ln(Phi(14) - Phi(-6)) - d ln 20.
        from math import erf, log, sqrt
        exact = d * log(0.5 * (erf(14 / sqrt(2)) - erf(-6 / sqrt(2)))) - d * log(20.0)
    else:
        p = gbs.problems.funnel(16)
        d, name, lower, upper, exact = p.dim, p.name, p.lower, p.upper, p.logz
        logpdf = funnel_logpdf(d)
    batch_logpdf = jax.jit(jax.vmap(lambda x: logpdf(x, {})))

    def log_prob(x):
        return np.asarray(batch_logpdf(jnp.asarray(x)))
    for r in range(args.seeds):
        seed = args.seed + r
        rng = np.random.default_rng(seed)
        if args.problem == "two-modes":
            # The wrong proportions: all chains but the last in the minor mode.
            x0 = np.full((args.chains, d), -4.0) + 0.1 * rng.standard_normal((args.chains, d))
            x0[-1] += 8.0
        else:
            x0 = 0.1 * rng.standard_normal((args.chains, d))
        key = jax.random.PRNGKey(seed)
        key, sub = jax.random.split(key)
        bundle = RQSpline_MALA_Bundle(
            sub, args.chains, d, logpdf, args.local, args.global_steps,
            args.train_loops, args.prod_loops, args.epochs, mala_step_size=args.step,
            # Train on the few chains' draws without subsampling.
            batch_size=10000, n_max_examples=10000)
        sampler = Sampler(n_dim=d, n_chains=args.chains, rng_key=key,
                          resource_strategy_bundles=bundle, checkpoint_interval=0)
        t0 = time.perf_counter()
        sampler.sample(jnp.asarray(x0), {})
        wall = time.perf_counter() - t0
        res = sampler.resources
        x = np.asarray(res["positions_production"].data)
        lp = np.asarray(res["log_prob_production"].data)
        gacc = np.asarray(res["global_accs_production"].data)
        loops = args.train_loops + args.prod_loops
        out = dict(problem=name, seed=seed, chains=args.chains, draws_per_chain=int(x.shape[1]),
                   grad_calls=args.chains * args.local * loops,
                   density_calls=args.chains * args.global_steps * loops,
                   global_accept=float(np.mean(gacc[np.isfinite(gacc)])) if np.isfinite(gacc).any() else None,
                   seconds=wall)
        if args.problem == "two-modes":
            out["minor_weight"] = float(np.mean(x.sum(axis=-1) < 0))
        try:
            ev = gbs.evidence(log_prob, gbs.Samples(x, lp, [], ncall=out["grad_calls"]),
                              bounds=(lower, upper), vectorize=True, seed=seed)
            out.update(logz=ev.logz, logzerr=ev.logzerr, exact=exact,
                       warnings=[w[:160] for w in ev.warnings])
        except Exception as e:  # a failed evidence is a result too
            out.update(evidence_error=str(e)[:300])
        print(json.dumps(out), flush=True)


if __name__ == "__main__":
    main()
