"""Stage the documentation's sources for Sphinx: docs/ as it is, the example
notebooks under examples/ and the C headers under _include/, into one
directory (make docs uses build/docs-src). The notebooks link to the
pages as ../docs/<page>.md, which is right in the repository; staged,
the pages are one level up, so those links are rewritten; a page's
links to data files (.jsonl) become downloads.

Usage: python docs/stage.py DEST
"""

import os
import re
import shutil
import sys


def stage(root: str, dest: str) -> None:
    if os.path.exists(dest):
        shutil.rmtree(dest)
    shutil.copytree(os.path.join(root, "docs"), dest,
                    ignore=shutil.ignore_patterns("stage.py", "__pycache__"))
    os.makedirs(os.path.join(dest, "examples"))
    os.makedirs(os.path.join(dest, "_include"))
    for name in sorted(os.listdir(os.path.join(root, "examples"))):
        if name.endswith(".ipynb"):
            with open(os.path.join(root, "examples", name), encoding="utf-8") as f:
                text = f.read()
            with open(os.path.join(dest, "examples", name), "w", encoding="utf-8") as f:
                f.write(text.replace("](../docs/", "](../"))
    # Links from a page to a data file (the benchmarks' runs) are
    # downloads for Sphinx: myst's path: scheme.
    for name in sorted(os.listdir(dest)):
        if name.endswith(".md"):
            page = os.path.join(dest, name)
            with open(page, encoding="utf-8") as f:
                text = f.read()
            linked = re.sub(r"\]\(([\w.-]+\.(?:jsonl|csv|json))\)", r"](path:\1)", text)
            if linked != text:
                with open(page, "w", encoding="utf-8") as f:
                    f.write(linked)
    for name in ("gbs.h", "gbs.hpp"):
        shutil.copy(os.path.join(root, "include", name), os.path.join(dest, "_include"))


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    stage(os.path.abspath(os.path.join(os.path.dirname(__file__), "..")), sys.argv[1])
