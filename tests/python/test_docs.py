"""The built documentation (make docs): the index page, the API reference
(every name of gbs.__all__ and gbs.problems, every parameter of
gbs.evidence), the rendering of docstrings and pages, repository paths as
links; and the benchmark tables, which must be what bench/report.py makes
from bench/results. Under `make test` the pages come from `make docs`
(GBS_DOCS_HTML); run alone, the test builds them with Sphinx, warnings as
errors."""

import glob
import html
import inspect
import os
import re
import subprocess
import sys

import pytest

import gbs
from conftest import INSTALLED, ROOT

# Building the documentation takes tens of seconds: make check leaves it to
# make test, which builds it once (make docs) for these tests.
pytestmark = [pytest.mark.skipif(INSTALLED, reason="the documentation is built from the source tree"),
              pytest.mark.slow]


@pytest.fixture(scope="module")
def html_dir(tmp_path_factory):
    given = os.environ.get("GBS_DOCS_HTML")
    if given:
        assert os.path.isfile(os.path.join(given, "index.html")), "make docs did not build " + given
        return given
    pytest.importorskip("sphinx")
    pytest.importorskip("myst_nb")
    src = tmp_path_factory.mktemp("docs") / "src"
    out = tmp_path_factory.mktemp("docs-html")
    sys.path.insert(0, os.path.join(ROOT, "docs"))
    try:
        import stage
    finally:
        sys.path.pop(0)
    stage.stage(ROOT, str(src))
    env = dict(os.environ, GBS_ROOT=ROOT)
    run = subprocess.run([sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q", "-b",
                          "html", "-d", str(out / ".doctrees"), str(src), str(out)],
                         capture_output=True, text=True, env=env)
    assert run.returncode == 0, run.stdout + run.stderr
    return str(out)


def text_of(path):
    with open(path, encoding="utf-8") as f:
        page = f.read()
    return html.unescape(re.sub(r"<[^>]+>", "", page))


def test_index_page(html_dir):
    text = text_of(os.path.join(html_dir, "index.html"))
    assert "Bayesian evidence" in text and "pip install ." in text
    assert "no release has been published yet" in text
    for page in ("api/evidence.html", "api/comparison.html", "api/result.html", "diagnostics.html",
                 "c.html", "examples/emcee_evidence.html", "examples/pymc_evidence.html",
                 "stan.html", "examples/stan_evidence.html"):
        assert os.path.isfile(os.path.join(html_dir, page)), page


def test_evidence_page_documents_every_parameter(html_dir):
    text = text_of(os.path.join(html_dir, "api", "evidence.html"))
    assert "gbs.evidence" in text
    params = [p for p in inspect.signature(gbs.evidence).parameters]
    missing = [p for p in params if not re.search(r"\b%s\b" % re.escape(p), text)]
    assert not missing, "parameters not on the page: %s" % missing
    # The parameters' descriptions, not only their names.
    for phrase in ("Number of proposal draws", "Burn-in draws dropped", "independent proposal sets",
                   "at least 1000, at most n_p"):
        assert phrase in " ".join(text.split()), phrase


def test_diagnostics_thresholds_reach_the_built_docs(html_dir):
    text = " ".join(text_of(os.path.join(html_dir, "api", "result.html")).split())
    for phrase in ("both 1.01 and", "below 100", "more than 5 standard errors",
                   "Warns above 4 standard errors", "A negative k-hat", "error share of the proposal"):
        assert phrase in text, phrase


