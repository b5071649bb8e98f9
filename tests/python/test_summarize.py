"""bench/summarize.py on a small synthetic set of runs."""

import json
import os
import subprocess
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
SCRIPT = os.path.join(ROOT, "bench", "summarize.py")


def _runs():
    rows = []
    # GBS on the funnel: ln Z - exact = 0.01, -0.02, 0.03, 0.5 with error 0.05.
    for i, dz in enumerate([0.01, -0.02, 0.03, 0.5]):
        rows.append({"problem": "funnel", "method": "GBS", "seed": i, "logz": -63.5 + dz, "logzerr": 0.05,
                     "exact": -63.5, "ncall": 1000 + i, "ngrad": 10000, "seconds": 1.0})
    # A failed run as the Go benchmark writes it (NaN) ...
    rows.append({"problem": "funnel", "method": "AIS", "seed": 0, "logz": float("nan"), "logzerr": float("nan"),
                 "exact": -63.5, "ncall": 0, "ngrad": 0, "seconds": 0.1, "error": "boom"})
    # ... and nested sampling as bench/dynesty_bench.py writes it: null on
    # failure, a note on a capped run.
    rows.append({"problem": "banana", "method": "NS", "seed": 1000, "logz": -127.0, "logzerr": 0.3,
                 "exact": -127.364, "ncall": 2_000_000, "ngrad": 0, "seconds": 100.0})
    rows.append({"problem": "banana", "method": "NS", "seed": 1001, "logz": -128.0, "logzerr": 0.3,
                 "exact": -127.364, "ncall": 4_000_000, "ngrad": 0, "seconds": 300.0,
                 "note": "stopped by --maxcall 4000000"})
    rows.append({"problem": "banana", "method": "NS", "seed": 1002, "logz": None, "logzerr": None,
                 "exact": -127.364, "ncall": 5, "ngrad": 0, "seconds": 0.5, "error": "ValueError: bad"})
    return rows


def _write(tmp_path, rows, extra=""):
    path = tmp_path / "runs.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n" + extra)
    return path


def test_summarize(tmp_path):
    runs = _write(tmp_path, _runs(), extra="{not json\n\n")
    md, png = tmp_path / "sub" / "out.md", tmp_path / "out.png"
    proc = subprocess.run([sys.executable, SCRIPT, str(runs), "--markdown", str(md), "--figure", str(png),
                           "--command", "make bench", "--command", "python bench/dynesty_bench.py"],
                          capture_output=True, text=True, check=True)
    assert "malformed" in proc.stderr  # the bad line is reported and skipped
    text = md.read_text()
    lines = text.splitlines()
    # Command lines at the top, in a code block.
    assert lines.index("make bench") < lines.index("python bench/dynesty_bench.py") < 12
    # bias = mean(0.01, -0.02, 0.03, 0.5) = 0.13; sd = 0.2475; 3 of 4 within
    # one and two errors; median calls 1001.5; median gradients 10000.
    assert "| GBS | 4 | +0.1300 | 0.2475 | 0.0500 | 0.75 | 0.75 | 1002 | 10000 | 1.0 | 0 |" in lines
    ais = [line for line in lines if line.startswith("| AIS | 1 |")]
    assert ais == ["| AIS | 1 | – | – | – | – | – | – | – | – | 1 |"], ais  # one run, failed
    # NS on the banana: two good runs (dz = +0.364, -0.636), one failure.
    ns = [line for line in lines if line.startswith("| NS | 3 |")]
    assert ns == ["| NS | 3 | -0.1360 | 0.7071 | 0.3000 | 0.00 | 0.50 | 3e6 | 0 | 200.0 | 1 |"], ns
    # The combined tables.
    assert "| GBS | +0.130 ± 0.248 [4/4] |  |" in lines
    assert "| AIS | — [0/1] |  |" in lines
    assert "| NS |  | -0.136 ± 0.707 [2/3] |" in lines
    assert "| GBS | 1002 + 10000 |  |" in lines
    assert "| NS |  | 3e6 + 0 |" in lines
    # Headings with the exact values, notes and errors listed.
    assert "## funnel (exact ln Z = -63.500000)" in lines and "## banana (exact ln Z = -127.364000)" in lines
    assert "- banana NS seed 1001: stopped by --maxcall 4000000" in lines
    assert "- banana NS seed 1002: error: ValueError: bad" in lines
    assert "- funnel AIS seed 0: error: boom" in lines
    # The figure: a real PNG.
    data = png.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 5000


def test_summarize_errors(tmp_path):
    missing = tmp_path / "missing.jsonl"
    proc = subprocess.run([sys.executable, SCRIPT, str(missing), "--markdown", str(tmp_path / "x.md"),
                           "--no-figure"], capture_output=True, text=True)
    assert proc.returncode == 1 and "cannot read" in proc.stderr
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n")
    proc = subprocess.run([sys.executable, SCRIPT, str(empty), "--markdown", str(tmp_path / "x.md"),
                           "--no-figure"], capture_output=True, text=True)
    assert proc.returncode == 1 and "no runs" in proc.stderr
