"""gbs.run: the library's NUTS + evidence pipeline from Python (its
repairs are tested in Go, pipeline/): ln Z within its error bar, bounds,
vectorize and pool giving the same result, seeds, the draws, callback
errors and bad input."""

import concurrent.futures
import math

import numpy as np
import pytest

import gbs

# A correlated 3-d Gaussian, log p = C - x'Px/2: ln Z = C + (d/2) ln 2 pi - ln det(P)/2.
P = np.array([[2.0, 0.6, 0.0], [0.6, 1.0, -0.3], [0.0, -0.3, 0.5]])
C = -1.25
LOGZ = C + 1.5 * math.log(2 * math.pi) - 0.5 * math.log(np.linalg.det(P))


def gauss(x):
    """log p and gradient at n points (n, 3)."""
    px = x @ P
    return C - 0.5 * np.sum(px * x, axis=-1), -px


def gauss_point(x):
    """The same at one point: the batched function's values for its row."""
    lp, g = gauss(x[None, :])
    return lp[0], g[0]


# Independent exponentials of rate 1 truncated to (0, 5) in 2-d: p is
# exp(-x1 - x2) in the box, so Z = (1 - e^-5)^2.
BOX = [[0.0, 5.0], [0.0, 5.0]]
BOX_LOGZ = 2 * math.log1p(-math.exp(-5))


def expo(x):
    inside = np.all((x > 0) & (x < 5), axis=-1)
    lp = np.where(inside, -np.sum(x, axis=-1), -np.inf)
    return lp, -np.ones_like(x)


def within(res, exact, k, sigma_max):
    z = (res.logz - exact) / res.logzerr
    assert abs(z) < k, (res.logz, res.logzerr, exact, z)
    assert res.logzerr < sigma_max, res.logzerr


def test_gaussian_within_its_error_bar():
    res = gbs.run(gauss, np.zeros(3), vectorize=True, seed=1)
    within(res, LOGZ, 4, 0.02)
    assert not res.warnings
    assert res.method == "bridge" and res.seed == 1


def test_the_draws_and_the_sampling_facts():
    res = gbs.run(gauss, np.zeros(3), n_chains=3, n_draws=400, vectorize=True, seed=2)
    s = res.samples
    assert isinstance(s, gbs.Samples)
    assert s.draws.shape == (3, 400, 3) == (res.n_chains, res.n_draws, res.dim)
    assert s.log_prob.shape == (3, 400)
    # log p at the draws is the density's, as the library stored it.
    np.testing.assert_allclose(s.log_prob, gauss(s.draws.reshape(-1, 3))[0].reshape(3, 400),
                               rtol=0, atol=1e-12)
    assert len(s.stats) == 3 and all(st["grad_calls"] > 0 for st in s.stats)
    f = res.sampling
    assert f["target_accept"] == 0.9  # the pipeline's first target (Go's default)
    assert f["retried"] is False and f["lengthened"] is False
    assert s.ncall == f["grad_calls"] == sum(st["grad_calls"] for st in s.stats)
    assert f["logdensity_calls"] >= res.ncall > 0
    assert f["sampling_seconds"] > 0 and f["evidence_seconds"] > 0
    # The draws are a sample of p: their covariance is P's inverse.
    cov = np.cov(s.draws.reshape(-1, 3).T)
    np.testing.assert_allclose(cov, np.linalg.inv(P), atol=0.35)
    # proposal_draws and plot work from the pipeline's draws.
    assert res.proposal_draws(50).shape == (50, 3)


def test_bounds():
    res = gbs.run(expo, [1.0, 1.0], bounds=BOX, vectorize=True, seed=3)
    within(res, BOX_LOGZ, 4, 0.03)
    s = res.samples.draws
    assert s.min() > 0 and s.max() < 5


def test_starting_points_drawn_in_the_bounds():
    # Without x0 the library draws each chain's start in the box.
    res = gbs.run(expo, bounds=BOX, n_chains=2, vectorize=True, seed=4)
    within(res, BOX_LOGZ, 4, 0.05)
    assert res.samples.draws.shape[:1] == (2,)


def test_vectorize_and_pool_give_the_per_point_result():
    common = dict(n_chains=3, n_draws=300, n_warmup=300, seed=5)
    one = gbs.run(gauss_point, np.zeros(3), **common)
    batched = gbs.run(gauss, np.zeros(3), vectorize=True, **common)
    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        pooled = gbs.run(gauss, np.zeros(3), vectorize=True, pool=pool, **common)
        pooled_points = gbs.run(gauss_point, np.zeros(3), pool=pool, **common)
    for r in (batched, pooled, pooled_points):
        assert np.array_equal(r.samples.draws, one.samples.draws)
        assert r.logz == one.logz and r.logzerr == one.logzerr


