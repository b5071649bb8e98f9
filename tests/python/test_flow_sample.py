"""gbs.Flow, gbs.sample (NUTS) and gbs.sample_ensemble from Python."""

import math
import pickle

import numpy as np
import pytest
from targets import gauss_vec

import gbs
from gbs import problems


def logmeanexp(a):
    m = a.max()
    return m + math.log(np.mean(np.exp(a - m)))


def test_flow_fit_use_save_load(tmp_path):
    p = problems.banana2()
    x = p.sample(5000, seed=1)
    flow = gbs.Flow.fit(x, seed=2)
    assert flow.dim == 2 and flow.layers >= 1 and "Flow(dim=2" in repr(flow)
    # Normalized: importance sampling with q recovers Z of the banana.
    y, lq = flow.sample(20000, seed=3, return_log_prob=True)
    assert y.shape == (20000, 2) and lq.shape == (20000,)
    assert np.allclose(lq, flow.log_prob(y))
    assert abs(logmeanexp(p.log_prob(y) - lq) - p.logz) < 0.05
    z, ld = flow.forward(x[:100])
    back, ld2 = flow.inverse(z)
    assert np.allclose(back, x[:100], atol=1e-9) and np.allclose(ld, -ld2, atol=1e-9)
    path = tmp_path / "banana.flow"
    flow.save(path)
    again = gbs.Flow.load(path)
    assert np.array_equal(again.log_prob(x), flow.log_prob(x))
    assert gbs.Flow.from_bytes(flow.to_bytes()).log_prob(x[0]) == flow.log_prob(x[0])
    assert path.read_bytes() == flow.to_bytes()
    copy = pickle.loads(pickle.dumps(flow))
    assert np.array_equal(copy.log_prob(x), flow.log_prob(x))
    assert isinstance(flow.log_prob(x[0]), float)
    # Seeds: the same seed, the same fit and draws; None, fresh ones.
    assert np.array_equal(gbs.Flow.fit(x, seed=2).log_prob(x), flow.log_prob(x))
    assert np.array_equal(flow.sample(5, seed=9), flow.sample(5, seed=9))
    assert not np.array_equal(flow.sample(5), flow.sample(5))
    assert flow.sample(0).shape == (0, 2) and flow.log_prob(np.empty((0, 2))).shape == (0,)


def test_flow_conditional_layers():
    # Four 2-d annuli on scattered coordinate pairs: each coordinate's
    # shape depends on its partner, which conditional layers capture.
    rng = np.random.default_rng(4)
    n, pairs = 7000, [(0, 5), (1, 3), (2, 7), (4, 6)]
    x = np.empty((n, 8))
    for a, b in pairs:
        r = math.sqrt(2) + 0.15 * rng.standard_normal(n)
        th = rng.uniform(0, 2 * math.pi, n)
        x[:, a], x[:, b] = r * np.cos(th), r * np.sin(th)
    x, held_out = x[:6000], x[6000:]
    both = gbs.Flow.fit(x, seed=1)
    sliced = gbs.Flow.fit(x, seed=1, conditional=False)
    assert both.conditional_layers >= 2 and sliced.conditional_layers == 0
    assert "conditional_layers=" in repr(both)
    # Held-out log q is higher with conditional layers.
    assert both.log_prob(held_out).mean() > sliced.log_prob(held_out).mean() + 0.1
    with pytest.raises(ValueError, match="conditional"):
        gbs.Flow.fit(x, conditional="yes")


def test_flow_scale_layer():
    # The funnel: x[0] sets the others' scale, which the scale layer
    # (on by default) follows; without it q is far from p.
    p = problems.funnel(8)
    x, held_out = p.sample(6000, seed=1), p.sample(4000, seed=2)
    default = gbs.Flow.fit(x, seed=1, bounds=p.bounds)
    plain = gbs.Flow.fit(x, seed=1, bounds=p.bounds, scale=False)
    # KL(p||q) differs by the held-out mean of log q.
    assert default.log_prob(held_out).mean() > plain.log_prob(held_out).mean() + 0.3
    with pytest.raises(ValueError, match="scale"):
        gbs.Flow.fit(x, scale="auto")


def test_flow_inputs():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(2000, 3))
    ref = gbs.Flow.fit(x, seed=1).log_prob(x)
    assert np.array_equal(gbs.Flow.fit(x.tolist(), seed=1).log_prob(x), ref)
    assert np.array_equal(gbs.Flow.fit(np.asfortranarray(x), seed=1).log_prob(x), ref)
    assert np.array_equal(gbs.Flow.fit(x.reshape(4, 500, 3), seed=1).log_prob(x), ref)
    gbs.Flow.fit(x.astype(np.float32), seed=1)
    one = gbs.Flow.fit(rng.normal(size=3000), seed=1)  # d = 1
    assert one.dim == 1
    assert one.log_prob(np.zeros(5)).shape == (5,) and isinstance(one.log_prob(0.0), float)
    w = gbs.Flow.fit(x, weights=np.ones(2000), seed=1)
    assert w.dim == 3


