"""Reference values for internal/mcmc from ArviZ and emcee.

Writes arviz_reference.json beside this file: fixed chains (generated here
with a seeded numpy generator and stored, so Go reads the same numbers)
and, for each, ArviZ's rank-normalized R-hat (with its bulk and folded
parts), bulk and tail ESS, the ESS of the chains as they are (ArviZ's
_ess, what nuts.ESS computes) and emcee's integrated autocorrelation time
(c = 5, autocorrelation averaged over the chains).

    python internal/mcmc/testdata/arviz_reference.py

with arviz==0.23.4, emcee==3.1.6, numpy==2.4.6, scipy==1.17.1
(python/constraints.txt). TestArviZReference reads the JSON.
"""
import json
import os
import warnings

import numpy as np

warnings.simplefilter("ignore")
import arviz as az  # noqa: E402
import emcee  # noqa: E402
from arviz.stats import diagnostics as azd  # noqa: E402


def ar1(rng, nc, n, phi, shift=None):
    x = np.empty((nc, n))
    for c in range(nc):
        v = rng.normal() / np.sqrt(1 - phi * phi)
        for i in range(n):
            v = phi * v + rng.normal()
            x[c, i] = v
    if shift is not None:
        x += np.asarray(shift)[:, None]
    return x


def cases():
    rng = np.random.default_rng(20261126)
    out = {}
    # The data of nuts' former reference: odd length, ties, drift.
    c, i = np.meshgrid(np.arange(4), np.arange(101), indexing="ij")
    x = np.sin(0.37 * i + c) * (1 + 0.3 * c) + 0.004 * i * c
    x = x + 0.5 * (((i * 7 + c) % 13) == 0)
    out["sine-odd"] = x
    out["iid-4x500"] = rng.normal(size=(4, 500))
    out["ar09-4x500"] = ar1(rng, 4, 500, 0.9)  # Geyer's sequence needs the FFT
    out["ar099-2x3000"] = ar1(rng, 2, 3000, 0.99)
    out["antithetic-4x300"] = ar1(rng, 4, 300, -0.7)
    out["shifted-3x400"] = ar1(rng, 3, 400, 0.5, shift=[0, 0, 1.5])
    out["scale-4x250"] = rng.normal(size=(4, 250)) * np.array([1, 1, 1, 3])[:, None]
    out["cauchy-3x401"] = rng.standard_cauchy(size=(3, 401))
    out["ties-4x200"] = np.round(2 * rng.normal(size=(4, 200)))
    out["one-chain-1x300"] = ar1(rng, 1, 300, 0.6)
    out["eight-short-8x9"] = rng.normal(size=(8, 9))
    return out


def main():
    res = []
    for name, x in cases().items():
        nc = x.shape[0]
        split = azd._split_chains(x)
        r = {
            "name": name,
            "chains": x.tolist(),
            "rhat_bulk": float(azd._rhat(azd._z_scale(split))),
            "rhat_fold": float(azd._rhat(azd._z_scale(np.abs(split - np.median(split))))),
            "ess_bulk": float(az.ess(x, method="bulk")),
            "ess_tail": float(az.ess(x, method="tail")),
            "ess_raw": float(azd._ess(x)),
            # emcee wants (steps, walkers, dim).
            "tau_emcee": float(emcee.autocorr.integrated_time(x.T[:, :, None], c=5, quiet=True)[0]),
        }
        r["rhat"] = float(az.rhat(x, method="rank")) if nc >= 2 else None
        res.append(r)
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "arviz_reference.json")
    with open(path, "w") as f:
        json.dump({"arviz": az.__version__, "emcee": emcee.__version__, "cases": res}, f, indent=0)
        f.write("\n")


if __name__ == "__main__":
    main()
