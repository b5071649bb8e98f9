"""gbs.sample: NUTS chains from Python, ready for gbs.evidence."""

import ctypes

import numpy as np

from . import _lib
from ._call import CallbackBox, new_token, run
from .evidence import _as_c, _batch_function, _bounds

_dp = ctypes.POINTER(ctypes.c_double)
_METRICS = {"diag": 0, "dense": 1, "unit": 2}


class Samples:
    """NUTS draws with their log densities and sampler statistics.

    Attributes
    ----------
    draws : numpy.ndarray, shape (chains, draws, d)
    log_prob : numpy.ndarray, shape (chains, draws)
        log p at the draws (reused by :func:`gbs.evidence`).
    ncall : int
        Gradient evaluations, warm-up included.
    stats : list of dict
        Per chain: step_size, mean_accept, mean_tree_depth, divergences,
        warmup_divergences, max_depth_hits, leapfrogs, grad_calls.
    """

    def __init__(self, draws, log_prob, stats, ncall=None, warnings=()):
        self.draws, self.log_prob, self.stats = draws, log_prob, stats
        self.ncall = int(sum(s["grad_calls"] for s in stats)) if ncall is None else int(ncall)
        self.warnings = list(warnings)

    @property
    def divergences(self):
        """Divergent transitions after warm-up, over all chains (NUTS)."""
        return int(sum(s.get("divergences", 0) for s in self.stats))

    def __repr__(self):
        c, n, d = self.draws.shape
        return "Samples(chains=%d, draws=%d, d=%d, divergences=%d)" % (c, n, d, self.divergences)


class _GradBox:
    def __init__(self, fn):
        self.fn, self.exc = fn, None
        import threading
        self.stop = threading.Event()

    def __call__(self, x_ptr, d, logp_ptr, grad_ptr, _user):
        try:
            if self.stop.is_set():
                raise KeyboardInterrupt
            x = np.ctypeslib.as_array(x_ptr, shape=(d,)).copy()
            lp, g = self.fn(x)
            logp_ptr[0] = float(lp)
            np.ctypeslib.as_array(grad_ptr, shape=(d,))[:] = np.asarray(g, dtype=np.float64).reshape(d)
            return 0
        except BaseException as exc:
            if self.exc is None:
                self.exc = exc
            return 1


def sample(log_prob_and_grad, x0, *, n_draws=1000, n_warmup=1000, n_chains=4, seed=None,
           bounds=None, target_accept=None, max_depth=None, metric="diag", args=(), kwargs=None):
    """Draw from p with the No-U-Turn sampler (Stan's adaptation).

    Parameters
    ----------
    log_prob_and_grad : callable
        ``log_prob_and_grad(x, *args, **kwargs)`` for x of shape (d,)
        returns ``(log p, gradient of shape (d,))``.
    x0 : array_like, shape (d,) or (n_chains, d)
        Starting point(s); log p must be finite there.
    n_draws, n_warmup : int
        Kept draws and adaptation iterations per chain.
    n_chains : int
        Chains (ignored when x0 gives one point per chain).
    bounds : array_like, shape (d, 2) or (2, d), optional
        Box of the support: sampled in unconstrained coordinates.
    target_accept, max_depth : optional
        NUTS settings (defaults 0.8 and 10).
    metric : {"diag", "dense", "unit"}

    Returns
    -------
    Samples
        Pass it to :func:`gbs.evidence` as the samples.
    """
    kwargs = {} if kwargs is None else dict(kwargs)
    x0 = _as_c(x0)
    if x0.ndim == 1:
        x0 = np.tile(x0, (int(n_chains), 1))
    if x0.ndim != 2:
        raise ValueError("x0 must have shape (d,) or (n_chains, d), not %s" % (x0.shape,))
    nc, d = x0.shape
    if metric not in _METRICS:
        raise ValueError("metric must be one of %s, not %r" % (sorted(_METRICS), metric))
    box = _GradBox(lambda x: log_prob_and_grad(x, *args, **kwargs))
    cb = _lib.LOG_DENSITY_GRAD_FN(box)
    opt = _lib.NutsOptions()
    opt.size = ctypes.sizeof(opt)
    opt.warmup = int(n_warmup) if n_warmup > 0 else -1
    opt.max_depth = int(max_depth or 0)
    opt.metric = _METRICS[metric]
    opt.target_accept = float(target_accept or 0)
    opt.seed = int(seed or 0) & 0xFFFFFFFFFFFFFFFF
    opt.init = x0.ctypes.data_as(_dp)
    keep = [x0]
    if bounds is not None:
        lo, hi = _bounds(bounds, d)
        keep += [lo, hi]
        opt.lower, opt.upper = lo.ctypes.data_as(_dp), hi.ctypes.data_as(_dp)
    token = new_token()
    opt.cancel = token.handle
    draws = np.empty((nc, int(n_draws), d))
    logp = np.empty((nc, int(n_draws)))
    stats = (_lib.NutsChainStats * nc)()
    for s in stats:
        s.size = ctypes.sizeof(_lib.NutsChainStats)

    def call():
        err = _lib.new_error()
        st = _lib.lib.gbs_nuts_sample(cb, None, d, nc, int(n_draws), ctypes.byref(opt),
                                      draws.ctypes.data_as(_dp), logp.ctypes.data_as(_dp), stats,
                                      ctypes.byref(err))
        return st, err

    run(call, boxes=[box], token=token)
    del keep
    names = [f for f, _ in _lib.NutsChainStats._fields_ if f != "size"]
    return Samples(draws, logp, [{k: getattr(s, k) for k in names} for s in stats])


