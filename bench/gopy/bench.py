"""gopy against ctypes (issue #6): passing a 10^5 x 32 numpy array into Go,
and a Python callback called from Go with batches of 1 and 1000 points.

Run by bench/gopy/run.sh, which builds both bindings first:

    python bench/gopy/bench.py --gopy-dir DIR --lib LIBGBS [--package PYDIR] [--json OUT]

DIR is the directory holding the gopy-generated package `gbspy` (the
binding of bench/gopy/gbspy, built by `go tool gopy build`), LIBGBS the
libgbs.so built by `go build -buildmode=c-shared ./capi`, PYDIR the repo's
python/ directory (optional: also time the python/gbs package over the same
libgbs). Both bindings run the same Go code (gbs.Evidence with warp-III,
flow.Flow.LogProb); only the crossing differs.

Each binding runs in a process of its own (one Go runtime per process, as
users run them), and the processes alternate for --rounds rounds of
--repeat runs each, so that a change of machine load hits every binding
alike. Every time reported is the median over all runs, of the wall-clock
time and of the process's CPU time (all threads, Go's included): on a
shared machine the CPU time is the steadier measure of what a binding
costs. The results are cross-checked: the same log q bytes and the same
ln Z on every path.

The ctypes side is a minimal declaration of the few libgbs functions used
(the layouts of include/gbs.h), used the way python/gbs uses them: a
pointer to the numpy buffer, callbacks that view the C buffers with
np.ctypeslib.as_array.
"""

import argparse
import ctypes
import hashlib
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from ctypes import (CFUNCTYPE, POINTER, Structure, c_char_p, c_double, c_int,
                    c_int32, c_int64, c_size_t, c_uint64, c_void_p)

import numpy as np

N, D = 100_000, 32      # (a): the array passed into Go
FIT_ROWS, LAYERS = 5000, 2
# (b): batch size -> (draws, n_q) of the warp-III run; the log density is
# then called with (draws + 2 n_q) points in all.
CALLBACK_RUNS = {1: (2000, 2000), 1000: (20000, 20000)}

DP = POINTER(c_double)
LOG_DENSITY_FN = CFUNCTYPE(c_int, DP, c_int64, c_int64, DP, c_void_p)


class EvidenceOptions(Structure):
    _fields_ = [("size", c_size_t), ("method", c_int32),
                ("independent", c_int32), ("concurrent", c_int32),
                ("verbose", c_int32), ("n_q", c_int64),
                ("batch_size", c_int64), ("ncall", c_int64),
                ("seed", c_uint64), ("f_err", c_double), ("f_eva", c_double),
                ("lower", DP), ("upper", DP), ("cancel", c_void_p)]


class CResult(Structure):
    _fields_ = [("size", c_size_t), ("logz", c_double),
                ("logzerr", c_double), ("n_p", c_int64), ("n_q", c_int64),
                ("ncall", c_int64), ("tau", c_double), ("re2_p", c_double),
                ("re2_q", c_double), ("method", c_int32),
                ("reserved", c_int32), ("n_trace", c_int64),
                ("n_warnings", c_int64), ("warnings", POINTER(c_char_p))]


class FlowOptions(Structure):
    _fields_ = [("size", c_size_t), ("max_layers", c_int32), ("layers", c_int32),
                ("directions", c_int32), ("knots", c_int32), ("whiten", c_int32),
                ("rotation", c_int32), ("threads", c_int32), ("reserved", c_int32),
                ("damping", c_double), ("bandwidth", c_double),
                ("validation_fraction", c_double), ("seed", c_uint64),
                ("lower", DP), ("upper", DP)]


def load_libgbs(path):
    lib = ctypes.CDLL(path)
    err = POINTER(POINTER(ctypes.c_char))
    lib.gbs_abi_version.restype = c_int
    lib.gbs_free_warnings.argtypes = [POINTER(c_char_p)]
    lib.gbs_free_warnings.restype = None
    lib.gbs_evidence.argtypes = [LOG_DENSITY_FN, c_void_p, DP, c_int64, c_int64, c_int64,
                                 DP, POINTER(EvidenceOptions), POINTER(CResult),
                                 c_void_p, c_int64, err]
    lib.gbs_flow_fit.argtypes = [DP, c_int64, c_int64, DP, POINTER(FlowOptions),
                                 POINTER(c_void_p), err]
    lib.gbs_flow_free.argtypes = [c_void_p, err]
    lib.gbs_flow_log_prob.argtypes = [c_void_p, DP, c_int64, DP, err]
    assert lib.gbs_abi_version() == 1
    return lib


