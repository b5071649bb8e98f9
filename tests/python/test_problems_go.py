"""gbs.problems (numpy) against the Go package problems, point by point.

The reference problems are defined twice: in Go (problems/, which the
library's tests and benchmarks use) and in numpy (gbs.problems, which
needs no compiled library, so that benchmark scripts load it alone). This
test holds the Python copy to the Go one: at random points inside and
outside each problem's prior box it compares log p and its gradient, and
it compares the exact ln Z, the prior box and whether an exact sampler
exists. The Go side is problems/internal/reference (``go run``), fed the
same points.

The random matrices are drawn by different generators in the two
languages (numpy's default_rng, Go's PCG), so the banana and the
correlated Gaussian are built here from the Go package's rotation, mean
and covariance, which the reference command prints.

Tolerances: log p is a sum of d terms computed in another order (numpy's
pairwise sums, Go's loop), so the two agree to a few ulps of the terms'
magnitude: 1e-11 relative to the largest term (the banana's terms reach
1e6 far from its ridge). ln Z by quadrature (funnel, ring, the 2-d banana
pair) is computed with other panels in the two languages: 1e-9.
"""

import json
import os
import shutil
import subprocess

import numpy as np
import pytest

from gbs import problems

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

pytestmark = pytest.mark.skipif(shutil.which("go") is None, reason="no Go toolchain")

NAMES = ["funnel", "banana", "cauchy", "ring", "funnel-3", "banana-6", "banana-4-identity", "cauchy-5",
         "ring-7", "gaussian-4", "correlated-gaussian-5", "mixture-3"]


def points(p, rng, n=40):
    """n points: most inside the box (drawn uniformly, or normal for an
    unbounded problem), a few outside, and for the funnel points near its
    neck where the terms are large."""
    d = p.dim
    if p.lower is None:
        return 2 * rng.standard_normal((n, d))
    lo, hi = np.asarray(p.lower), np.asarray(p.upper)
    x = lo + (hi - lo) * rng.uniform(0.02, 0.98, size=(n, d))
    # Near the typical set: the box's centre, shrunk (the banana's and the
    # ring's log p are huge at random box points).
    x[: n // 2] = (lo + hi) / 2 + 0.05 * (hi - lo) * rng.standard_normal((n // 2, d))
    x[-3] = hi + 1.0                         # outside every coordinate
    x[-2, 0] = lo[0] - 1e-9                  # just outside one
    return x


@pytest.fixture(scope="module")
def go_reference(tmp_path_factory):
    rng = np.random.default_rng(20240601)
    py, requests = {}, []
    for name in NAMES:
        p = problems.by_name(name)
        x = np.clip(points(p, rng), -1e300, 1e300)
        py[name] = (p, x)
        requests.append(json.dumps({"name": name, "x": x.tolist()}))
    out = subprocess.run(["go", "run", "./problems/internal/reference"], cwd=ROOT, check=True,
                         input="\n".join(requests) + "\n", capture_output=True, text=True).stdout
    go = [json.loads(line) for line in out.splitlines()]
    assert len(go) == len(NAMES)
    return {name: (py[name][0], py[name][1], g) for name, g in zip(NAMES, go)}


def same_density(name, p, g):
    """The Python problem with the Go package's random parameters."""
    d = p.dim
    if "rotation" in g:
        return problems.banana(d, rotation=np.array(g["rotation"]).reshape(d, d))
    if "mean" in g:
        return problems.gaussian(d, mean=np.array(g["mean"]), cov=np.array(g["cov"]).reshape(d, d))
    return p


@pytest.mark.parametrize("name", NAMES)
def test_exact_logz_box_and_sampler_agree(go_reference, name):
    p, _, g = go_reference[name]
    assert p.dim == g["dim"]
    assert p.logz == pytest.approx(g["logz"], rel=1e-9, abs=1e-9), "exact ln Z of %s" % name
    if g["lower"] is None:
        assert p.lower is None
    else:
        assert np.array_equal(p.lower, g["lower"]) and np.array_equal(p.upper, g["upper"])
    assert p.has_sampler == g["has_sampler"]


@pytest.mark.parametrize("name", NAMES)
def test_log_density_and_gradient_agree(go_reference, name):
    p, x, g = go_reference[name]
    q = same_density(name, p, g)
    assert q.logz == pytest.approx(g["logz"], rel=1e-9, abs=1e-9)
    lp, grad = q.log_prob_and_grad(x)
    want, want_grad = np.array(g["logp"], dtype=float), np.array(g["grad"], dtype=float)
    assert np.array_equal(np.isneginf(lp), np.isneginf(want)), "outside the box in one language only"
    inside = np.isfinite(want)
    assert inside.sum() >= len(x) // 2
    scale = 1 + np.abs(want[inside])
    assert np.all(np.abs(lp[inside] - want[inside]) <= 1e-11 * scale), (
        "%s: log p differs by up to %.3g (relative)" % (name, np.max(np.abs(lp[inside] - want[inside]) / scale)))
    gscale = 1 + np.max(np.abs(want_grad[inside]), axis=1, keepdims=True)
    assert np.all(np.abs(grad[inside] - want_grad[inside]) <= 1e-10 * gscale), "%s: gradient" % name
    assert np.all(grad[~inside] == 0) and np.all(want_grad[~inside] == 0)
    assert np.array_equal(q.log_prob(x), lp)
