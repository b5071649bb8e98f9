#!/usr/bin/env python3
"""CPU per stage of a pipeline run or of an evidence call, from a Go CPU profile.

The library labels its stages for the profiler (runtime/pprof, label key
"stage"): each cross-fitting pass of an Evidence call ("evidence pass 1",
"evidence pass 2"), the coverage check's widened draws, the annealing
decision, the checks, the spot-check, and each fit of the global moves'
flow in the sampler ("global-move fit 1", ...). Goroutines a stage starts
inherit its label, so the flow's workers count where they belong. Within a
stage the call stack says what the time went to (the flow's candidate
layers, log q, draws from q, log p, the bridge equation); in the sampler,
NUTS's warm-up, the global moves' warm-up stages and the kept draws, with
the global moves apart from the NUTS transitions.

    go run ./cmd/gbs-bench -problems ring -methods GBS -repeats-gbs 1 -cpuprofile ring.prof
    bench/profile_stages.py build/bin/gbs-bench ring.prof --title "ring, one pipeline run"
    go run ./cmd/gbs-scale -child 256,100000,1 -cpuprofile d256.prof > /dev/null
    bench/profile_stages.py build/bin/gbs-scale d256.prof --json d256.json

It runs `go tool pprof -traces BINARY PROFILE` (the binary that wrote the
profile, for its symbols) and prints a Markdown table: CPU seconds and
share per stage and part, the sampler's and the evidence's totals. With
--json it also writes the rows as JSON lines ({"stage", "part", "seconds",
"share"}), which the documentation renders. Several profiles of the same
binary (repeats) may be given; their samples add up.

    bench/profile_stages.py --diff before.jsonl after.jsonl

prints two such JSON files' stages side by side, with the ratio.
"""

import argparse
import json
import re
import subprocess
import sys
from collections import defaultdict

PREFIX = "github.com/gbs-evidence/gbs/"

# The parts of a flow fit, by the functions on the stack (the first rule
# that matches wins; goroutines of the flow's parallel loops carry the name
# of the loop's closure).
FIT_PARTS = [
    ("scale-layer candidate", r"flow\.(fitScale|fitScaleLayer|fitScaleLine|fitLogScale|scaleGate)"),
    ("scale-layer round trip", r"flow\.roundTrips"),
    ("conditional candidate", r"flow\.(\(\*condFit\)|\(\*condState\)|couplingSplit|dependence|applyCond|limitTargets|binCentres|fitBins)"),
    ("direction search", r"flow\.(layerFrame|maxSlicedDirections|\(\*swSearch\)|searchSample|randomFrame)"),
    ("sliced 1-D maps", r"flow\.(fitDirection|fitLayer\.func|newMarginalData|\(\*marginalData\))"),
    ("whitening", r"flow\.(fitWhitening|whitenAll|refitGaussian|scaledCovariance|choleskyWhitening|pcaWhitening|shrink|columnMeans|columnScales|\(\*covChoice\)|\(\*whitening\))"),
    ("layers applied, held-out log q", r"flow\.(pointLogLik|\(\*layer\)\.applyProjected|projectRows|weightedMean|compactColumns|fitLayer$)"),
    ("input, duplicates, split", r"flow\.(prepareFitData|checkFitInput|distinctPoints|checkData|checkConstant|splitIndices|gather|\(\*bounds\)\.setScales|\(\*fitData\)\.clone)"),
    ("linear algebra (gonum workers)", r"gonum\.org/v1/gonum/"),
]
FIT_MARK = r"flow\.(fit$|Fit$|Fit\.func|unlocked\.func|fitLayers|fitLayer|fitScale|condFit|\(\*condFit\)|\(\*condState\)|layerFrame|maxSlicedDirections|\(\*swSearch\)|fitDirection|fitWhitening|whitenAll|pointLogLik|projectRows|applyCond|refitGaussian|roundTrips|dependence)"

# The parts of an evidence pass other than the flow's fit.
PASS_PARTS = [
    ("log p at q's draws (the user's density)", r"gbs\.\(\*evaluator\)|gbs\.\(\*target\)"),
    ("coverage check (pool, widened log q)", r"gbs\.\(\*coveragePool\)|gbs\.\(\*estimation\)\.newCoveragePool|flow\.\(\*Flow\)\.Forward"),
    ("draws from q", r"flow\.\(\*Flow\)\.Sample|gbs\.\(\*proposalDraws\)"),
    ("log q (posterior draws; coverage's widened draws)", r"flow\.\(\*Flow\)\.LogProb|gbs\.posteriorRatios"),
    ("coverage check's widened draws", r"flow\.\(\*Flow\)\.Inverse|gbs\.\(\*estimation\)\.drawWide"),
    ("bridge equation, tau, trace", r"gbs\.(solveBridge|\(\*estimation\)\.posteriorTau|passTrace|integratedTime|\(\*estimation\)\.solvePass|meanWeight|startNQ)"),
]

