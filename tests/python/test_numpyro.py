"""gbs.from_numpyro: exact ln Z of conjugate models sampled by NumPyro's
NUTS, through NumPyro's own transforms; the same model in PyMC gives the
same ln Z."""

import warnings

import conjugate
import numpy as np
import pytest

import gbs

jax = pytest.importorskip("jax")
numpyro = pytest.importorskip("numpyro")

# Each test compiles a model and samples it: minutes in all, so make
# check leaves them to make test.
pytestmark = pytest.mark.slow
jax.config.update("jax_enable_x64", True)  # float64, as the other tests

import jax.numpy as jnp  # noqa: E402
import numpyro.distributions as dist  # noqa: E402
from numpyro.infer import MCMC, NUTS  # noqa: E402


def run(model, *args, seed=0, extra_fields=(), **kwargs):
    mcmc = MCMC(NUTS(model), num_warmup=400, num_samples=1000, num_chains=2,
                chain_method="sequential", progress_bar=False)
    mcmc.run(jax.random.PRNGKey(seed), *args, extra_fields=extra_fields, **kwargs)
    return mcmc


def within(res, exact, max_err):
    assert abs(res.logz - exact) < 4 * res.logzerr, (res.summary(), exact)
    assert res.logzerr < max_err, res.summary()


def normal_mean(y, s0):
    mu = numpyro.sample("mu", dist.Normal(0.0, s0))
    numpyro.sample("y", dist.Normal(mu, 1.0), obs=y)


def beta_binomial(n, k, a, b):
    p = numpyro.sample("p", dist.Beta(a, b))
    numpyro.sample("k", dist.Binomial(n, p), obs=k)


def gamma_poisson(y, alpha, beta):
    lam = numpyro.sample("lam", dist.Gamma(alpha, beta))
    numpyro.sample("y", dist.Poisson(lam), obs=y)


def dirichlet_multinomial(counts, alpha):
    p = numpyro.sample("p", dist.Dirichlet(alpha))
    # The total is a constant of the model (a traced argument cannot be).
    numpyro.sample("counts", dist.Multinomial(N_COUNTS, p), obs=counts)


N_COUNTS = int(conjugate.dirichlet_multinomial()[0]["counts"].sum())


def regression(X, y, a0, b0, v0):
    sigma2 = numpyro.sample("sigma2", dist.InverseGamma(a0, b0))
    beta = numpyro.sample("beta", dist.Normal(jnp.zeros(X.shape[1]), jnp.sqrt(sigma2 * v0)).to_event(1))
    numpyro.sample("y", dist.Normal(X @ beta, jnp.sqrt(sigma2)), obs=y)


@pytest.mark.parametrize("case,model,max_err", [
    ("normal_mean", normal_mean, 0.02),
    ("beta_binomial", beta_binomial, 0.03),
    ("gamma_poisson", gamma_poisson, 0.03),
    ("dirichlet_multinomial", dirichlet_multinomial, 0.04),
])
def test_conjugate_models(case, model, max_err):
    data, logz, _ = getattr(conjugate, case)()
    data = {k: jnp.asarray(v) if isinstance(v, np.ndarray) else v for k, v in data.items()}
    mcmc = run(model, seed=1, **data)
    res = gbs.from_numpyro(mcmc, seed=1)
    within(res, logz, max_err)
    assert (res.n_chains, res.n_draws) == (2, 1000) and res.source["x64"]
    assert not res.found("divergences"), res.findings


@pytest.fixture(scope="module")
def regression_run():
    data, logz, draws = conjugate.regression(k=3)
    args = {k: (jnp.asarray(v) if isinstance(v, np.ndarray) else v) for k, v in data.items()}
    mcmc = run(regression, seed=2, extra_fields=("potential_energy", "num_steps"), **args)
    return data, logz, draws, mcmc


def test_regression_reuses_potential_energy(regression_run):
    data, logz, _, mcmc = regression_run
    # The symmetry search's few calls (beta's entries are candidates) are
    # counted apart: it is off here.
    res = gbs.from_numpyro(mcmc, seed=2, symmetry="off")
    within(res, logz, 0.04)
    assert res.dim == 4 and res.source["var_names"] == ["sigma2", "beta"]
    # -potential_energy was log p at the draws: only proposal draws evaluated.
    assert res.source["lp"] == "sample_stats" and res.ncall == res.n_q + 32 + res.diagnostics.coverage_calls  # + the spot-check
    assert res._context["labels"] == ["sigma2", "beta[0]", "beta[1]", "beta[2]"]
    # sigma2's coordinate is its log (NumPyro's positive-support transform).
    x = res._context["x"]
    np.testing.assert_allclose(np.exp(x[..., 0]), np.asarray(mcmc.get_samples(True)["sigma2"]),
                               rtol=1e-10)