def test_docstrings_do_not_point_into_the_repository():
    # A pip user has no docs/ directory: docstrings name pages, not paths.
    offenders = []
    for dirpath, _, files in os.walk(os.path.join(ROOT, "python", "gbs")):
        for name in files:
            if name.endswith(".py"):
                with open(os.path.join(dirpath, name), encoding="utf-8") as f:
                    src = f.read()
                for m in re.finditer(r"docs/[\w.-]+\.md", src):
                    offenders.append("%s: %s" % (name, m.group(0)))
    assert not offenders, offenders
    # Nor do the public objects' docstrings name files of the repository
    # (a Go source, a test), which the reader of help() cannot open.
    for qual, obj in public_objects():
        doc = inspect.getdoc(obj) or ""
        for m in re.finditer(r"\b(?:gbs|flow|nuts|capi|include|tests|internal|cmd)/[\w/.-]+|\b\w+\.go\b", doc):
            offenders.append("%s: %s" % (qual, m.group(0)))
    assert not offenders, offenders


def public_objects():
    """(qualified name, object) of every public name of gbs and
    gbs.problems, and of the public methods of their classes."""
    for mod in (gbs, gbs.problems):
        for name in mod.__all__:
            obj = getattr(mod, name)
            qual = "%s.%s" % (mod.__name__, name)
            yield qual, obj
            if inspect.isclass(obj):
                for k, v in vars(obj).items():
                    if k.startswith("_"):
                        continue
                    v = v.fget if isinstance(v, property) else getattr(v, "__func__", v)
                    if callable(v):
                        yield "%s.%s" % (qual, k), v


# Numpydoc sections whose lines at the section's own indentation are
# entries ("name : type", or an exception or warning class).
ENTRY_SECTIONS = {"Parameters", "Other Parameters", "Raises", "Warns", "Attributes"}


def test_docstring_sections_hold_only_entries():
    """Prose at the indentation of a Parameters (Raises, Warns,
    Attributes) entry is read by napoleon as more entries: the paragraph
    of BayesFactor.interpret once rendered as parameters named "B",
    "tests" and "known". Prose belongs in the entry (indented) or in Notes."""
    offenders = []
    for qual, obj in public_objects():
        lines = (inspect.getdoc(obj) or "").split("\n")
        section = None
        for i, line in enumerate(lines):
            if i + 1 < len(lines) and line.strip() and re.fullmatch(r"-{3,}", lines[i + 1].strip()):
                section = line.strip()
                continue
            if re.fullmatch(r"-{3,}", line.strip()) or section not in ENTRY_SECTIONS:
                continue
            if line and not line[0].isspace() and " : " not in line:
                if not re.fullmatch(r"[\w.*]+(, [\w.*]+)*", line.strip()):
                    offenders.append("%s, %s: %r" % (qual, section, line))
    assert not offenders, offenders


def api_ids(html_dir):
    ids = set()
    for page in glob.glob(os.path.join(html_dir, "api", "*.html")):
        with open(page, encoding="utf-8") as f:
            ids.update(re.findall(r'id="([^"]+)"', f.read()))
    return ids


def test_api_reference_is_complete(html_dir):
    """Every name of gbs.__all__ and every name of gbs.problems has an
    entry in the API reference."""
    ids = api_ids(html_dir)
    missing = [n for n in gbs.__all__ if "gbs." + n not in ids and "module-gbs." + n not in ids]
    missing += ["problems." + n for n in gbs.problems.__all__ if "gbs.problems." + n not in ids]
    assert not missing, "not in the API reference: %s" % missing
    # The public functions of gbs.problems, whether or not __all__ names them.
    funcs = [n for n, f in inspect.getmembers(gbs.problems, inspect.isfunction)
             if not n.startswith("_") and f.__module__ == gbs.problems.__name__]
    assert funcs and not [n for n in funcs if "gbs.problems." + n not in ids], funcs


def test_every_check_has_a_diagnostics_entry(html_dir):
    """The warnings lookup table lists every check of the library, each
    linked to its entry."""
    with open(os.path.join(html_dir, "diagnostics.html"), encoding="utf-8") as f:
        page = f.read()
    ids = set(re.findall(r'id="check-([\w-]+)"', page))
    links = set(re.findall(r'href="#check-([\w-]+)"', page))
    want = set(gbs.checks())
    assert want and want <= ids and want <= links, (want - ids, want - links)


