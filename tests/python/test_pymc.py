"""gbs.from_pymc: exact ln Z of conjugate models through PyMC's own
transforms (log, logodds, simplex), every default transform checked
against the sampler's stored log density, and the sampler's warnings."""

import warnings

import conjugate
import numpy as np
import pytest

import gbs

pm = pytest.importorskip("pymc")
az = pytest.importorskip("arviz")

# Each test compiles a model and samples it: minutes in all, so make
# check leaves them to make test.
pytestmark = pytest.mark.slow


# PyTensor's default C backend compiles each new graph for up to a minute
# on a busy 2-core machine the first time; JAX compiles in seconds. One test
# (normal_mean) keeps the default backend; the sampling runs use PyMC's
# NumPyro NUTS (JAX as well).
FAST = {"mode": "JAX"}
SAMPLE = dict(cores=1, progressbar=False, compute_convergence_checks=False, nuts_sampler="numpyro",
              nuts_sampler_kwargs={"chain_method": "sequential"})


def within(res, exact, max_err):
    assert abs(res.logz - exact) < 4 * res.logzerr, (res.summary(), exact)
    assert res.logzerr < max_err, res.summary()


def _idata(draws):
    return az.from_dict(posterior=draws)


# Each model is built (and its functions compiled) once per module.

@pytest.fixture(scope="module")
def normal_mean():
    data, logz, draws = conjugate.normal_mean()
    with pm.Model() as m:
        mu = pm.Normal("mu", 0, data["s0"])
        pm.Normal("y", mu, 1.0, observed=data["y"])
        pm.Deterministic("mu2", mu ** 2)  # ignored
    return m, logz, draws


def test_normal_mean_from_context(normal_mean):
    m, logz, draws = normal_mean
    post = dict(draws, mu2=draws["mu"] ** 2)
    with m:
        res = gbs.from_pymc(_idata(post), seed=1)
    within(res, logz, 0.01)
    assert res.dim == 1 and (res.n_chains, res.n_draws) == (4, 1000)
    assert res.source["var_names"] == ["mu"] and res.source["lp"] == "model"
    assert not res.warnings


def test_beta_binomial_logodds():
    data, logz, draws = conjugate.beta_binomial()
    with pm.Model() as m:
        p = pm.Beta("p", data["a"], data["b"])
        pm.Binomial("k", n=data["n"], p=p, observed=data["k"])
    assert m.rvs_to_transforms[m["p"]] is not None  # sampled on the log-odds scale
    res = gbs.from_pymc(_idata(draws), m, seed=2, compile_kwargs=FAST)
    within(res, logz, 0.02)
    assert res.source["value_vars"] == ["p_logodds__"]
    # The unconstrained coordinate is the log-odds of the draw.
    p = draws["p"]
    np.testing.assert_allclose(res._context["x"][..., 0], np.log(p / (1 - p)), rtol=1e-9, atol=1e-9)


def test_gamma_poisson_log():
    data, logz, draws = conjugate.gamma_poisson()
    with pm.Model() as m:
        lam = pm.Gamma("lam", alpha=data["alpha"], beta=data["beta"])
        pm.Poisson("y", lam, observed=data["y"])
    res = gbs.from_pymc(_idata(draws), m, seed=3, compile_kwargs=FAST)
    within(res, logz, 0.02)
    assert res.source["value_vars"] == ["lam_log__"]


def test_dirichlet_multinomial_simplex():
    data, logz, draws = conjugate.dirichlet_multinomial()
    with pm.Model() as m:
        p = pm.Dirichlet("p", a=data["alpha"])
        pm.Multinomial("counts", n=int(data["counts"].sum()), p=p, observed=data["counts"])
    res = gbs.from_pymc(_idata(draws), m, seed=4, compile_kwargs=FAST)
    within(res, logz, 0.03)
    assert res.dim == 3  # k - 1 coordinates for a simplex of k = 4


def regression_model(data, k=None):
    X = data["X"] if k is None else data["X"][:, :k]
    with pm.Model() as m:
        sigma2 = pm.InverseGamma("sigma2", data["a0"], data["b0"])
        beta = pm.Normal("beta", 0, pm.math.sqrt(sigma2 * data["v0"]), shape=X.shape[1])
        pm.Normal("y", pm.math.dot(X, beta), pm.math.sqrt(sigma2), observed=data["y"])
    return m


@pytest.fixture(scope="module")
def regressions():
    """Nested regressions: 3 predictors, and the first 2 of them."""
    data, logz3, draws3 = conjugate.regression(k=3)
    _, logz2, draws2 = conjugate.regression(seed=1, X=data["X"][:, :2], y=data["y"])
    return (regression_model(data), logz3, draws3), (regression_model(data, 2), logz2, draws2)


