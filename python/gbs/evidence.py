"""gbs.evidence: ln Z from posterior samples."""

from __future__ import annotations

import ctypes
import dataclasses
import threading
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple, Union

import numpy as np

from . import _lib, _warnings
from ._arrays import ptr, seed_value
from ._callbacks import BatchCallback, run
from ._options import EvidenceSettings, PackedOptions, ProgressArg, check_settings
from ._pool import PoolEvaluator
from ._progress import Progress
from ._samples import draws_of, emcee_arguments, is_inference_data, is_xarray_dataset, normalize
from ._values import batch_values, callback_name, scalar_value
from ._findings import take_report
from ._memory import empty
from .result import REPETITION_DTYPE, Diagnostics, Result

__all__ = ["evidence", "estimate", "batch_function", "draws_of"]

_TRACE_CAP = 256


def evidence(log_prob: Callable[..., Any], samples: Any = None, *, log_prob_samples: Any = None,
             vectorize: bool = False, args: Optional[Sequence[Any]] = None,
             kwargs: Optional[Dict[str, Any]] = None,
             chain_axis: int = 0, var_names: Optional[Sequence[str]] = None, method: str = "bridge",
             n_q: Optional[int] = None, seed: Union[None, int, np.random.Generator] = None,
             bounds: Any = None, pool: Any = None, progress: ProgressArg = False, discard: int = 0,
             thin: int = 1, independent: bool = False, ncall: Optional[int] = None,
             batch_size: Optional[int] = None, f_err: Optional[float] = None,
             f_eva: Optional[float] = None, cross_fit: bool = True,
             coverage_check: bool = True, anneal: str = "auto", symmetry: str = "auto",
             symmetry_groups: Optional[Sequence[Any]] = None, name: Optional[str] = None,
             repetitions: int = 1, strict: bool = False, mode_census: str = "auto") -> Result:
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
    samples : array_like, emcee.EnsembleSampler, gbs.Samples or arviz.InferenceData
        Draws of p. An array of shape (n, d) (one chain, or independent
        draws), (n,) when d = 1, or 3-d with the chains on ``chain_axis``.
        An emcee ``EnsembleSampler`` (or emcee backend): its chain and its
        stored log-probabilities are used, after ``discard`` burn-in steps,
        and its number of log-probability calls feeds the adaptive n_q
        rule. Its walkers are read as one ensemble, which moves together:
        a :class:`gbs.SamplerWarning` says when a walker holds fewer than
        50 autocorrelation times of a coordinate (emcee's rule; the error
        bar of shorter runs is not to be trusted). What :func:`gbs.sample` or :func:`gbs.sample_ensemble`
        returns: the same, from their draws. An ArviZ ``InferenceData``
        (its posterior group) or an xarray ``Dataset`` with ``chain`` and
        ``draw`` dimensions: the variables of ``var_names`` are flattened
        into the d columns that ``log_prob`` receives (see ``var_names``);
        the chains stay chains. Its ``sample_stats`` are not used: the
        sampler's ``lp`` is usually the log density of other coordinates
        (PyMC's and NumPyro's are of the unconstrained space), so
        :func:`gbs.from_pymc` and :func:`gbs.from_numpyro` are the way to
        use them.
    log_prob_samples : array_like, optional
        log p at the samples, shape (n,) or the samples' shape without the
        last axis (in the same layout): these values are then not computed
        again. Taken from the sampler when ``samples`` is one.
    vectorize : bool, default False
        Whether ``log_prob`` takes a batch of points.
    args, kwargs : tuple, dict, optional
        Extra positional and keyword arguments of ``log_prob``. Default:
        those of the emcee sampler when ``samples`` is an emcee
        ``EnsembleSampler`` made with this ``log_prob``
        (``emcee.EnsembleSampler(nwalkers, ndim, log_prob, args=...,
        kwargs=...)``), else none.
    chain_axis : {0, 1}, default 0
        For 3-d samples: 0 for (chains, draws, d), as ArviZ and
        :func:`gbs.sample`; 1 for (draws, chains, d), as emcee's
        ``get_chain()``.
    var_names : sequence of str, optional
        For ArviZ or xarray ``samples``: the posterior variables that make
        up a point, in this order (default: every variable of the posterior
        group, in its order; deterministics included, so name the free
        variables when there are any). Each variable's own axes are
        flattened in C order (last index fastest): ``var_names=["mu",
        "b"]`` with a scalar ``mu`` and ``b`` of shape (2, 3) gives
        ``x = [mu, b[0,0], b[0,1], b[0,2], b[1,0], b[1,1], b[1,2]]``.
    method : {"bridge", "is", "hm", "warp3"}, default "bridge"
        Gaussianized bridge sampling; importance sampling with the flow;
        the reciprocal importance sampling (harmonic mean) estimator with
        the flow; warp-III bridge sampling with a Gaussian (a baseline).
    n_q : int, optional
        Number of proposal draws (with cross-fitting, shared by the two
        passes). Default: the adaptive rule of the paper. Each pass starts
        with the effective number of the posterior draws it estimates with,
        n_q = n_p / tau (at least 1000, at most n_p; tau is that of log q/p
        along the chains, 1 for ``independent=True``), then draws more
        while the proposal's term exceeds ``f_err`` of the squared error,
        spending at most about ``f_eva`` of all log-density evaluations
        (the sampler's ``ncall``) on them. ``Result.trace`` shows the
        n_q it went through.
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
        with the first, and report the mean of the two ln Z. Where q
        differs from p this halves the posterior side's variance, which
        dominates for autocorrelated chains, for one more flow fit (where q
        fits p closely the passes share most of it, and the error bar
        counts that); ``n_q`` and the
        ``f_eva`` budget are shared by the two passes, and without
        ``log_prob_samples`` log p is evaluated at every draw instead of
        half of them. False: one pass, as in the paper. The error bar
        adds the covariance of the two passes, measured in the run (from
        log q1 - log q2 at the posterior draws): near zero on NUTS draws
        of the paper's problems, large when q fits p closely (near-Gaussian
        targets); over 96 emcee runs of a 4-d Gaussian the mean error bar
        was 0.00170 against a spread of 0.00174 (see "Error bars on emcee
        chains" on the benchmark methods page of the documentation).
    coverage_check : bool, default True
        For ``method="bridge"``: run short independence Metropolis-Hastings
        chains proposed by the fitted flow (and a widened copy of it) and
        targeting p, and warn when they find mass of p beyond the range of
        the draws, which every chain may have missed alike (a funnel's neck
        or heavy tails cut away): ln Z is then low and its error bar does
        not show it. Costs about n_q/10 log-density calls (counted in
        ``ncall``); its numbers are ``diagnostics.coverage_*``
        (the Diagnostics page of the documentation, section 8). False:
        off.
    anneal : {"auto", "off", "on"}, default "auto"
        For ``method="bridge"``: the annealed bridge, which joins q to p
        by the geometric path q^(1-β) p^β and crosses it with particles
        from q and from held-out draws (one log-density call per particle
        and rung, no gradient, counted in ``ncall``). "auto" uses it only
        where the draws are few for the dimension (d²/(4n) of at least 1
        nat for n draws per fit) and the direct bridge's overlap is poor,
        as at d = 1000 with 2·10^4 draws; "off" never (the direct bridge,
        as in the paper); "on" always. ``Result.info`` says when it ran,
        with its rungs and calls.
    mode_census : {"auto", "off", "on"}, default "auto"
        The mode census, when ``bounds`` gives every coordinate a finite
        box: log p is climbed from points spread over the box and from
        draws of a widened proposal, and a local maximum that neither the
        draws nor the proposal reach raises a ``GbsWarning`` with
        ``check == "missed-mode"`` naming where it is and what ln Z is
        low by (its mass by a Laplace approximation). A few thousand
        log-density calls at small d (counted in ``ncall``); its numbers
        are ``diagnostics.census_*``. "auto" runs it when the box is
        finite, "on" makes a box that is not an error, "off" skips it.
    symmetry : {"auto", "off", "on"}, default "auto"
        Label switching. "auto" looks for relabelings of blocks of
        coordinates (a mixture's exchangeable components) under which
        ``log_prob`` is unchanged at 32 draws while the draws hold one
        labeling, as every sampler's chains do; ln Z then averages q over
        the K! relabelings and relabels each draw at random, which is
        exact whether the copies of the mode are apart or overlap
        (without it ln Z is low by up to ln K!). ``Result.info`` says
        what was found (check ``"symmetry"``). It tests
        ``symmetry_groups`` first, then pairs of coordinates and block
        layouts up to d = 256, at most 65 log-density calls where nothing
        is found. "on" also averages where the draws already cover the
        relabelings alike; "off" never looks.
    symmetry_groups : sequence, optional
        Candidate symmetries, each a sequence of K >= 2 blocks of one
        length; a block is a coordinate index or a sequence of them.
        ``[[0, 1, 2]]``: coordinates 0, 1, 2 are exchangeable;
        ``[[[0, 2], [1, 3]]]``: (x0, x2) and (x1, x3) are, as the (mean,
        scale) of two components laid out [μ1, μ2, σ1, σ2]. Each is used
        only if ``log_prob`` is unchanged under it at the draws; groups
        may overlap (the finest that hold are used). :func:`gbs.from_pymc`
        and :func:`gbs.from_numpyro` pass the model's vector variables of
        one length.
    name : str, optional
        The model's name, kept as ``Result.name``: :func:`gbs.compare` and
        :func:`gbs.bayes_factor` label the model with it.
    repetitions : int, default 1
        k > 1 repeats the estimate with k independent proposal sets (each
        its own flow fit and proposal draws, from seeds derived from
        ``seed``) on the same posterior draws, as bridgesampling's
        ``repetitions``: ``Result.repetitions`` holds the k rows (seed,
        ln Z, error; the seeds exact, to rerun one) and
        ``Result.error_measures()`` their spread, beside the analytic
        error. ``logz`` stays the first estimate (the one
        ``seed`` gives alone). The spread measures the proposal's part of
        the error only (the posterior draws are shared). Costs k times the
        proposal's log-density evaluations; log p at the draws is computed
        once.
    strict : bool, default False
        Raise :class:`gbs.GbsWarningError` (a :class:`gbs.GbsError`)
        instead of returning a result that has warnings: for scripts and
        pipelines where nobody reads warnings.

    Returns
    -------
    Result
        ``logz`` and ``logzerr`` (natural log), ``ncall``, ``n_p``,
        ``n_q``, ``tau``, ``warnings``, ``info``, ``summary()``,
        ``plot()``.

    Warns
    -----
    gbs.SamplerWarning
        The draws may not represent p (unmixed, copied or stuck chains,
        burn-in left in, too few effective draws, exchanged axes).
    gbs.DiagnosticWarning
        A check of the estimate failed (the proposal and the draws barely
        overlap, the draws do not follow ``log_prob``...).

        Each warning is also in ``Result.warnings``; both are
        :class:`gbs.GbsWarning` (a ``UserWarning``), raised at the line
        that called gbs. The documentation's "Diagnostics" page lists
        every check.

    Raises
    ------
    ValueError
        Bad input: shapes, a method name, bounds, NaN samples, too few draws
        (``gbs.GbsArgumentError`` when the library finds it).
    gbs.GbsError
        The log density returned NaN or +inf (``GbsCallbackError``), the
        estimate failed (for example no overlap between q and p), or with
        ``strict=True`` the result has a warning (``GbsWarningError``).
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
        raise TypeError(_not_callable(log_prob))
    if samples is None:
        raise TypeError("gbs.evidence(log_prob, samples): samples is missing; pass the draws of "
                        "log_prob (an array, an emcee sampler, gbs.Samples or an ArviZ "
                        "InferenceData)")
    if chain_axis not in (0, 1):
        raise ValueError("chain_axis must be 0 (chains, draws, d) or 1 (draws, chains, d), not %r"
                         % (chain_axis,))
    sampler_args = emcee_arguments(samples, log_prob) if args is None or kwargs is None else None
    if sampler_args is not None:
        args = sampler_args[0] if args is None else args
        kwargs = sampler_args[1] if kwargs is None else kwargs
    args = () if args is None else args
    kwargs = {} if kwargs is None else dict(kwargs)
    if not isinstance(args, (tuple, list)):
        raise TypeError("args must be a tuple, not %r" % (type(args).__name__,))
    settings = check_settings(method=method, n_q=n_q, seed=seed, bounds=bounds, pool=pool,
                              progress=progress, discard=discard, thin=thin, independent=independent,
                              ncall=ncall, batch_size=batch_size, f_err=f_err, f_eva=f_eva,
                              cross_fit=cross_fit, coverage_check=coverage_check, anneal=anneal,
                              symmetry=symmetry, symmetry_groups=symmetry_groups, name=name,
                              repetitions=repetitions, mode_census=mode_census)
    dr = normalize(samples, log_prob_samples, chain_axis, settings.discard, settings.thin, var_names)
    if dr.ensemble:
        settings = dataclasses.replace(settings, ensemble=True)
    stop = threading.Event()
    fn = batch_function(log_prob, vectorize, tuple(args), kwargs, settings.pool, stop)
    result = estimate(fn, dr.x, dr.lp, settings, dr.ncall, stop=stop, labels=dr.labels,
                      lp_source=dr.lp_source)
    _warnings.emit(result, strict=strict)
    return result


def _not_callable(obj: Any) -> str:
    """The message for a first argument that is not a log density: for
    an InferenceData or a PyMC / NumPyro object, the call that takes it."""
    kind = type(obj).__name__
    if is_inference_data(obj) or is_xarray_dataset(obj):
        return ("gbs.evidence(log_prob, samples) takes the log density first, and got a %s. For "
                "draws of a PyMC model use gbs.from_pymc(idata, model) (NumPyro: "
                "gbs.from_numpyro(mcmc)), which build the log density from the model; with a log "
                "density of your own, call gbs.evidence(log_prob, idata, var_names=[...]) with the "
                "free variables in the order log_prob expects them" % kind)
    if type(obj).__module__.split(".")[0] == "numpyro":
        return ("gbs.evidence(log_prob, samples) takes the log density first, and got a %s; "
                "for a NumPyro MCMC use gbs.from_numpyro(mcmc)" % kind)
    return "log_prob must be callable, not %r" % (kind,)


_LP_SOURCES = {
    "log_prob_samples": ("log_prob_samples", "pass log_prob_samples in the layout of the samples, "
                         "computed by log_prob itself, or leave it out"),
    "emcee": ("the emcee sampler's stored log-probabilities (get_log_prob())",
              "pass gbs.evidence the log_prob, args and kwargs the sampler was created with "
              "(emcee.EnsembleSampler(nwalkers, ndim, log_prob, args=..., kwargs=...)): ln Z is the "
              "integral of that density"),
}


def _with_context(e: "_lib.GbsError", settings: EvidenceSettings, shape: Tuple[int, ...],
                  lp_source: Optional[str]) -> Optional["_lib.GbsError"]:
    """The library's error e with what the user passed named: where the
    stored log p came from, and the discard and thin that shaped the draws;
    None when there is nothing to add."""
    if e.status not in (_lib.ERR_ARGUMENT, _lib.ERR_FAILED):
        return None
    msg = str(e)
    extra = []
    if lp_source is not None and "the stored log p" in msg:
        what, fix = _LP_SOURCES.get(lp_source, (lp_source, "pass log p computed by log_prob"))
        msg = msg.replace("the stored log p at the draws", "the stored log p at the draws (%s)" % what, 1)
        extra.append(fix)
    if settings.discard or settings.thin != 1:
        extra.append("the draws are what discard=%d and thin=%d kept: %d chain%s x %d draws; keep "
                     "more (a smaller thin or discard)"
                     % (settings.discard, settings.thin, shape[0], "" if shape[0] == 1 else "s",
                        shape[1]))
    if not extra and msg == str(e):
        return None
    out = type(e)(e.status, msg + "; " + "; ".join(extra) if extra else msg)
    return out


def estimate(batch_fn: Callable[[np.ndarray, np.ndarray], None], x: np.ndarray,
             lp: Optional[np.ndarray], settings: EvidenceSettings, src_ncall: Optional[int] = None,
             *, stop: Optional[threading.Event] = None, labels: Optional[Sequence[str]] = None,
             desc: str = "gbs.evidence", lp_source: Optional[str] = None) -> Result:
    """The library call(s): ln Z from (chains, draws, d) draws x (checked,
    C order) and their log p (or None), with ``batch_fn(points, out)``
    writing log p of an (n, d) batch into out; and the Result, named
    ``settings.name``. With ``settings.repetitions`` = k > 1, the
    estimate is repeated with k seeds (see :func:`repetition_seeds`) on
    the same draws, log p at the draws computed once."""
    k = settings.repetitions
    if k <= 1:
        result = _estimate_once(batch_fn, x, lp, settings, src_ncall, stop=stop, labels=labels,
                                desc=desc, lp_source=lp_source)
        result.name = settings.name
        return result
    seeds = repetition_seeds(seed_value(settings.seed), k)
    if lp is None:
        # Each repetition would evaluate log p at the draws again.
        lp = np.empty(x.shape[:2])
        flat = x.reshape(-1, x.shape[2])
        out = lp.reshape(-1)
        step = settings.batch_size or 4096
        for i in range(0, len(flat), step):
            batch_fn(np.ascontiguousarray(flat[i:i + step]), out[i:i + step])
        lp_source = None
        lp_calls = lp.size
    else:
        lp_calls = 0
    runs = []
    for i, s in enumerate(seeds):
        one = dataclasses.replace(settings, seed=s, repetitions=1)
        runs.append(_estimate_once(batch_fn, x, lp, one, src_ncall, stop=stop, labels=labels,
                                   desc="%s (repetition %d of %d)" % (desc, i + 1, k),
                                   lp_source=lp_source))
    result = runs[0]
    result.ncall = lp_calls + sum(r.ncall for r in runs)
    result.repetitions = np.array([(r.seed, r.logz, r.logzerr) for r in runs], dtype=REPETITION_DTYPE)
    result.name = settings.name
    return result


def repetition_seeds(seed: int, k: int) -> List[int]:
    """The seeds of k repetitions: the first is seed itself (so that
    repetition 1 is the estimate seed gives alone), the others spawned
    from it by numpy's SeedSequence (independent streams, the same for
    the same seed)."""
    children = np.random.SeedSequence(seed).spawn(k - 1)
    return [seed] + [int(c.generate_state(1, np.uint64)[0]) for c in children]


def _estimate_once(batch_fn: Callable[[np.ndarray, np.ndarray], None], x: np.ndarray,
                   lp: Optional[np.ndarray], settings: EvidenceSettings,
                   src_ncall: Optional[int] = None, *, stop: Optional[threading.Event] = None,
                   labels: Optional[Sequence[str]] = None, desc: str = "gbs.evidence",
                   lp_source: Optional[str] = None) -> Result:
    """The library call: ln Z from (chains, draws, d) draws x (checked, C
    order) and their log p (or None), with ``batch_fn(points, out)``
    writing log p of an (n, d) batch into out; and the Result.

    ``stop`` is the event a per-point loop or a pool polls (set on
    Ctrl-C). ``labels`` names the d coordinates: the library's warnings
    and Result.diagnostics say ``labels[k]`` for its "coordinate k", and
    Result.plot labels its axes with them.
    ``lp_source`` says where lp came from, for the library's errors
    about it (a key of _LP_SOURCES or a phrase).
    The Result's warnings are not raised here: the caller adds its own
    and raises them all with ``_warnings.emit``.
    """
    nc, nd, d = x.shape
    ncall = settings.ncall if settings.ncall is not None else src_ncall
    packed = PackedOptions(settings, d, ncall, labels)
    cb = BatchCallback(batch_fn, interruptible=settings.pool is None)
    if stop is not None:
        cb.stop = stop
    res = _lib.new_struct(_lib.CResult)
    trace = (_lib.TracePoint * _TRACE_CAP)()

    def call() -> Tuple[int, Any]:
        err = _lib.new_error()
        status = _lib.lib.gbs_evidence(cb.cfunc, None, ptr(x), nc, nd, d, ptr(lp), packed.byref(),
                                       ctypes.byref(res), trace, _TRACE_CAP, ctypes.byref(err))
        return status, err

    plan = planned_evaluations(packed, nc, nd, d, lp is not None)
    with Progress(settings.progress, desc, total=plan) as bar:
        cb.progress = bar if bar.bar is not None else None
        try:
            run(call, callbacks=[cb], token=packed.token)
        except _lib.GbsError as e:
            better = _with_context(e, settings, x.shape, lp_source)
            if better is None:
                raise
            raise better from e
        finally:
            drop_lists(res)
    result, _ = result_from_c(res, trace, packed, labels, (nc, nd, d))
    set_context(result, x, packed, settings.independent, labels)
    return result


def drop_lists(res: Any) -> None:
    """Free the warning and info lists of a gbs_result: they are the
    report's messages again, and only the report is read."""
    _lib.take_warnings(res.warnings, res.n_warnings)
    _lib.take_warnings(res.info, res.n_info)
    res.warnings = res.info = None


def result_from_c(res: Any, trace: Any, packed: PackedOptions, labels: Optional[Sequence[str]],
                  shape: Optional[Tuple[int, int, int]] = None, sampling: bool = False
                  ) -> Tuple[Result, Any]:
    """The Result of a filled gbs_result (its lists dropped) and its trace
    buffer, with the draws of the given (chains, draws, d) shape. The
    report is freed; with ``sampling`` (a pipeline's report), its sampling
    facts, draws, log p and chain statistics are read first and returned
    as (CSampling, draws, logp, stats), else None, and the shape is that
    of the pipeline's draws."""
    taken = None
    if sampling and res.report:
        try:
            taken = _take_sampling(res.report)
        except BaseException:
            _lib.lib.gbs_report_free(res.report, None)
            res.report = None
            raise
    findings, ext, summary = take_report(res.report, labels)
    res.report = None
    k = min(res.n_trace, _TRACE_CAP)
    tr = [(trace[i].n_q, trace[i].logz, trace[i].logzerr) for i in range(k)]
    if shape is None:
        shape = taken[1].shape if taken is not None else (0, 0, 0)
    nc, nd, d = shape
    result = Result(res.logz, res.logzerr, res.ncall, res.n_p, res.n_q, res.tau, res.re2_p,
                    res.re2_q, _lib.METHOD_NAMES.get(res.method, str(res.method)), findings, tr,
                    seed=packed.seed, n_chains=nc, n_draws=nd, dim=d,
                    diagnostics=Diagnostics.from_c(res.diagnostics, labels, ext, summary))
    return result, taken


def nuts_buffers(nc: int, nd: int, d: int, what: str) -> Tuple[np.ndarray, np.ndarray, Any]:
    """The draws (nc, nd, d), log p (nc, nd) and per-chain statistics a
    NUTS call fills; ``what`` names the sizes in the error for a size
    that cannot be allocated."""
    stats = (_lib.NutsChainStats * nc)()
    for st in stats:
        st.size = ctypes.sizeof(_lib.NutsChainStats)
    return empty((nc, nd, d), what), empty((nc, nd), what), stats


def _take_sampling(report: Any) -> Tuple[Any, np.ndarray, np.ndarray, Any]:
    """A pipeline report's sampling facts (gbs_report_sampling) and its
    draws, log p and chain statistics (gbs_report_draws)."""
    facts = _lib.new_struct(_lib.CSampling)
    _lib.call(_lib.lib.gbs_report_sampling, report, ctypes.byref(facts))
    nc, nd, d = facts.n_chains, facts.n_draws, facts.d
    draws, logp, stats = nuts_buffers(nc, nd, d, "the pipeline's %d chains x %d draws of dimension %d" % (nc, nd, d))
    _lib.call(_lib.lib.gbs_report_draws, report, ptr(draws), ptr(logp), stats)
    return facts, draws, logp, stats


def set_context(result: Result, x: np.ndarray, packed: PackedOptions, independent: bool,
                labels: Optional[Sequence[str]]) -> None:
    """What Result.proposal_draws and Result.plot need: the draws and the
    options the estimate was made with."""
    result._context = {"x": x, "seed": packed.seed, "lower": packed.lower, "upper": packed.upper,
                       "options": packed, "independent": independent,
                       "labels": None if labels is None else list(labels)}


def planned_evaluations(packed: PackedOptions, n_chains: int, n_draws: int, d: int, have_lp: bool
                        ) -> Optional[Tuple[int, int]]:
    """Log-density evaluations the library will make for the draws: (the
    planned number, the most the adaptive n_q rule may add to it), as the
    library's gbs_evidence_plan reports them (gbs.PlanEvaluations); None
    for arguments the library rejects."""
    planned, extra = ctypes.c_int64(), ctypes.c_int64()
    try:
        _lib.call(_lib.lib.gbs_evidence_plan, n_chains, n_draws, d, int(have_lp), packed.byref(),
                  ctypes.byref(planned), ctypes.byref(extra))
    except _lib.GbsError:
        return None  # gbs_evidence reports the same problem, in its own words
    return int(planned.value), int(extra.value)


def batch_function(log_prob: Callable[..., Any], vectorize: bool, args: Tuple[Any, ...],
                   kwargs: Dict[str, Any], pool: Any, stop: threading.Event
                   ) -> Callable[[np.ndarray, np.ndarray], None]:
    """``f(x, out)``: log p of the (n, d) points x into out, calling
    log_prob as the user declared it (serially, or through pool); a serial
    per-point loop raises KeyboardInterrupt at the next point once stop is
    set."""
    if not callable(log_prob):
        raise TypeError("log_prob must be callable, not %r" % (type(log_prob).__name__,))
    if pool is not None:
        evaluator = PoolEvaluator(pool, log_prob, args, kwargs, vectorize)
        return lambda x, out: evaluator(x, out, stop)
    name = callback_name("log_prob", log_prob)
    if vectorize:
        def vectorized(x: np.ndarray, out: np.ndarray) -> None:
            out[:] = batch_values(log_prob(x, *args, **kwargs), x, name)
        return vectorized

    def per_point(x: np.ndarray, out: np.ndarray) -> None:
        for i, row in enumerate(x):
            if stop.is_set():
                raise KeyboardInterrupt
            try:
                v = log_prob(row, *args, **kwargs)
            except IndexError as e:  # numpy's AxisError included
                raise _batch_hint(e, name, row) from e
            out[i] = scalar_value(v, row, name)
    return per_point


def _batch_hint(e: BaseException, name: str, row: np.ndarray) -> BaseException:
    """e (an IndexError or numpy AxisError that log_prob raised for one
    point) with the likely cause: a log density written for a batch."""
    msg = ("%s raised %s: %s, for one point of shape %s. Without vectorize=True, log_prob "
           "receives one point, an array of shape (d,); if it takes a batch of shape (n, d) (it "
           "sums over axis=1 or indexes x[:, k]), pass vectorize=True"
           % (name, type(e).__name__, e, row.shape))
    try:
        return type(e)(msg)
    except Exception:
        return ValueError(msg)
