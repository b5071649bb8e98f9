"""gbs.bayes_factor and gbs.compare: the arithmetic, priors, Monte Carlo
errors of the model probabilities, and the table's forms."""

import math

import numpy as np
import pytest

import gbs


def test_bayes_factor_of_pairs_and_results():
    # The pair (ln B, error) it returned before BayesFactor still unpacks.
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
    with pytest.raises(TypeError, match="mapping of model names to gbs.Result, or a sequence"):
        gbs.compare((0.0, 0.1) for _ in range(2))
    with pytest.raises(ValueError, match="empty"):
        gbs.compare([])


def test_compare_forms():
    t = gbs.compare({"linear": (-20.1, 0.02), "quadratic": (-18.3, 0.03)})
    text = str(t)
    assert "quadratic" in text and "best" in text and "P(model | data)" in text
    assert "<table>" in t._repr_html_() and "gbs.compare" in t._repr_html_()
    # Ranked by ln Z, the best first, as arviz.compare ranks.
    assert len(t) == 2 and t.rows()[0]["model"] == "quadratic" and t.rows()[1]["rank"] == 1
    pd = pytest.importorskip("pandas")
    df = t.to_dataframe()
    assert isinstance(df, pd.DataFrame) and list(df.index) == ["quadratic", "linear"]
    assert df.loc["quadratic", "log_bf"] == 0.0 and df.loc["linear", "rank"] == 1
    assert list(t.to_pandas().index) == list(df.index)


def test_bayes_factor_object():
    bf = gbs.bayes_factor((-10.0, 0.03), (-12.5, 0.04))
    assert isinstance(bf, gbs.BayesFactor) and isinstance(bf, tuple)
    assert bf.log == 2.5 and bf[0] == 2.5 and bf[1] == bf.log_err
    assert float(bf) == pytest.approx(math.exp(2.5)) == bf.value
    assert bf.value_err == pytest.approx(bf.value * bf.log_err)
    assert bf.favours == "a" and bf.against == "b" and bf.resolved
    # Kass & Raftery by 2 ln B = 5: positive; Jeffreys by B = 12.2: strong.
    assert bf.strength == "positive" and bf.interpret("jeffreys") == "strong"
    text = str(bf)
    assert "in favour of a over b" in text and "positive" in text and "12.18" in text
    # Against: the other model is favoured; the scale is by |ln B|.
    rev = gbs.bayes_factor((-12.5, 0.04), (-10.0, 0.03))
    assert rev.favours == "b" and rev.strength == "positive" and rev.value < 1
    # Each step of the scales.
    words = [gbs.BayesFactor(x / 2, 0.01).strength for x in (1.0, 3.0, 7.0, 11.0)]
    assert words == ["not worth more than a bare mention", "positive", "strong", "very strong"]
    jeff = [gbs.BayesFactor(math.log(b), 0.01).interpret("jeffreys") for b in (2, 5, 20, 50, 200)]
    assert jeff == ["barely worth mentioning", "substantial", "strong", "very strong", "decisive"]
    with pytest.raises(ValueError, match="scale"):
        bf.interpret("bic")
    # An unresolved sign says so instead of naming a winner.
    weak = gbs.bayes_factor((0.0, 0.3), (-0.1, 0.3))
    assert not weak.resolved and "not resolved" in str(weak)
    # A huge factor overflows float() to inf, and prints as exp(...).
    big = gbs.BayesFactor(1000.0, 0.1)
    assert float(big) == math.inf and "exp(1000)" in str(big)
    # Names come from the results.
    x = np.random.default_rng(0).normal(size=(3000, 2))
    r = gbs.evidence(lambda v: -0.5 * np.sum(v * v, axis=1), x, vectorize=True, seed=1, name="A")
    assert r.name == "A" and gbs.bayes_factor(r, (0.0, 0.0)).names == ("A", "b")
    import pickle
    assert pickle.loads(pickle.dumps(bf)).names == bf.names


def test_compare_sequence_ranked_with_names():
    x = np.random.default_rng(0).normal(size=(3000, 2))
    f = lambda v: -0.5 * np.sum(v * v, axis=1)  # noqa: E731
    wide = gbs.evidence(f, x, vectorize=True, seed=1, name="wide")
    narrow = gbs.evidence(lambda v: f(v) - 1.0, x, vectorize=True, seed=1, name="narrow")
    t = gbs.compare([narrow, wide])
    assert t.names == ["wide", "narrow"] and t.best == "wide"
    np.testing.assert_array_equal(t.rank, [0, 1])
    assert t.dlogz[1] == pytest.approx(1.0, abs=1e-9) and t.log_bf[1] == -t.dlogz[1]
    assert (t.weight == t.prob).all() and t.prob[0] > t.prob[1]
    assert t.bayes_factor("wide", "narrow").log == pytest.approx(1.0, abs=1e-9)
    assert t.bayes_factor("narrow").favours == "wide"
    # Unnamed items get model_i; duplicate names are an error.
    assert gbs.compare([(0.0, 0.1), (1.0, 0.1)]).names == ["model_1", "model_0"]
    with pytest.raises(ValueError, match="named 'wide'"):
        gbs.compare([wide, wide])
    with pytest.raises(KeyError, match="no model 'z'"):
        t.bayes_factor("z")
    # The prior by name follows the names, whatever the ranking.
    tp = gbs.compare([narrow, wide], prior={"narrow": 0.9, "wide": 0.1})
    assert tp.prior[tp.names.index("narrow")] == pytest.approx(0.9)


