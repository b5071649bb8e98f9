"""gbs.evidence from Python: accuracy, emcee integration, input handling."""

import contextlib
import math

import numpy as np
import pytest
import targets
from targets import C, gauss, gauss_vec

import gbs
from gbs import problems


def within(res, exact, max_err):
    assert abs(res.logz - exact) < 4 * res.logzerr, res.summary()
    assert res.logzerr < max_err, res.summary()


# ---------------------------------------------------------------------------
# Accuracy with exact draws
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("problem,max_err", [
    (problems.funnel(), 0.03),
    (problems.banana2(), 0.03),
    (problems.gaussian(6, c=2.0), 0.02),
])
def test_reference_problems_exact_draws(problem, max_err):
    x = problem.sample(20000, seed=3)
    res = gbs.evidence(problem.log_prob, x, vectorize=True, bounds=problem.bounds,
                       independent=True, seed=3)
    within(res, problem.logz, max_err)
    # Cross-fitting: every draw is a posterior draw in one of the two passes.
    assert res.method == "bridge" and res.n_p == 20000 and res.n_q >= res.n_p
    # The coverage check spends about n_q/10 calls of its own.
    cov = res.diagnostics.coverage_calls
    assert 0 < cov <= res.n_q // 10 + 2 and res.diagnostics.coverage_frac <= res.diagnostics.coverage_limit
    assert res.tau == 1 and res.ncall == res.n_q + res.n_p + cov + res.diagnostics.census_calls
    assert res.dim == problem.dim and (res.n_chains, res.n_draws) == (1, 20000)


@pytest.mark.parametrize("method", ["bridge", "is", "hm", "warp3"])
def test_methods(method):
    x = np.random.default_rng(1).normal(size=(4000, 3))
    res = gbs.evidence(gauss_vec, x, vectorize=True, method=method, seed=1, independent=True)
    within(res, C, 0.05)
    assert res.method == method


def test_same_seed_same_result_and_none_draws_a_seed():
    x = np.random.default_rng(1).normal(size=(3000, 2))
    a = gbs.evidence(gauss_vec, x, vectorize=True, seed=11)
    b = gbs.evidence(gauss_vec, x, vectorize=True, seed=11)
    assert (a.logz, a.logzerr, a.n_q) == (b.logz, b.logzerr, b.n_q) and a.seed == 11
    c = gbs.evidence(gauss_vec, x, vectorize=True)
    assert isinstance(c.seed, int)
    again = gbs.evidence(gauss_vec, x, vectorize=True, seed=c.seed)
    assert again.logz == c.logz
    gen = gbs.evidence(gauss_vec, x, vectorize=True, seed=np.random.default_rng(5))
    assert abs(gen.logz - C) < 4 * gen.logzerr


def test_cross_fit_off_is_one_pass():
    x = np.random.default_rng(4).normal(size=(4, 1000, 2))
    both = gbs.evidence(gauss_vec, x, vectorize=True, n_q=4000, seed=2)
    one = gbs.evidence(gauss_vec, x, vectorize=True, n_q=4000, seed=2, cross_fit=False)
    assert (both.n_p, one.n_p) == (4000, 2000) and both.n_q == one.n_q == 4000
    assert both.logz != one.logz
    for r in (both, one):
        assert abs(r.logz - C) < 4 * r.logzerr


def test_explicit_n_q_and_trace():
    x = np.random.default_rng(2).normal(size=(4000, 2))
    res = gbs.evidence(gauss_vec, x, vectorize=True, n_q=5000, seed=1)
    assert res.n_q == 5000 and res.ncall == 5000 + res.n_p + res.diagnostics.coverage_calls
    off = gbs.evidence(gauss_vec, x, vectorize=True, n_q=5000, seed=1, coverage_check=False)
    assert off.ncall == 5000 + off.n_p and off.diagnostics.coverage_calls == 0
    assert off.logz == res.logz and math.isnan(off.diagnostics.coverage_frac)
    assert res.trace.shape[1] == 3 and res.trace[-1, 0] == 5000
    assert np.all(np.diff(res.trace[:, 0]) > 0)
    assert res.trace[-1, 1] == res.logz


