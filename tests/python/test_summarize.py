"""bench/summarize.py on a small synthetic set of runs."""

import json
import os
import subprocess
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


def test_summarize(tmp_path):
    runs = tmp_path / "runs.jsonl"
    rows = []
    for i, dz in enumerate([0.01, -0.02, 0.03, 0.5]):
        rows.append({"problem": "funnel", "method": "GBS", "seed": i, "logz": -63.5 + dz, "logzerr": 0.05,
                     "exact": -63.5, "ncall": 1000 + i, "ngrad": 10000, "seconds": 1.0})
    rows.append({"problem": "funnel", "method": "AIS", "seed": 0, "logz": float("nan"), "logzerr": float("nan"),
                 "exact": -63.5, "ncall": 0, "ngrad": 0, "seconds": 0.1, "error": "boom"})
    runs.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    md, png = tmp_path / "out.md", tmp_path / "out.png"
    subprocess.check_call([sys.executable, os.path.join(ROOT, "bench", "summarize.py"), str(runs),
                           "--markdown", str(md), "--figure", str(png), "--command", "make bench"])
    text = md.read_text()
    # bias = mean(0.01, -0.02, 0.03, 0.5) = 0.13; 3 of 4 within 1 sigma.
    assert "| GBS | 4 | +0.1300 |" in text
    assert "| 0.75 | 0.75 |" in text
    ais = next(line for line in text.splitlines() if line.startswith("| AIS |"))
    assert ais.startswith("| AIS | 1 | –") and ais.endswith("| 1 |"), ais  # one run, failed
    assert "make bench" in text
    assert png.stat().st_size > 5000
