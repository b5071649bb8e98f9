"""Native densities: gbs.NativeDensity (a C function the library calls with
no Python callback) and the library's reference problems
(gbs.problems.<name>(d).native(), gbs.native_problem)."""

import ctypes

import numpy as np
import pytest

import gbs
from gbs import _lib

NATIVE = [gbs.problems.funnel(5), gbs.problems.cauchy(3), gbs.problems.ring(4), gbs.problems.gaussian(3),
          gbs.problems.mixture(2), gbs.problems.banana(4, rotation=np.eye(4))]


@pytest.mark.parametrize("p", NATIVE, ids=lambda p: p.name)
def test_native_problem_is_the_numpy_one(p):
    """The library's copy has the numpy copy's log p, gradient, box and
    ln Z (the two are held to each other point by point in
    test_problems_go.py; here through the C ABI)."""
    q = p.native()
    assert q.dim == p.dim and q.thread_safe
    assert q.logz == pytest.approx(p.logz, abs=1e-9)
    if p.bounds is None:
        assert q.bounds is None
    else:
        np.testing.assert_array_equal(q.bounds[0], p.lower)
        np.testing.assert_array_equal(q.bounds[1], p.upper)
    rng = np.random.default_rng(3)
    x = 0.5 * rng.standard_normal((6, p.dim))
    lp, g = q(x)
    want_lp, want_g = p.log_prob_and_grad(x)
    scale = 1 + np.abs(want_lp)
    np.testing.assert_allclose(lp, want_lp, rtol=0, atol=1e-11 * scale.max())
    np.testing.assert_allclose(g, want_g, rtol=1e-10, atol=1e-10)


def test_problems_without_a_native_copy():
    for p in (gbs.problems.banana(4), gbs.problems.correlated_gaussian(3), gbs.problems.gaussian(2, c=1.0),
              gbs.problems.mixture(2, sds=(1.0, 1.0))):
        with pytest.raises(ValueError, match="no copy in the library"):
            p.native()
    with pytest.raises(gbs.GbsArgumentError, match="dimension 0 out of range"):
        gbs.native_problem("funnel-0")
    with pytest.raises(gbs.GbsArgumentError, match="funnel-<d>"):
        gbs.native_problem("funnels")


def test_run_native_funnel():
    """gbs.run on the library's funnel: ln Z within 4 sigma, no warning,
    no Python callback (the densities' calls are not counted here: the
    run's gradient calls are the library's)."""
    f = gbs.problems.funnel(4)
    res = gbs.run(f.native(), n_chains=4, n_draws=1000, n_warmup=500, seed=5)
    assert abs(res.logz - f.logz) < 4 * res.logzerr and res.logzerr < 0.02
    assert not res.warnings
    assert res.samples.draws.shape[0] == 4 and res.samples.draws.shape[2] == 4
    assert res.sampling["grad_calls"] > 4 * 1500


def test_sample_native_gaussian():
    g = gbs.problems.gaussian(3)
    s = gbs.sample(g.native(), np.zeros(3), n_chains=4, n_draws=1000, n_warmup=300, seed=2)
    x = s.draws.reshape(-1, 3)
    # 4000 correlated draws of N(0, I): the mean within 0.15, the variance within 0.25
    assert np.all(np.abs(x.mean(axis=0)) < 0.15) and np.all(np.abs(x.var(axis=0) - 1) < 0.25)


class Scale(ctypes.Structure):
    _fields_ = [("sd", ctypes.c_double), ("calls", ctypes.c_int64), ("fail_at", ctypes.c_int64)]


@_lib.LOG_DENSITY_GRAD_FN
def scaled_normal(x, d, logp, grad, user):
    """N(0, sd^2 I) in C's calling convention (a ctypes function: the
    plumbing of a compiled density, with Python behind it)."""
    s = ctypes.cast(user, ctypes.POINTER(Scale)).contents
    s.calls += 1
    if s.fail_at and s.calls >= s.fail_at:
        return 7
    xs = np.ctypeslib.as_array(ctypes.cast(x, ctypes.POINTER(ctypes.c_double)), (d,))
    gs = np.ctypeslib.as_array(ctypes.cast(grad, ctypes.POINTER(ctypes.c_double)), (d,))
    v = s.sd * s.sd
    ctypes.cast(logp, ctypes.POINTER(ctypes.c_double))[0] = float(
        -0.5 * xs @ xs / v - 0.5 * d * np.log(2 * np.pi * v))
    gs[:] = -xs / v
    return 0


def test_native_density_user_pointer_and_value():
    st = Scale(2.0, 0, 0)
    nd = gbs.NativeDensity(scaled_normal, 2, ctypes.byref(st))
    lp, g = nd(np.array([1.0, -2.0]))
    assert lp == pytest.approx(-0.5 * 5 / 4 - np.log(2 * np.pi * 4))
    np.testing.assert_allclose(g, [-0.25, 0.5])
    assert st.calls == 1
    res = gbs.run(nd, x0=np.zeros(2), n_chains=2, n_draws=500, n_warmup=300, seed=1, global_moves=False)
    assert abs(res.logz) < 4 * res.logzerr       # normalized: ln Z = 0
    # the manual call, the sampler's and the evidence stage's
    assert st.calls == 1 + res.sampling["grad_calls"] + res.sampling["logdensity_calls"]


def test_native_density_failure_aborts_with_the_library_error():
    st = Scale(1.0, 0, 50)
    nd = gbs.NativeDensity(scaled_normal, 2, st)
    with pytest.raises(gbs.GbsCallbackError, match="error code 7"):
        gbs.run(nd, x0=np.zeros(2), n_chains=2, n_draws=100, n_warmup=100, seed=1)
    with pytest.raises(gbs.GbsCallbackError, match="error code 7"):
        nd(np.zeros(2))


def test_native_density_arguments():
    nd = gbs.problems.funnel(3).native()
    with pytest.raises(ValueError, match="vectorize"):
        gbs.run(nd, vectorize=True)
    with pytest.raises(ValueError, match="args"):
        gbs.sample(nd, np.zeros(3), args=(1,))
    with pytest.raises(ValueError, match="dimension 3"):
        gbs.run(nd, x0=np.zeros(4))
    with pytest.raises(ValueError, match="NULL"):
        gbs.NativeDensity(0, 2)
    with pytest.raises(TypeError, match="function pointer"):
        gbs.NativeDensity("f", 2)
    with pytest.raises(ValueError, match="dim"):
        gbs.NativeDensity(scaled_normal, 0)
    assert "funnel-3" in repr(nd)