CHECK_PARTS = [
    ("R-hat, ESS, burn-in", r"gbs\.(coordinateStats|convergenceStats|burnIn|quantityStats)|internal/mcmc"),
    ("copied, stuck, interleaved chains", r"gbs\.(copyGroups|stuckChains|interleavePeriod|layoutWarning|walkerTime)"),
    ("coverage chains", r"gbs\.\(\*estimation\)\.diagnoseCoverage|gbs\.coverage|gbs\.\(\*coverageTally\)|gbs\.twoSample"),
    ("pile-ups", r"gbs\.(pileUps|\(\*estimation\)\.diagnosePileUp)"),
    ("cross-fit covariance, consistency", r"gbs\.(crossFit|consistency|\(\*estimation\)\.diagnoseSign|signCorr|rankCorrelation|averageRanks)|flow\.\(\*Flow\)\.LogProb"),
    ("Pareto k, tilt, IS/HM", r"gbs\.(paretoK|tiltZ|weightTime|meanWeight)"),
]


def short(frame):
    return frame.replace(PREFIX, "")


def first_match(rules, stack):
    for name, pat in rules:
        rx = re.compile(pat)
        if any(rx.search(f) for f in stack):
            return name
    return None


def seconds(v):
    m = re.fullmatch(r"([0-9.]+)(ns|us|µs|ms|s|m|h)", v)
    if not m:
        raise ValueError(f"unreadable sample value {v!r}")
    x = float(m.group(1))
    return x * {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}[m.group(2)]


def traces(binary, profile):
    """Yields (labels, seconds, stack) per distinct stack of the profile."""
    out = subprocess.run(["go", "tool", "pprof", "-traces", binary, profile],
                         check=True, capture_output=True, text=True).stdout
    for block in out.split("-----------+-------------------------------------------------------")[1:]:
        labels, value, stack = {}, None, []
        for line in block.splitlines():
            if not line.strip():
                continue
            m = re.match(r"^\s+(\w+):\s+(.*)$", line)
            if value is None and m and not re.match(r"^\s+[0-9.]+(ns|us|µs|ms|s)\s", line):
                labels[m.group(1)] = m.group(2).strip()
                continue
            m = re.match(r"^\s+([0-9.]+(?:ns|us|µs|ms|s|m|h))\s+(.*)$", line)
            if value is None and m:
                value = seconds(m.group(1))
                stack.append(short(m.group(2).strip()))
                continue
            stack.append(short(line.strip()))
        if value is not None:
            yield labels, value, stack


def classify(labels, stack):
    """Returns (stage, part) of one sample."""
    stage = labels.get("stage", "")
    has = lambda pat: any(re.search(pat, f) for f in stack)
    fit_part = lambda: first_match(FIT_PARTS, stack) or "fit: other"
    if stage.startswith("global-move fit"):
        return "sampling: global-move flow fits", fit_part()
    if stage.startswith("evidence pass"):
        name = "evidence: " + stage.replace("evidence ", "cross-fit ")
        if has(FIT_MARK) or (has(r"gonum\.org/") and not has(r"gbs\.\(\*evaluator\)")):
            return name, "flow fit: " + fit_part()
        return name, first_match(PASS_PARTS, stack) or "pass: other"
    if stage == "log p":  # a benchmark density that labels itself (cmd/gbs-scale)
        return "evidence: log p (the benchmark's density)", "all"
    if stage == "evidence symmetry":
        return "evidence: symmetry test", "all"
    if stage == "evidence census":
        return "evidence: mode census", "all"
    if stage == "evidence anneal":
        return "evidence: annealing decision", "all"
    if stage == "evidence checks":
        return "evidence: checks", first_match(CHECK_PARTS, stack) or "other checks"
    if stage == "evidence spot-check":
        return "evidence: spot-check", "all"
    if has(r"nuts\.\(\*chainRun\)\.warmup"):
        return "sampling: NUTS warm-up", "all"
    for fn, name in (("stage", "sampling: global moves' warm-up stages"), ("production", "sampling: kept draws")):
        if has(r"nuts\.\(\*chainRun\)\." + fn + "$"):
            return name, "global moves" if has(r"nuts\.\(\*sampler\)\.globalMove") else "NUTS transitions"
    if has(r"^nuts\.") or has(r"gbs\.drawsProblem|gbs\.samplingWarnings"):
        return "sampling: other", "all"
    if has(r"gbs\.Evidence$|gbs\.newEstimation"):
        return "evidence: set-up", "all"
    if stack and re.match(r"runtime\.(gcBgMarkWorker|bgsweep|bgscavenge|mcall|morestack|systemstack|mstart|sysmon)", stack[-1]):
        return "runtime (garbage collector, scheduler)", "all"
    return "other", "all"


