"""Inputs that used to be accepted with a changed meaning are errors that
name the argument: seeds out of range or of the wrong type, NaN bounds,
log_prob values that are not numbers, discard or thin that leave no draws;
and a forked child gets an error instead of hanging."""

import multiprocessing as mp
import os
import time
import warnings

import numpy as np
import pytest
import targets
from targets import gauss, gauss_vec

import gbs
from gbs import _lib

X = np.random.default_rng(0).normal(size=(1000, 2))
X0 = np.random.default_rng(1).normal(size=(8, 2))


def grad(x):
    return gauss(x), -x


# Every entry point that takes a seed, called with seed=s.
SEEDED = {
    "evidence": lambda s: gbs.evidence(gauss_vec, X, vectorize=True, seed=s),
    "sample": lambda s: gbs.sample(grad, np.zeros(2), n_draws=20, n_warmup=20, n_chains=1, seed=s),
    "sample_ensemble": lambda s: gbs.sample_ensemble(gauss_vec, X0, steps=20, vectorize=True, seed=s),
    "Flow.fit": lambda s: gbs.Flow.fit(X, seed=s, max_layers=1),
    "Flow.sample": lambda s: FLOW.sample(5, seed=s),
}
FLOW = gbs.Flow.fit(X, seed=1, max_layers=1)


@pytest.mark.parametrize("entry", sorted(SEEDED))
@pytest.mark.parametrize("seed,error,match", [
    (2 ** 64, ValueError, r"seed must be in \[0, 2\*\*64\), not 18446744073709551616"),
    (2 ** 70, ValueError, r"seed must be in \[0, 2\*\*64\)"),
    (-1, ValueError, r"seed must be in \[0, 2\*\*64\), not -1"),
    (1.5, TypeError, r"seed must be .* not float 1.5"),
    (1.0, TypeError, r"seed must be .* not float 1.0"),
    (np.float64(3), TypeError, r"seed must be .* not float64"),
    (True, TypeError, r"seed must be an integer, not the bool True"),
    ("7", TypeError, r"seed must be .* not str"),
])
def test_bad_seed_is_an_error(entry, seed, error, match):
    with pytest.raises(error, match=match):
        SEEDED[entry](seed)


@pytest.mark.parametrize("seed", [0, 2 ** 64 - 1, np.uint64(2 ** 64 - 1), np.int32(5), np.array(9)])
def test_integer_seeds_are_used_as_given(seed):
    a = gbs.evidence(gauss_vec, X, vectorize=True, seed=seed)
    assert a.seed == int(seed)
    b = gbs.evidence(gauss_vec, X, vectorize=True, seed=int(seed))
    assert a.logz == b.logz  # the same seed, the same computation
    assert np.array_equal(FLOW.sample(4, seed=seed), FLOW.sample(4, seed=int(seed)))


@pytest.mark.parametrize("bounds,side,k", [
    ([(0, np.nan), (None, 1)], "upper", 0),                 # rows (low, high)
    ([(-np.inf, np.inf), (np.nan, 1)], "lower", 1),
    (([-10, None], [10, np.nan]), "upper", 1),              # a pair (lower, upper)
    (np.array([[np.nan, -1.0], [5.0, 5.0]]), "lower", 0),   # (2, d) array: read as rows first
])
def test_nan_bound_is_an_error(bounds, side, k):
    msg = "bounds: the %s bound of coordinate %d is NaN" % (side, k)
    with pytest.raises(ValueError, match=msg):
        gbs.evidence(gauss_vec, X, vectorize=True, seed=1, bounds=bounds)
    with pytest.raises(ValueError, match=msg):
        gbs.Flow.fit(X, seed=1, bounds=bounds)
    with pytest.raises(ValueError, match=msg):
        gbs.sample(grad, np.zeros(2), n_draws=20, n_warmup=20, seed=1, bounds=bounds)
    with pytest.raises(ValueError, match=msg):
        gbs.sample_ensemble(gauss_vec, X0, steps=20, vectorize=True, seed=1, bounds=bounds)


def test_none_and_infinite_bounds_stay_open_sides():
    lo, hi = gbs._arrays.bounds_arrays([(None, np.inf), (-np.inf, 3.0)], 2)
    assert list(lo) == [-np.inf, -np.inf] and list(hi) == [np.inf, 3.0]


def returns_none(x):
    return None


def returns_str(x):
    return "-1.0"


@pytest.mark.parametrize("fn,typename", [(returns_none, "NoneType"), (returns_str, "str"),
                                         (lambda x: b"-1", "bytes"), (lambda x: [None], "NoneType"),
                                         (lambda x: True, "bool"), (lambda x: 1 + 0j, "complex")])
def test_log_prob_returning_a_non_number_is_a_type_error(fn, typename):
    name = fn.__name__
    with pytest.raises(TypeError, match=r"log_prob \(%s\) returned %s .* at x = \[1\.18" % (name, typename)):
        gbs.evidence(fn, X, seed=1)


@pytest.mark.parametrize("value", [
    lambda x: np.float32(gauss(x)), lambda x: np.array(gauss(x)), lambda x: np.array([gauss(x)]),
    lambda x: (gauss(x), "a blob"), lambda x: int(round(gauss(x) * 1e6)) / 1e6])
def test_numbers_of_every_kind_are_accepted(value):
    res = gbs.evidence(value, X, seed=1)
    assert abs(res.logz - targets.C) < 4 * res.logzerr + 1e-5


