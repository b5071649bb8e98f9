"""gbs.evidence: ln Z from posterior samples."""

import ctypes

import numpy as np

from . import _lib
from ._call import CallbackBox, new_token, run
from .result import Result

_TRACE_CAP = 64


def evidence(log_prob, samples, *, log_prob_samples=None, vectorize=False,
             args=(), kwargs=None, chain_axis=0, method="bridge", n_q=None,
             seed=None, bounds=None, pool=None, progress=False, discard=0,
             independent=False, ncall=None, batch_size=None):
    """Estimate the evidence ln Z = ln ∫ p(x) dx from draws of p.

    Parameters
    ----------
    log_prob : callable
        The unnormalized log density, as for emcee: ``log_prob(x, *args,
        **kwargs)`` takes one point of shape (d,) and returns a float, or
        with ``vectorize=True`` an array of shape (n, d) and returns shape
        (n,). -inf is allowed (zero density); NaN is an error.
    samples : array_like or emcee.EnsembleSampler
        Draws of p: shape (n, d) for one chain (or (n,) when d = 1), or a
        3-d array of chains with the chain axis given by ``chain_axis``; or
        an emcee ``EnsembleSampler``, whose chain and stored log
        probabilities are used (after ``discard`` steps of burn-in).
    log_prob_samples : array_like, optional
        log p at the samples (shape of samples without the last axis),
        which are then not evaluated again.
    vectorize : bool
        Whether ``log_prob`` takes a batch of points.
    args, kwargs : tuple, dict
        Extra arguments passed to ``log_prob``.
    chain_axis : {0, 1}
        For 3-d samples: 0 for (chains, draws, d) as in ArviZ, 1 for
        (draws, chains, d) as emcee's ``get_chain()``.
    method : {"bridge", "is", "hm", "warp3"}
        Gaussianized bridge sampling (default), importance sampling, the
        harmonic mean, or warp-III bridge sampling (a Gaussian baseline).
    n_q : int, optional
        Number of proposal draws; default by the adaptive rule.
    seed : int, optional
        Seed of every random choice; the same seed gives the same result.
    bounds : array_like, optional
        Box bounds of the support, shape (d, 2) (rows of low, high) or
        (2, d), ±inf for none: the proposal then puts no mass outside.
    pool : object with ``map``, optional
        Evaluates the proposal draws' log p in parallel: a multiprocessing
        pool (start method spawn or forkserver; fork hangs once the Go
        runtime of libgbs is loaded), a concurrent.futures executor, or a
        dask.distributed Client.
    progress : bool
        Print progress messages of the library.
    discard : int
        Burn-in steps to drop from an emcee sampler.
    independent : bool
        The draws are independent (exact draws): no autocorrelation.
    ncall : int, optional
        Log-density evaluations the sampler spent (taken from an emcee
        sampler); used by the adaptive n_q rule.
    batch_size : int, optional
        Points per call of ``log_prob`` with ``vectorize=True``.

    Returns
    -------
    Result
    """
    if method not in _lib.METHODS:
        raise ValueError("method must be one of %s, not %r"
                         % (sorted(_lib.METHODS), method))
    kwargs = {} if kwargs is None else dict(kwargs)
    x, lp, ncall = _draws(samples, log_prob_samples, chain_axis, discard, ncall)
    nc, nd, d = x.shape
    box = CallbackBox(None)
    box.batch_fn = _batch_function(log_prob, vectorize, args, kwargs, pool, d, box.stop)
    cb = _lib.LOG_DENSITY_FN(box)

    opt = _lib.EvidenceOptions()
    opt.size = ctypes.sizeof(opt)
    opt.method = _lib.METHODS[method]
    opt.independent = int(bool(independent))
    opt.verbose = int(bool(progress))
    opt.n_q = int(n_q or 0)
    if n_q is not None and n_q < 1:
        raise ValueError("n_q must be positive, not %r" % (n_q,))
    opt.batch_size = int(batch_size or 0)
    opt.ncall = int(ncall or 0)
    opt.seed = int(seed or 0) & 0xFFFFFFFFFFFFFFFF
    lower = upper = None
    if bounds is not None:
        lower, upper = _bounds(bounds, d)
        opt.lower = lower.ctypes.data_as(ctypes.POINTER(ctypes.c_double))
        opt.upper = upper.ctypes.data_as(ctypes.POINTER(ctypes.c_double))
    token = new_token()
    opt.cancel = token.handle

    res = _lib.CResult()
    res.size = ctypes.sizeof(res)
    trace = (_lib.TracePoint * _TRACE_CAP)()
    dptr = ctypes.POINTER(ctypes.c_double)
    lp_ptr = lp.ctypes.data_as(dptr) if lp is not None else None

    def call():
        err = _lib.new_error()
        status = _lib.lib.gbs_evidence(
            cb, None, x.ctypes.data_as(dptr), nc, nd, d, lp_ptr,
            ctypes.byref(opt), ctypes.byref(res), trace, _TRACE_CAP,
            ctypes.byref(err))
        return status, err

    run(call, boxes=[box], token=token)
    warnings = [res.warnings[i].decode("utf-8", "replace")
                for i in range(res.n_warnings)]
    _lib.lib.gbs_free_warnings(res.warnings)
    k = min(res.n_trace, _TRACE_CAP)
    tr = [(trace[i].n_q, trace[i].logz, trace[i].logzerr) for i in range(k)]
    result = Result(res.logz, res.logzerr, res.ncall, res.n_p, res.n_q, res.tau,
                    res.re2_p, res.re2_q, _lib.METHOD_NAMES[res.method], warnings, tr)
    result._context = {"x": x, "seed": int(seed or 0), "lower": lower, "upper": upper}
    return result