def runs(fn, repeat, number=1):
    """Wall-clock and CPU seconds (this process, all threads: Go's included)
    per call of fn, one pair per run of `number` calls."""
    out = []
    fn()  # warm-up, not timed
    for _ in range(repeat):
        w, c = time.perf_counter(), time.process_time()
        for _ in range(number):
            fn()
        out.append(((time.perf_counter() - w) / number, (time.process_time() - c) / number))
    return out


def per_call(durations):
    """The median of per-call durations, as a (wall, wall) run: robust to
    the few calls that a busy machine preempts."""
    m = statistics.median(durations)
    return [(m, m)]


def gaussian_logp(x):
    """Standard normal log density of the rows of x (the callback body)."""
    return -0.5 * np.einsum("ij,ij->i", x, x) - 0.5 * x.shape[1] * np.log(2 * np.pi)


def data():
    x = np.random.default_rng(1).standard_normal((N, D))
    cb = {b: np.random.default_rng(2).standard_normal((nd, D))
          for b, (nd, _) in CALLBACK_RUNS.items()}
    return x, cb


def digest(a):
    return hashlib.sha256(np.ascontiguousarray(a, dtype=np.float64).tobytes()).hexdigest()[:16]


# ---------------------------------------------------------------------------
# One binding per process


def side_ctypes(args):
    lib = load_libgbs(args.lib)
    x, cbx = data()
    t, chk = {}, {}

    # (a) the array into Go: a pointer to numpy's buffer.
    t["pass"] = runs(lambda: x.ctypes.data_as(DP), args.repeat, number=1000)
    fit = np.ascontiguousarray(x[:FIT_ROWS])
    fo = FlowOptions(size=ctypes.sizeof(FlowOptions), layers=LAYERS, seed=1)
    h = c_void_p()
    assert lib.gbs_flow_fit(fit.ctypes.data_as(DP), FIT_ROWS, D, None, ctypes.byref(fo),
                            ctypes.byref(h), None) == 0

    def logq():
        lq = np.empty(N)
        assert lib.gbs_flow_log_prob(h, x.ctypes.data_as(DP), N, lq.ctypes.data_as(DP), None) == 0
        return lq

    chk["logq"] = digest(logq())
    t["logq"] = runs(logq, args.repeat)
    lib.gbs_flow_free(h, None)

    # (b) callbacks.
    for batch, (_, nq) in CALLBACK_RUNS.items():
        xb = cbx[batch]
        calls = [0]

        conv = []

        def cb(xp, n, d, outp, _user):
            try:
                t0 = time.perf_counter()
                calls[0] += 1
                pts = np.ctypeslib.as_array(xp, shape=(n, d))
                out = np.ctypeslib.as_array(outp, shape=(n,))
                tb = time.perf_counter()
                v = gaussian_logp(pts)
                tb = time.perf_counter() - tb
                out[:] = v
                conv.append(time.perf_counter() - t0 - tb)
                return 0
            except BaseException:
                return 1

        fn = LOG_DENSITY_FN(cb)

        def evidence():
            opt = EvidenceOptions(size=ctypes.sizeof(EvidenceOptions), method=3, independent=1,
                                  n_q=nq, batch_size=batch, seed=1)
            res = CResult(size=ctypes.sizeof(CResult))
            st = lib.gbs_evidence(fn, None, xb.ctypes.data_as(DP), 1, len(xb), D, None,
                                  ctypes.byref(opt), ctypes.byref(res), None, 0, None)
            assert st == 0, st
            lib.gbs_free_warnings(res.warnings)
            return res.logz

        chk["lnz%d" % batch] = evidence()
        chk["calls%d" % batch] = calls[0]
        t["cb%d" % batch] = runs(evidence, args.repeat)
        t["conv%d" % batch] = per_call(conv)
        pts = xb[:batch]
        t["body%d" % batch] = runs(lambda: gaussian_logp(pts), args.repeat, number=200)
    return t, chk


