"""gbs.Flow and gbs.sample from Python."""

import math
import pickle

import numpy as np
import pytest

import gbs
from gbs import problems


def test_flow_fit_use_save_load(tmp_path):
    p = problems.banana2()
    x = p.sample(5000, seed=1)
    flow = gbs.Flow.fit(x, seed=2)
    assert flow.dim == 2 and flow.layers >= 1
    # Normalized: importance sampling with q recovers Z of the banana.
    y, lq = flow.sample(20000, seed=3, return_log_prob=True)
    assert np.allclose(lq, flow.log_prob(y))
    w = p.log_prob(y) - lq
    lz = w.max() + math.log(np.mean(np.exp(w - w.max())))
    assert abs(lz - p.logz) < 0.05
    z, ld = flow.forward(x[:100])
    back, ld2 = flow.inverse(z)
    assert np.allclose(back, x[:100], atol=1e-9) and np.allclose(ld, -ld2, atol=1e-9)
    path = tmp_path / "banana.flow"
    flow.save(path)
    again = gbs.Flow.load(path)
    assert np.array_equal(again.log_prob(x), flow.log_prob(x))
    copy = pickle.loads(pickle.dumps(flow))
    assert np.array_equal(copy.log_prob(x), flow.log_prob(x))
    assert isinstance(flow.log_prob(x[0]), float)


def test_flow_bounds_and_errors():
    x = np.random.default_rng(0).uniform(0, 1, size=(3000, 2))
    flow = gbs.Flow.fit(x, bounds=[[0, 1], [0, 1]], seed=1)
    assert flow.log_prob([1.5, 0.5]) == -np.inf
    assert np.all((flow.sample(1000, seed=1) > 0) & (flow.sample(1000, seed=1) < 1))
    x[:, 1] = 0.5
    with pytest.raises(gbs.GbsError, match="constant"):
        gbs.Flow.fit(x)
    with pytest.raises(ValueError, match="dimension"):
        flow.log_prob(np.zeros((3, 5)))


def test_sample_then_evidence():
    def lpg(x):
        return 1.0 - 0.5 * float(x @ x) - 1.5 * math.log(2 * math.pi), -x

    s = gbs.sample(lpg, np.zeros(3), n_draws=1000, n_warmup=500, seed=4)
    assert s.draws.shape == (4, 1000, 3) and s.log_prob.shape == (4, 1000)
    assert abs(s.draws.mean()) < 0.1 and abs(s.draws.var() - 1) < 0.1
    res = gbs.evidence(lambda x: lpg(x)[0], s, seed=1)
    assert abs(res.logz - 1.0) < 4 * res.logzerr and res.ncall == res.n_q
    again = gbs.sample(lpg, np.zeros(3), n_draws=1000, n_warmup=500, seed=4)
    assert np.array_equal(again.draws, s.draws)


def test_sample_callback_exception():
    def bad(x):
        raise RuntimeError("no gradient today")

    with pytest.raises(RuntimeError, match="no gradient today"):
        gbs.sample(bad, np.zeros(2), n_draws=10, n_warmup=10)


def test_sample_ensemble_then_evidence():
    calls = []

    def logp(x):
        calls.append(len(x))
        return 0.5 - 0.5 * np.sum(x * x, axis=1) - 2 * math.log(2 * math.pi)

    s = gbs.sample_ensemble(logp, bounds=[[-2, 2]] * 4, walkers=16, steps=3000, seed=1, vectorize=True)
    assert set(calls) == {8}, "each call gets the half-ensemble"
    assert s.draws.shape[0] == 16 and s.draws.shape[2] == 4 and s.ncall == 16 * 3000 + 16
    res = gbs.evidence(logp, s, vectorize=True, seed=1)
    assert abs(res.logz - 0.5) < 4 * res.logzerr and res.logzerr < 0.05
    again = gbs.sample_ensemble(logp, bounds=[[-2, 2]] * 4, walkers=16, steps=3000, seed=1, vectorize=True)
    assert np.array_equal(again.draws, s.draws)
    with pytest.raises(gbs.GbsError, match="even"):
        gbs.sample_ensemble(logp, bounds=[[-2, 2]] * 4, walkers=9, vectorize=True)