def fit_half(x):
    """The draws the estimator fits its proposal on: the first half of the
    chains, or of the draws of a single chain (as gbs/split.go)."""
    nc, nd, d = x.shape
    if nc >= 2:
        return x[: nc // 2].reshape(-1, d)
    return x[0, : nd // 2]


def derive_seed(seed, stream):
    """gbs/evidence.go's deriveSeed (splitmix64 finalizer), so that Python
    can rebuild the estimator's proposal."""
    m = (1 << 64) - 1
    z = (seed + stream * 0x9E3779B97F4A7C15) & m
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & m
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & m
    return z ^ (z >> 31)


def _draws(samples, log_prob_samples, chain_axis, discard, ncall):
    """Return draws as a C-contiguous (chains, draws, d) float64 array, their
    log p as (chains, draws) or None, and the sampler's cost."""
    if hasattr(samples, "get_chain") and hasattr(samples, "get_log_prob"):
        chain = samples.get_chain(discard=discard)
        if chain is None or len(chain) == 0:
            raise ValueError("the emcee sampler holds no steps after discard=%d" % discard)
        x = np.transpose(chain, (1, 0, 2))
        lp = np.transpose(samples.get_log_prob(discard=discard), (1, 0))
        if ncall is None:
            ncall = int(samples.iteration) * x.shape[0]
        return _as_c(x), _as_c(lp), ncall
    if hasattr(samples, "draws") and hasattr(samples, "log_prob") and not callable(samples.log_prob):
        x = np.asarray(samples.draws, dtype=np.float64)
        lp = np.asarray(samples.log_prob, dtype=np.float64)
        if ncall is None:
            ncall = getattr(samples, "ncall", None)
        return _as_c(x), _as_c(lp), ncall
    x = np.asarray(samples, dtype=np.float64)
    lp = None if log_prob_samples is None else np.asarray(log_prob_samples, dtype=np.float64)
    if x.ndim == 1:
        x = x[:, None]
    if x.ndim == 2:
        x = x[None]
        if lp is not None:
            lp = lp.reshape(1, -1)
    elif x.ndim == 3:
        if chain_axis == 1:
            x = np.transpose(x, (1, 0, 2))
            if lp is not None:
                if lp.ndim != 2:
                    raise ValueError("log_prob_samples must have shape %s, not %s"
                                     % ((x.shape[1], x.shape[0]), lp.shape))
                lp = lp.T
        elif chain_axis != 0:
            raise ValueError("chain_axis must be 0 or 1, not %r" % (chain_axis,))
    else:
        raise ValueError("samples must have shape (n, d) or 3 axes, not %s" % (x.shape,))
    if x.shape[-1] == 0 or x.shape[0] == 0 or x.shape[1] == 0:
        raise ValueError("samples of shape %s hold no draws" % (x.shape,))
    if lp is not None and lp.shape != x.shape[:2]:
        raise ValueError("log_prob_samples has shape %s, the samples need %s"
                         % (lp.shape, x.shape[:2]))
    return _as_c(x), (None if lp is None else _as_c(lp)), ncall


def _as_c(a):
    return np.ascontiguousarray(a, dtype=np.float64)


def _bounds(bounds, d):
    b = np.asarray(bounds, dtype=np.float64)
    # (d, 2) rows of (low, high) first: for d = 2 both shapes match.
    if b.shape == (d, 2):
        lower, upper = b[:, 0], b[:, 1]
    elif b.shape == (2, d):
        lower, upper = b[0], b[1]
    else:
        raise ValueError("bounds must have shape (%d, 2) or (2, %d), not %s" % (d, d, b.shape))
    return _as_c(lower), _as_c(upper)


def _batch_function(log_prob, vectorize, args, kwargs, pool, d, stop):
    """Return f(x: (n, d) array) -> (n,) array that calls log_prob as the
    user declared it, serially or through pool; serial loops end early with
    KeyboardInterrupt once stop is set."""
    if not callable(log_prob):
        raise TypeError("log_prob must be callable")

    def one(x):
        if stop.is_set():
            raise KeyboardInterrupt
        return float(log_prob(x, *args, **kwargs))

    def many(x):
        return np.asarray(log_prob(x, *args, **kwargs), dtype=np.float64).reshape(-1)

    if pool is None:
        if vectorize:
            return lambda x: many(np.array(x))
        return lambda x: np.fromiter((one(np.array(row)) for row in x), dtype=np.float64, count=len(x))

    fn = _PoolTask(log_prob, args, kwargs, vectorize)
    gather = getattr(pool, "gather", None)  # dask.distributed.Client

    def pooled(x):
        if vectorize:
            parts = np.array_split(np.array(x), max(1, min(len(x), 64)))
        else:
            parts = [np.array(row) for row in x]
        results = pool.map(fn, parts)
        if gather is not None:
            results = gather(results)
        if vectorize:
            return np.concatenate([np.asarray(r, dtype=np.float64).reshape(-1) for r in results])
        return np.fromiter((float(r) for r in results), dtype=np.float64, count=len(x))

    return pooled


class _PoolTask:
    """A picklable call of the user's log_prob, for process pools."""

    def __init__(self, log_prob, args, kwargs, vectorize):
        self.log_prob, self.args, self.kwargs = log_prob, args, kwargs
        self.vectorize = vectorize

    def __call__(self, x):
        v = self.log_prob(x, *self.args, **self.kwargs)
        return np.asarray(v, dtype=np.float64) if self.vectorize else float(v)