def test_anneal_setting():
    # "auto" leaves well-sampled draws to the direct bridge ("off" gives the
    # same number); "on" anneals, says so in info and counts its calls.
    x = np.random.default_rng(6).normal(size=(4000, 2))
    auto = gbs.evidence(gauss_vec, x, vectorize=True, seed=3, independent=True)
    off = gbs.evidence(gauss_vec, x, vectorize=True, seed=3, independent=True, anneal="off")
    on = gbs.evidence(gauss_vec, x, vectorize=True, seed=3, independent=True, anneal="on")
    assert off.logz == auto.logz and not auto.found("anneal")
    assert [f.kind for f in on.found("anneal")] == ["info"] and on.ncall > auto.ncall
    within(on, C, 0.05)
    with pytest.raises(ValueError, match="anneal must be one of 'auto', 'off', 'on', not 'yes'"):
        gbs.evidence(gauss_vec, x, vectorize=True, anneal="yes")


def test_args_kwargs_and_blobs():
    x = np.random.default_rng(3).normal(size=(3000, 2))

    def lp(v, shift, c=0.0):
        return gauss(v - shift, c=c), "a blob"

    res = gbs.evidence(lp, x + 2.0, args=(2.0,), kwargs={"c": 0.7}, seed=1)
    within(res, 0.7, 0.05)

    def lp_vec(v, c):
        return gauss_vec(v, c=c), np.zeros(len(v))

    res = gbs.evidence(lp_vec, x, vectorize=True, kwargs={"c": -0.3}, seed=1)
    within(res, -0.3, 0.05)


def test_bounded_problem_and_bounds_layouts():
    # Uniform on the box [0, 1] x [0, 2] x [-1, 1]: ln Z = ln 4 for p = 1.
    lo, hi = np.array([0.0, 0, -1]), np.array([1.0, 2, 1])
    x = np.random.default_rng(4).uniform(lo, hi, size=(6000, 3))

    def lp(v):
        return np.where(np.all((v > lo) & (v < hi), axis=1), 0.0, -np.inf)

    results = [gbs.evidence(lp, x, vectorize=True, bounds=b, independent=True, seed=2)
               for b in (np.column_stack([lo, hi]), (lo, hi), [[0, 1], [0, 2], [-1, 1]])]
    for res in results:
        within(res, math.log(4), 0.02)
    assert results[0].logz == results[1].logz == results[2].logz
    # d = 2: a tuple is (lower, upper), rows otherwise; invalid readings fall away.
    x2 = x[:, :2]
    lp2 = lambda v: np.where(np.all((v > lo[:2]) & (v < hi[:2]), axis=1), 0.0, -np.inf)  # noqa: E731
    a = gbs.evidence(lp2, x2, vectorize=True, bounds=[[0, 1], [0, 2]], independent=True, seed=2)
    b = gbs.evidence(lp2, x2, vectorize=True, bounds=([0, 0], [1, 2]), independent=True, seed=2)
    assert a.logz == b.logz
    within(a, math.log(2), 0.02)
    # One open side: None or inf.
    c = gbs.evidence(lp2, x2, vectorize=True, bounds=[[0, None], [0, np.inf]], independent=True,
                     seed=2)
    within(c, math.log(2), 0.05)


# ---------------------------------------------------------------------------
# emcee
# ---------------------------------------------------------------------------

class Counter:
    """Counts the points a log density is evaluated at."""

    def __init__(self, fn):
        self.fn, self.n = fn, 0

    def __call__(self, x):
        self.n += 1
        return self.fn(x)


def run_emcee(target, d, steps, seed=7, nwalkers=32):
    emcee = pytest.importorskip("emcee")
    rng = np.random.default_rng(seed)
    p0 = 0.1 * rng.normal(size=(nwalkers, d)) + (np.array([1.0, 1.0]) if d == 2 else 0)
    sampler = emcee.EnsembleSampler(nwalkers, d, target)
    sampler.random_state = np.random.RandomState(seed).get_state()
    sampler.run_mcmc(p0, steps, progress=False)
    return sampler


