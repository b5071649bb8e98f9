"""Documented defaults agree with the code: each ``name : type, default X``
line of a public docstring against the signature, and the defaults the
library applies (documented in gbs.evidence and gbs.h) against the Go
constants that define them."""

import ast
import inspect
import os
import re

import pytest

import gbs
from conftest import INSTALLED, ROOT

PUBLIC = [gbs.evidence, gbs.run, gbs.compare, gbs.sample, gbs.sample_ensemble, gbs.Flow.fit,
          gbs.Result.plot, gbs.Result.proposal_draws]


def documented_defaults(fn):
    """{parameter: default} from the numpydoc lines ``a, b : type, default X``."""
    out = {}
    for m in re.finditer(r"^([\w, ]+) : [^\n]*?,? default ([^\n]+?)\s*$", inspect.getdoc(fn) or "",
                         re.M):
        raw = m.group(2).rstrip(".")
        try:
            value = ast.literal_eval(raw)
        except (ValueError, SyntaxError):
            continue  # prose ("default the adaptive rule")
        for name in m.group(1).split(","):
            out[name.strip()] = value
    return out


@pytest.mark.parametrize("fn", PUBLIC, ids=lambda f: f.__qualname__)
def test_docstring_defaults_match_the_signature(fn):
    doc = documented_defaults(fn)
    sig = inspect.signature(fn).parameters
    checked = 0
    for name, value in doc.items():
        assert name in sig, "%s documents %s, which it does not take" % (fn.__qualname__, name)
        assert sig[name].default == value, "%s: %s documented as default %r, the code says %r" % (
            fn.__qualname__, name, value, sig[name].default)
        checked += 1
    if fn is gbs.evidence:
        assert checked >= 6, doc


def go_constant(path, name):
    with open(os.path.join(ROOT, path), encoding="utf-8") as f:
        m = re.search(r"\b%s\s*=\s*([0-9.e+-]+)" % name, f.read())
    assert m, "%s not found in %s" % (name, path)
    return float(m.group(1))


@pytest.mark.skipif(INSTALLED, reason="reads the Go sources")
def test_library_defaults_in_docstrings_and_header_match_go():
    batch = int(go_constant("gbs/settings.go", "defaultBatchSize"))
    ferr = go_constant("gbs/settings.go", "defaultFErr")
    feva = go_constant("gbs/settings.go", "defaultFEva")
    min_nq = int(go_constant("gbs/evidence.go", "minStartNQ"))
    doc = " ".join(inspect.getdoc(gbs.evidence).split())
    assert "default %d" % batch in doc
    assert "default %g each" % ferr in doc and ferr == feva
    assert "at least %d, at most n_p" % min_nq in doc
    with open(os.path.join(ROOT, "include", "gbs.h"), encoding="utf-8") as f:
        header = " ".join(f.read().split())
    assert "points per callback invocation; default %d" % batch in header
    assert header.count("default %g" % ferr) >= 2


def test_defaults_the_python_layer_applies():
    # The checked settings' defaults are those the docstring states.
    from gbs._options import EvidenceSettings, check_settings
    s = check_settings()
    assert s == EvidenceSettings() and s.method == "bridge" and s.thin == 1 and s.discard == 0
    assert s.repetitions == 1 and s.cross_fit is True and s.name is None


@pytest.mark.skipif(INSTALLED, reason="reads the Go sources")
def test_run_documents_the_pipelines_targets():
    # gbs.run leaves them to the library (target_accept=None); its
    # docstring states the values the Go pipeline defines.
    first = go_constant("pipeline/nuts.go", "TargetAccept")
    retry = go_constant("pipeline/nuts.go", "RetryTargetAccept")
    doc = " ".join(inspect.getdoc(gbs.run).split())
    assert "(default %g, and %g for the rerun after divergences)" % (first, retry) in doc
    assert "acceptance target of %g" % first in doc and "at an acceptance target of %g" % retry in doc
    assert inspect.signature(gbs.run).parameters["target_accept"].default is None