def test_flow_bounds_and_errors(tmp_path):
    x = np.random.default_rng(0).uniform(0, 1, size=(3000, 2))
    flow = gbs.Flow.fit(x, bounds=[[0, 1], [0, 1]], seed=1)
    assert flow.log_prob([1.5, 0.5]) == -np.inf
    draws = flow.sample(1000, seed=1)
    assert np.all((draws > 0) & (draws < 1))
    bad = x.copy()
    bad[:, 1] = 0.5
    with pytest.raises(ValueError, match="constant"):
        gbs.Flow.fit(bad)
    with pytest.raises(ValueError, match="dimension 2"):
        flow.log_prob(np.zeros((3, 5)))
    with pytest.raises(ValueError, match="dimension 2"):
        flow.log_prob(np.zeros(4))
    with pytest.raises(ValueError, match="weights"):
        gbs.Flow.fit(x, weights=np.ones(5))
    with pytest.raises(ValueError, match="bounds"):
        gbs.Flow.fit(x, bounds=[[0, 1]] * 3)
    with pytest.raises(ValueError, match="whiten"):
        gbs.Flow.fit(x, whiten="zca")
    with pytest.raises(OSError):
        gbs.Flow.load(tmp_path / "missing.flow")
    (tmp_path / "junk.flow").write_bytes(b"not a flow")
    with pytest.raises(gbs.GbsError):
        gbs.Flow.load(tmp_path / "junk.flow")
    flow.close()
    with pytest.raises(ValueError, match="handle"):
        flow.log_prob([0.5, 0.5])


def test_sample_then_evidence():
    def lpg(x):
        return 1.0 - 0.5 * float(x @ x) - 1.5 * math.log(2 * math.pi), -x

    s = gbs.sample(lpg, np.zeros(3), n_draws=1000, n_warmup=500, seed=4)
    assert s.draws.shape == (4, 1000, 3) and s.log_prob.shape == (4, 1000)
    assert len(s.stats) == 4 and s.ncall == sum(c["grad_calls"] for c in s.stats)
    assert "Samples(chains=4" in repr(s) and s.seed == 4
    assert abs(s.draws.mean()) < 0.1 and abs(s.draws.var() - 1) < 0.1
    calls = []
    res = gbs.evidence(lambda x: calls.append(1) or lpg(x)[0], s, seed=1)
    # The stored log p is reused; 32 draws are spot-checked.
    assert abs(res.logz - 1.0) < 4 * res.logzerr and res.ncall == res.n_q + 32 + res.diagnostics.coverage_calls == len(calls)
    assert res.warnings == [], res.warnings
    again = gbs.sample(lpg, np.zeros(3), n_draws=1000, n_warmup=500, seed=4)
    assert np.array_equal(again.draws, s.draws)
    # One starting point per chain, and errors.
    s2 = gbs.sample(lpg, np.zeros((2, 3)), n_draws=50, n_warmup=50, seed=1)
    assert s2.draws.shape == (2, 50, 3)
    with pytest.raises(ValueError, match="bounds"):
        gbs.sample(lpg, np.zeros(3), n_draws=10, n_warmup=10, bounds=[[0, 1]] * 2)
    with pytest.raises(ValueError, match="metric"):
        gbs.sample(lpg, np.zeros(3), n_draws=10, metric="full")
    with pytest.raises(ValueError, match="n_draws"):
        gbs.sample(lpg, np.zeros(3), n_draws=0)


def test_sample_reference_problem_then_evidence():
    # A problem of gbs.problems straight into gbs.sample, then gbs.evidence.
    p = problems.gaussian(3, c=0.5)
    s = gbs.sample(p.log_prob_and_grad, np.full(3, 0.1), n_draws=500, n_warmup=300, seed=2)
    assert s.draws.shape == (4, 500, 3) and np.all(np.isfinite(s.log_prob))
    res = gbs.evidence(p.log_prob, s, seed=2)
    assert abs(res.logz - p.logz) < 4 * res.logzerr


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
    with pytest.raises(ValueError, match="even"):
        gbs.sample_ensemble(logp, bounds=[[-2, 2]] * 4, walkers=9, vectorize=True)
    with pytest.raises(ValueError, match="ndim"):
        gbs.sample_ensemble(gauss_vec, np.zeros((8, 2)), ndim=3, vectorize=True)
