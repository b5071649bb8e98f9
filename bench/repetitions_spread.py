"""The spread of gbs.evidence(..., repetitions=k) beside the analytic error:
a d = 4 standard normal from exact draws (4 chains x 2000), k = 8
independent proposal sets, 4 data sets per n_q. Run from the repository
root after make lib: python bench/repetitions_spread.py (docs/benchmark-methods.md,
"Repetitions")."""
import math
import os
import sys

sys.path.insert(0, "python")
os.environ.setdefault("GBS_LIBRARY", "build/lib/libgbs.so")
import numpy as np
import gbs
d = 4
f = lambda v: -0.5 * np.sum(v * v, axis=1)
exact = 0.5 * d * math.log(2 * math.pi)
for n_q in (500, 2000):
    rows = []
    for s in range(4):
        x = np.random.default_rng(100 + s).normal(size=(4, 2000, d))
        r = gbs.evidence(f, x, vectorize=True, seed=s, repetitions=8, n_q=n_q)
        em = r.error_measures()
        rows.append((em.repetitions_sd, math.sqrt(r.re2_q), r.logzerr, em.percentage))
    a = np.array(rows)
    print("d=%d 4x2000 exact draws, n_q=%d, k=8: sd of repetitions %.4f (mean over 4 data sets), sqrt(re2_q) %.4f, logzerr %.4f, percentage error of Z %.2f%%"
          % (d, n_q, a[:, 0].mean(), a[:, 1].mean(), a[:, 2].mean(), a[:, 3].mean()))