def test_vectorized_log_prob_returning_non_numbers():
    with pytest.raises(TypeError, match=r"returned NoneType None for a batch of \d+ points"):
        gbs.evidence(lambda x: None, X, vectorize=True, seed=1)
    with pytest.raises(TypeError, match=r"returned ndarray of dtype <U4"):
        gbs.evidence(lambda x: np.array(["-1.0"] * len(x)), X, vectorize=True, seed=1)
    # A list with one non-number: the element and its point are named.
    with pytest.raises(TypeError, match=r"\(element 3 of the batch\) returned str 'x' at x = \[-?\d"):
        gbs.evidence(lambda x: [0.0] * 3 + ["x"] + [0.0] * (len(x) - 4), X, vectorize=True, seed=1)
    res = gbs.evidence(lambda x: list(gauss_vec(x)), X, vectorize=True, seed=1)
    assert abs(res.logz - targets.C) < 4 * res.logzerr


def test_gradient_callback_returning_a_non_number():
    for lp, typename in (("-1.0", "str"), (None, "NoneType")):
        with pytest.raises(TypeError, match=r"log_prob_and_grad \(<lambda>\) returned %s .* at x = "
                           r"\[0\., 0\.\]" % typename):
            gbs.sample(lambda x, lp=lp: (lp, -x), np.zeros(2), n_draws=10, n_warmup=10, seed=1)
    with pytest.raises(TypeError, match=r"gradient of dtype <U"):
        gbs.sample(lambda x: (0.0, ["a", "b"]), np.zeros(2), n_draws=10, n_warmup=10, seed=1)
    s = gbs.sample(lambda x: (np.float32(gauss(x)), -x), np.zeros(2), n_draws=10, n_warmup=10, seed=1)
    assert np.isfinite(s.log_prob).all()


def test_discard_that_drops_every_draw_is_named():
    x = X.reshape(2, 500, 2)
    with pytest.raises(ValueError, match=r"discard=600 drops every draw: samples of shape "
                                         r"\(2, 500, 2\) hold 500 draws per chain"):
        gbs.evidence(gauss_vec, x, vectorize=True, seed=1, discard=600)
    with pytest.raises(ValueError, match=r"discard=1000 drops every draw"):
        gbs.evidence(gauss_vec, X, vectorize=True, seed=1, discard=1000)
    # Thinning leaves too few: the message says what discard and thin kept.
    with pytest.raises(ValueError, match=r"2 draws of dimension 2 \(what discard=0 and thin=400 keep\)"):
        gbs.evidence(gauss_vec, X[:800], vectorize=True, seed=1, thin=400)


def test_emcee_discard_and_thin_are_told_apart():
    emcee = pytest.importorskip("emcee")
    sampler = emcee.EnsembleSampler(8, 2, gauss)
    sampler.run_mcmc(X0, 100, progress=False)
    with pytest.raises(ValueError, match=r"discard=100 drops every step: the emcee sampler ran 100"):
        gbs.evidence(gauss, sampler, discard=100)
    with pytest.raises(ValueError, match=r"thin=61 keeps no step: the emcee sampler ran 100, 60 after "
                                         r"discard=40 \(thin can be at most 60\)"):
        gbs.evidence(gauss, sampler, discard=40, thin=61)


# ---------------------------------------------------------------------------
# Fork
# ---------------------------------------------------------------------------

def _in_forked_child(queue):
    try:
        t0 = time.monotonic()
        try:
            gbs.evidence(gauss_vec, X, vectorize=True, seed=1)
            queue.put(("no error", 0.0))
        except gbs.GbsForkError as exc:
            # The C library refuses too: ctypes straight to the unguarded library.
            err = _lib.new_error()
            st = _lib._cdll.gbs_flow_get_info(FLOW._handle, _lib.new_struct(_lib.FlowInfo), err)
            queue.put((str(exc), time.monotonic() - t0, st, _lib.ctypes.string_at(err).decode()))
    except BaseException as exc:  # reported to the parent, never raised in the child
        queue.put(("unexpected %r" % (exc,), 0.0))


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork on this platform")
def test_forked_child_gets_an_error_not_a_hang():
    ctx = mp.get_context("fork")
    queue = ctx.Queue()
    with warnings.catch_warnings():
        # Python 3.12+ warns that forking a multi-threaded process (the Go
        # runtime's threads) may deadlock the child: what this test is about.
        warnings.simplefilter("ignore", DeprecationWarning)
        p = ctx.Process(target=_in_forked_child, args=(queue,))
        p.start()
    try:
        got = queue.get(timeout=60)
    finally:
        p.join(10)
        if p.is_alive():
            p.kill()
    msg = got[0]
    assert "libgbs was loaded in process %d; this is a forked child %d" % (os.getpid(), p.pid) in msg, got
    assert "'spawn' or 'forkserver'" in msg
    # No bound on got[1], the time the refusal took: queue.get's timeout
    # catches a hang, and a loaded machine may take seconds to answer.
    status, cmsg = got[2], got[3]
    assert status == _lib.ERR_FORKED, got
    assert "forked child %d" % p.pid in cmsg
    # The parent is unaffected.
    res = gbs.evidence(gauss_vec, X, vectorize=True, seed=1)
    assert abs(res.logz - targets.C) < 4 * res.logzerr

