"""The built documentation (make docs): the index page and the gbs.evidence
API page, with every parameter of gbs.evidence documented there. Under
`make test` the pages come from `make docs` (GBS_DOCS_HTML); run alone,
the test builds them with Sphinx, warnings as errors."""

import html
import inspect
import os
import re
import subprocess
import sys

import pytest

import gbs
from conftest import INSTALLED, ROOT

pytestmark = pytest.mark.skipif(INSTALLED, reason="the documentation is built from the source tree")


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


def test_notebooks_render_with_their_outputs(html_dir):
    # Rendered from the outputs stored in examples/*.ipynb (never executed
    # by the build): the summary text and the figure.
    for page, phrase in (("emcee_evidence.html", "ln Z ="), ("pymc_evidence.html", "in favour of"),
                         ("stan_evidence.html", "within 3 sigma: True")):
        with open(os.path.join(html_dir, "examples", page), encoding="utf-8") as f:
            raw = f.read()
        assert "<img" in raw and phrase in html.unescape(raw), page