@pytest.mark.parametrize("target,d,exact,steps,burn", [
    (gauss, 5, C, 4000, 500),
    (targets.banana, 2, targets.BANANA_LOGZ, 4000, 1000),
])
def test_emcee(target, d, exact, steps, burn):
    sampler = run_emcee(target, d, steps)
    # The banana's walkers have tau of several hundred steps: 3000 are too
    # few to estimate it (emcee asks for 50 tau), and gbs says so (chains
    # too short, an effective sample size below 100): warnings about the
    # draws, none about the estimate. The Gaussian's walkers have tau of
    # about 50 steps: 3500 after burn-in pass emcee's rule (1500 did not).
    with (pytest.warns(gbs.SamplerWarning) if target is targets.banana
          else contextlib.nullcontext()):
        check_emcee(sampler, target, d, exact, steps, burn)


def check_emcee(sampler, target, d, exact, steps, burn):

    counted = Counter(target)
    res = gbs.evidence(counted, sampler, discard=burn, seed=3)
    within(res, exact, 0.1)
    # Only the proposal draws are evaluated, and 32 draws whose stored
    # log-probabilities the library spot-checks: the rest are reused.
    assert counted.n == res.ncall == res.n_q + 32 + res.diagnostics.coverage_calls
    assert res.diagnostics.spot_checked == 32 and res.diagnostics["spot_max_diff"] < 1e-9
    assert (res.n_chains, res.n_draws) == (32, steps - burn)

    chain, lp = sampler.get_chain(discard=burn), sampler.get_log_prob(discard=burn)
    assert chain.shape == (steps - burn, 32, d)
    counted = Counter(target)
    res2 = gbs.evidence(counted, chain, log_prob_samples=lp, chain_axis=1, seed=3,
                        ncall=sampler.iteration * 32)
    assert counted.n == res2.ncall == res2.n_q + 32 + res2.diagnostics.coverage_calls
    assert (res2.logz, res2.logzerr, res2.n_q) == (res.logz, res.logzerr, res.n_q)

    # Without the stored values the estimator's half is evaluated as well;
    # the answer is the same.
    counted = Counter(target)
    res3 = gbs.evidence(counted, chain, chain_axis=1, seed=3, ncall=sampler.iteration * 32)
    assert counted.n == res3.ncall == res3.n_q + res3.n_p + res3.diagnostics.coverage_calls
    assert abs(res3.logz - res.logz) < 1e-9


def test_emcee_vectorized_sampler_thin_and_errors():
    emcee = pytest.importorskip("emcee")
    rng = np.random.default_rng(0)
    sampler = emcee.EnsembleSampler(16, 3, gauss_vec, vectorize=True)
    sampler.run_mcmc(rng.normal(size=(16, 3)), 3000, progress=False)
    res = gbs.evidence(gauss_vec, sampler, vectorize=True, discard=500, thin=2, seed=1)
    within(res, C, 0.1)
    assert res.n_draws == 1250
    with pytest.raises(ValueError, match="discard=5000 drops every step"):
        gbs.evidence(gauss_vec, sampler, discard=5000)
    with pytest.raises(ValueError, match="taken from the emcee sampler"):
        gbs.evidence(gauss_vec, sampler, log_prob_samples=np.zeros((3000, 16)))


