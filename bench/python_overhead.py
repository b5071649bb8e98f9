"""Time gbs.evidence from Python on the 16-d funnel (exact draws) with and
without vectorize, and the per-point cost of the Python callback.

    .venv/bin/python bench/python_overhead.py

Compare with the Go side: `go run ./cmd/gbs-demo -problem funnel`, whose
last line gives the time of the same computation in Go.
"""

import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "python"))
os.environ.setdefault("GBS_LIBRARY", os.path.join(os.path.dirname(__file__), "..", "build", "lib", "libgbs.so"))
import gbs  # noqa: E402
from gbs import problems  # noqa: E402


def best_of(k, fn):
    times = []
    for _ in range(k):
        t0 = time.perf_counter()
        res = fn()
        times.append(time.perf_counter() - t0)
    return min(times), res


def main():
    p = problems.funnel()
    x = p.sample(20000, seed=1)
    for vec in (True, False):
        t, res = best_of(3 if vec else 1, lambda: gbs.evidence(p.log_prob, x, vectorize=vec, bounds=p.bounds,
                                                                independent=True, seed=1))
        print("vectorize=%-5s  %.3f s  ln Z = %.4f ± %.4f  %d log-density calls, %.2f µs per call"
              % (vec, t, res.logz, res.logzerr, res.ncall, 1e6 * t / res.ncall))
    # The callback alone: the same points through log_prob, outside gbs.
    y = p.sample(20000, seed=2)
    t_vec, _ = best_of(3, lambda: p.log_prob(y))
    t_one, _ = best_of(1, lambda: [p.log_prob(row) for row in y])
    print("log_prob alone: vectorized %.2f µs per point, one point per call %.2f µs per point"
          % (1e6 * t_vec / len(y), 1e6 * t_one / len(y)))


if __name__ == "__main__":
    main()