_MOVES = {"stretch": 0, "de": 1}


def sample_ensemble(log_prob, x0=None, *, ndim=None, walkers=None, steps=5000, burn=None, thin=None,
                    move="stretch", seed=None, bounds=None, vectorize=False, args=(), kwargs=None):
    """Draw from p with the affine-invariant ensemble sampler (the
    gradient-free path; Goodman & Weare's stretch move, as emcee).

    Parameters
    ----------
    log_prob : callable
        As for :func:`gbs.evidence`: one point (d,) → float, or with
        ``vectorize=True`` (n, d) → (n,); each call then receives the whole
        half-ensemble.
    x0 : array_like, shape (walkers, d), optional
        Starting walkers; otherwise uniform in ``bounds`` (shape (d, 2)),
        or a small ball around the origin (give ``ndim``).
    walkers, steps, burn, thin : int, optional
        Ensemble size (even, >= 2d; default max(32, 2d+2)), steps per walker
        including burn-in, and burn-in and thinning (default: chosen from
        the autocorrelation time).
    move : {"stretch", "de"}

    Returns
    -------
    Samples
        Walkers are the chains; pass it to :func:`gbs.evidence`.
    """
    kwargs = {} if kwargs is None else dict(kwargs)
    keep = []
    opt = _lib.EnsembleOptions()
    opt.size = ctypes.sizeof(opt)
    if x0 is not None:
        x0 = _as_c(x0)
        if x0.ndim != 2:
            raise ValueError("x0 must have shape (walkers, d), not %s" % (x0.shape,))
        walkers, d = x0.shape
        opt.init = x0.ctypes.data_as(_dp)
        keep.append(x0)
    elif bounds is not None:
        d = np.asarray(bounds).shape[0] if np.asarray(bounds).shape[-1] == 2 else np.asarray(bounds).shape[1]
    elif ndim is not None:
        d = int(ndim)
    else:
        raise ValueError("give x0, bounds or ndim")
    if bounds is not None:
        lo, hi = _bounds(bounds, d)
        keep += [lo, hi]
        opt.lower, opt.upper = lo.ctypes.data_as(_dp), hi.ctypes.data_as(_dp)
    if move not in _MOVES:
        raise ValueError("move must be one of %s, not %r" % (sorted(_MOVES), move))
    opt.walkers = int(walkers or 0)
    opt.steps = int(steps or 0)
    opt.burn = int(burn or 0)
    opt.thin = int(thin or 0)
    opt.move = _MOVES[move]
    opt.seed = int(seed or 0) & 0xFFFFFFFFFFFFFFFF
    box = CallbackBox(None)
    box.batch_fn = _batch_function(log_prob, vectorize, args, kwargs, None, d, box.stop)
    cb = _lib.LOG_DENSITY_FN(box)
    token = new_token()
    opt.cancel = token.handle
    handle = ctypes.c_void_p()

    def call():
        err = _lib.new_error()
        return _lib.lib.gbs_ensemble_sample(cb, None, d, ctypes.byref(opt), ctypes.byref(handle),
                                            ctypes.byref(err)), err

    run(call, boxes=[box], token=token)
    try:
        info = _lib.EnsembleInfo()
        info.size = ctypes.sizeof(info)
        err = _lib.new_error()
        _lib.check(_lib.lib.gbs_ensemble_get_info(handle, ctypes.byref(info), ctypes.byref(err)), err)
        draws = np.empty((info.walkers, info.draws, d))
        logp = np.empty((info.walkers, info.draws))
        _lib.check(_lib.lib.gbs_ensemble_get_draws(handle, draws.ctypes.data_as(_dp), logp.ctypes.data_as(_dp),
                                                   ctypes.byref(err)), err)
        arr = ctypes.POINTER(ctypes.c_char_p)()
        n = ctypes.c_int64()
        _lib.check(_lib.lib.gbs_ensemble_warnings(handle, ctypes.byref(arr), ctypes.byref(n), ctypes.byref(err)), err)
        warnings = [arr[i].decode() for i in range(n.value)]
        _lib.lib.gbs_free_warnings(arr)
    finally:
        _lib.lib.gbs_ensemble_free(handle, None)
    del keep
    stats = [{"burn": info.burn, "thin": info.thin, "tau_max": info.tau_max, "acceptance": info.acceptance}]
    return Samples(draws, logp, stats, ncall=info.ncall, warnings=warnings)