def test_emcee_sampler_arguments_are_the_default():
    """log_prob's args and kwargs default to those the emcee sampler was
    made with (emcee keeps them on sampler.log_prob_fn); given ones win."""
    emcee = pytest.importorskip("emcee")
    mu = np.array([0.5, -1.0, 2.0])

    def log_prob(v, centre, scale=1.0):
        return -0.5 * float(np.sum((v - centre) ** 2)) / scale ** 2

    rng = np.random.default_rng(0)
    sampler = emcee.EnsembleSampler(16, 3, log_prob, args=(mu,), kwargs={"scale": 0.5})
    sampler.random_state = np.random.RandomState(1).get_state()
    sampler.run_mcmc(mu + 0.5 * rng.normal(size=(16, 3)), 3000, progress=False)
    res = gbs.evidence(log_prob, sampler, discard=500, seed=1)
    within(res, 1.5 * np.log(2 * np.pi * 0.25), 0.1)
    explicit = gbs.evidence(log_prob, sampler, discard=500, seed=1, args=(mu,), kwargs={"scale": 0.5})
    assert (res.logz, res.logzerr) == (explicit.logz, explicit.logzerr)
    # One of the two given: the other still comes from the sampler.
    assert gbs.evidence(log_prob, sampler, discard=500, seed=1, kwargs={"scale": 0.5}).logz == res.logz
    # Given ones win: another scale is another density, which the
    # spot-check of the stored log-probabilities refuses.
    with pytest.raises(gbs.GbsError, match="args and kwargs the sampler was created with"):
        gbs.evidence(log_prob, sampler, discard=500, seed=1, kwargs={"scale": 1.0})
    # A function other than the sampler's binds its own arguments.
    closure = gbs.evidence(lambda v: log_prob(v, mu, scale=0.5), sampler, discard=500, seed=1)
    assert closure.logz == res.logz


# ---------------------------------------------------------------------------
# Input handling
# ---------------------------------------------------------------------------

def test_no_copy_of_c_contiguous_float64():
    x = np.random.default_rng(0).normal(size=(3, 1000, 2))
    res = gbs.evidence(gauss_vec, x, vectorize=True, seed=1)
    assert res._context["x"] is x or np.shares_memory(res._context["x"], x)


def test_input_conversion():
    rng = np.random.default_rng(4)
    x = rng.normal(size=(3000, 3))
    ref = gbs.evidence(gauss_vec, x, vectorize=True, seed=2)
    assert gbs.evidence(gauss_vec, x.tolist(), vectorize=True, seed=2).logz == ref.logz
    assert gbs.evidence(gauss_vec, np.asfortranarray(x), vectorize=True, seed=2).logz == ref.logz
    strided = np.repeat(x, 2, axis=0)[::2]
    assert not strided.flags.c_contiguous
    assert gbs.evidence(gauss_vec, strided, vectorize=True, seed=2).logz == ref.logz
    x32 = x.astype(np.float32)
    f32 = gbs.evidence(gauss_vec, x32, vectorize=True, seed=2)
    assert f32.logz == gbs.evidence(gauss_vec, x32.astype(np.float64), vectorize=True, seed=2).logz
    assert abs(f32.logz - C) < 4 * f32.logzerr
    ints = np.round(10 * x).astype(np.int64)
    lp_int = lambda v: gauss_vec(v / 10.0) - 3 * math.log(10)  # noqa: E731
    gbs.evidence(lp_int, ints, vectorize=True, seed=2)  # accepted, converted
    # log_prob_samples as a list, 3-d samples as nested lists
    lp = gauss_vec(x)
    a = gbs.evidence(gauss_vec, x, log_prob_samples=list(lp), vectorize=True, seed=2)
    assert a.ncall == a.n_q + 32 + a.diagnostics.coverage_calls  # the spot-check of the given log p
    nested = x.reshape(3, 1000, 3).tolist()
    b = gbs.evidence(gauss_vec, nested, vectorize=True, seed=2)
    assert b.n_chains == 3


def test_callback_receives_its_own_copy():
    kept = []

    def lp(v):
        kept.append(v)
        return gauss_vec(v)

    x = np.random.default_rng(5).normal(size=(2000, 2))
    gbs.evidence(lp, x, vectorize=True, n_q=3000, seed=1, batch_size=500)
    assert all(isinstance(v, np.ndarray) and v.flags.owndata for v in kept)
    assert all(v.shape[1] == 2 and len(v) <= 500 for v in kept)
    assert np.all(np.isfinite(np.concatenate(kept)))  # still valid after the call


