"""gbs.evidence: ln Z from posterior samples."""

import ctypes

import numpy as np

from . import _lib
from ._arrays import as_c, bounds_arrays, positive_int, ptr, seed_value
from ._callbacks import BatchCallback, run
from ._pool import PoolEvaluator
from ._progress import Progress
from ._values import batch_values, scalar_value
from .result import Result

_TRACE_CAP = 256


def evidence(log_prob, samples, *, log_prob_samples=None, vectorize=False, args=(), kwargs=None,
             chain_axis=0, method="bridge", n_q=None, seed=None, bounds=None, pool=None,
             progress=False, discard=0, thin=1, independent=False, ncall=None, batch_size=None,
             f_err=None, f_eva=None, cross_fit=True):
    """Estimate the evidence ln Z = ln ∫ p(x) dx of an unnormalized density
    from draws of it.

    Gaussianized bridge sampling (Jia & Seljak 2019): a normalizing flow q
    is fitted to one half of the draws, n_q draws of q are evaluated with
    ``log_prob``, and the optimal bridge sampling equation is solved with
    the other half; then the halves exchange roles and ln Z is the mean of
    the two estimates (``cross_fit``). The error bar accounts for the
    autocorrelation of the chains.

    Parameters
    ----------
    log_prob : callable
        The log of the unnormalized density p, as emcee's: ``log_prob(x,
        *args, **kwargs)`` takes one point, an array of shape (d,), and
        returns a float (a tuple ``(log p, *blobs)`` is accepted and the
        blobs ignored). With ``vectorize=True`` it takes an array of shape
        (n, d) and returns shape (n,). ``-inf`` marks zero density
        (outside the prior); NaN and ``+inf`` are errors. It must be the
        same function (same constants) as the one the samples were drawn
        from: ln Z is the log of its integral.
    samples : array_like, emcee.EnsembleSampler or gbs.Samples
        Draws of p. An array of shape (n, d) (one chain, or independent
        draws), (n,) when d = 1, or 3-d with the chains on ``chain_axis``.
        An emcee ``EnsembleSampler`` (or emcee backend): its chain and its
        stored log-probabilities are used, after ``discard`` burn-in steps,
        and its number of log-probability calls feeds the adaptive n_q
        rule. What :func:`gbs.sample` or :func:`gbs.sample_ensemble`
        returns: the same, from their draws.
    log_prob_samples : array_like, optional
        log p at the samples, shape (n,) or the samples' shape without the
        last axis (in the same layout): these values are then not computed
        again. Taken from the sampler when ``samples`` is one.
    vectorize : bool, default False
        Whether ``log_prob`` takes a batch of points.
    args, kwargs : tuple, dict, optional
        Extra positional and keyword arguments of ``log_prob``.
    chain_axis : {0, 1}, default 0
        For 3-d samples: 0 for (chains, draws, d), as ArviZ and
        :func:`gbs.sample`; 1 for (draws, chains, d), as emcee's
        ``get_chain()``.
    method : {"bridge", "is", "hm", "warp3"}, default "bridge"
        Gaussianized bridge sampling; importance sampling with the flow;
        the reciprocal importance sampling (harmonic mean) estimator with
        the flow; warp-III bridge sampling with a Gaussian (a baseline).
    n_q : int, optional
        Number of proposal draws. Default: the adaptive rule of the paper
        (start with n_q = n_p, add draws while the proposal's share of the
        error is large and the extra cost small).
    seed : int or numpy.random.Generator, optional
        Seed of every random choice (the split of independent draws, the
        flow fit, the proposal draws): the same seed gives the same ln Z,
        bit for bit, whatever the number of threads. None draws a fresh
        seed, reported in ``Result.seed``.
    bounds : array_like, optional
        Box of the support of p: shape (d, 2) (rows of low, high), or a
        pair (lower, upper) of length-d sequences; ``±inf`` or None for an
        open side. The proposal then puts no mass outside the box. Give it
        whenever p has a bounded prior.
    pool : object with ``map``, optional
        Evaluates the proposal draws' log p in parallel: a
        ``multiprocessing`` pool with the spawn or forkserver start method,
        a ``concurrent.futures`` executor, or a ``dask.distributed.Client``.
        A process that was forked after libgbs was loaded hangs when it
        calls into libgbs: do not use the fork start method. The values are
        those of a serial evaluation.
    progress : bool or callable, default False
        True shows a progress bar (tqdm, if installed; else messages on
        stderr) of the log-density evaluations with the library's messages
        (the proposal fit, ln Z as n_q grows). A callable instead receives
        each message as a str (no bar).
    discard, thin : int, optional
        Burn-in draws dropped at the start of every chain, and thinning, for
        a sampler and for arrays alike.
    independent : bool, default False
        The draws are independent (exact draws): no autocorrelation time is
        estimated (tau = 1) and a single set of draws is split at random.
    ncall : int, optional
        Log-density evaluations the sampler spent on the draws, for the
        adaptive n_q rule (taken from an emcee sampler or gbs.Samples;
        default 10 per draw).
    batch_size : int, optional
        Points per call of the log density (with ``vectorize=True``, the n
        of the (n, d) batches); default 4096.
    f_err, f_eva : float, optional
        The adaptive rule's target share of the proposal in the squared
        error and cap on its share of all evaluations; default 0.1 each.
    cross_fit : bool, default True
        For ``method="bridge"``: also fit q on the second half and estimate
        with the first, and report the mean of the two ln Z. This about
        halves the posterior side's variance, which dominates for
        autocorrelated chains, for one more flow fit; ``n_q`` and the
        ``f_eva`` budget are shared by the two passes, and without
        ``log_prob_samples`` log p is evaluated at every draw instead of
        half of them. False: one pass, as in the paper.

    Returns
    -------
    Result
        ``logz`` and ``logzerr`` (natural log), ``ncall``, ``n_p``,
        ``n_q``, ``tau``, ``warnings``, ``summary()``, ``plot()``.

    Raises
    ------
    ValueError
        Bad input: shapes, a method name, bounds, NaN samples, too few draws
        (``gbs.GbsArgumentError`` when the library finds it).
    gbs.GbsError
        The log density returned NaN or +inf (``GbsCallbackError``), or the
        estimate failed (for example no overlap between q and p).
    Exception
        Whatever ``log_prob`` raised, with its traceback: the call stops.
    KeyboardInterrupt
        On Ctrl-C, within about a second.

    Examples
    --------
    >>> sampler = emcee.EnsembleSampler(32, ndim, log_prob)   # doctest: +SKIP
    >>> sampler.run_mcmc(p0, 5000)                            # doctest: +SKIP
    >>> res = gbs.evidence(log_prob, sampler, discard=1000)   # doctest: +SKIP
    >>> print(res.logz, res.logzerr)                          # doctest: +SKIP
    """
    if not callable(log_prob):
        raise TypeError("log_prob must be callable, not %r" % (type(log_prob).__name__,))
    if method not in _lib.METHODS:
        raise ValueError("method must be one of %s, not %r" % (", ".join(map(repr, _lib.METHODS)), method))
    if chain_axis not in (0, 1):
        raise ValueError("chain_axis must be 0 (chains, draws, d) or 1 (draws, chains, d), not %r"
                         % (chain_axis,))
    kwargs = {} if kwargs is None else dict(kwargs)
    if not isinstance(args, (tuple, list)):
        raise TypeError("args must be a tuple, not %r" % (type(args).__name__,))
    args = tuple(args)
    n_q = positive_int(n_q, "n_q")
    batch_size = positive_int(batch_size, "batch_size")
    discard = int(discard)
    thin = positive_int(thin, "thin", allow_none=False)
    if discard < 0:
        raise ValueError("discard must be >= 0, not %d" % discard)
    for name, v in (("f_err", f_err), ("f_eva", f_eva)):
        if v is not None and not 0 < v < 1:
            raise ValueError("%s must be in (0, 1), not %r" % (name, v))

    x, lp, src_ncall = draws_of(samples, log_prob_samples, chain_axis, discard, thin)
    nc, nd, d = x.shape
    if ncall is None:
        ncall = src_ncall
    lower = upper = None
    if bounds is not None:
        lower, upper = bounds_arrays(bounds, d)
    seed = seed_value(seed)

    cb = BatchCallback(None, interruptible=pool is None)
    cb.batch_fn = batch_function(log_prob, vectorize, args, kwargs, pool, cb.stop)

    opt = _lib.new_struct(_lib.EvidenceOptions)
    opt.method = _lib.METHODS[method]
    opt.independent = int(bool(independent))
    opt.verbose = int(bool(progress))
    opt.n_q = n_q
    opt.batch_size = batch_size
    opt.ncall = int(ncall or 0)
    opt.seed = seed
    opt.f_err = float(f_err or 0)
    opt.f_eva = float(f_eva or 0)
    opt.lower, opt.upper = ptr(lower), ptr(upper)
    opt.cross_fit = 0 if cross_fit else 1
    token = _lib.CancelToken()
    opt.cancel = token.handle
    res = _lib.new_struct(_lib.CResult)
    trace = (_lib.TracePoint * _TRACE_CAP)()

    def call():
        err = _lib.new_error()
        status = _lib.lib.gbs_evidence(cb.cfunc, None, ptr(x), nc, nd, d, ptr(lp), ctypes.byref(opt),
                                       ctypes.byref(res), trace, _TRACE_CAP, ctypes.byref(err))
        return status, err

    with Progress(progress, "gbs.evidence") as bar:
        cb.progress = bar if bar.bar is not None else None
        try:
            run(call, callbacks=[cb], token=token)
        finally:
            warnings = _lib.take_warnings(res.warnings, res.n_warnings)
            res.warnings = None
    k = min(res.n_trace, _TRACE_CAP)
    tr = [(trace[i].n_q, trace[i].logz, trace[i].logzerr) for i in range(k)]
    result = Result(res.logz, res.logzerr, res.ncall, res.n_p, res.n_q, res.tau, res.re2_p,
                    res.re2_q, _lib.METHOD_NAMES.get(res.method, str(res.method)), warnings, tr,
                    seed=seed, n_chains=nc, n_draws=nd, dim=d)
    result._context = {"x": x, "seed": seed, "lower": lower, "upper": upper,
                       "independent": bool(independent)}
    return result