def test_seed_reproduces():
    a = gbs.run(gauss, np.zeros(3), n_draws=300, vectorize=True, seed=6)
    b = gbs.run(gauss, np.zeros(3), n_draws=300, vectorize=True, seed=6)
    c = gbs.run(gauss, np.zeros(3), n_draws=300, vectorize=True, seed=7)
    assert a.logz == b.logz and np.array_equal(a.samples.draws, b.samples.draws)
    assert c.logz != a.logz
    fresh = gbs.run(gauss, np.zeros(3), n_draws=300, vectorize=True)
    assert isinstance(fresh.seed, int)


def test_args_and_kwargs():
    def shifted(x, mu, scale=1.0):
        lp, g = gauss(x - mu)
        return scale * lp, scale * g
    res = gbs.run(shifted, np.ones(3), args=(np.ones(3),), kwargs={"scale": 1.0}, n_draws=300,
                  vectorize=True, seed=8)
    within(res, LOGZ, 4, 0.03)


class Boom(Exception):
    pass


@pytest.mark.parametrize("vectorize", [False, True])
def test_a_callback_that_raises_aborts_the_call(vectorize):
    calls = []

    def bad(x):
        calls.append(1)
        if len(calls) > 50:
            raise Boom("from the density")
        return gauss(x) if vectorize else gauss_point(x)
    with pytest.raises(Boom, match="from the density"):
        gbs.run(bad, np.zeros(3), n_draws=200, vectorize=vectorize, seed=9)
    assert len(calls) == 51  # nothing was evaluated after the error


def test_a_callback_that_raises_in_the_evidence_stage():
    # The sampler's points are the chains' (n_chains per call); the
    # evidence stage's batches are larger: fail there.
    def bad(x):
        if len(x) > 4:
            raise Boom("evidence stage")
        return gauss(x)
    with pytest.raises(Boom, match="evidence stage"):
        gbs.run(bad, np.zeros(3), n_chains=4, n_draws=200, vectorize=True, seed=10)


@pytest.mark.slow  # the pipeline runs its reruns before the evidence sees the NaN
def test_nan_log_density_is_an_error():
    def nan(x):
        lp, g = gauss(x)
        return np.where(x[:, 0] > 1.0, np.nan, lp), g
    with pytest.raises(gbs.GbsError):
        gbs.run(nan, np.zeros(3), n_draws=200, vectorize=True, seed=11)


@pytest.mark.parametrize("kw, err, match", [
    (dict(x0=np.zeros((2, 2, 3))), ValueError, "x0 must have shape"),
    (dict(x0=None), ValueError, "give x0"),
    (dict(n_draws=0), ValueError, "n_draws"),
    (dict(n_chains=0), ValueError, "n_chains"),
    (dict(n_warmup=-1), ValueError, "n_warmup"),
    (dict(n_warmup=10.0), TypeError, "n_warmup must be an integer"),
    (dict(metric="full"), ValueError, "metric"),
    (dict(target_accept=1.5), ValueError, "target_accept"),
    (dict(step_size=-1.0), ValueError, "step_size"),
    (dict(bounds=[[0, 1]] * 2), ValueError, "bounds"),
    (dict(bounds=[[1, 0]] * 3), ValueError, "low must be smaller"),
    (dict(method="simpson"), ValueError, "method"),
    (dict(seed=-1), ValueError, "seed"),
    (dict(f_err=2.0), ValueError, "f_err"),
    (dict(pool=object()), TypeError, "pool"),
])
def test_bad_input(kw, err, match):
    args = dict(x0=np.zeros(3), n_draws=50, vectorize=True, seed=1)
    args.update(kw)
    x0 = args.pop("x0")
    with pytest.raises(err, match=match):
        gbs.run(gauss, x0, **args)


def test_bad_callbacks():
    with pytest.raises(TypeError, match="callable"):
        gbs.run("gauss", np.zeros(3))
    with pytest.raises(TypeError, match="unexpected keyword"):
        gbs.run(gauss, np.zeros(3), discard=10)
    with pytest.raises(ValueError, match="shape"):
        gbs.run(lambda x: (np.zeros(len(x) + 1), -x), np.zeros(3), n_draws=50, vectorize=True, seed=1)
    with pytest.raises(TypeError, match="must return"):
        gbs.run(lambda x: 0.0, np.zeros(3), n_draws=50, seed=1)
    # A start outside the support is the library's error, named.
    with pytest.raises(gbs.GbsError):
        gbs.run(expo, [6.0, 1.0], bounds=BOX, n_draws=50, vectorize=True, seed=1)


@pytest.mark.slow
def test_funnel_at_the_papers_budget():
    # The pipeline's repairs at work: the first run diverges in the neck,
    # the rerun at 0.99 does not warn, and ln Z is within 3 sigma.
    f = gbs.problems.funnel(16)
    res = gbs.run(f.log_prob_and_grad, bounds=f.bounds, n_chains=8, n_draws=2000, n_warmup=500,
                  vectorize=True, seed=777200)
    within(res, f.logz, 3, 0.003)
    assert not res.warnings
    assert res.found("rerun") and res.sampling["target_accept"] == 0.99
