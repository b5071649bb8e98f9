"""gbs.sample (NUTS) and gbs.sample_ensemble: draws from Python, ready for
gbs.evidence."""

from __future__ import annotations

import ctypes
import math
from typing import Any, Callable, Dict, Iterable, List, Optional, Sequence, Tuple

import numpy as np

from . import _lib, _warnings
from ._findings import Finding
from ._arrays import as_c, bounds_arrays, integer, positive_int, ptr, seed_value
from ._callbacks import BatchCallback, GradBatchCallback, GradCallback, run
from .native import NativeDensity, configure, prepare
from ._values import callback_name
from .evidence import batch_function, nuts_buffers

_METRICS = {"diag": 0, "dense": 1, "unit": 2}
_MOVES = {"stretch": 0, "de": 1}


class Samples:
    """Draws of a sampler with their log densities and statistics; pass it
    to :func:`gbs.evidence` as the samples.

    Attributes
    ----------
    draws : numpy.ndarray, shape (chains, draws, d)
    log_prob : numpy.ndarray, shape (chains, draws)
        log p at the draws (reused by :func:`gbs.evidence`, which then does
        not evaluate them again).
    ncall : int
        Log-density (NUTS: gradient) evaluations of the run, warm-up
        included; feeds the adaptive n_q rule of :func:`gbs.evidence`.
    stats : list of dict
        NUTS, per chain: step_size, mean_accept, mean_tree_depth,
        divergences, warmup_divergences, max_depth_hits, leapfrogs,
        grad_calls, and the global moves' counts global_proposed,
        global_accepted (kept draws), global_warmup_proposed,
        global_warmup_accepted and global_calls (all zero without
        global moves). Ensemble: one dict with burn, thin, tau_max,
        acceptance.
    findings : list of Finding
        What the sampler's own checks found (divergences, a run shorter
        than 50 autocorrelation times...), also raised as
        :class:`gbs.SamplerWarning` when the draws are made.
    warnings : list of str
        Their messages.
    seed : int
        The seed used.
    """

    def __init__(self, draws: np.ndarray, log_prob: np.ndarray, stats: List[Dict[str, Any]],
                 ncall: Optional[int] = None, findings: Iterable[Finding] = (),
                 seed: Optional[int] = None) -> None:
        self.draws, self.log_prob, self.stats = draws, log_prob, stats
        self.ncall = int(sum(s.get("grad_calls", 0) for s in stats)) if ncall is None else int(ncall)
        self.findings = list(findings)
        self.seed = seed

    @property
    def warnings(self) -> List[str]:
        """The messages of the sampler's findings."""
        return [f.message for f in self.findings]

    @property
    def divergences(self) -> int:
        """Divergent NUTS transitions after warm-up, over all chains."""
        return int(sum(s.get("divergences", 0) for s in self.stats))

    @property
    def global_accept_rate(self) -> Optional[float]:
        """Acceptance rate of the global moves over the kept draws of all
        chains (``sample(..., global_moves=True)``); None without them."""
        prop = int(sum(s.get("global_proposed", 0) for s in self.stats))
        if not prop:
            return None
        return float(sum(s.get("global_accepted", 0) for s in self.stats)) / prop

    @property
    def shape(self) -> Tuple[int, ...]:
        """(chains, draws, d)."""
        return tuple(self.draws.shape)

    def __repr__(self) -> str:
        c, n, d = self.draws.shape
        return "Samples(chains=%d, draws=%d, d=%d, ncall=%d, divergences=%d)" % (
            c, n, d, self.ncall, self.divergences)


