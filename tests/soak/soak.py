"""Soak test (make soak, not part of make test): 10^4 gbs.evidence calls
and 10^3 gbs.Flow fit/close cycles in one Python process, with the peak
resident set size (VmRSS of /proc/self/status) recorded over every tenth
of each phase. Passes if the peak of the last tenth is less than 5 % above
that of the second (the first is warm-up: numpy, ctypes and the Go
runtime reach their working size), and the library has nothing left
allocated. Usage: soak.py [evidence_calls] [flow_fits]."""

import gc
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "python"))
os.environ.setdefault("GBS_LIBRARY", os.path.join(os.path.dirname(__file__), "..", "..",
                                                  "build", "lib", "libgbs.so"))
import gbs  # noqa: E402
from gbs import _lib  # noqa: E402


def rss_kb():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return -1


def phase(name, iters, step):
    peak = [0] * 10
    start, t0 = rss_kb(), time.time()
    for i in range(iters):
        step(i)
        w = i * 10 // iters
        peak[w] = max(peak[w], rss_kb())
    growth = 100.0 * (peak[9] - peak[1]) / peak[1]
    print("%s: %d iterations in %.1f s; VmRSS %d kB at start, peak kB per tenth: %s; "
          "growth after warm-up %+.2f %%" % (name, iters, time.time() - t0, start,
                                              " ".join(map(str, peak)), growth), flush=True)
    return growth < 5


def gauss_vec(x):
    return -0.5 * np.sum(x * x, axis=1) - x.shape[1] * 0.9189385332046727


def main():
    n_ev = int(sys.argv[1]) if len(sys.argv) > 1 else 10000
    n_fl = int(sys.argv[2]) if len(sys.argv) > 2 else 1000
    rng = np.random.default_rng(7)
    xe = rng.normal(size=(200, 2))
    xf = rng.normal(size=(2000, 4))

    def evidence(i):
        gbs.evidence(gauss_vec, xe, vectorize=True, independent=True, seed=i)

    def flow(i):
        gbs.Flow.fit(xf, seed=i).close()

    ok = phase("Python evidence (200 draws, d = 2)", n_ev, evidence)
    ok = phase("Python Flow fit/close (2000 points, d = 4)", n_fl, flow) and ok
    gc.collect()
    live = _lib.lib.gbs_debug_live_allocations()
    if live:
        print("%d objects from the library still live" % live)
        ok = False
    print("soak.py: %s" % ("all checks passed" if ok else "FAILED"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