def test_same_model_in_pymc_gives_the_same_logz(regression_run):
    pm = pytest.importorskip("pymc")
    az = pytest.importorskip("arviz")
    data, logz, draws, mcmc = regression_run
    a = gbs.from_numpyro(mcmc, seed=3)
    with pm.Model() as m:
        sigma2 = pm.InverseGamma("sigma2", data["a0"], data["b0"])
        beta = pm.Normal("beta", 0, pm.math.sqrt(sigma2 * data["v0"]), shape=3)
        pm.Normal("y", pm.math.dot(data["X"], beta), pm.math.sqrt(sigma2), observed=data["y"])
    b = gbs.from_pymc(az.from_dict(posterior=draws), m, seed=3, compile_kwargs={"mode": "JAX"})
    lbf, err = gbs.bayes_factor(a, b)
    assert abs(lbf) < 4 * err, (a.summary(), b.summary())


def test_errors_and_divergences():
    mcmc = MCMC(NUTS(potential_fn=lambda z: 0.5 * jnp.sum(z["x"] ** 2)), num_warmup=10,
                num_samples=10, progress_bar=False)
    with pytest.raises(ValueError, match="has no model"):
        gbs.from_numpyro(mcmc)
    mcmc = MCMC(NUTS(normal_mean), num_warmup=10, num_samples=10, progress_bar=False)
    with pytest.raises(ValueError, match="call mcmc.run"):
        gbs.from_numpyro(mcmc)
    with pytest.raises(TypeError, match="numpyro.infer.MCMC"):
        gbs.from_numpyro(object())

    # Centered eight schools: NUTS diverges, gbs warns.
    y = jnp.array([28.0, 8.0, -3.0, 7.0, -1.0, 1.0, 18.0, 12.0])
    sigma = jnp.array([15.0, 10.0, 16.0, 11.0, 9.0, 11.0, 10.0, 18.0])

    def eight_schools():
        mu = numpyro.sample("mu", dist.Normal(0.0, 5.0))
        tau = numpyro.sample("tau", dist.HalfCauchy(5.0))
        with numpyro.plate("j", 8):
            theta = numpyro.sample("theta", dist.Normal(mu, tau))
            numpyro.sample("obs", dist.Normal(theta, sigma), obs=y)

    mcmc = run(eight_schools, seed=4)
    ndiv = int(np.sum(mcmc.get_extra_fields()["diverging"]))
    assert ndiv > 0
    with pytest.warns(gbs.GbsWarning) as rec:
        res = gbs.from_numpyro(mcmc, seed=4)
    div = [w.message for w in rec if w.category is gbs.SamplerWarning and w.message.check == "divergences"]
    assert len(div) == 1 and div[0].finding.value == ndiv / 2000
    assert res.dim == 10 and [f.kind for f in res.found("divergences")] == ["draws"]
    # strict=True refuses the draws before estimating.
    with pytest.raises(gbs.GbsWarningError) as exc:
        gbs.from_numpyro(mcmc, seed=4, strict=True)
    assert exc.value.category is gbs.SamplerWarning and exc.value.check == "divergences"


def test_bayes_factor_and_compare_nested_regressions(regression_run):
    data3, logz3, _, mcmc3 = regression_run
    X2 = data3["X"][:, :2]
    data2, logz2, _ = conjugate.regression(seed=1, X=X2, y=data3["y"])
    args = {k: (jnp.asarray(v) if isinstance(v, np.ndarray) else v) for k, v in data2.items()}
    mcmc2 = run(regression, seed=4, extra_fields=("potential_energy",), **args)
    r3, r2 = gbs.from_numpyro(mcmc3, seed=6), gbs.from_numpyro(mcmc2, seed=7)
    lbf, err = gbs.bayes_factor(r3, r2)
    assert abs(lbf - (logz3 - logz2)) < 4 * err and err < 0.05, (lbf, err, logz3 - logz2)
    table = gbs.compare({"x1+x2+x3": r3, "x1+x2": r2})
    exact_p3 = 1 / (1 + np.exp(logz2 - logz3))
    assert abs(table.prob[0] - exact_p3) < 4 * table.prob_err[0] + 1e-9