def _normal_logp(v):
    return -0.5 * np.sum(v * v, axis=1)


def test_compare_and_bayes_factor_show_warnings():
    """A model whose result carries warnings is ranked with its warning
    count beside it, as arviz.compare's warning column, and a Bayes factor
    with such a result says so."""
    rng = np.random.default_rng(3)
    x = rng.standard_normal((4, 1000, 2))
    clean = gbs.evidence(_normal_logp, x, vectorize=True, seed=4, name="clean")
    y = x.copy()
    y[2:] += 2.0  # two chains elsewhere: R-hat far above 1
    with pytest.warns(gbs.GbsWarning):
        bad = gbs.evidence(_normal_logp, y, vectorize=True, seed=4, name="unmixed")
    assert clean.warnings == [] and bad.warnings
    t = gbs.compare([clean, bad, (bad.logz - 5.0, 0.1)])
    counts = dict(zip(t.names, t.n_warnings))
    assert counts == {"clean": 0, "unmixed": len(bad.warnings), "model_2": 0}
    assert t.rows()[t.names.index("unmixed")]["warnings"] == len(bad.warnings)
    text = str(t)
    assert "warnings" in text.splitlines()[0]
    assert "unmixed (%d)" % len(bad.warnings) in text.splitlines()[-1]
    assert "clean (" not in text
    assert "<th>warnings</th>" in t._repr_html_() and "unmixed (" in t._repr_html_()
    # No warnings, no note.
    quiet = gbs.compare([clean, (0.0, 0.1)])
    assert list(quiet.n_warnings) == [0, 0] and "result.warnings" not in str(quiet)
    # The Bayes factor carries the counts and says which result has warnings.
    bf = gbs.bayes_factor(clean, bad)
    assert bf.n_warnings == (0, len(bad.warnings))
    assert "unmixed's result carries %d warning" % len(bad.warnings) in str(bf)
    assert "clean's result" not in str(bf)
    assert t.bayes_factor("unmixed", "clean").n_warnings == (len(bad.warnings), 0)
    assert "carries" not in str(gbs.bayes_factor(clean, (0.0, 0.1)))
    import pickle
    assert pickle.loads(pickle.dumps(bf)).n_warnings == bf.n_warnings
    pd = pytest.importorskip("pandas")
    df = t.to_dataframe()
    assert df.loc["unmixed", "warnings"] == len(bad.warnings) and df.loc["clean", "warnings"] == 0


def test_error_measures():
    r = gbs.Result(-3.0, 0.02, 100, 100, 100, 1.0, 3e-4, 1e-4, "bridge", [], [])
    em = gbs.error_measures(r)
    assert em.re2 == pytest.approx(4e-4) and em.cv == pytest.approx(0.02)
    assert em.percentage == pytest.approx(2.0) and "2%" in str(em)
    assert math.isnan(em.repetitions_sd) and r.error_measures().as_dict()["cv"] == em.cv
    with pytest.raises(TypeError, match="gbs.Result"):
        gbs.error_measures((0.0, 0.1))


