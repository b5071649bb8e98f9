"""gbs.bayes_factor and gbs.compare: the arithmetic, priors, Monte Carlo
errors of the model probabilities, and the table's forms."""

import math

import numpy as np
import pytest

import gbs


def test_bayes_factor_of_pairs_and_results():
    lbf, err = gbs.bayes_factor((-10.0, 0.03), (-12.5, 0.04))
    assert lbf == 2.5 and abs(err - 0.05) < 1e-15
    x = np.random.default_rng(0).normal(size=(3000, 2))
    r = gbs.evidence(lambda v: -0.5 * np.sum(v * v, axis=1), x, vectorize=True, seed=1)
    lbf, err = gbs.bayes_factor(r, (0.0, 0.0))
    assert lbf == r.logz and err == r.logzerr
    with pytest.raises(TypeError, match="a must be a gbs.Result or a pair"):
        gbs.bayes_factor(1.0, (0.0, 0.1))
    with pytest.raises(ValueError, match="finite"):
        gbs.bayes_factor((math.nan, 0.1), (0.0, 0.1))


def test_compare_probabilities_and_errors():
    t = gbs.compare({"a": (-10.0, 0.05), "b": (-11.0, 0.05), "c": (-14.0, 0.1)})
    z = np.array([-10.0, -11.0, -14.0])
    exact = np.exp(z - z.max()) / np.exp(z - z.max()).sum()
    np.testing.assert_allclose(t.prob, exact, rtol=1e-12)
    assert abs(t.prob.sum() - 1) < 1e-12 and t.best == "a"
    np.testing.assert_allclose(t.log_bf, [0.0, -1.0, -4.0])
    np.testing.assert_allclose(t.log_bf_err, [0.0, math.hypot(0.05, 0.05), math.hypot(0.1, 0.05)])
    # Delta method for two models: P_a = 1/(1 + e^-D), sd(P_a) ~ P_a P_b sd(D).
    t2 = gbs.compare({"a": (0.0, 0.1), "b": (-1.0, 0.1)}, n_mc=40000)
    pa = t2.prob[0]
    approx = pa * (1 - pa) * math.hypot(0.1, 0.1)
    assert abs(t2.prob_err[0] - approx) < 0.05 * approx
    assert t2.prob_err[0] == pytest.approx(t2.prob_err[1], rel=1e-9)
    # The seed makes the table reproducible.
    assert (gbs.compare({"a": (0.0, 0.1), "b": (-1.0, 0.1)}, n_mc=40000).prob_err == t2.prob_err).all()


def test_compare_prior():
    res = {"a": (0.0, 0.01), "b": (0.0, 0.01)}
    t = gbs.compare(res, prior={"a": 3, "b": 1})
    np.testing.assert_allclose(t.prob, [0.75, 0.25])
    np.testing.assert_allclose(gbs.compare(res, prior=[1, 3]).prob, [0.25, 0.75])
    assert "prior: a 0.75, b 0.25" in str(t)
    with pytest.raises(ValueError, match="positive"):
        gbs.compare(res, prior=[1, 0])
    with pytest.raises(ValueError, match="2 models"):
        gbs.compare(res, prior=[1, 2, 3])
    with pytest.raises(ValueError, match="each model"):
        gbs.compare(res, prior={"a": 1, "z": 1})
    with pytest.raises(TypeError, match="mapping"):
        gbs.compare([(0.0, 0.1)])


def test_compare_forms():
    t = gbs.compare({"linear": (-20.1, 0.02), "quadratic": (-18.3, 0.03)})
    text = str(t)
    assert "quadratic" in text and "best" in text and "P(model | data)" in text
    assert "<table>" in t._repr_html_() and "gbs.compare" in t._repr_html_()
    assert len(t) == 2 and t.rows()[0]["model"] == "linear"
    pd = pytest.importorskip("pandas")
    df = t.to_pandas()
    assert isinstance(df, pd.DataFrame) and list(df.index) == ["linear", "quadratic"]
    assert df.loc["quadratic", "log_bf"] == 0.0
