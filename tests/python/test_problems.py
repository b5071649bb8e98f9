"""gbs.problems: exact ln Z values, gradients, samplers."""

import numpy as np
import pytest

import gbs
from gbs import problems


def test_reference_values():
    assert abs(problems.ring_logz(64) - (-114.491835)) < 1e-5
    assert abs(problems.ring_logz(16) - (-28.622683)) < 1e-5
    assert abs(problems.cauchy().logz - (-254.626548)) < 1e-5


@pytest.mark.parametrize("p", problems.all_problems() + [problems.banana2(), problems.gaussian(3)],
                         ids=lambda p: p.name)
def test_gradients(p):
    rng = np.random.default_rng(1)
    x = p.sample(1, seed=2)[0] if p._sampler else rng.uniform(-1, 1, size=p.dim)
    lp, g = p.log_prob_and_grad(x)
    assert lp == pytest.approx(p.log_prob(x))
    assert np.allclose(p.log_prob(x[None])[0], lp)
    h = 1e-6
    for k in rng.choice(p.dim, size=min(5, p.dim), replace=False):
        e = np.zeros(p.dim)
        e[k] = h
        fd = (p.log_prob(x + e) - p.log_prob(x - e)) / (2 * h)
        assert fd == pytest.approx(g[k], rel=1e-4, abs=1e-4)


@pytest.mark.parametrize("name,max_err", [("funnel", 0.03), ("banana", 0.05), ("cauchy", 0.08)])
def test_exact_draws_through_evidence(name, max_err):
    p = problems.by_name(name)
    x = p.sample(20000, seed=5)
    assert np.all((x > p.bounds[:, 0]) & (x < p.bounds[:, 1]))
    res = gbs.evidence(p.log_prob, x, vectorize=True, bounds=p.bounds, independent=True, seed=5)
    assert abs(res.logz - p.logz) < 4 * res.logzerr and res.logzerr < max_err, res.summary()


def test_unknown_problem():
    with pytest.raises(ValueError, match="unknown problem"):
        problems.by_name("moon")
