"""Label switching: the symmetry= and symmetry_groups= keywords, and a
PyMC NormalMixture whose draws hold one labeling, through gbs.from_pymc
(the adapter passes the mixture's means as a candidate group)."""

import numpy as np
import pytest

import gbs


def _norm_logpdf(x, mu, sd):
    z = (x - mu) / sd
    return -0.5 * z * z - np.log(sd) - 0.5 * np.log(2 * np.pi)


def _two_copies(x):
    """Two unit-width Gaussians at (-3, 3) and (3, -3): invariant under
    exchanging the coordinates, ln Z = ln 2."""
    a = _norm_logpdf(x[:, 0], -3, 0.5) + _norm_logpdf(x[:, 1], 3, 0.5)
    b = _norm_logpdf(x[:, 0], 3, 0.5) + _norm_logpdf(x[:, 1], -3, 0.5)
    return np.logaddexp(a, b)


def _one_labeling(seed=3):
    rng = np.random.default_rng(seed)
    x = np.empty((8, 1000, 2))
    x[..., 0] = -3 + 0.5 * rng.standard_normal((8, 1000))
    x[..., 1] = 3 + 0.5 * rng.standard_normal((8, 1000))
    return x


def test_symmetry_found_and_corrected():
    x = _one_labeling()
    res = gbs.evidence(_two_copies, x, vectorize=True, independent=True, seed=1)
    assert abs(res.logz - np.log(2)) < 3 * res.logzerr, res.summary()
    [f] = res.found("symmetry")
    assert f.value < f.limit
    assert not res.warnings
    off = gbs.evidence(_two_copies, x, vectorize=True, independent=True, seed=1, symmetry="off")
    assert not off.found("symmetry")
    assert abs(off.logz) < 4 * off.logzerr  # one labeling: ln 2 short


def test_symmetry_groups_given_and_checked():
    x = _one_labeling()
    res = gbs.evidence(_two_copies, x, vectorize=True, independent=True, seed=2,
                       symmetry_groups=[[0, 1]])
    assert res.found("symmetry")
    assert abs(res.logz - np.log(2)) < 3 * res.logzerr, res.summary()
    # A coordinate out of range is the library's error, naming the group.
    with pytest.raises(gbs.GbsError, match="symmetry group"):
        gbs.evidence(_two_copies, x, vectorize=True, independent=True, symmetry_groups=[[0, 5]])


@pytest.mark.parametrize("kw, err", [
    (dict(symmetry="sometimes"), ValueError),
    (dict(symmetry_groups=[[0]]), ValueError),
    (dict(symmetry_groups=[[[0, 1], [2]]]), ValueError),
    (dict(symmetry_groups=[[0, "a"]]), TypeError),
    (dict(symmetry_groups=[3]), TypeError),
])
def test_symmetry_arguments(kw, err):
    with pytest.raises(err):
        gbs.evidence(_two_copies, _one_labeling(), vectorize=True, **kw)


def test_candidate_groups_from_shapes():
    from gbs.adapters._symmetry import candidate_groups
    # mu (2,), a scalar, sigma (2,), a (3,) vector: mu alone, sigma alone,
    # both together; the (3,) vector alone.
    groups = candidate_groups([(2,), (), (2,), (3,)])
    assert [[0], [1]] in groups and [[3], [4]] in groups and [[0, 3], [1, 4]] in groups
    assert [[5], [6], [7]] in groups
    assert len(groups) == 4


# The mixture: 25 points at -2 and 25 at +2, equal weights, sigma 1,
# mu_k ~ N(0, 5^2) iid.
DATA = np.array([-2.0] * 25 + [2.0] * 25)


def _mixture_logp(m1, m2):
    lp = _norm_logpdf(m1, 0, 5) + _norm_logpdf(m2, 0, 5)
    for y, n in ((-2.0, 25), (2.0, 25)):
        lp = lp + n * np.logaddexp(np.log(0.5) + _norm_logpdf(y, m1, 1), np.log(0.5) + _norm_logpdf(y, m2, 1))
    return lp


def _mixture_quadrature(h=0.05, lim=14.0):
    g = np.arange(-lim + h / 2, lim, h)
    m1, m2 = np.meshgrid(g, g, indexing="ij")
    lp = _mixture_logp(m1, m2)
    mx = lp.max()
    return mx + np.log(np.exp(lp - mx).sum()) + 2 * np.log(h)


def _mixture_draws_one_labeling(n, seed):
    """Exact draws of the posterior restricted to mu_1 < mu_2 (one
    labeling, as every NUTS chain gives): a fine grid's cells drawn by
    their mass, a uniform point within each."""
    h = 0.005
    g = np.arange(-4 + h / 2, 4, h)
    m1, m2 = np.meshgrid(g, g, indexing="ij")
    lp = np.where(m1 < m2, _mixture_logp(m1, m2), -np.inf)
    w = np.exp(lp - lp.max()).ravel()
    rng = np.random.default_rng(seed)
    idx = rng.choice(w.size, size=n, p=w / w.sum())
    pts = np.stack([m1.ravel()[idx], m2.ravel()[idx]], axis=1)
    return pts + h * (rng.random(pts.shape) - 0.5)


@pytest.mark.slow
def test_pymc_normal_mixture_one_labeling():
    pm = pytest.importorskip("pymc")
    az = pytest.importorskip("arviz")
    with pm.Model() as model:
        mu = pm.Normal("mu", 0, 5, shape=2)
        pm.NormalMixture("y", w=np.array([0.5, 0.5]), mu=mu, sigma=1.0, observed=DATA)
    exact = _mixture_quadrature()
    draws = _mixture_draws_one_labeling(8000, seed=5).reshape(4, 2000, 2)
    idata = az.from_dict(posterior={"mu": draws})
    res = gbs.from_pymc(idata, model, independent=True, seed=4, compile_kwargs={"mode": "JAX"})
    assert abs(res.logz - exact) < 3 * res.logzerr, (res.summary(), exact)
    assert res.logzerr < 0.01
    [f] = res.found("symmetry")
    assert f.value < f.limit
    off = gbs.from_pymc(idata, model, independent=True, seed=4, symmetry="off",
                        compile_kwargs={"mode": "JAX"})
    assert abs(off.logz - (exact - np.log(2))) < 4 * off.logzerr, (off.summary(), exact)
