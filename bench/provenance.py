"""The commit and the date of a benchmark run, as the Go benchmark CLIs
record them (internal/provenance): the abbreviated git commit of the
checkout ("+dirty" when tracked files differ from it, "unknown" outside
git) and the UTC day. bench/report.py prints both under every table."""

import datetime
import os
import subprocess

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))


def commit(root=ROOT):
    try:
        rev = subprocess.run(["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True,
                             check=True).stdout.strip()
        status = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=root,
                                capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return rev[:7] + ("+dirty" if status else "")


def date():
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d")


def stamp():
    """{"commit": ..., "date": ...} for a result line."""
    return {"commit": commit(), "date": date()}