def sample(log_prob_and_grad: Callable[..., Any], x0: Any, *, n_draws: int = 1000, n_warmup: int = 1000,
           n_chains: int = 4, seed: Optional[int] = None, bounds: Any = None,
           target_accept: Optional[float] = None, max_depth: Optional[int] = None, metric: str = "diag",
           step_size: Optional[float] = None, vectorize: bool = False,
           global_moves: Optional[bool] = None, global_moves_per_iter: Optional[int] = None,
           global_stages: Optional[int] = None, global_stage_iters: Optional[int] = None,
           args: Sequence[Any] = (), kwargs: Optional[Dict[str, Any]] = None) -> Samples:
    """Draw from p with the No-U-Turn sampler (multinomial NUTS with Stan's
    warm-up: dual-averaging step size, metric adapted in doubling windows).

    Which call to use: for ln Z without a sampler of your own,
    :func:`gbs.run` makes these draws and the estimate in one call, and
    repairs what this function can only report: it runs the sampler again
    at a higher acceptance target after divergences, and longer when the
    chains have not mixed (its draws are ``Result.samples``). Use
    ``sample`` when you want the draws themselves, to inspect or reuse them
    before :func:`gbs.evidence`, or NUTS's settings exactly as given (its
    ``target_accept`` defaults to 0.8, :func:`gbs.run`'s to 0.9). With
    draws from another sampler, go to :func:`gbs.evidence` directly.

    Parameters
    ----------
    log_prob_and_grad : callable or gbs.NativeDensity
        ``log_prob_and_grad(x, *args, **kwargs)``, for one point x of shape
        (d,), returns ``(log p, gradient)`` with the gradient of shape
        (d,). -inf (or NaN) log p marks a point outside the support. With
        ``vectorize=True``, x has shape (n, d) and it returns log p of
        shape (n,) and the gradients, shape (n, d). A
        :class:`gbs.NativeDensity` is called by the library without
        Python (``vectorize``, ``args`` and ``kwargs`` do not apply).
    x0 : array_like, shape (d,) or (n_chains, d)
        Starting point(s), where log p is finite; one point is used for
        every chain.
    n_draws : int, default 1000
        Kept draws per chain.
    n_warmup : int, default 1000
        Adaptation iterations per chain (0: none, with a unit metric and
        ``step_size``).
    n_chains : int, default 4
        Chains (when x0 is one point).
    seed : int, optional
        Chain c uses its own stream from (seed, c): the same seed gives the
        same draws. None draws a fresh one (``Samples.seed``).
    bounds : array_like, optional
        Box of the support (shape (d, 2) or (lower, upper)); the density
        itself must return -inf outside it.
    target_accept : float, optional
        Target acceptance statistic of the step-size adaptation (default
        0.8; 0.95 is safer for the evidence of funnel-like targets).
    max_depth : int, optional
        Maximal tree depth (default 10).
    metric : {"diag", "dense", "unit"}
    step_size : float, optional
        Initial step size (default: a heuristic).
    vectorize : bool, default False
        Evaluate the current points of all chains in one call: the chains
        advance together one leapfrog step at a time (a chain that ends a
        transition starts its next one at once; a chain done with its draws
        leaves the batch), so each call receives one point per chain still
        sampling, and the interpreter is entered once per step instead of
        once per chain and step. The draws are the same as with
        ``vectorize=False`` for the same seed, as long as the batched
        function returns each point's values bit for bit as the per-point
        one does (numpy's elementwise operations and row sums do; a matrix
        product may round differently than a matrix-vector product).
    global_moves : bool, optional
        Alternate each NUTS transition with independence Metropolis–Hastings
        moves from a Gaussianizing flow fitted on the chains (None: the
        library's default, on when each warm-up stage's pooled draws,
        ``chains * global_stage_iters``, number at least 10 per dimension,
        so with 4 chains up to d = 40). After the warm-up the chains
        run ``global_stages`` (default 2) more warm-up stages of
        ``global_stage_iters`` (default 100) iterations; the flow fitted on
        each stage's pooled draws (within ``bounds``) proposes the next
        stage's moves, and the last one, fixed, the kept draws'. A move
        draws x' from the flow q and accepts it with probability
        min(1, p(x') q(x) / (p(x) q(x'))), at one call of
        ``log_prob_and_grad``: it jumps between modes, which NUTS cannot
        cross, and so sets the weights of modes that the chains found in
        the wrong proportions (start the chains at dispersed points: q only
        proposes where some chain has been). Their acceptance rate is
        ``Samples.global_accept_rate``.
    global_moves_per_iter : int, optional
        Global moves per NUTS transition (default 1).
    global_stages, global_stage_iters : int, optional
        See ``global_moves``.
    args, kwargs : optional
        Extra arguments of ``log_prob_and_grad``.

    Returns
    -------
    Samples
        ``draws`` (chains, draws, d), ``log_prob`` (chains, draws), per-chain
        ``stats``; ``gbs.evidence(log_prob, samples)`` uses them directly.
        ``stats`` counts gradient evaluations per point either way.
    """
    if x0 is None:
        raise ValueError("x0 is required: a starting point (d,) or one per chain (n_chains, d)")
    native, bounds, args, kwargs = density_arguments(log_prob_and_grad, x0, bounds, vectorize, None,
                                                     args, kwargs)
    n_draws = positive_int(n_draws, "n_draws", False)
    nr = NutsRun(x0, n_chains, n_warmup, seed, bounds, target_accept, max_depth, metric, step_size,
                 global_moves, global_moves_per_iter, global_stages, global_stage_iters, native)
    opt, nc, d, seed = nr.opt, nr.n_chains, nr.d, nr.seed
    if native is not None:
        cfunc, user = native._pass()
        entry = _lib.lib.gbs_nuts_sample
        callbacks = []
    else:
        fn = lambda x: log_prob_and_grad(x, *args, **kwargs)  # noqa: E731
        name = callback_name("log_prob_and_grad", log_prob_and_grad)
        cb = GradBatchCallback(fn, name) if vectorize else GradCallback(fn, name)
        entry = _lib.lib.gbs_nuts_sample_batch if vectorize else _lib.lib.gbs_nuts_sample
        cfunc, user, callbacks = cb.cfunc, None, [cb]
    token = nr.token
    draws, logp, stats = nuts_buffers(nc, n_draws, d,
                                      "n_chains × n_draws = %d × %d draws of dimension %d" % (nc, n_draws, d))

    def call() -> Tuple[int, Any]:
        err = _lib.new_error()
        return entry(cfunc, user, d, nc, n_draws, ctypes.byref(opt), ptr(draws), ptr(logp), stats,
                     ctypes.byref(err)), err

    run(call, callbacks=callbacks, token=token)
    names = [f[0] for f in _lib.NutsChainStats._fields_ if f[0] != "size"]
    st = [{k: getattr(s, k) for k in names} for s in stats]
    found = []
    div = sum(s["divergences"] for s in st)
    if div:
        found.append(Finding("divergences", "draws",
                             "%d divergent transitions after warm-up: the draws (and ln Z from them) "
                             "may be biased; raise target_accept" % div,
                             value=div / (nc * n_draws), limit=0.0))
    _warnings.warn_all(found)
    return Samples(draws, logp, st, findings=found, seed=seed)