ORDER = [
    "sampling: NUTS warm-up", "sampling: global moves' warm-up stages", "sampling: global-move flow fits",
    "sampling: kept draws", "sampling: other", "evidence: set-up", "evidence: spot-check", "evidence: symmetry test",
    "evidence: cross-fit pass 1", "evidence: cross-fit pass 2", "evidence: log p (the benchmark's density)",
    "evidence: annealing decision", "evidence: mode census", "evidence: checks", "runtime (garbage collector, scheduler)", "other",
]


def diff(before, after, title):
    """Prints the stage totals of two --json files side by side."""
    def totals(path):
        out = {}
        with open(path) as f:
            for line in f:
                r = json.loads(line)
                if not r["part"]:
                    out[r["stage"]] = r["seconds"]
        return out
    a, b = totals(before), totals(after)
    stages = sorted(set(a) | set(b), key=lambda s: (ORDER.index(s) if s in ORDER else len(ORDER), s))
    if title:
        print(title + "\n")
    print("| stage | CPU s before | CPU s after | after/before |")
    print("|---|---:|---:|---:|")
    for s in stages:
        x, y = a.get(s, 0.0), b.get(s, 0.0)
        print(f"| {s} | {x:.2f} | {y:.2f} | {y / x:.2f} |" if x else f"| {s} | — | {y:.2f} | |")
    ta, tb = sum(a.values()), sum(b.values())
    print(f"| **total** | **{ta:.2f}** | **{tb:.2f}** | **{tb / ta:.2f}** |")


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "--diff":
        ap = argparse.ArgumentParser(description="stage totals of two --json files side by side")
        ap.add_argument("--diff", nargs=2, metavar=("BEFORE", "AFTER"), required=True)
        ap.add_argument("--title", default="")
        a = ap.parse_args()
        diff(a.diff[0], a.diff[1], a.title)
        return
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("binary", help="the binary that wrote the profiles (for its symbols)")
    ap.add_argument("profiles", nargs="+", help="CPU profiles (pprof) of that binary")
    ap.add_argument("--title", default="", help="a line printed above the table")
    ap.add_argument("--json", help="also write the rows as JSON lines to this file")
    ap.add_argument("--min-share", type=float, default=0.002, help="parts below this share of the total are folded into 'other'")
    a = ap.parse_args()

    cpu = defaultdict(float)
    for prof in a.profiles:
        for labels, v, stack in traces(a.binary, prof):
            cpu[classify(labels, stack)] += v
    total = sum(cpu.values())
    if total == 0:
        sys.exit("profile_stages: no samples")
    stages = defaultdict(dict)
    for (stage, part), v in cpu.items():
        stages[stage][part] = stages[stage].get(part, 0) + v
    rows = []
    for stage in sorted(stages, key=lambda s: (ORDER.index(s) if s in ORDER else len(ORDER), s)):
        parts = stages[stage]
        small = sum(v for v in parts.values() if v < a.min_share * total)
        kept = sorted(((p, v) for p, v in parts.items() if v >= a.min_share * total), key=lambda t: -t[1])
        if small > 0:
            kept.append(("smaller parts", small))
        rows.append((stage, "", sum(parts.values())))
        if not (len(kept) == 1 and kept[0][0] in ("all", "smaller parts")):
            rows.extend((stage, p, v) for p, v in kept)
    sampling = sum(v for (s, _), v in cpu.items() if s.startswith("sampling"))
    evidence = sum(v for (s, _), v in cpu.items() if s.startswith("evidence"))

    if a.title:
        print(a.title + "\n")
    print("| stage | part | CPU s | share |")
    print("|---|---|---:|---:|")
    for stage, part, v in rows:
        if part:
            print(f"| | {part} | {v:.2f} | {100 * v / total:.1f} % |")
        else:
            print(f"| **{stage}** | | **{v:.2f}** | **{100 * v / total:.1f} %** |")
    print(f"| **total** (sampling {sampling:.2f} s, evidence {evidence:.2f} s) | | **{total:.2f}** | 100 % |")
    if a.json:
        with open(a.json, "w") as f:
            for stage, part, v in rows:
                f.write(json.dumps({"title": a.title, "stage": stage, "part": part, "seconds": round(v, 3), "share": round(v / total, 4)}) + "\n")


if __name__ == "__main__":
    main()