def test_rendering(html_dir):
    def page(name):
        return " ".join(text_of(os.path.join(html_dir, name)).split())
    # Markdown's ** would make 2**64 a bold "64" after a "2".
    assert "0 <= seed < 2**64" in page("python.html")
    # The module attribute, not str's docstring.
    errors = page("api/errors.html")
    assert "gbs.library_path" in errors and "libgbs.so this process loaded" in errors
    assert "Create a new string object" not in errors
    # Numpydoc sections rendered, not shown as reST source.
    for name in glob.glob(os.path.join(html_dir, "api", "*.html")):
        text = page(os.path.relpath(name, html_dir))
        raw = re.findall(r":(?:class|func|meth|attr|mod):`|``\w|^-{3,}$", text)
        assert not raw, (name, raw)
    comparison = page("api/comparison.html")
    assert "tests (not)" not in comparison and "These scales are conventions" in comparison


# A repository path as text: a top-level directory of the tree and more.
REPO_PATH = re.compile(r"(?<![\w/.#-])(?:gbs|flow|nuts|ensemble|capi|include|internal|cmd|bench|tests|"
                       r"python|problems|examples|docs)/[\w./-]*\w")


def test_repository_paths_are_links(html_dir):
    """A pip user cannot open gbs/coverage.go or docs/benchmarks.md: in
    the pages' text such paths are links (to the page, or to the file on
    the project's repository). Code blocks and the C header are left as
    they are."""
    offenders = []
    for name in glob.glob(os.path.join(html_dir, "**", "*.html"), recursive=True):
        rel = os.path.relpath(name, html_dir)
        if rel.startswith(("_", "genindex", "search", "py-modindex")) or rel == "c.html":
            continue
        with open(name, encoding="utf-8") as f:
            page = f.read()
        if '<div class="body" role="main">' not in page:
            continue
        body = page.split('<div class="body" role="main">')[1].split('<div class="sphinxsidebar"')[0]
        body = re.sub(r"<pre.*?</pre>", "", body, flags=re.S)
        body = re.sub(r"<a [^>]*>.*?</a>", "", body, flags=re.S)
        # Inline code with spaces is a command or a symbol (`go run
        # ./cmd/gbs-bench -o bench/results/...`), shown as typed.
        body = re.sub(r"<code[^>]*>(?:(?!</code>).)*?(?:\s|&#160;)(?:(?!</code>).)*</code>", "", body,
                      flags=re.S)
        text = html.unescape(re.sub(r"<[^>]+>", "", body))
        for m in REPO_PATH.finditer(text):
            path = m.group(0)
            # A path of the tree, or one that names a file (a stale path
            # too); not prose such as "flow/Gaussian".
            if os.path.exists(os.path.join(ROOT, path)) or re.search(r"\.(go|py|md|c|h|hpp|sh|mod|json|jsonl)$", path):
                offenders.append("%s: %s" % (rel, path))
    assert not offenders, offenders


def test_benchmark_tables_are_the_report_of_bench_results():
    """The README's "How good is it", the benchmark pages and the Python
    guide's performance table are what bench/report.py makes from the
    files of bench/results, and bench/results holds only files they use."""
    run = subprocess.run([sys.executable, os.path.join(ROOT, "bench", "report.py"), "--check"],
                         capture_output=True, text=True)
    assert run.returncode == 0, run.stdout + run.stderr
    with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as f:
        readme = f.read()
    assert "<!-- bench-report paper-gbs:" in readme


def test_notebooks_render_with_their_outputs(html_dir):
    # Rendered from the outputs stored in examples/*.ipynb (never executed
    # by the build): the summary text and the figure.
    for page, phrase in (("emcee_evidence.html", "ln Z ="), ("pymc_evidence.html", "in favour of"),
                         ("stan_evidence.html", "within 3 sigma: True")):
        with open(os.path.join(html_dir, "examples", page), encoding="utf-8") as f:
            raw = f.read()
        assert "<img" in raw and phrase in html.unescape(raw), page