def side_gopy(args):
    sys.path.insert(0, args.gopy_dir)
    from gbspy import gbspy as gp, go  # the generated package
    x, cbx = data()
    t, chk = {}, {}

    def to_go(a):  # the fastest gopy path: bytes, one Go copy, viewed as []float64
        return gp.Float64s(go.Slice_byte.from_bytes(a.tobytes()))

    # (a) the array into Go.
    t["pass_bytes"] = runs(lambda: to_go(x), args.repeat)
    xs = x[:args.naive_rows]  # per element: linear, so time a part and scale
    t["pass_naive"] = [(w * N / len(xs), c * N / len(xs))
                       for w, c in runs(lambda: go.Slice_float64(xs.ravel()), 1)]
    s = to_go(x)
    assert abs(gp.Sum(s) - x.sum()) < 1e-9 * np.abs(x).sum()
    assert abs(gp.Sum(go.Slice_float64(xs.ravel())) - xs.sum()) < 1e-9 * np.abs(xs).sum()
    f = gp.FitFlow(to_go(x[:FIT_ROWS]), D, LAYERS, 1)

    def logq():
        r = f.LogProb(to_go(x))
        return np.frombuffer(bytes(gp.Bytes(r)), dtype=np.float64)

    chk["logq"] = digest(logq())
    t["logq_bytes"] = runs(logq, args.repeat)
    t["logq_go"] = runs(lambda: f.LogProb(s), args.repeat)  # data in Go, result left there
    r = f.LogProb(s)
    t["back_naive"] = runs(lambda: np.fromiter(r, dtype=np.float64, count=N), 1)

    # (b) callbacks.
    for batch, (_, nq) in CALLBACK_RUNS.items():
        xb = cbx[batch]
        gx = to_go(xb)
        o = gp.Options(Method="warp3", NQ=nq, BatchSize=batch, Seed=1, Independent=True)
        ref = gp.EvidenceGaussian(gx, 1, D, o)
        chk["lnz%d_go" % batch] = ref.LogZ
        t["cb%d_go" % batch] = runs(lambda: gp.EvidenceGaussian(gx, 1, D, o), args.repeat)
        for naive in (False, True):
            calls, conv = [0], []

            # A Python exception escaping a gopy callback crashes the process
            # (the generated code hands the NULL result to PyLong_AsLongLong),
            # so the callback catches everything and returns a status.
            def cb(h, naive=naive, calls=calls, conv=conv):
                try:
                    t0 = time.perf_counter()
                    calls[0] += 1
                    b = gp.Batch(handle=h)
                    n, d = b.N, b.D
                    if naive:
                        pts = np.fromiter((b.At(i) for i in range(n * d)), dtype=np.float64,
                                          count=n * d).reshape(n, d)
                    else:
                        pts = np.frombuffer(bytes(b.Points()), dtype=np.float64).reshape(n, d)
                    tb = time.perf_counter()
                    v = gaussian_logp(pts)
                    tb = time.perf_counter() - tb
                    if naive:
                        for i, vi in enumerate(v.tolist()):
                            b.Set(i, vi)
                    else:
                        b.SetLogP(go.Slice_byte.from_bytes(v.tobytes()))
                    del b
                    conv.append(time.perf_counter() - t0 - tb)
                    return 0
                except BaseException:
                    return 1

            key = "%s%d" % ("naive" if naive else "bytes", batch)
            chk["lnz_" + key] = gp.Evidence(cb, gx, 1, D, o).LogZ
            chk["calls_" + key] = calls[0]
            slow = naive and batch > 1
            t["cb_" + key] = runs(lambda: gp.Evidence(cb, gx, 1, D, o), 1 if slow else args.repeat)
            t["conv_" + key] = per_call(conv)
    return t, chk


def side_package(args):
    os.environ["GBS_LIBRARY"] = args.lib
    sys.path.insert(0, args.package)
    import gbs  # python/gbs over the same libgbs
    x, cbx = data()
    t, chk = {}, {}
    q = gbs.Flow.fit(x[:FIT_ROWS], layers=LAYERS, seed=1)
    chk["logq"] = digest(q.log_prob(x))
    t["logq"] = runs(lambda: q.log_prob(x), args.repeat)
    for batch, (_, nq) in CALLBACK_RUNS.items():
        xb = cbx[batch]

        def evidence():
            return gbs.evidence(gaussian_logp, xb, vectorize=True, method="warp3", n_q=nq,
                                seed=1, independent=True, batch_size=batch).logz

        chk["lnz%d" % batch] = evidence()
        t["cb%d" % batch] = runs(evidence, args.repeat)
    return t, chk


