"""gbs.from_stan on the reference Stan programs (examples/stan/), and what
a log-density call costs through PyStan.

    .venv/bin/python bench/stan_adapter.py [--calls 200]

1. ln Z of normal-normal (in its `~` form, which gbs rewrites, and its
   `target +=` form), beta-binomial, gamma-Poisson and eight schools
   (non-centered), each sampled by PyStan as in tests/python/test_stan.py
   (same seeds, 4 chains x 1000 draws), against the exact value: ln Z,
   sigma, z = (ln Z - exact) / sigma, the warnings, the seconds of the
   from_stan call (the first build of a program is not counted: the
   builds come first).
2. Seconds per call of the normal model's log density, with data sets
   of 20, 1000 and 10000 points: PyStan's model.log_prob (an HTTP request
   to an httpstan server it starts for the call), the same function of the
   compiled module httpstan loads (what gbs.from_stan uses), and
   model.unconstrain_pars against the module's transform_inits.
"""

import argparse
import contextlib
import io
import os
import sys
import time
import warnings

import numpy as np

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
sys.path.insert(0, os.path.join(ROOT, "python"))
sys.path.insert(0, os.path.join(ROOT, "tests", "python"))
os.environ.setdefault("GBS_LIBRARY", os.path.join(ROOT, "build", "lib", "libgbs.so"))

warnings.filterwarnings("ignore", category=DeprecationWarning)
import httpstan.models  # noqa: E402
import stan  # noqa: E402
import stan_models  # noqa: E402

import gbs  # noqa: E402

SAMPLE = dict(num_chains=4, num_samples=1000, num_warmup=500)


def build(*args, **kwargs):
    """stan.build without its progress lines (on stdout)."""
    with contextlib.redirect_stdout(io.StringIO()):
        return stan.build(*args, **kwargs)


def accuracy():
    rows = [("normal (~, rewritten)", "normal", stan_models.normal, {}, 1),
            ("normal (target +=)", "normal_target", stan_models.normal, {}, 1),
            ("beta-binomial", "beta_binomial", stan_models.beta_binomial, {}, 2),
            ("gamma-Poisson", "gamma_poisson", stan_models.gamma_poisson, {}, 3),
            ("eight schools (non-centered)", "eight_schools", stan_models.eight_schools,
             {"delta": 0.95}, 4)]
    print("%-30s %11s %8s %11s %6s %8s %5s" % ("model", "ln Z", "sigma", "exact", "z", "warnings",
                                                "s"))
    for label, name, ref, extra, seed in rows:
        data, exact = ref()
        model = build(stan_models.program(name), data=data, random_seed=1)
        fit = model.sample(**SAMPLE, **extra)
        if name == "normal":
            build(stan_models.program("normal_target"), data=data, random_seed=1)
        t = time.perf_counter()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", gbs.GbsWarning)
            res = gbs.from_stan(fit, model, seed=seed)
        secs = time.perf_counter() - t
        n_warn = sum(issubclass(w.category, gbs.GbsWarning) for w in caught)
        print("%-30s %11.4f %8.4f %11.4f %6.2f %8d %5.2f" % (
            label, res.logz, res.logzerr, exact, (res.logz - exact) / res.logzerr, n_warn, secs))


def per_call(n_calls):
    rng = np.random.default_rng(0)
    print("\n%-8s %16s %16s %18s %18s" % ("N data", "HTTP log_prob", "module log_prob",
                                          "HTTP unconstrain", "module unconstrain"))
    for n in (20, 1000, 10000):
        model = build(stan_models.program("normal_target"),
                           data={"N": n, "y": rng.normal(1, 1, n)}, random_seed=1)
        module = httpstan.models.import_services_extension_module(model.model_name)
        arrays = {k: np.asarray(v) for k, v in model.data.items()}  # as gbs passes them
        k = max(5, n_calls // 10)
        t = time.perf_counter()
        for i in range(k):
            model.log_prob([0.01 * i])
        http = (time.perf_counter() - t) / k
        t = time.perf_counter()
        for i in range(n_calls):
            module.log_prob(arrays, [0.01 * i], True)
        fast = (time.perf_counter() - t) / n_calls
        t = time.perf_counter()
        for i in range(k):
            model.unconstrain_pars({"mu": 0.01 * i})
        http_u = (time.perf_counter() - t) / k
        t = time.perf_counter()
        for i in range(n_calls):
            module.transform_inits(arrays, {"mu": 0.01 * i})
        fast_u = (time.perf_counter() - t) / n_calls
        print("%-8d %13.1f us %13.1f us %15.1f us %15.1f us" % (n, 1e6 * http, 1e6 * fast,
                                                                 1e6 * http_u, 1e6 * fast_u))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--calls", type=int, default=200, help="module calls per timing")
    args = ap.parse_args()
    accuracy()
    per_call(args.calls)


if __name__ == "__main__":
    main()