@pytest.mark.parametrize("vectorize", [False, True])
def test_one_dimension(vectorize):
    x = np.random.default_rng(5).normal(size=2000)
    seen = []

    def lp(v):
        seen.append(np.shape(v))
        if vectorize:
            return -0.5 * v[:, 0] ** 2 - 0.5 * math.log(2 * math.pi)
        return -0.5 * v[0] ** 2 - 0.5 * math.log(2 * math.pi)

    res = gbs.evidence(lp, x, vectorize=vectorize, seed=1)
    within(res, 0.0, 0.05)
    assert res.dim == 1
    assert all(s == (1,) for s in seen) if not vectorize else all(s[1] == 1 for s in seen)
    # (chains, draws, 1) and a 1-d problem with bounds
    res = gbs.evidence(lp, x.reshape(4, 500, 1), vectorize=vectorize, seed=1)
    within(res, 0.0, 0.1)
    u = np.random.default_rng(6).uniform(0, 3, size=3000)
    flat = (lambda v: np.where((v[:, 0] > 0) & (v[:, 0] < 3), 0.0, -np.inf)) if vectorize else \
        (lambda v: 0.0 if 0 < v[0] < 3 else -np.inf)
    res = gbs.evidence(flat, u, vectorize=vectorize, bounds=(0, 3), independent=True, seed=1)
    within(res, math.log(3), 0.02)
    # A vectorized 1-d density may also return shape (n, 1).
    if vectorize:
        res = gbs.evidence(lambda v: -0.5 * v ** 2 - 0.5 * math.log(2 * math.pi), x, vectorize=True,
                           seed=1)
        within(res, 0.0, 0.05)


X = np.random.default_rng(0).normal(size=(200, 2))


@pytest.mark.parametrize("samples,kw,match", [
    (np.zeros((10, 2, 3, 4)), {}, "shape"),
    (np.zeros((0, 3)), {}, "no draws"),
    (np.zeros((3, 0)), {}, "no draws"),
    (X.T, {}, "transposed"),
    (X, {"method": "bogus"}, "method"),
    (X, {"log_prob_samples": np.zeros(7)}, "log_prob_samples"),
    (X.reshape(4, 50, 2), {"log_prob_samples": np.zeros((50, 4))}, r"need \(chains, draws\)"),
    (X.reshape(4, 50, 2), {"log_prob_samples": np.zeros((50, 4)), "chain_axis": 1}, "draws, chains"),
    (X, {"bounds": [[0, 1, 2]]}, "bounds"),
    (X, {"bounds": np.zeros((3, 2))}, r"shape \(2, 2\)"),
    (X, {"bounds": [[1, 0], [1, 0]]}, "smaller"),
    (X.reshape(4, 50, 2), {"chain_axis": 2}, "chain_axis"),
    (X, {"n_q": 0}, "n_q"),
    (X, {"thin": 0}, "thin"),
    (X, {"discard": 500}, "discard=500 drops every draw"),
    (X, {"f_err": 1.5}, "f_err"),
    ([["a", "b"]], {}, "float64"),
])
def test_bad_input(samples, kw, match):
    with pytest.raises(ValueError, match=match):
        gbs.evidence(gauss, samples, **kw)


def test_bad_types():
    with pytest.raises(TypeError, match="callable"):
        gbs.evidence(None, X)
    with pytest.raises(TypeError, match="args"):
        gbs.evidence(gauss, X, args=3)
    with pytest.raises(TypeError, match="pool"):
        gbs.evidence(gauss, X, pool=object())