def density_arguments(log_prob_and_grad: Any, x0: Any, bounds: Any, vectorize: bool, pool: Any,
                      args: Sequence[Any], kwargs: Optional[Dict[str, Any]]
                      ) -> Tuple[Optional[NativeDensity], Any, Tuple[Any, ...], Dict[str, Any]]:
    """The density arguments of :func:`sample` and :func:`gbs.run`,
    checked: the native density (or None), the bounds (a native density's
    own where none are given), args as a tuple and kwargs as a dict."""
    if not callable(log_prob_and_grad):
        raise TypeError("log_prob_and_grad must be callable, not %r" % (type(log_prob_and_grad).__name__,))
    kwargs = {} if kwargs is None else dict(kwargs)
    args = tuple(args)
    native = log_prob_and_grad if isinstance(log_prob_and_grad, NativeDensity) else None
    if native is not None:
        bounds = prepare(native, x0, bounds, vectorize, pool, args, kwargs)
    return native, bounds, args, kwargs


class NutsRun:
    """The checked sampler settings of :func:`sample` and :func:`gbs.run`
    as the library's gbs_nuts_options, with the arrays its pointers refer
    to (kept alive by this object). None (and an n_warmup of None) is the
    library's default; n_warmup 0 is no warm-up.

    x0 is one point (tiled over n_chains chains), one per chain, or None
    (the library draws the starting points in ``bounds``: d is theirs)."""

    def __init__(self, x0: Any, n_chains: Optional[int], n_warmup: Optional[int], seed: Any,
                 bounds: Any, target_accept: Optional[float], max_depth: Optional[int],
                 metric: str, step_size: Optional[float], global_moves: Optional[bool],
                 global_moves_per_iter: Optional[int], global_stages: Optional[int],
                 global_stage_iters: Optional[int], native: Optional[NativeDensity] = None) -> None:
        init = None
        if x0 is None:
            if bounds is None:
                raise ValueError("give x0 (a starting point, or one per chain) or bounds (the box "
                                 "the library draws the chains' starting points from)")
            d = _bounds_dim(bounds)
            nc = positive_int(n_chains, "n_chains", False)
        else:
            init = as_c(x0, "x0")
            if init.ndim == 0:
                init = init.reshape(1)
            if init.ndim == 1:
                init = np.ascontiguousarray(np.tile(init, (positive_int(n_chains, "n_chains", False), 1)))
            if init.ndim != 2 or init.shape[1] == 0:
                raise ValueError("x0 must have shape (d,) or (n_chains, d), not %s" % (init.shape,))
            nc, d = init.shape
        if metric not in _METRICS:
            raise ValueError("metric must be one of %s, not %r" % (sorted(_METRICS), metric))
        if target_accept is not None and not 0 < float(target_accept) < 1:
            raise ValueError("target_accept must be in (0, 1), not %r" % (target_accept,))
        if step_size is not None and not (float(step_size) > 0 and math.isfinite(float(step_size))):
            raise ValueError("step_size must be a finite number > 0, not %r" % (step_size,))
        opt = _lib.new_struct(_lib.NutsOptions)
        if n_warmup is not None:
            warmup = integer(n_warmup, "n_warmup")
            if warmup < 0:
                raise ValueError("n_warmup must be >= 0, not %d" % warmup)
            opt.warmup = warmup if warmup else -1
        opt.max_depth = positive_int(max_depth, "max_depth", bits=32)
        opt.metric = _METRICS[metric]
        opt.target_accept = float(target_accept or 0)
        opt.step_size = float(step_size or 0)
        self.seed = seed_value(seed)
        opt.seed = self.seed
        opt.init = ptr(init)
        if global_moves is not None:
            opt.global_moves = _lib.GLOBAL_ON if global_moves else _lib.GLOBAL_OFF
        opt.global_moves_per_iter = positive_int(global_moves_per_iter, "global_moves_per_iter", bits=32)
        opt.global_stages = positive_int(global_stages, "global_stages")
        opt.global_stage_iters = positive_int(global_stage_iters, "global_stage_iters")
        self.lower = self.upper = None
        if bounds is not None:
            self.lower, self.upper = bounds_arrays(bounds, d)
        opt.lower, opt.upper = ptr(self.lower), ptr(self.upper)
        self.token = _lib.CancelToken()
        opt.cancel = self.token.handle
        self.init, self.opt, self.n_chains, self.d = init, opt, nc, d
        if native is not None:
            configure(native, opt, d)