def batch_function(log_prob, vectorize, args, kwargs, pool, stop):
    """``f(x, out)``: log p of the (n, d) points x into out, calling
    log_prob as the user declared it (serially, or through pool); a serial
    per-point loop raises KeyboardInterrupt at the next point once stop is
    set."""
    if not callable(log_prob):
        raise TypeError("log_prob must be callable, not %r" % (type(log_prob).__name__,))
    if pool is not None:
        evaluator = PoolEvaluator(pool, log_prob, args, kwargs, vectorize)
        return lambda x, out: evaluator(x, out, stop)
    if vectorize:
        def vectorized(x, out):
            out[:] = batch_values(log_prob(x, *args, **kwargs), len(x))
        return vectorized

    def per_point(x, out):
        for i, row in enumerate(x):
            if stop.is_set():
                raise KeyboardInterrupt
            out[i] = scalar_value(log_prob(row, *args, **kwargs))
    return per_point


def _is_emcee(samples):
    return hasattr(samples, "get_chain") and hasattr(samples, "get_log_prob")


def _is_gbs_samples(samples):
    return (hasattr(samples, "draws") and hasattr(samples, "log_prob")
            and not callable(getattr(samples, "log_prob")))


def draws_of(samples, log_prob_samples=None, chain_axis=0, discard=0, thin=1):
    """The draws as a C-contiguous (chains, draws, d) float64 array (the
    caller's memory when it already is one), their log p as (chains, draws)
    or None, and the sampler's number of log-density evaluations or None."""
    ncall = None
    if _is_emcee(samples):
        if log_prob_samples is not None:
            raise ValueError("log_prob_samples: the log-probabilities are taken from the emcee sampler")
        chain = samples.get_chain(discard=discard, thin=thin)
        if chain is None or np.size(chain) == 0:
            raise ValueError("the emcee sampler holds no steps after discard=%d (it ran %d)"
                             % (discard, getattr(samples, "iteration", 0)))
        x = np.transpose(np.asarray(chain, dtype=np.float64), (1, 0, 2))
        lp = np.transpose(np.asarray(samples.get_log_prob(discard=discard, thin=thin), dtype=np.float64))
        steps = getattr(samples, "iteration", None)
        if steps:
            ncall = int(steps) * x.shape[0]
        x, lp = as_c(x), as_c(lp)
        _check_lp(x, lp, "the emcee sampler's log-probabilities")
        return _checked(x), _checked_lp(lp), ncall
    if _is_gbs_samples(samples):
        if log_prob_samples is not None:
            raise ValueError("log_prob_samples: the log-probabilities are taken from %s"
                             % type(samples).__name__)
        x = as_c(samples.draws, "samples.draws")
        lp = as_c(samples.log_prob, "samples.log_prob")
        if x.ndim != 3 or lp.shape != x.shape[:2]:
            raise ValueError("%s: draws must have shape (chains, draws, d) and log_prob "
                             "(chains, draws), not %s and %s" % (type(samples).__name__, x.shape, lp.shape))
        ncall = getattr(samples, "ncall", None)
        x, lp = x[:, discard::thin], lp[:, discard::thin]
        return _checked(as_c(x)), _checked_lp(as_c(lp)), ncall
    x = as_c(samples, "samples")
    lp = None if log_prob_samples is None else as_c(log_prob_samples, "log_prob_samples")
    if x.ndim == 1:
        x = x.reshape(-1, 1)
    if x.ndim == 2:
        x = x.reshape(1, *x.shape)
        if lp is not None:
            if lp.size != x.shape[1] or lp.ndim > 2:
                raise ValueError("log_prob_samples has shape %s; the samples of shape %s need (%d,)"
                                 % (lp.shape, x.shape[1:], x.shape[1]))
            lp = lp.reshape(1, -1)
    elif x.ndim == 3:
        if chain_axis == 1:
            x = as_c(np.transpose(x, (1, 0, 2)))
            if lp is not None:
                if lp.shape != (x.shape[1], x.shape[0]):
                    raise ValueError("log_prob_samples has shape %s; samples of shape (draws, chains, "
                                     "d) = %s need (draws, chains) = %s"
                                     % (lp.shape, (x.shape[1], x.shape[0], x.shape[2]),
                                        (x.shape[1], x.shape[0])))
                lp = as_c(lp.T)
        elif lp is not None and lp.shape != x.shape[:2]:
            raise ValueError("log_prob_samples has shape %s; samples of shape (chains, draws, d) = "
                             "%s need (chains, draws) = %s" % (lp.shape, x.shape, x.shape[:2]))
    else:
        raise ValueError("samples must have shape (n, d), (n,) for d = 1, or 3 axes (chains "
                         "and draws, then d), not %s" % (x.shape,))
    if discard or thin != 1:
        x = as_c(x[:, discard::thin])
        lp = None if lp is None else as_c(lp[:, discard::thin])
    return _checked(x), _checked_lp(lp), ncall


