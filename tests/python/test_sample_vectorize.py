"""gbs.sample(..., vectorize=True): the chains' points in one call, the same
draws as the per-point path for the same seed."""

import numpy as np
import pytest

import gbs

PREC = np.array([1.0, 2.0, 0.5, 4.0, 1.5])
MU = np.array([0.5, -1.0, 2.0, 0.0, 1.0])


def point(x):
    """log p and gradient of a diagonal Gaussian at one point."""
    r = x - MU
    return -0.5 * np.sum(r * r * PREC), -r * PREC


def batch(x):
    """The same at n points (n, d): elementwise operations and row sums
    round as the per-point ones do, so the values are bit for bit equal."""
    r = x - MU
    return -0.5 * np.sum(r * r * PREC, axis=-1), -r * PREC


def test_batched_values_equal_per_point():
    # The premise of the draw equality below, checked on its own.
    x = np.random.default_rng(0).normal(size=(8, 5))
    lp, g = batch(x)
    for i in range(8):
        lpi, gi = point(x[i])
        assert lp[i] == lpi and np.array_equal(g[i], gi)


@pytest.mark.parametrize("kw", [dict(), dict(bounds=[[-5, 5]] * 5), dict(metric="dense", max_depth=4),
                                dict(global_moves=False)])
def test_vectorize_gives_the_same_draws(kw):
    calls = {"point": 0, "batch": 0, "sizes": set()}

    def counted_point(x):
        calls["point"] += 1
        return point(x)

    def counted_batch(x):
        calls["batch"] += 1
        calls["sizes"].add(len(x))
        return batch(x)

    common = dict(n_draws=300, n_warmup=300, n_chains=8, seed=11, **kw)
    s = gbs.sample(counted_point, np.zeros(5), **common)
    v = gbs.sample(counted_batch, np.zeros(5), vectorize=True, **common)
    assert np.array_equal(v.draws, s.draws)
    assert np.array_equal(v.log_prob, s.log_prob)
    assert v.stats == s.stats and v.ncall == s.ncall == calls["point"]
    # One call per step of the longest chain, with every chain still
    # sampling; with global moves (on by default here) per phase between
    # the flow's fits, so at least that many.
    longest = max(c["grad_calls"] for c in v.stats)
    if kw.get("global_moves") is False:
        assert calls["batch"] == longest
    else:
        assert longest <= calls["batch"] <= sum(c["grad_calls"] for c in v.stats)
    assert max(calls["sizes"]) == 8 and min(calls["sizes"]) >= 1


def test_vectorize_errors():
    with pytest.raises(ValueError, match=r"shape \(8,\)"):
        gbs.sample(lambda x: (np.zeros(3), -x), np.zeros(5), n_chains=8, n_draws=10, n_warmup=10,
                   vectorize=True, seed=1)
    with pytest.raises(ValueError, match=r"gradient of shape \(8, 4\)"):
        gbs.sample(lambda x: (np.zeros(len(x)), x[:, :4]), np.zeros(5), n_chains=8, n_draws=10,
                   n_warmup=10, vectorize=True, seed=1)
    with pytest.raises(TypeError, match=r"gradient of dtype <U1 for a batch of 8 points"):
        gbs.sample(lambda x: (np.zeros(len(x)), np.full(x.shape, "a")), np.zeros(5), n_chains=8,
                   n_draws=10, n_warmup=10, vectorize=True, seed=1)

    class Boom(Exception):
        pass

    n = [0]

    def failing(x):
        n[0] += 1
        if n[0] == 20:
            raise Boom("batch 20")
        return batch(x)

    with pytest.raises(Boom, match="batch 20"):
        gbs.sample(failing, np.zeros(5), n_chains=4, n_draws=100, n_warmup=100, vectorize=True, seed=1)