def test_regression_vector_and_scale(regressions):
    (m, logz, draws), _ = regressions
    res = gbs.from_pymc(_idata(draws), m, seed=5, compile_kwargs=FAST)
    within(res, logz, 0.03)
    assert res.dim == 4 and res.source["value_vars"] == ["sigma2_log__", "beta"]
    # var_names orders the columns; the estimate does not depend on it.
    res2 = gbs.from_pymc(_idata(draws), m, var_names=["beta", "sigma2"], seed=5, compile_kwargs=FAST)
    assert res2._context["labels"] == ["beta[0]", "beta[1]", "beta[2]", "sigma2_log__"]
    within(res2, logz, 0.03)


def test_bayes_factor_and_compare_nested_regressions(regressions):
    (m3, logz3, d3), (m2, logz2, d2) = regressions
    r3 = gbs.from_pymc(_idata(d3), m3, seed=6, compile_kwargs=FAST)
    r2 = gbs.from_pymc(_idata(d2), m2, seed=7, compile_kwargs=FAST)
    lbf, err = gbs.bayes_factor(r3, r2)
    assert abs(lbf - (logz3 - logz2)) < 4 * err and err < 0.05, (lbf, err, logz3 - logz2)
    table = gbs.compare({"x1+x2+x3": r3, "x1+x2": r2})
    assert abs(table.prob.sum() - 1) < 1e-12
    exact_p3 = 1 / (1 + np.exp(logz2 - logz3))
    assert abs(table.prob[0] - exact_p3) < 4 * table.prob_err[0] + 1e-9
    assert "x1+x2+x3" in str(table) and "<table>" in table._repr_html_()


def test_errors():
    with pytest.raises(ValueError, match="no model given"):
        gbs.from_pymc(_idata({"mu": np.zeros((2, 10))}))
    with pm.Model() as m:
        pm.Poisson("k", 3.0)
        pm.Normal("x", 0, 1)
    with pytest.raises(ValueError, match=r"discrete free variables 'k'.*not supported"):
        gbs.from_pymc(_idata({"x": np.zeros((2, 10)), "k": np.zeros((2, 10))}), m)
    with pm.Model() as m2:
        pm.Normal("x", 0, 1, shape=2)
    with pytest.raises(ValueError, match="no draws of the free variable 'x'"):
        gbs.from_pymc(_idata({"z": np.zeros((2, 10))}), m2)
    with pytest.raises(ValueError, match=r"shape \(3,\)"):
        gbs.from_pymc(_idata({"x": np.zeros((2, 10, 3))}), m2)
    with pytest.raises(TypeError, match="unexpected keyword"):
        gbs.from_pymc(_idata({"x": np.zeros((2, 10, 2))}), m2, vectorize=True)


def test_every_default_transform_round_trips_and_matches_pymcs_logp():
    """One model with PyMC's default transforms of every kind: log,
    interval (with a bound that is another variable), logodds, simplex,
    ordered, Cholesky (LKJ), a matrix and a vector. Random unconstrained
    points u are mapped to the constrained draws by PyMC's own backward
    transforms; from_pymc must map those draws back to u, and its batched
    log density must equal PyMC's per-point compile_logp(jacobian=True)
    at every draw (given as sample_stats.lp, it is then reused)."""
    rng = np.random.default_rng(8)
    obs = rng.multivariate_normal([0.5, -0.3, 0.1], [[1, .3, 0], [.3, 1, .2], [0, .2, 1]], size=30)
    with pm.Model() as m:
        s = pm.HalfNormal("s", 1.0)
        u = pm.Uniform("u", -1.0, s)
        q = pm.Beta("q", 2.0, 2.0)
        w = pm.Dirichlet("w", np.ones(3))
        o = pm.Normal("o", 0, 2, shape=2, transform=pm.distributions.transforms.ordered)
        chol, _, _ = pm.LKJCholeskyCov("L", n=3, eta=2.0, sd_dist=pm.Exponential.dist(1.0))
        W = pm.Normal("W", 0, 1, shape=(2, 3))
        mean = W.sum(axis=0) * 0.1 + u * w + o.sum() * 0.05 + q
        pm.MvNormal("obs", mean, chol=chol, observed=obs)
        pm.Normal("z", s, 1.0, observed=[0.4, 0.9])
    transforms = {type(t).__name__ for t in m.rvs_to_transforms.values() if t is not None}
    assert {"LogTransform", "Interval", "LogOddsTransform", "SimplexTransform",
            "Ordered", "CholeskyCovPacked"} <= transforms, transforms
    ip = m.initial_point()
    names = [v.name for v in m.value_vars]
    sizes = [int(np.size(ip[n])) for n in names]
    chains, draws = 4, 60
    uflat = 0.5 * rng.normal(size=(chains, draws, sum(sizes)))
    backward = m.compile_fn(m.unobserved_value_vars, inputs=m.value_vars, on_unused_input="ignore",
                            point_fn=False)
    logp = m.compile_logp(jacobian=True)
    free = [rv.name for rv in m.free_RVs]
    post = {n: [] for n in free}
    lp = np.empty((chains, draws))
    for c in range(chains):
        for t in range(draws):
            parts = np.split(uflat[c, t], np.cumsum(sizes)[:-1])
            point = {n: p.reshape(np.shape(ip[n])) for n, p in zip(names, parts)}
            out = dict(zip([v.name for v in m.unobserved_value_vars], backward(**point)))
            for n in free:
                post[n].append(out[n])
            lp[c, t] = logp(point)
    post = {n: np.reshape(v, (chains, draws) + np.shape(v[0])) for n, v in post.items()}
    idata = az.from_dict(posterior=post, sample_stats={"lp": lp})
    with warnings.catch_warnings():
        # Draws made for the transforms, not of the posterior: the
        # estimate's checks rightly object, and are not what this tests.
        warnings.simplefilter("ignore", gbs.GbsWarning)
        res = gbs.from_pymc(idata, m, seed=9, n_q=400)
    np.testing.assert_allclose(res._context["x"], uflat, rtol=1e-7, atol=1e-7)
    assert res.source["lp"] == "sample_stats", res.source
    assert res.dim == 1 + 1 + 1 + 2 + 2 + 6 + 6 and np.isfinite(res.logz)