def _check_lp(x, lp, what):
    if lp.shape != x.shape[:2]:
        raise ValueError("%s have shape %s, the draws %s" % (what, lp.shape, x.shape))


def _checked(x):
    nc, nd, d = x.shape
    if d == 0 or nc == 0 or nd == 0:
        raise ValueError("samples of shape %s hold no draws" % (x.shape,))
    if nc * nd <= d:
        hint = " (is the array transposed? samples are (n, d), one draw per row)" if nc == 1 else ""
        raise ValueError("%d draws of dimension %d are too few to estimate ln Z%s" % (nc * nd, d, hint))
    if not np.isfinite(x).all():
        c, t, k = np.argwhere(~np.isfinite(x))[0]
        raise ValueError("samples: value %r at chain %d, draw %d, coordinate %d; every value must be "
                         "finite" % (float(x[c, t, k]), c, t, k))
    return x


def _checked_lp(lp):
    """log p at the draws: finite (a draw of p has p > 0)."""
    if lp is not None and not np.isfinite(lp).all():
        c, t = np.argwhere(~np.isfinite(lp))[0]
        raise ValueError("log_prob_samples: log p = %r at chain %d, draw %d; the log-probabilities "
                         "of the draws must be finite" % (float(lp[c, t]), c, t))
    return lp