def test_repetitions_spread_and_seeds():
    rng = np.random.default_rng(3)
    x = rng.normal(size=(2, 1500, 3))
    calls = []

    def f(v):
        calls.append(len(v))
        return -0.5 * np.sum(v * v, axis=1)
    exact = 1.5 * math.log(2 * math.pi)
    # Without the coverage check the library's calls are n_q + the spot-check.
    kw = dict(vectorize=True, n_q=2000, coverage_check=False)
    calls.clear()
    r = gbs.evidence(f, x, seed=7, repetitions=4, **kw)
    assert sum(calls) == r.ncall and r.repetitions.shape == (4,)
    assert r.repetitions.dtype.names == ("seed", "logz", "logzerr")
    # The first repetition is the estimate the seed gives alone.
    alone = gbs.evidence(f, x, seed=7, **kw)
    assert r.logz == alone.logz and r.repetitions["logz"][0] == r.logz and r.repetitions["seed"][0] == 7
    assert len(set(r.repetitions["seed"])) == 4 and len(set(r.repetitions["logz"])) == 4
    seed, logz, logzerr = r.repetitions[0]
    assert (seed, logz, logzerr) == (7, r.logz, r.logzerr)
    # log p at the draws is evaluated once (3000), then 4 x (n_q + spot-check).
    assert r.ncall == 3000 + 4 * (2000 + 32)
    em = r.error_measures()
    # The spread is the proposal's part of the error: of the size of
    # sqrt(re2_q), and each repetition within 4 of its errors of exact.
    assert 0 < em.repetitions_sd < 5 * math.sqrt(r.re2_q) + 1e-3
    assert np.all(np.abs(r.repetitions["logz"] - exact) < 4 * r.repetitions["logzerr"])
    assert em.repetitions_min <= r.logz <= em.repetitions_max and "repetitions" in str(em)
    # Reproducible for a seed.
    again = gbs.evidence(f, x, seed=7, repetitions=4, **kw)
    np.testing.assert_array_equal(again.repetitions, r.repetitions)
    # A stored seed gives its repetition's ln Z again, bit for bit: the
    # seeds are kept as 64-bit integers (these are above 2^53, where a
    # float64 would round them to another seed).
    assert all(int(s) > 2 ** 53 for s in r.repetitions["seed"][1:])
    for i in (1, 3):
        seed = int(r.repetitions["seed"][i])
        rerun = gbs.evidence(f, x, seed=seed, **kw)
        assert rerun.seed == seed
        assert rerun.logz == r.repetitions["logz"][i] and rerun.logzerr == r.repetitions["logzerr"][i]
    assert gbs.evidence(f, x, seed=r.repetitions["seed"][2], **kw).logz == r.repetitions["logz"][2]
    rows = r.as_dict()["repetitions"]
    assert [row[0] for row in rows] == [int(s) for s in r.repetitions["seed"]]
    assert all(type(row[0]) is int for row in rows)
    with pytest.raises(TypeError, match="repetitions must be an integer"):
        gbs.evidence(f, x, vectorize=True, repetitions=2.0)
    with pytest.raises(ValueError, match="repetitions must be a positive integer"):
        gbs.evidence(f, x, vectorize=True, repetitions=0)


def test_result_dataframe_and_xarray():
    pd = pytest.importorskip("pandas")
    x = np.random.default_rng(0).normal(size=(2, 1000, 2))
    r = gbs.evidence(lambda v: -0.5 * np.sum(v * v, axis=1), x, vectorize=True, seed=1,
                     name="gauss", repetitions=2)
    df = r.to_dataframe()
    assert isinstance(df, pd.DataFrame) and list(df.index) == ["gauss"]
    assert df.loc["gauss", "logz"] == r.logz and df.loc["gauss", "n_q"] == r.n_q
    assert df.loc["gauss", "rhat_max"] == r.diagnostics.rhat_max
    assert df.loc["gauss", "cv"] == pytest.approx(r.logzerr, rel=1e-12)
    assert df.loc["gauss", "repetitions"] == 2
    both = pd.concat([r.to_dataframe(), gbs.evidence(lambda v: -0.5 * np.sum(v * v, axis=1), x,
                                                     vectorize=True, seed=2).to_dataframe()])
    assert list(both.index) == ["gauss", "model"]
    xr = pytest.importorskip("xarray")
    ds = r.to_xarray()
    assert isinstance(ds, xr.Dataset) and float(ds["logz"]) == r.logz
    assert ds["trace_logz"].dims == ("trace",) and int(ds["trace_n_q"][-1]) == r.trace[-1, 0]
    assert int(ds["n_q"]) == r.n_q
    assert ds.sizes["repetition"] == 2 and ds.attrs["method"] == "bridge"
    assert [int(v) for v in ds["repetition_seed"].values] == [int(v) for v in r.repetitions["seed"]]
    assert ds.attrs["name"] == "gauss"
    assert r.as_dict()["name"] == "gauss" and len(r.as_dict()["repetitions"]) == 2


def test_tables_without_pandas_or_xarray(monkeypatch):
    import builtins
    real = builtins.__import__

    def no(name, *a, **k):
        if name in ("pandas", "xarray"):
            raise ImportError("no " + name)
        return real(name, *a, **k)
    monkeypatch.setattr(builtins, "__import__", no)
    r = gbs.Result(-3.0, 0.02, 100, 100, 100, 1.0, 3e-4, 1e-4, "bridge", [], [])
    with pytest.raises(ImportError, match="to_dataframe needs pandas: pip install pandas"):
        r.to_dataframe()
    with pytest.raises(ImportError, match="to_xarray needs xarray: pip install xarray"):
        r.to_xarray()
    with pytest.raises(ImportError, match="pip install pandas"):
        gbs.compare([(0.0, 0.1)]).to_dataframe()
