"""Issue 17's scale table from Python, as the issue ran it: exact draws of
a correlated Gaussian (gbs.problems.correlated_gaussian, ln Z = 0 exactly)
and ``gbs.evidence(p.log_prob, x, independent=True, vectorize=True)`` with
the numpy log density, default settings otherwise.

    make lib && .venv/bin/python bench/scale_python.py [--cases 16:20000,256:100000] [--seed 1]

Each case runs in a child process of its own, so that its peak RSS
(ru_maxrss of the child) and CPU time are its own. Prints wall time of the
evidence call, the child's CPU time and peak RSS, ln Z - exact and the
error in units of the reported sigma. The Go counterpart, with the time
split into fit, proposal, log density and bridge, is
``go run ./cmd/gbs-scale -table``.
"""

import argparse
import json
import os
import resource
import subprocess
import sys
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))

ISSUE_TABLE = [(16, 20000), (16, 100000), (16, 1000000), (64, 100000), (128, 20000),
               (256, 20000), (256, 100000), (1000, 20000)]


def child(d, n, seed):
    sys.path.insert(0, os.path.join(ROOT, "python"))
    os.environ.setdefault("GBS_LIBRARY", os.path.join(ROOT, "build", "lib", "libgbs.so"))
    import gbs
    from gbs import problems

    p = problems.correlated_gaussian(d)
    t0 = time.perf_counter()
    x = p.sample(n, seed=seed)
    t_draw = time.perf_counter() - t0
    t1 = time.perf_counter()
    r = gbs.evidence(p.log_prob, x, independent=True, vectorize=True, seed=seed)
    wall = time.perf_counter() - t1
    with open("/proc/loadavg") as f:
        load = float(f.read().split()[0])
    ru = resource.getrusage(resource.RUSAGE_SELF)
    print(json.dumps({"d": d, "n": n, "logz": r.logz, "logzerr": r.logzerr, "exact": p.logz,
                      "wall": wall, "draw": t_draw, "load": load, "cpu": ru.ru_utime + ru.ru_stime,
                      "maxrss_mib": ru.ru_maxrss / 1024}))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cases", default=None, help="d:n,d:n,... (default: the issue's table)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--child", default=None, help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.child:
        d, n = (int(v) for v in a.child.split(":"))
        child(d, n, a.seed)
        return
    cases = ISSUE_TABLE
    if a.cases:
        cases = [tuple(int(v) for v in c.split(":")) for c in a.cases.split(",")]
    print("| d | n | wall | CPU | peak RSS | ln Z - exact | sigma | error/sigma | load |")
    print("|---|---|---|---|---|---|---|---|---|")
    for d, n in cases:
        out = subprocess.run([sys.executable, __file__, "--child", "%d:%d" % (d, n), "--seed", str(a.seed)],
                             capture_output=True, text=True)
        if out.returncode != 0:
            print("| %d | %d | failed: %s |" % (d, n, out.stderr.strip().splitlines()[-1:]))
            continue
        r = json.loads(out.stdout.strip().splitlines()[-1])
        cpu, rss = r["cpu"], r["maxrss_mib"]  # the child's own (draws and imports included)
        err = r["logz"] - r["exact"]
        print("| %d | %d | %.1f s | %.1f s | %.0f MiB | %+.4f | %.4f | %+.2f | %.1f |" % (
            d, n, r["wall"], cpu, rss, err, r["logzerr"], err / r["logzerr"], r["load"]))
        sys.stdout.flush()


if __name__ == "__main__":
    main()