def test_reuses_the_samplers_lp_and_passes_the_chains(normal_mean):
    m, logz, _ = normal_mean
    with m:
        idata = pm.sample(500, tune=500, chains=2, random_seed=10, **SAMPLE)
        res = gbs.from_pymc(idata, seed=10)
    assert res.source["lp"] == "sample_stats" and (res.n_chains, res.n_draws) == (2, 500)
    # Only the proposal draws were evaluated: log p at the draws was reused
    # (NumPyro's NUTS stores -log p as lp; recognized).
    assert res.ncall == res.n_q + 32 + res.diagnostics.coverage_calls  # + the spot-check of the stored log p
    within(res, logz, 0.02)


def test_centered_eight_schools_warns():
    y = np.array([28.0, 8.0, -3.0, 7.0, -1.0, 1.0, 18.0, 12.0])
    sigma = np.array([15.0, 10.0, 16.0, 11.0, 9.0, 11.0, 10.0, 18.0])
    with pm.Model() as m:
        mu = pm.Normal("mu", 0, 5)
        tau = pm.HalfCauchy("tau", 5)
        theta = pm.Normal("theta", mu, tau, shape=8)
        pm.Normal("obs", theta, sigma, observed=y)
        idata = pm.sample(500, tune=500, chains=2, random_seed=11, **SAMPLE)
    ndiv = int(idata.sample_stats["diverging"].sum())
    assert ndiv > 0  # the centered parameterization diverges
    with pytest.warns(gbs.GbsWarning) as rec:
        res = gbs.from_pymc(idata, m, seed=11, compile_kwargs=FAST)
    div = [w.message for w in rec if w.category is gbs.SamplerWarning and w.message.check == "divergences"]
    assert len(div) == 1 and div[0].finding.value == ndiv / 1000
    assert [f.kind for f in res.found("divergences")] == ["draws"]
    # strict=True refuses the draws before estimating.
    with pytest.raises(gbs.GbsWarningError) as exc:
        gbs.from_pymc(idata, m, seed=11, compile_kwargs=FAST, strict=True)
    assert exc.value.category is gbs.SamplerWarning and exc.value.check == "divergences" and exc.value.result is None


def test_convergence_comes_from_the_library_with_the_models_names():
    """The adapters compute no R-hat of their own (issue 23): healthy
    2 x 500 chains whose rank-normalized R-hat reaches 1.035 (ArviZ),
    which the former flat 1.01 threshold flagged, raise no warning; chains
    that disagree are flagged by the library, naming the model variable."""
    from test_diagnostics import healthy_named_draws

    with pm.Model() as m:
        pm.Normal("mu", 0, 1)
        pm.Normal("theta", 0, 1, shape=4)
    idata = _idata(healthy_named_draws())
    assert float(az.rhat(idata, method="rank")["theta"].max()) > 1.01
    with warnings.catch_warnings():
        warnings.simplefilter("error", gbs.SamplerWarning)
        res = gbs.from_pymc(idata, m, compile_kwargs=FAST, seed=1)
    assert not res.found("rhat"), res.findings
    assert abs(res.logz) < 4 * res.logzerr, res.summary()
    with pytest.warns(gbs.GbsWarning) as rec:
        res = gbs.from_pymc(_idata(healthy_named_draws(shift=1.5)), m, compile_kwargs=FAST, seed=1)
    assert [f.where for f in res.found("rhat")] == ["theta[3]"], res.findings
    assert any(w.category is gbs.SamplerWarning and w.message.check == "rhat" for w in rec)
    assert res.diagnostics.rhat_where == "theta[3]"