SIDES = {"ctypes": side_ctypes, "gopy": side_gopy, "package": side_package}


# ---------------------------------------------------------------------------
# Driver


def fmt(t):
    if t >= 1:
        return "%.2f s" % t
    if t >= 1e-3:
        return "%.1f ms" % (t * 1e3)
    return "%.1f µs" % (t * 1e6)


def check(res):
    c, g = res["ctypes"]["checks"], res["gopy"]["checks"]
    assert c["logq"] == g["logq"], "log q differs between ctypes and gopy"
    for b in CALLBACK_RUNS:
        ref = g["lnz%d_go" % b]
        for v in (c["lnz%d" % b], g["lnz_bytes%d" % b], g["lnz_naive%d" % b]):
            assert abs(v - ref) < 1e-9, (b, v, ref)
        assert c["calls%d" % b] == g["calls_bytes%d" % b] == g["calls_naive%d" % b]
    if "package" in res:
        p = res["package"]["checks"]
        assert p["logq"] == c["logq"], "log q differs between python/gbs and ctypes"
        for b in CALLBACK_RUNS:
            assert abs(p["lnz%d" % b] - g["lnz%d_go" % b]) < 1e-9


def report(res):
    def med(i):
        return {side: {k: statistics.median(v[i] for v in vs) for k, vs in r["times"].items()}
                for side, r in res.items()}
    W, C = med(0), med(1)  # wall, CPU
    n = {side: {k: len(v) for k, v in r["times"].items()} for side, r in res.items()}
    calls = {b: res["ctypes"]["checks"]["calls%d" % b] for b in CALLBACK_RUNS}
    pkg = "package" in res

    def cell(side, key):
        return "%s | %s | %d" % (fmt(C[side][key]), fmt(W[side][key]), n[side][key])

    L = ["## (a) a 10^5 x 32 float64 numpy array (25.6 MB) into Go", "",
         "| path | CPU time | wall time | runs |", "|---|---|---|---|",
         "| ctypes: pointer to the numpy buffer (zero copy) | %s×1000 |" % cell("ctypes", "pass"),
         "| gopy: `Float64s(go.Slice_byte.from_bytes(x.tobytes()))` (2 copies) | %s |" % cell("gopy", "pass_bytes"),
         "| gopy: `go.Slice_float64(x.ravel())` (one cgo call per value; scaled from %d rows) | %s |"
         % (ARGS.naive_rows, cell("gopy", "pass_naive")),
         "| log q of a %d-layer flow at the 10^5 points, Go alone (gopy, data already in Go) | %s |"
         % (LAYERS, cell("gopy", "logq_go")),
         "| the same, numpy in and numpy out: ctypes | %s |" % cell("ctypes", "logq"),
         "| the same, numpy in and numpy out: gopy, bytes both ways | %s |" % cell("gopy", "logq_bytes")]
    if pkg:
        L.append("| the same, numpy in and numpy out: python/gbs `Flow.log_prob` (ctypes) | %s |"
                 % cell("package", "logq"))
    L += ["| gopy: the 10^5 results out one value per cgo call (`np.fromiter`) | %s |"
          % cell("gopy", "back_naive"), ""]
    cols = ["ctypes", "gopy, bytes", "gopy, per value"] + (["python/gbs"] if pkg else [])

    def paths(M, b):
        return [M["ctypes"]["cb%d" % b], M["gopy"]["cb_bytes%d" % b], M["gopy"]["cb_naive%d" % b]] + \
            ([M["package"]["cb%d" % b]] if pkg else [])

    L += ["## (b) a Python callback called from Go", "",
          "gbs.Evidence, warp-III, d = 32, independent standard normal draws; the callback",
          "is a numpy standard normal log density (its body alone: %s CPU for 1 point, %s for 1000)."
          % (fmt(C["ctypes"]["body1"]), fmt(C["ctypes"]["body1000"])), ""]
    for title, M in (("CPU time", C), ("wall time", W)):
        L += ["%s of the whole gbs.Evidence call:" % title, "",
              "| batch | calls | Go alone | " + " | ".join(cols) + " |",
              "|---|---|---|" + "---|" * len(cols)]
        for b in CALLBACK_RUNS:
            L.append("| %d | %d | %s | %s |" % (b, calls[b], fmt(M["gopy"]["cb%d_go" % b]),
                                                 " | ".join(fmt(v) for v in paths(M, b))))
        L.append("")
    L += ["Per callback call, CPU: (time − Go alone) / calls, the callback body included:", "",
          "| batch | " + " | ".join(cols) + " |", "|---|" + "---|" * len(cols)]
    for b in CALLBACK_RUNS:
        go_t = C["gopy"]["cb%d_go" % b]
        L.append("| %d | " % b + " | ".join(fmt((v - go_t) / calls[b]) for v in paths(C, b)) + " |")
    L += ["", "Per callback call, the binding's own work inside the Python callback (viewing or",
          "copying the points in, the values out; median over calls, wall time):", "",
          "| batch | ctypes | gopy, bytes | gopy, per value |", "|---|---|---|---|"]
    for b in CALLBACK_RUNS:
        L.append("| %d | %s | %s | %s |" % (b, fmt(W["ctypes"]["conv%d" % b]), fmt(W["gopy"]["conv_bytes%d" % b]),
                                            fmt(W["gopy"]["conv_naive%d" % b])))
    return "\n".join(L)