def test_bad_values():
    x = np.random.default_rng(0).normal(size=(100, 2))
    x[5, 1] = np.nan
    with pytest.raises(ValueError, match="nan at chain 0, draw 5, coordinate 1"):
        gbs.evidence(gauss, x)
    x = np.random.default_rng(0).normal(size=(400, 2))
    lp = gauss_vec(x)
    lp[300] = -np.inf
    with pytest.raises(ValueError, match="-inf at chain 0, draw 300"):
        gbs.evidence(gauss_vec, x, log_prob_samples=lp, vectorize=True)
    # Found by the library: a GbsError with the library's message.
    with pytest.raises(gbs.GbsError, match="too few draws"):
        gbs.evidence(gauss, np.random.default_rng(0).normal(size=(3, 2)))
    with pytest.raises(gbs.GbsArgumentError, match="walkers") as info:
        gbs.sample_ensemble(gauss_vec, ndim=3, walkers=9, vectorize=True)
    assert isinstance(info.value, ValueError) and info.value.status == 1


@pytest.mark.parametrize("vectorize,ret,match", [
    (True, lambda v: np.zeros(3), "returned shape"),
    (False, lambda v: np.zeros(3), "for one point"),
    (False, lambda v: "x", "number"),
    (True, lambda v: None, "returned NoneType"),
])
def test_wrong_return(vectorize, ret, match):
    x = np.random.default_rng(0).normal(size=(500, 2))
    with pytest.raises((ValueError, TypeError), match=match):
        gbs.evidence(ret, x, vectorize=vectorize)


def test_dimension_mismatch():
    # The density's dimension differs from the samples': its own error.
    p = problems.funnel(4)
    x = np.random.default_rng(0).normal(size=(1000, 3))
    with pytest.raises(ValueError, match="problems"):
        gbs.evidence(p.log_prob, x, vectorize=True)
    with pytest.raises(ValueError, match=r"bounds must have shape \(3, 2\)"):
        gbs.evidence(gauss_vec, x, vectorize=True, bounds=p.box)
    with pytest.raises(ValueError, match="log_prob_samples"):
        gbs.evidence(gauss_vec, x, log_prob_samples=np.zeros(999))


class _EnsembleChains:
    """An emcee-like sampler over given walkers (steps, walkers, d): what
    gbs.evidence reads of an emcee.EnsembleSampler."""

    def __init__(self, chain, lp):
        self.chain, self.lp, self.iteration = chain, lp, chain.shape[0]

    def get_chain(self, discard=0, thin=1, flat=False):
        return self.chain[discard::thin]

    def get_log_prob(self, discard=0, thin=1, flat=False):
        return self.lp[discard::thin]


def _ar_walkers(steps, walkers=32, phi=0.9, seed=5):
    """Walkers of gauss_vec in 2-d, each coordinate AR(1) with
    coefficient phi (tau = 19 for 0.9), shape (steps, walkers, 2)."""
    rng = np.random.default_rng(seed)
    x = np.empty((steps, walkers, 2))
    x[0] = rng.normal(size=(walkers, 2))
    for t in range(1, steps):
        x[t] = phi * x[t - 1] + math.sqrt(1 - phi * phi) * rng.normal(size=(walkers, 2))
    return x, gauss_vec(x.reshape(-1, 2)).reshape(steps, walkers)


def test_emcee_walkers_shorter_than_50_tau_warn():
    """An emcee sampler's walkers are an ensemble: gbs applies emcee's rule
    (each walker at least 50 tau of every coordinate) to them. The same
    draws passed as plain chains (independent chains of 300 draws, 32 x 300
    = 500 tau in all) do not warn."""
    x, lp = _ar_walkers(300)
    with pytest.warns(gbs.SamplerWarning) as rec:
        res = gbs.evidence(gauss_vec, _EnsembleChains(x, lp), vectorize=True, seed=1)
    assert [w.message.check for w in rec if w.category is gbs.SamplerWarning].count("ensemble-walkers") == 1
    assert len(res.found("ensemble-walkers")) == 1
    res = gbs.evidence(gauss_vec, x, log_prob_samples=lp, chain_axis=1, vectorize=True, seed=1)
    assert not res.warnings
    x, lp = _ar_walkers(2000)
    res = gbs.evidence(gauss_vec, _EnsembleChains(x, lp), vectorize=True, seed=1)
    assert not res.warnings
    within(res, C, 0.05)
