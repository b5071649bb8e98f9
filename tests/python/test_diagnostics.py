"""Result.diagnostics and the warnings of the library's checks, as a
Python user meets them (gbs/diagnostics.go; docs/diagnostics.md)."""

import math

import numpy as np
import pytest

import gbs


def normal_logp(mu, sd):
    def f(x):
        x = np.atleast_2d(x)
        d = x.shape[1]
        return (-0.5 * (((x - mu) / sd) ** 2).sum(axis=1)
                - d * (math.log(sd) + 0.5 * math.log(2 * math.pi)))
    return f


def test_clean_draws_have_diagnostics_and_no_warning():
    x = np.random.default_rng(1).normal(size=(4, 1000, 3))
    f = normal_logp(0.0, 1.0)
    res = gbs.evidence(f, x, vectorize=True, seed=1,
                       log_prob_samples=f(x.reshape(-1, 3)).reshape(4, 1000))
    assert res.warnings == []
    d = res.diagnostics
    assert 1 <= d.rhat_max < 1.01 and d.rhat_where in {"x[0]", "x[1]", "x[2]", "log p"}
    assert d.ess_bulk_min > 1000 and d.ess_tail_min > 1000
    assert d["spot_checked"] == 32 and d.spot_max_diff < 1e-9
    assert abs(d.crossfit_z) < 4 and d.consistency_z < 4
    assert 0 < d.pareto_k_threshold <= 0.7 and d.pareto_k_q < 0.7 and d.pareto_k_p < 0.7
    assert d.n_stuck_chains == 0 and d.stuck_chain is None
    assert "diagnostics: R-hat" in res.summary()
    assert "diagnostics" in res._repr_html_() and "Pareto" in res._repr_html_()
    assert res.as_dict()["diagnostics"]["spot_checked"] == 32
    assert set(d.keys()) == set(d.as_dict())


def test_wrong_log_density_is_flagged():
    # Draws of N(0, I) in 6-d passed with the log density of N(3·1, I).
    x = np.random.default_rng(2).normal(size=(8, 500, 6))
    with pytest.warns(gbs.DiagnosticWarning) as rec:
        res = gbs.evidence(normal_logp(3.0, 1.0), x, vectorize=True, seed=2)
    assert "consistency" in {w.message.check for w in rec}
    assert [f.kind for f in res.found("consistency")] == ["estimate"]
    assert res.diagnostics.consistency_z > 4
    assert res.diagnostics.pareto_k_q > 1 and res.diagnostics.pareto_k_p > 1


def test_misaligned_log_prob_samples_is_an_error():
    rng = np.random.default_rng(3)
    x = rng.normal(size=(8, 400, 2))
    f = normal_logp(0.0, 1.0)
    lp = f(x.reshape(-1, 2)).reshape(8, 400)
    # (draws, chains) read as (chains, draws): the values of other draws.
    wrong = lp.T.reshape(8, 400)
    with pytest.raises(gbs.GbsError, match="does not match the log density"):
        gbs.evidence(f, x, log_prob_samples=wrong, vectorize=True, seed=3)
    with pytest.raises(gbs.GbsError, match=r"stored 1\d\.\d+|stored \d\.\d+"):
        gbs.evidence(f, x, log_prob_samples=lp + 10, vectorize=True, seed=3)


def test_emcee_layout_without_chain_axis_warns():
    # 1000 steps of 16 walkers, stored (steps, walkers, d) as emcee's
    # get_chain() does, passed without chain_axis=1.
    rng = np.random.default_rng(4)
    steps, walkers, d = 1000, 16, 2
    x = np.empty((steps, walkers, d))
    x[0] = rng.normal(size=(walkers, d))
    for t in range(1, steps):
        x[t] = 0.9 * x[t - 1] + math.sqrt(1 - 0.81) * rng.normal(size=(walkers, d))
    with pytest.warns(gbs.SamplerWarning) as rec:
        res = gbs.evidence(normal_logp(0.0, 1.0), x, vectorize=True, seed=4)
    assert "layout" in {w.message.check for w in rec}
    assert [f.kind for f in res.found("layout")] == ["draws"], res.findings
    ok = gbs.evidence(normal_logp(0.0, 1.0), x, chain_axis=1, vectorize=True, seed=4)
    assert not ok.found("layout"), ok.findings


def _ar1(rng, shape, phi):
    """(chains, draws, ...) AR(1) chains with a standard normal margin."""
    x = np.empty(shape)
    v = rng.normal(size=shape[:1] + shape[2:])
    for i in range(shape[1]):
        v = phi * v + math.sqrt(1 - phi * phi) * rng.normal(size=v.shape)
        x[:, i] = v
    return x


def healthy_named_draws(shift=0.0):
    """Draws of a standard normal in 5 dimensions named "mu" and
    "theta" (4), as a sampler with tau = 3 gives them: 2 chains of 500.
    With shift, chain 1 of theta[3] sits that many sd away."""
    rng = np.random.default_rng(0)
    mu = _ar1(rng, (2, 500), 0.5)
    theta = _ar1(rng, (2, 500, 4), 0.5)
    theta[1, :, 3] += shift
    return {"mu": mu, "theta": theta}


def test_convergence_is_the_libraries_and_names_the_models_variables():
    """One convergence implementation (issue 23): these healthy chains
    reach a rank-normalized R-hat of 1.035 on theta[3] (ArviZ's value),
    which the adapters' former flat 1.01 threshold flagged; the library's
    threshold for chains this short (1.08) does not. Chains that disagree
    are flagged with the model's name for the coordinate."""
    az = pytest.importorskip("arviz")
    f = normal_logp(0.0, 1.0)
    idata = az.from_dict(posterior=healthy_named_draws())
    assert float(az.rhat(idata, method="rank")["theta"].max()) > 1.01
    res = gbs.evidence(f, idata, vectorize=True, seed=1)
    assert not res.found("rhat"), res.findings
    d = res.diagnostics
    assert d.rhat_max > 1.01 and d.rhat_crit > d.rhat_max
    assert d.rhat_where in {"mu", "theta[0]", "theta[1]", "theta[2]", "theta[3]", "log p"}
    assert d.ess_bulk_where in {"mu", "theta[0]", "theta[1]", "theta[2]", "theta[3]", "log p"}

    bad = az.from_dict(posterior=healthy_named_draws(shift=1.5))
    with pytest.warns(gbs.GbsWarning):  # unmixed chains, and an estimate that shows it
        res = gbs.evidence(f, bad, vectorize=True, seed=1)
    rhat = res.found("rhat")
    assert len(rhat) == 1 and rhat[0].where == "theta[3]", res.findings
    assert res.diagnostics.rhat_where == "theta[3]"
    # Without names the library's own name stays.
    x = np.concatenate([bad.posterior["mu"].values[..., None], bad.posterior["theta"].values], axis=2)
    with pytest.warns(gbs.GbsWarning):
        res = gbs.evidence(f, np.ascontiguousarray(x), vectorize=True, seed=1)
    assert [f.where for f in res.found("rhat")] == ["x[4]"], res.findings
    assert res.diagnostics.rhat_where == "x[4]"
