"""gbs.Result: text, Jupyter repr, pickling, the rebuilt proposal, plot."""

import json
import math
import pickle

import numpy as np
import pytest
from targets import C, gauss_vec

import gbs

X = np.random.default_rng(1).normal(size=(4, 1000, 2))


@pytest.fixture(scope="module")
def res():
    return gbs.evidence(gauss_vec, X, vectorize=True, seed=1)


def test_fields_and_text(res):
    assert abs(res.logz - C) < 4 * res.logzerr
    assert res.logzerr == pytest.approx(math.sqrt(res.re2_p + res.re2_q))
    assert res.tau >= 1 and res.method == "bridge" and res.seed == 1
    assert (res.n_chains, res.n_draws, res.dim) == (4, 1000, 2)
    assert res.n_p == 4000  # every chain, in one of the two cross-fitting passes
    s = res.summary()
    assert "ln Z = %.4f +/- %.4f" % (res.logz, res.logzerr) in s and "4 chains x 1000 draws" in s
    assert str(res) == s and "Result(logz=" in repr(res)
    html = res._repr_html_()
    assert "ln Z" in html and "&plusmn;" in html and "<table>" in html
    d = res.as_dict()
    assert json.loads(json.dumps(d))["logz"] == res.logz
    assert res.z == pytest.approx(math.exp(res.logz))


def ar1_chains(rho, shape, seed):
    """Chains of an AR(1) process whose stationary law is N(0, I): draws of
    the Gaussian target, autocorrelated with tau = (1 + rho)/(1 - rho)."""
    rng = np.random.default_rng(seed)
    x = np.empty(shape)
    x[:, 0] = rng.normal(size=(shape[0], shape[2]))
    for t in range(1, shape[1]):
        x[:, t] = rho * x[:, t - 1] + math.sqrt(1 - rho ** 2) * rng.normal(size=(shape[0], shape[2]))
    return x


def test_warnings_are_shown():
    # 4 chains of 60 draws with tau near 39: far fewer than 50 tau.
    with pytest.warns(gbs.GbsWarning) as rec:
        short = gbs.evidence(gauss_vec, ar1_chains(0.95, (4, 60, 2), 1), vectorize=True, seed=1)
    assert any(w.category is gbs.SamplerWarning and w.message.check == "short-chains" for w in rec)
    assert [f.kind for f in short.found("short-chains")] == ["draws"]
    assert "warning [short-chains]: " in short.summary() and "Warnings" in short._repr_html_()


def test_pickle_drops_the_samples(res):
    again = pickle.loads(pickle.dumps(res))
    assert (again.logz, again.logzerr, again.warnings) == (res.logz, res.logzerr, res.warnings)
    assert np.array_equal(again.trace, res.trace)
    with pytest.raises(ValueError, match="holds no samples"):
        again.proposal_draws()


@pytest.mark.parametrize("method", ["bridge", "hm", "is", "warp3"])
def test_proposal_draws_come_from_the_library(method):
    # The library refits the estimator's q (gbs.FittedProposal, held to the
    # estimate by gbs/plan_test.go) and draws from it: reproducible for a
    # seed, close to the posterior N(0, I).
    x = np.random.default_rng(2).normal(size=(4000, 3))
    res = gbs.evidence(gauss_vec, x, vectorize=True, method=method, seed=7)
    q = res.proposal_draws(4000)
    assert q.shape == (4000, 3) and np.all(np.isfinite(q))
    assert np.allclose(q.mean(axis=0), 0, atol=0.1)
    assert np.allclose(np.cov(q.T), np.eye(3), atol=0.15)
    assert np.array_equal(q, res.proposal_draws(4000))
    assert not np.array_equal(q, res.proposal_draws(4000, seed=8))
    with pytest.raises(ValueError, match="n must be"):
        res.proposal_draws(0)


def test_diagnostics_summary_is_the_librarys(res):
    from gbs.result import Diagnostics
    d = res.diagnostics
    text = d.summary()
    assert text.startswith("R-hat ") and "Pareto k-hat p/q" in text and text in res.summary()
    # The struct handed to the library holds the same values.
    back = Diagnostics.from_c(d.to_c()).as_dict()
    for k in Diagnostics._BASE:
        v = d[k]
        assert back[k] == v or (v != v and back[k] != back[k]), k
    assert Diagnostics().summary() == ""


def test_plot_png(res, tmp_path):
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig = res.plot(exact=C)
    path = tmp_path / "gbs.png"
    fig.savefig(path, dpi=60)
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and path.stat().st_size > 10000
    # corner (3 panels for d = 2) + trace
    assert len(fig.axes) == 4
    plt.close(fig)
    fig = pickle.loads(pickle.dumps(res)).plot()  # trace only
    assert len(fig.axes) == 1
    plt.close(fig)
    with pytest.raises(ValueError, match="dims"):
        res.plot(dims=[5])
    w3 = gbs.evidence(gauss_vec, X, vectorize=True, seed=1, method="warp3")
    fig = w3.plot(dims=[1], labels=["y"])
    fig.savefig(tmp_path / "w3.png", dpi=40)
    plt.close(fig)
