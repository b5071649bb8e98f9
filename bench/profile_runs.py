#!/usr/bin/env python3
"""CPU per stage before and after: profiles of this checkout and of a
reference commit, for the documentation's profile table.

    make bench-profile                       # REF=d71306a, every case
    bench/profile_runs.py --ref d71306a --cases funnel,d16 --out build/profile.jsonl

Builds cmd/gbs-bench and cmd/gbs-scale from the working tree ("after")
and from the reference ("before", in a git worktree under build/, removed
once built; it must have the library's profiler labels, which came with
d71306a), runs each case once per build with -cpuprofile and reads the
profiles with bench/profile_stages.py. Cases:

  * funnel, banana, cauchy, ring: the pipeline, `gbs-bench -methods GBS
    -repeats-gbs 1 -seed 777200`, one run;
  * d16, d256: the evidence step on exact draws of a correlated Gaussian,
    `gbs-scale -child d,100000,seed` (d = 16: seeds 1 to 4, added;
    d = 256: seed 1), with -timers=false where the build has it (the
    default proposal as users call it).

Writes JSON lines ({"case", "build", "commit", "date", "command",
"stage", "part", "seconds", "share"}) to --out (default
bench/results/profile.jsonl), which bench/report.py renders.
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from compare import build, flags_of, sh  # noqa: E402

CASES = ["funnel", "banana", "cauchy", "ring", "d16", "d256"]


def commands(case, bins, flags, prof):
    """The commands of a case (each writes one profile) and the one shown."""
    if case in ("funnel", "banana", "cauchy", "ring"):
        cmd = [bins + "/gbs-bench", "-problems", case, "-methods", "GBS", "-repeats-gbs", "1", "-seed", "777200",
               "-o", os.devnull, "-cpuprofile", prof + ".0"]
        return [cmd], "gbs-bench -problems %s -methods GBS -repeats-gbs 1 -seed 777200 -cpuprofile P" % case
    d, seeds = {"d16": (16, [1, 2, 3, 4]), "d256": (256, [1])}[case]
    extra = ["-timers=false"] if "timers" in flags else []
    cmds = [[bins + "/gbs-scale", "-child", "%d,100000,%d" % (d, s)] + extra + ["-cpuprofile", "%s.%d" % (prof, i)]
            for i, s in enumerate(seeds)]
    shown = "gbs-scale -child %d,100000,SEED %s-cpuprofile P (seeds %s)" % (
        d, " ".join(extra) + " " if extra else "", ", ".join(str(s) for s in seeds))
    return cmds, shown


def profile(case, build_name, bins, commit, date):
    flags = flags_of(bins + "/gbs-scale") if case.startswith("d") else set()
    with tempfile.TemporaryDirectory() as tmp:
        prof = os.path.join(tmp, "cpu")
        cmds, shown = commands(case, bins, flags, prof)
        profs = []
        for c in cmds:
            subprocess.run(c, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            profs.append(c[-1])
        out = os.path.join(tmp, "rows.jsonl")
        binary = bins + ("/gbs-bench" if not case.startswith("d") else "/gbs-scale")
        subprocess.run([sys.executable, os.path.join(ROOT, "bench", "profile_stages.py"), binary, *profs,
                        "--json", out], check=True, stdout=subprocess.DEVNULL)
        rows = []
        with open(out) as f:
            for line in f:
                r = json.loads(line)
                rows.append({"case": case, "build": build_name, "commit": commit[:12], "date": date,
                             "command": shown, "stage": r["stage"], "part": r["part"],
                             "seconds": r["seconds"], "share": r["share"]})
        return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--ref", default="d71306a", help="the 'before' commit (with the profiler labels)")
    ap.add_argument("--cases", default=",".join(CASES))
    ap.add_argument("--out", default=os.path.join(ROOT, "bench", "results", "profile.jsonl"))
    ap.add_argument("--go", default=os.environ.get("GO", "go"))
    a = ap.parse_args()
    ref = sh(["git", "rev-parse", a.ref]).strip()
    head = sh(["git", "rev-parse", "HEAD"]).strip()
    if sh(["git", "status", "--porcelain", "--untracked-files=no"]).strip():
        head += "+changes"
    date = time.strftime("%Y-%m-%d")
    bins = tempfile.mkdtemp(prefix="gbs-profile-")
    try:
        build(ROOT, os.path.join(bins, "after"), a.go)
        wt = os.path.join(ROOT, "build", "profile-ref-" + ref[:12])
        if os.path.exists(wt):
            subprocess.run(["git", "worktree", "remove", "--force", wt], cwd=ROOT)
        sh(["git", "worktree", "add", "--detach", wt, ref])
        try:
            build(wt, os.path.join(bins, "before"), a.go)
        finally:
            subprocess.run(["git", "worktree", "remove", "--force", wt], cwd=ROOT, check=False)
            subprocess.run(["git", "worktree", "prune"], cwd=ROOT, check=False)
        rows = []
        for case in a.cases.split(","):
            for b, commit in (("before", ref), ("after", head)):
                print("profile_runs: %s, %s" % (case, b), file=sys.stderr)
                rows += profile(case, b, os.path.join(bins, b), commit, date)
        with open(a.out, "w") as f:
            for r in rows:
                f.write(json.dumps(r) + "\n")
    finally:
        shutil.rmtree(bins, ignore_errors=True)


if __name__ == "__main__":
    main()
