"""Stage the documentation's sources for Sphinx: docs/ as it is, the example
notebooks under examples/ and the C headers under _include/, into one
directory (make docs uses build/docs-src).

Two rewrites make the pages work for a reader who has no checkout (a pip
user): the notebooks link to the pages as ../docs/<page>.md, which is right
in the repository; staged, the pages are one level up, so those links are
rewritten. And a repository path in a page's text (`gbs/coverage.go`,
bench/results/, docs/diagnostics.md) becomes a link: to the page itself
for docs/<page>.md, to the file on the project's repository (the Source URL
of pyproject.toml) for the rest. Code blocks are left as they are.

It also writes _generated/checks.md, the warnings lookup table that
docs/diagnostics.md includes, from the check table the library itself
holds (gbs.checks(), through the C ABI): one source of truth for each
check's ID, meaning and action. Each row links to the check's section,
whose label (check-<id>) the page must define: Sphinx fails on a check
without one.

Usage: python docs/stage.py DEST
"""

import os
import re
import shutil
import sys

try:
    import tomllib
except ImportError:  # Python < 3.11: no repository links
    tomllib = None

# Top-level entries of the repository whose paths are linked.
LINKED_ROOTS = ("gbs", "flow", "nuts", "ensemble", "capi", "include", "internal", "cmd", "bench",
                "tests", "python", "problems", "examples", "docs", "cmake")
_PATH = r"(?:%s)/[\w./-]*[\w/]" % "|".join(LINKED_ROOTS)
# A path in a code span, or in plain text (not inside a word, a URL or a
# link's target or text).
CODE_SPAN = re.compile(r"`(%s)((?::|\s)[^`]*)?`" % _PATH)
PLAIN = re.compile(r"(?<![\w/`\[.#-])(%s)(?![\w`\]])" % _PATH)
LINK = re.compile(r"\[[^\]]*\]\([^)]*\)")


def repository_url(root):
    """The project's repository (pyproject.toml, [project.urls] Source),
    or None."""
    if tomllib is None:
        return None
    try:
        with open(os.path.join(root, "pyproject.toml"), "rb") as f:
            urls = tomllib.load(f).get("project", {}).get("urls", {})
    except OSError:
        return None
    url = urls.get("Source") or urls.get("Homepage")
    return url.rstrip("/") if url else None


def _target(root, repo, path):
    """The link for a repository path, or None when it names nothing in
    the tree."""
    clean = path.rstrip("/.")
    full = os.path.join(root, clean)
    if clean.startswith("docs/") and clean.endswith(".md") and os.path.isfile(full):
        return os.path.basename(clean)
    if repo is None or not os.path.exists(full):
        return None
    return "%s/%s/main/%s" % (repo, "tree" if os.path.isdir(full) else "blob", clean)


def link_paths(text, root, repo):
    """text (a page's Markdown) with its repository paths as links."""
    out, fence, indented, prev_blank = [], None, False, True
    for line in text.split("\n"):
        stripped = line.lstrip()
        if fence:
            out.append(line)
            if stripped.startswith(fence):
                fence = None
            prev_blank = False
            continue
        m = re.match(r"(`{3,}|~{3,})", stripped)
        if m:
            fence = m.group(1)
            out.append(line)
            continue
        indented = bool(line.strip()) and line.startswith("    ") and (prev_blank or indented)
        prev_blank = not line.strip()
        if indented or line.startswith("<!--"):
            out.append(line)
            continue
        out.append(_link_line(line, root, repo))
    return "\n".join(out)


def _link_line(line, root, repo):
    # Leave existing links alone: split the line around them.
    parts, last = [], 0
    for m in LINK.finditer(line):
        parts.append(_link_text(line[last:m.start()], root, repo))
        parts.append(m.group(0))
        last = m.end()
    parts.append(_link_text(line[last:], root, repo))
    return "".join(parts)


def _link_text(text, root, repo):
    def code(m):
        # A path alone, or followed by more code (a symbol, arguments):
        # the path becomes the link, the rest stays code.
        t = _target(root, repo, m.group(1))
        if t is None:
            return m.group(0)
        rest = "`%s`" % m.group(2) if m.group(2) else ""
        if not t.startswith("http"):
            return ("[](%s)" % t) + rest
        return "[`%s`](%s)%s" % (m.group(1), t, rest)

    def plain(m):
        t = _target(root, repo, m.group(1))
        if t is None:
            return m.group(0)
        return "[](%s)" % t if not t.startswith("http") else "[%s](%s)" % (m.group(1), t)

    # Code spans first; then plain paths outside the code spans.
    pieces = re.split(r"(`[^`]*`)", text)
    return "".join(CODE_SPAN.sub(code, p) if p.startswith("`") else PLAIN.sub(plain, p) for p in pieces)


def checks_table(root):
    """The warnings lookup table (Markdown) from the library's checks."""
    sys.path.insert(0, os.path.join(root, "python"))
    os.environ.setdefault("GBS_LIBRARY", os.path.join(root, "build", "lib", "libgbs.so"))
    import gbs

    def cell(text):
        return text.replace("|", "\\|").replace("\n", " ")

    rows = ["| ID (code) | kind | found | what it means | what to do |",
            "|---|---|---|---|---|"]
    for info in sorted(gbs.checks().values(), key=lambda c: c.code):
        rows.append("| {ref}`%s <check-%s>` (%d) | %s | %s | %s | %s |" % (
            info.id, info.id, info.code, info.kind, cell(info.title), cell(info.meaning),
            cell(info.action)))
    return "\n".join(rows) + "\n"


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
    repo = repository_url(root)
    for name in sorted(os.listdir(dest)):
        if name.endswith(".md"):
            page = os.path.join(dest, name)
            with open(page, encoding="utf-8") as f:
                text = f.read()
            linked = link_paths(text, root, repo)
            if linked != text:
                with open(page, "w", encoding="utf-8") as f:
                    f.write(linked)
    os.makedirs(os.path.join(dest, "_generated"))
    with open(os.path.join(dest, "_generated", "checks.md"), "w", encoding="utf-8") as f:
        f.write(checks_table(root))
    for name in ("gbs.h", "gbs.hpp"):
        shutil.copy(os.path.join(root, "include", name), os.path.join(dest, "_include"))


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    stage(os.path.abspath(os.path.join(os.path.dirname(__file__), "..")), sys.argv[1])