def machine():
    cpu = platform.processor()
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next(line.split(":", 1)[1].strip() for line in f if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    return {"cpu": cpu, "cores": os.cpu_count(), "python": platform.python_version(),
            "numpy": np.__version__, "loadavg1": load}


def drive(args):
    sides = ["ctypes", "gopy"] + (["package"] if args.package else [])
    res = {s: {"times": {}, "checks": None} for s in sides}
    load = []
    with tempfile.TemporaryDirectory() as tmp:
        for rnd in range(args.rounds):
            for s in sides:
                out = os.path.join(tmp, "%s-%d.json" % (s, rnd))
                cmd = [sys.executable, os.path.abspath(__file__), "--side", s, "--out", out,
                       "--repeat", str(args.repeat), "--naive-rows", str(args.naive_rows),
                       "--lib", args.lib, "--gopy-dir", args.gopy_dir]
                if args.package:
                    cmd += ["--package", args.package]
                load.append(os.getloadavg()[0])
                print("round %d/%d: %s" % (rnd + 1, args.rounds, s), file=sys.stderr, flush=True)
                if s == "package" and "package" not in res:
                    continue
                try:
                    subprocess.run(cmd, check=True)
                except subprocess.CalledProcessError:
                    if s != "package":
                        raise
                    # python/gbs is developed alongside: time it when it runs.
                    print("python/gbs failed: its column is left out", file=sys.stderr)
                    del res["package"]
                    continue
                with open(out) as f:
                    r = json.load(f)
                for k, v in r["times"].items():
                    res[s]["times"].setdefault(k, []).extend(v)
                res[s]["checks"] = r["checks"]
    check(res)
    m = machine()
    m["loadavg1_during"] = [round(v, 2) for v in load]
    text = report(res)
    text += ("\n\nMachine: %s, %d cores, Python %s, numpy %s; 1-minute load average "
             "%.1f–%.1f during the runs.\nAll results cross-checked: identical log q bytes, "
             "ln Z equal to 1e-9 and the same number of callback calls on every path.\n"
             % (m["cpu"], m["cores"], m["python"], m["numpy"], min(load), max(load)))
    print(text)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"machine": m, "results": res}, f, indent=1)
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write(text)


def main():
    global ARGS
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--gopy-dir", required=True, help="directory holding the generated package gbspy")
    ap.add_argument("--lib", required=True, help="libgbs.so")
    ap.add_argument("--package", help="the repo's python/ directory: also time python/gbs")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--naive-rows", type=int, default=10_000)
    ap.add_argument("--json", help="write every run's time here")
    ap.add_argument("--markdown", help="write the report here")
    ap.add_argument("--side", choices=sorted(SIDES), help=argparse.SUPPRESS)
    ap.add_argument("--out", help=argparse.SUPPRESS)
    ARGS = ap.parse_args()
    if ARGS.side:
        t, chk = SIDES[ARGS.side](ARGS)
        with open(ARGS.out, "w") as f:
            json.dump({"times": t, "checks": chk}, f)
    else:
        drive(ARGS)


if __name__ == "__main__":
    main()