def _bounds_dim(bounds: Any) -> int:
    """d of bounds given without starting points: (d, 2) rows, or a pair
    (lower, upper)."""
    b = np.shape(np.array(bounds, dtype=object))
    if isinstance(bounds, tuple) and len(b) == 2 and b[0] == 2:
        return int(b[1])
    if len(b) == 2 and b[1] == 2:
        return int(b[0])
    if len(b) == 2 and b[0] == 2:
        return int(b[1])
    if b == (2,):
        return 1
    raise ValueError("bounds must have shape (d, 2) (rows of low, high) or be a pair (lower, upper), "
                     "not shape %s" % (b,))


def sample_ensemble(log_prob: Callable[..., Any], x0: Any = None, *, ndim: Optional[int] = None,
                    walkers: Optional[int] = None, steps: int = 5000, burn: Optional[int] = None,
                    thin: Optional[int] = None, move: str = "stretch", a: Optional[float] = None,
                    seed: Optional[int] = None, bounds: Any = None, vectorize: bool = False,
                    args: Sequence[Any] = (), kwargs: Optional[Dict[str, Any]] = None) -> Samples:
    """Draw from p with the affine-invariant ensemble sampler (Goodman &
    Weare's stretch move, as emcee, run in Go): the gradient-free path.

    Parameters
    ----------
    log_prob : callable
        As for :func:`gbs.evidence`: one point (d,) -> float, or with
        ``vectorize=True`` (n, d) -> (n,); each call then receives a whole
        half-ensemble (the stretch move updates one half of the walkers
        from the other, so the half is the largest set of points known
        together), one call per half-step.
    x0 : array_like, shape (walkers, d), optional
        Starting walkers (finite log p). Otherwise uniform in ``bounds``,
        or a small ball around the origin (give ``ndim``).
    ndim : int, optional
        d, when neither x0 nor bounds gives it.
    walkers : int, optional
        Ensemble size: even and >= 2d; default max(32, 2d + 2).
    steps : int, default 5000
        Steps per walker, burn-in included.
    burn, thin : int, optional
        Burn-in steps and thinning; default: chosen from the
        autocorrelation time.
    move : {"stretch", "de"}
    a : float, optional
        Stretch scale (default 2).
    seed : int, optional
        None draws a fresh one (``Samples.seed``).
    bounds : array_like, optional
        Box of the starting walkers (shape (d, 2) or (lower, upper)).

    Returns
    -------
    Samples
        Walkers are the chains; pass it to :func:`gbs.evidence`.
    """
    kwargs = {} if kwargs is None else dict(kwargs)
    args = tuple(args)
    opt = _lib.new_struct(_lib.EnsembleOptions)
    init = None
    if x0 is not None:
        init = as_c(x0, "x0")
        if init.ndim != 2:
            raise ValueError("x0 must have shape (walkers, d), not %s" % (init.shape,))
        nw, d = init.shape
        if walkers is not None and int(walkers) != nw:
            raise ValueError("walkers = %s but x0 holds %d walkers" % (walkers, nw))
        walkers = nw
    elif bounds is not None:
        b = np.shape(bounds)
        d = b[0] if len(b) == 2 and b[1] == 2 and not isinstance(bounds, tuple) else b[-1]
    elif ndim is not None:
        d = positive_int(ndim, "ndim", False)
    else:
        raise ValueError("give x0, bounds or ndim")
    if ndim is not None and int(ndim) != d:
        raise ValueError("ndim = %s but the starting points or bounds have d = %d" % (ndim, d))
    lo = hi = None
    if bounds is not None:
        lo, hi = bounds_arrays(bounds, d)
    opt.init, opt.lower, opt.upper = ptr(init), ptr(lo), ptr(hi)
    if move not in _MOVES:
        raise ValueError("move must be one of %s, not %r" % (sorted(_MOVES), move))
    opt.walkers = positive_int(walkers, "walkers")
    opt.steps = positive_int(steps, "steps")
    opt.burn = int(burn or 0)
    opt.thin = positive_int(thin, "thin")
    opt.move = _MOVES[move]
    opt.a = float(a or 0)
    seed = seed_value(seed)
    opt.seed = seed
    cb = BatchCallback(None)
    cb.batch_fn = batch_function(log_prob, vectorize, args, kwargs, None, cb.stop)
    token = _lib.CancelToken()
    opt.cancel = token.handle
    handle = ctypes.c_void_p()

    def call() -> Tuple[int, Any]:
        err = _lib.new_error()
        return _lib.lib.gbs_ensemble_sample(cb.cfunc, None, d, ctypes.byref(opt), ctypes.byref(handle),
                                            ctypes.byref(err)), err

    run(call, callbacks=[cb], token=token)
    try:
        info = _lib.new_struct(_lib.EnsembleInfo)
        _lib.call(_lib.lib.gbs_ensemble_get_info, handle, ctypes.byref(info))
        draws = np.empty((info.walkers, info.draws, d))
        logp = np.empty((info.walkers, info.draws))
        _lib.call(_lib.lib.gbs_ensemble_get_draws, handle, ptr(draws), ptr(logp))
        arr = ctypes.POINTER(ctypes.c_char_p)()
        n = ctypes.c_int64()
        _lib.call(_lib.lib.gbs_ensemble_warnings, handle, ctypes.byref(arr), ctypes.byref(n))
        warnings = _lib.take_warnings(arr, n.value)
    finally:
        _lib.lib.gbs_ensemble_free(handle, None)
    stats = [{"burn": info.burn, "thin": info.thin, "tau_max": info.tau_max,
              "acceptance": info.acceptance}]
    found = [Finding("ensemble-sampler", "draws", w) for w in warnings]
    _warnings.warn_all(found)
    return Samples(draws, logp, stats, ncall=info.ncall, findings=found, seed=seed)
