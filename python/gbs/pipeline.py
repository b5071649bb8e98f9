"""gbs.run: the library's pipeline in one call, NUTS draws and ln Z from
them with the repairs the draws call for."""

from __future__ import annotations

import ctypes
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

import numpy as np

from . import _lib, _warnings
from ._arrays import positive_int
from ._callbacks import GradBatchCallback, GradCallback, run as run_call
from ._options import PackedOptions, ProgressArg, check_settings
from ._pool import PoolEvaluator
from ._progress import Progress
from ._values import callback_name
from .evidence import _TRACE_CAP, drop_lists, result_from_c, set_context
from .result import Result
from .sampling import NutsRun, Samples, density_arguments

__all__ = ["run"]

# gbs_sampling's fields as Result.sampling keys (the sizes are the draws').
_FACTS = ("target_accept", "retried", "lengthened", "global_moves", "global_accept_rate",
          "grad_calls", "logdensity_calls", "sampling_seconds", "evidence_seconds")
_FLAGS = ("retried", "lengthened", "global_moves")


def run(log_prob_and_grad: Callable[..., Any], x0: Any = None, *, n_chains: int = 4,
        n_draws: int = 1000, n_warmup: Optional[int] = None, seed: Optional[int] = None,
        bounds: Any = None, target_accept: Optional[float] = None, max_depth: Optional[int] = None,
        metric: str = "diag", step_size: Optional[float] = None, vectorize: bool = False,
        pool: Any = None, global_moves: Optional[bool] = None,
        global_moves_per_iter: Optional[int] = None, global_stages: Optional[int] = None,
        global_stage_iters: Optional[int] = None, args: Sequence[Any] = (),
        kwargs: Optional[Dict[str, Any]] = None, method: str = "bridge", n_q: Optional[int] = None,
        batch_size: Optional[int] = None, f_err: Optional[float] = None,
        f_eva: Optional[float] = None, cross_fit: bool = True, coverage_check: bool = True,
        anneal: str = "auto", name: Optional[str] = None, progress: ProgressArg = False,
        strict: bool = False) -> Result:
    """ln Z of a density you can evaluate with its gradient, when you have
    no sampler of your own: NUTS draws, then ln Z from them, with the
    repairs the draws call for.

    The library's pipeline (gbs_nuts_evidence): NUTS chains at an
    acceptance target of 0.9, then Gaussianized bridge sampling with the
    chains' log p reused. Where the draws are not good enough it runs the
    sampler again, from scratch with the same seed:

    - at an acceptance target of 0.99 when the kept transitions diverge,
      or when the coverage check finds mass of p beyond the draws (a
      funnel's neck the chains never reached);
    - with twice the warm-up and draws per chain (at most twice, so up to
      four times) when the chains have not mixed (R-hat, bulk ESS), more
      than 1 % of the transitions diverged, or the estimate warns about
      the draws;
    - with global moves from a Gaussianizing flow fitted on the chains
      (on by default where the warm-up stages' draws number at least 10
      per dimension), which cross between modes NUTS cannot.

    ln Z comes from the last run; the findings of the check ``"rerun"``
    say which reruns were made and why. Every default is the library's
    (a keyword left at None is decided there). With draws of your own
    (emcee, PyMC, Stan...), use :func:`gbs.evidence` or an adapter
    instead.

    The library calls the density once per leapfrog step and chain (some
    10^5 calls for 8 chains of 2500 iterations): a Python density costs
    its own time plus about 10 us per call of the library into Python,
    and for a cheap density that, not the library, sets the wall time.
    ``vectorize=True`` makes it one call per step for all chains; a
    :class:`gbs.NativeDensity` (compiled code: C, a numba cfunc, or the
    library's own ``gbs.problems.<name>(d).native()``) takes Python out
    of the loop altogether.

    Parameters
    ----------
    log_prob_and_grad : callable or gbs.NativeDensity
        ``log_prob_and_grad(x, *args, **kwargs)`` returns ``(log p,
        gradient)`` at one point x of shape (d,), the gradient of shape
        (d,); with ``vectorize=True``, x has shape (n, d) and it returns
        log p of shape (n,) and the gradients, shape (n, d). -inf marks a
        point outside the support (its gradient is not read); NaN and
        +inf are errors. ln Z is the log of the integral of exp(log p), so
        keep every constant. A :class:`gbs.NativeDensity` is called by
        the library without Python (``vectorize``, ``pool``, ``args`` and
        ``kwargs`` do not apply; its ``bounds`` are the default, and a
        thread-safe one runs the chains in parallel).
    x0 : array_like, shape (d,) or (n_chains, d), optional
        Starting point(s), where log p is finite; one point starts every
        chain. None: the library draws each chain's start in ``bounds``
        (required then), which also gives d.
    n_chains : int, default 4
        Chains (when x0 is one point or None).
    n_draws : int, default 1000
        Kept draws per chain of the first run (a longer rerun keeps
        more; ``result.n_draws`` is the number ln Z used).
    n_warmup : int, optional
        Warm-up iterations per chain of the first run (default: the
        library's, 1000; 0: none).
    seed : int, optional
        Seed of the sampler (chain c has its own stream from (seed, c)),
        of its reruns and of the evidence stage: the same seed gives the
        same result. None draws a fresh one (``Result.seed``).
    bounds : array_like, optional
        Box of the support, shape (d, 2) or a pair (lower, upper), ±inf or
        None for an open side. The sampler moves in it (log p must also be
        -inf outside it) and the proposal puts no mass outside it. Give it
        whenever p has a bounded prior.
    target_accept : float, optional
        NUTS's acceptance target of the first run (default 0.9, and 0.99
        for the rerun after divergences).
    max_depth : int, optional
        Maximal tree depth (default 10).
    metric : {"diag", "dense", "unit"}
        The metric NUTS adapts.
    step_size : float, optional
        Initial step size (default: a heuristic).
    vectorize : bool, default False
        ``log_prob_and_grad`` takes a batch of points: the sampler then
        evaluates the current points of all chains in one call (see
        :func:`gbs.sample`), and the evidence stage the proposal's draws
        ``batch_size`` at a time. Much faster for a numpy density: the
        interpreter is entered once per leapfrog step, not once per chain
        and step.
    pool : object with ``map``, optional
        Evaluates each batch of points in parallel (a ``multiprocessing``
        pool with the spawn or forkserver start method, a
        ``concurrent.futures`` executor or a ``dask.distributed.Client``):
        the chains' current points in the sampler, the proposal's draws
        in the evidence stage. ``vectorize`` then says how each task calls
        ``log_prob_and_grad``. For costly densities: a batch of the
        sampler holds one point per chain.
    global_moves : bool, optional
        Global moves from a flow fitted on the chains (None: the
        library's default); see :func:`gbs.sample`.
    global_moves_per_iter, global_stages, global_stage_iters : int, optional
        See :func:`gbs.sample`.
    args, kwargs : optional
        Extra arguments of ``log_prob_and_grad``.
    method, n_q, batch_size, f_err, f_eva, cross_fit, coverage_check, anneal, name, progress, strict
        The evidence stage's, as for :func:`gbs.evidence`. ``progress``
        counts the points evaluated (sampler and evidence) and shows the
        library's messages.

    Returns
    -------
    Result
        ``logz``, ``logzerr``, the findings of the draws and of the
        estimate (reruns among the information), ``samples`` (a
        :class:`gbs.Samples` of the draws ln Z used: ``draws`` (chains,
        draws, d), ``log_prob``, per-chain ``stats``, ``ncall`` the
        gradient evaluations of every run), and ``sampling`` (what the
        sampler did: acceptance target, reruns, global moves, calls and
        wall times of both stages). ``ncall`` counts the last evidence
        stage's log-density calls.

    Warns
    -----
    gbs.SamplerWarning, gbs.DiagnosticWarning
        What the last run still shows (see :func:`gbs.evidence`).

    Raises
    ------
    ValueError
        Bad input (shapes, bounds, options), also ``gbs.GbsArgumentError``
        when the library finds it.
    gbs.GbsError
        The log density returned NaN or +inf (``GbsCallbackError``), no
        starting point of finite density was found, or with
        ``strict=True`` the result has a warning.
    Exception
        Whatever ``log_prob_and_grad`` raised, with its traceback: the
        call stops.

    Examples
    --------
    >>> f = gbs.problems.funnel(16)                                    # doctest: +SKIP
    >>> res = gbs.run(f.log_prob_and_grad, bounds=f.bounds, n_chains=8, n_draws=2000,
    ...               n_warmup=500, vectorize=True, seed=1)             # doctest: +SKIP
    >>> res.logz, res.logzerr, res.samples.draws.shape                 # doctest: +SKIP
    """
    native, bounds, args, kwargs = density_arguments(log_prob_and_grad, x0, bounds, vectorize, pool,
                                                     args, kwargs)
    n_draws = positive_int(n_draws, "n_draws", False)
    nr = NutsRun(x0, n_chains, n_warmup, seed, bounds, target_accept, max_depth, metric, step_size,
                 global_moves, global_moves_per_iter, global_stages, global_stage_iters, native)
    settings = check_settings(method=method, n_q=n_q, seed=nr.seed, bounds=bounds, pool=pool,
                              progress=progress, batch_size=batch_size, f_err=f_err, f_eva=f_eva,
                              cross_fit=cross_fit, coverage_check=coverage_check, anneal=anneal,
                              name=name)
    packed = PackedOptions(settings, nr.d, None)
    # One cancel token stops both stages (the library accepts either).
    packed.struct.cancel = nr.token.handle
    fn = lambda x: log_prob_and_grad(x, *args, **kwargs)  # noqa: E731
    label = callback_name("log_prob_and_grad", log_prob_and_grad)
    cb: Any
    callbacks: List[Any] = []
    if native is not None:
        cb = None
    elif pool is not None:
        evaluator = PoolEvaluator(pool, log_prob_and_grad, args, kwargs, vectorize, grad=True)

        def through_pool(x: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
            lp, g = np.empty(len(x)), np.empty(x.shape)
            evaluator(x, lp, cb.stop, g)
            return lp, g
        cb = GradBatchCallback(through_pool, label, interruptible=False)
    elif vectorize:
        cb = GradBatchCallback(fn, label)
    else:
        cb = GradCallback(fn, label)
    if native is not None:
        entry = _lib.lib.gbs_nuts_evidence
        cfunc, user = native._pass()
    else:
        entry = _lib.lib.gbs_nuts_evidence if isinstance(cb, GradCallback) else _lib.lib.gbs_nuts_evidence_batch
        cfunc, user = cb.cfunc, None
        callbacks = [cb]
    res = _lib.new_struct(_lib.CResult)
    trace = (_lib.TracePoint * _TRACE_CAP)()
    opt = nr.opt

    def call() -> Tuple[int, Any]:
        err = _lib.new_error()
        # No draws or logp buffers: the pipeline may then lengthen the
        # runs, and its draws are read from the report.
        status = entry(cfunc, user, nr.d, nr.n_chains, n_draws, ctypes.byref(opt), packed.byref(),
                       ctypes.byref(res), trace, _TRACE_CAP, None, None, None, ctypes.byref(err))
        return status, err

    with Progress(progress, "gbs.run") as bar:
        if cb is not None:
            cb.progress = bar if bar.bar is not None else None
        try:
            run_call(call, callbacks=callbacks, token=nr.token)
        finally:
            drop_lists(res)
    result, (facts, draws, logp, stats) = result_from_c(res, trace, packed, None, sampling=True)
    names = [f[0] for f in _lib.NutsChainStats._fields_ if f[0] != "size"]
    st = [{k: getattr(s, k) for k in names} for s in stats]
    result.samples = Samples(draws, logp, st, ncall=facts.grad_calls, seed=nr.seed)
    result.sampling = {k: (bool(getattr(facts, k)) if k in _FLAGS else getattr(facts, k)) for k in _FACTS}
    result.name = settings.name
    set_context(result, draws, packed, False, None)
    _warnings.emit(result, strict=strict)
    return result
