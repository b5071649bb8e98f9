"""Warnings a user cannot miss: a Result's warnings are raised through
Python's warnings module (gbs.GbsWarning and subclasses) at the user's
line, strict=True turns them into a gbs.GbsError, and information that is
not a warning goes to Result.info without being raised."""

import warnings

import numpy as np
import pytest

import gbs


def normal_logp(x, mu=0.0, s=1.0):
    x = np.atleast_2d(x)
    return -0.5 * np.sum(((x - mu) / s) ** 2, axis=-1) - x.shape[-1] * np.log(s)


def exact_draws(n=4000, d=2, seed=0):
    return np.random.default_rng(seed).standard_normal((n, d))


def test_hierarchy():
    assert issubclass(gbs.GbsWarning, UserWarning)
    assert issubclass(gbs.DiagnosticWarning, gbs.GbsWarning)
    assert issubclass(gbs.SamplerWarning, gbs.GbsWarning)
    assert issubclass(gbs.GbsWarningError, gbs.GbsError)


def test_wrong_density_raises_diagnostic_warning():
    """Draws of N(0, I) with the log density of another Gaussian: the
    estimate is wrong and says so, through warnings.warn, pointing at
    this file."""
    x = exact_draws()
    with pytest.warns(gbs.DiagnosticWarning) as rec:
        res = gbs.evidence(lambda v: normal_logp(v, 0.6, 0.8), x, vectorize=True,
                           independent=True, seed=1)
    assert res.warnings and res.n_sampler_warnings == 0
    ours = [w for w in rec if issubclass(w.category, gbs.GbsWarning)]
    assert [str(w.message) for w in ours] == res.warnings
    assert [w.message.finding for w in ours] == [f for f in res.findings if f.is_warning]
    assert "consistency" in [w.message.check for w in ours]
    # stacklevel: the warning names the user's line, not gbs's.
    assert all(w.filename == __file__ for w in ours), [w.filename for w in ours]


def test_strict_raises_gbs_error():
    x = exact_draws()
    with pytest.raises(gbs.GbsError) as exc:
        gbs.evidence(lambda v: normal_logp(v, 0.6, 0.8), x, vectorize=True, independent=True,
                     seed=1, strict=True)
    e = exc.value
    assert isinstance(e, gbs.GbsWarningError) and e.category is gbs.DiagnosticWarning
    assert e.result is not None and e.warnings == e.result.warnings
    assert e.check == e.result.findings[0].check


def test_healthy_run_raises_nothing():
    x = exact_draws()
    with warnings.catch_warnings():
        warnings.simplefilter("error", gbs.GbsWarning)
        res = gbs.evidence(normal_logp, x, vectorize=True, independent=True, seed=2, strict=True)
    assert res.warnings == [] and res.info == []
    assert abs(res.logz - np.log(2 * np.pi)) < 4 * res.logzerr


def test_sampler_warning_for_the_draws():
    """Chains that have not mixed are a problem of the draws: a
    SamplerWarning, listed first among the warnings."""
    rng = np.random.default_rng(3)
    x = rng.standard_normal((4, 1000, 2))
    x[2:] += 2.0  # two chains in another place: R-hat far above 1
    with pytest.warns(gbs.GbsWarning) as rec:
        res = gbs.evidence(normal_logp, x, vectorize=True, seed=4)
    assert res.n_sampler_warnings >= 1 and res.findings[0].check == "rhat"
    cats = [w.category for w in rec if issubclass(w.category, gbs.GbsWarning)]
    assert cats[:res.n_sampler_warnings] == [gbs.SamplerWarning] * res.n_sampler_warnings
    assert all(c is gbs.DiagnosticWarning for c in cats[res.n_sampler_warnings:])
    with pytest.raises(gbs.GbsWarningError) as exc:
        gbs.evidence(normal_logp, x, vectorize=True, seed=4, strict=True)
    assert exc.value.category is gbs.SamplerWarning


def test_silenced_like_any_warning():
    x = exact_draws()
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        warnings.simplefilter("ignore", gbs.GbsWarning)
        res = gbs.evidence(lambda v: normal_logp(v, 0.6, 0.8), x, vectorize=True,
                           independent=True, seed=1)
    assert res.warnings and not [w for w in rec if issubclass(w.category, gbs.GbsWarning)]


def test_info_is_shown_not_raised():
    found = [gbs.Finding("rerun", "info", "NUTS diverged 3 times ..."), gbs.Finding("rhat", "draws", "w")]
    r = gbs.Result(0.0, 0.1, 10, 10, 10, 1.0, 0.005, 0.005, "bridge", found, [(10, 0.0, 0.1)])
    assert r.info == ["NUTS diverged 3 times ..."] and r.n_sampler_warnings == 1 and r.warnings == ["w"]
    assert [f.check for f in r.findings] == ["rhat", "rerun"]  # warnings first
    assert "info [rerun]: NUTS diverged" in r.summary() and "Info" in r._repr_html_()
    assert r.as_dict()["info"] == r.info


def test_copied_chains_are_named():
    """Four chains that are one chain four times (parallel chains started
    with the same seed): a SamplerWarning that names them."""
    rng = np.random.default_rng(5)
    one = np.cumsum(rng.standard_normal((1000, 2)), axis=0) * 0.02 + rng.standard_normal((1000, 2))
    x = np.stack([one] * 4)
    with pytest.warns(gbs.GbsWarning) as rec:
        res = gbs.evidence(normal_logp, x, vectorize=True, seed=6)
    assert "copied-chains" in [w.message.check for w in rec if w.category is gbs.SamplerWarning]
    assert res.diagnostics.n_copied_groups == 1 and res.diagnostics.copied_chain == 0
    assert [f.kind for f in res.found("copied-chains")] == ["draws"]


def test_flipped_sign_is_named():
    """A potential energy (minus the log density) passed as log_prob."""
    x = exact_draws(seed=7) + 1.0
    with pytest.warns(gbs.GbsWarning) as rec:
        res = gbs.evidence(lambda v: -normal_logp(v, 1.0), x, vectorize=True, independent=True,
                           seed=8)
    assert res.findings[0].check == "sign" and res.diagnostics.sign_corr < 0, res.findings
    assert [w.category for w in rec] == [gbs.DiagnosticWarning] * len(res.warnings)


def half_normal_logp(v):
    v = np.atleast_2d(v)
    lp = normal_logp(v)
    return np.where(v[:, 0] < 0, -np.inf, lp)


def test_boundary_pile_up_is_info_not_warning():
    """Half-normal draws (log p = -inf below 0) without bounds: ln Z is
    right and nothing is raised; Result.info says that bounds would help.
    With the bound given there is nothing to say."""
    rng = np.random.default_rng(9)
    x = rng.standard_normal((4000, 5))
    x[:, 0] = np.abs(x[:, 0])
    with warnings.catch_warnings():
        warnings.simplefilter("error", gbs.GbsWarning)
        res = gbs.evidence(half_normal_logp, x, vectorize=True, independent=True, seed=10)
        exact = 2.5 * np.log(2 * np.pi) - np.log(2)  # normal_logp is not normalized
        assert abs(res.logz - exact) < 4 * res.logzerr
        assert res.warnings == [] and [(f.kind, f.where) for f in res.found("pile-up")] == [("info", "x[0]")]
        assert res.diagnostics.pile_up_where == "x[0]"
        bounded = gbs.evidence(half_normal_logp, x, vectorize=True, independent=True, seed=10,
                               bounds=[(0, None)] + [(None, None)] * 4)
    assert bounded.warnings == [] and bounded.info == []
