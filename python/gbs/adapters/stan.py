"""gbs.from_stan: ln Z of a PyStan 3 model from its fit, in one call.

What a user would otherwise write by hand:

1. map each draw of the parameters block to Stan's unconstrained space
   (``model.unconstrain_pars``);
2. evaluate the log density with the log-Jacobian of the transforms
   there (``model.log_prob(x, adjust_transform=True)``);
3. make sure that log density keeps its constants: a ``~`` statement
   (and a ``_lupdf`` call) drops them, and ln Z needs them. Here the
   program is rewritten with ``target +=`` (``_stan_program``), the copy
   built, and the two densities checked to differ by one constant on the
   draws, as they must.

PyStan's model methods are HTTP requests to an httpstan server started
for each call (milliseconds a call); the same functions of the compiled
model, which httpstan loads from its cache, cost tens of microseconds a
point for a small data set. The compiled module is used when it can be
loaded, PyStan's methods otherwise. Either way every call rebuilds the
model from its data (httpstan's design), so a call costs more for a
larger data set.

Stan's automatic differentiation keeps its tape in a thread-local
variable that exists on the thread that loaded the model (and on Stan's
own worker threads) only: log p called from any other thread crashes the
process. gbs calls its callbacks from threads of its own, so while the
estimate runs in a helper thread, the calling thread evaluates the
density for it (_Server).
"""

from __future__ import annotations

import asyncio
import math
import queue
import threading
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

import numpy as np

from .._findings import Finding
from .._options import check_settings
from ._symmetry import with_candidates
from ..evidence import estimate
from ..result import Result
from .. import _warnings
from . import _health, require
from ._stan_program import Rewrite, StanProgramError, parameter_names, rewrite as rewrite_program

__all__ = ["from_stan", "StanDensity", "StanProgramError", "REWRITE_CHECK"]

# The check ID of the finding that the program was rewritten.
REWRITE_CHECK = "stan-rewrite"

# The two log densities, the program's and the rewritten one's, may
# differ at the draws by one constant only: what the `~` statements
# dropped. Both are sums in double precision, which round at about 1e-16
# of their terms' size; 1e-6 nats, plus 1e-12 of the densities'
# magnitude for sums of millions of terms, is far above that and far below
# any ln Z error bar. A larger spread means the sampled density is not
# the rewritten one up to a constant (see _check_constant).
CONSTANT_ATOL = 1e-6
CONSTANT_RTOL = 1e-12


def rewrite_note(rw: Rewrite, constant: float) -> Finding:
    """The Result's note (information, check REWRITE_CHECK) that the
    program was rewritten, with the constant the two densities differ by."""
    what = []
    if rw.statements:
        n = len(rw.statements)
        what.append("%d `~` statement%s as `target += <dist>_lpdf/_lpmf(...)`" % (n, "s" * (n > 1)))
    if rw.calls:
        n = len(rw.calls)
        what.append("%d `_lupdf`/`_lupmf` call%s as `_lpdf`/`_lpmf`" % (n, "s" * (n > 1)))
    return Finding(REWRITE_CHECK, "info",
                   "the Stan program was rewritten (%s) so that its log density keeps the constants "
                   "ln Z needs; the copy was built, its log density differs from the program's by "
                   "%.6g on every draw, as it must, and ln Z is that of the copy "
                   "(Result.source['program_code'])" % (" and ".join(what), constant),
                   value=constant)


def from_stan(fit: Any, model: Any, *, rewrite: bool = True, max_depth: int = 10,
              strict: bool = False, **evidence_kwargs: Any) -> Result:
    """ln Z of a PyStan 3 model from its posterior draws.

    Parameters
    ----------
    fit : stan.fit.Fit
        What ``model.sample(...)`` returned: the draws of every parameter,
        and the sampler's statistics (``lp__``, ``divergent__``,
        ``treedepth__``, ``n_leapfrog__``). Warm-up draws saved with
        ``save_warmup=True`` are left out.
    model : stan.model.Model
        What ``stan.build(program_code, data=..., random_seed=...)``
        returned, the model ``fit`` came from.
    rewrite : bool, default True
        What to do when the program's model block has ``~`` statements
        (or ``_lupdf``/``_lupmf`` calls), whose log density drops the
        constants ln Z needs: True rewrites each as ``target +=
        <dist>_lpdf(...)`` (``_lpmf`` for a discrete family) in a copy of
        the program, builds the copy (as long as any build, the first
        time: httpstan caches it), checks that its log density differs
        from the program's by one constant on the draws, and uses it; a
        note in ``Result.info`` says so. False raises
        :class:`StanProgramError` showing the statements to rewrite.
    max_depth : int, default 10
        The ``max_depth`` given to ``model.sample`` (Stan's default is
        10): draws whose tree depth reached it are counted in a warning.
    strict : bool, default False
        Raise :class:`gbs.GbsWarningError` instead of warning: before the
        estimate if the sampler's own statistics already condemn the draws.
    **evidence_kwargs
        The estimator's keyword arguments of :func:`gbs.evidence`:
        ``method``, ``n_q``, ``seed``, ``progress``, ``discard``, ``thin``,
        ``batch_size``, ``f_err``, ``f_eva``, ``cross_fit``, ``ncall``,
        ``repetitions``.

    Returns
    -------
    gbs.Result
        ``logz``, the log marginal likelihood of the model's data, in nats,
        with every constant of the density (see ``rewrite``). The estimate
        runs in Stan's unconstrained space: ``dim`` counts its coordinates
        (a simplex of K has K - 1), named in warnings and plots as Stan
        names the parameters' elements (``"mu"``, ``"theta[3]"``,
        ``"Sigma[1,2]"``; ``"L(unconstrained)[2]"`` for a transform that
        mixes elements, such as a simplex or a Cholesky factor).
        ``Result.source`` says where log p came from (``"lp"``:
        ``"sample_stats"``, Stan's ``lp__``, or ``"model"``), whether the
        program was rewritten and which program ln Z belongs to
        (``"program_code"``).

    Raises
    ------
    ImportError
        PyStan is not installed (``pip install pystan``, or the ``stan``
        extra).
    StanProgramError
        A ``~`` statement cannot be rewritten safely (a truncation
        ``T[,]``, a distribution whose suffix gbs cannot tell), or
        ``rewrite=False`` and the program has ``~`` statements: the
        message shows each statement's ``target +=`` form. Also when the
        rewritten density does not differ from the program's by a
        constant (a ``~`` statement in a branch that depends on a
        parameter): the draws then do not come from the rewritten model.
    ValueError
        The fit's draws are not the model's (other parameters, or a
        ``lp__`` that is not the model's log density at its draws), a
        draw lies on the boundary of its parameter's support, or the
        model has no parameters.

    Notes
    -----
    In Jupyter, PyStan needs ``import nest_asyncio; nest_asyncio.apply()``
    before ``stan.build`` (its calls run an event loop of their own);
    from_stan needs it too when it builds the rewritten program.
    """
    require("stan", "stan", "gbs.from_stan", package="pystan")
    settings = check_settings(**evidence_kwargs)
    if settings.pool is not None:
        raise ValueError("gbs.from_stan evaluates the Stan model in this process (tens of "
                         "microseconds a point); pool= is not supported")
    _check_types(fit, model)
    names = _parameter_names(model)
    constrained, n_warmup_saved = _draws(fit, model, names)
    nc, nd = constrained[0].shape[:2]

    density = StanDensity(model, rewrite=False, names=names)
    x = density.unconstrain_draws(constrained, names)
    stored = _sampler_stat(fit, "lp__", n_warmup_saved)
    lp_orig, lp_source = _check_lp(density, x, stored)

    rw = rewrite_program(model.program_code)
    note = None
    lp: np.ndarray = lp_orig
    if rw.changed:
        if not rewrite:
            raise StanProgramError(_rewrite_refused(rw), rw.statements)
        density = density.rewritten(rw)
        lp = density.log_prob(x.reshape(nc * nd, -1)).reshape(nc, nd)
        lp_source = "model"
        constant = _check_constant(lp, lp_orig, rw)
        note = rewrite_note(rw, constant)

    ncall = _leapfrog_steps(fit, n_warmup_saved)
    sl = slice(settings.discard, None, settings.thin)
    if settings.discard or settings.thin != 1:
        x = np.ascontiguousarray(x[:, sl])
        lp = np.ascontiguousarray(lp[:, sl])
    diverging = _sampler_stat(fit, "divergent__", n_warmup_saved)
    depth = _sampler_stat(fit, "treedepth__", n_warmup_saved)
    health = _health.sampler_warnings(
        x.shape[0] * x.shape[1], None if diverging is None else diverging[:, sl] > 0,
        None if depth is None else depth[:, sl] >= int(max_depth))
    if strict:
        _warnings.refuse(health)
    if density.shapes is not None:
        settings = with_candidates(settings, density.shapes)
    res: Result = density.serve(lambda: estimate(density.batch, x, lp, settings, ncall,
                                                 labels=density.labels, desc="gbs.from_stan"))
    res.add_findings(health)
    if note is not None:
        res.add_findings([note])
    res.source = {"lp": lp_source, "var_names": list(names), "draws": (nc, nd),
                  "model_name": density.model.model_name, "rewritten": rw.changed,
                  "program_code": density.model.program_code, "calls": density.calls}
    _warnings.emit(res, strict=strict)
    return res


def _check_types(fit: Any, model: Any) -> None:
    import stan.fit
    import stan.model
    if not isinstance(model, stan.model.Model):
        raise TypeError("model must be what stan.build returned (a stan.model.Model), not %r"
                        % (type(model).__name__,))
    if not isinstance(fit, stan.fit.Fit):
        raise TypeError("fit must be what model.sample returned (a stan.fit.Fit), not %r"
                        % (type(fit).__name__,))
    if tuple(fit.param_names) != tuple(model.param_names) or \
            [list(d) for d in fit.dims] != [list(d) for d in model.dims]:
        raise ValueError("the fit's variables %s are not the model's %s: pass the fit that "
                         "model.sample returned" % (list(fit.param_names), list(model.param_names)))


def _parameter_names(model: Any) -> List[str]:
    """The variables of the parameters block: the first of
    model.param_names (which go on with the transformed parameters and
    generated quantities)."""
    names = parameter_names(model.program_code)
    if not names:
        raise ValueError("gbs.from_stan: the model has no parameters; its evidence is its density "
                         "(exp of model.log_prob([]))")
    if list(model.param_names[:len(names)]) != names:
        raise ValueError("gbs.from_stan read the parameters %s in the program, but PyStan lists "
                         "the model's variables as %s" % (names, list(model.param_names)))
    return names


def _draws(fit: Any, model: Any, names: Sequence[str]) -> Tuple[List[np.ndarray], int]:
    """The post-warmup draws of each parameter, (chains, draws, *dims)
    (Stan's dims, index order as Stan's), and how many saved warm-up
    draws each chain has."""
    nc = int(fit.num_chains)
    warm = math.ceil(int(fit.num_warmup) * bool(fit.save_warmup) / int(fit.num_thin))
    out = []
    for name in names:
        dims = tuple(int(n) for n in model.dims[model.param_names.index(name)])
        # fit[name]: (*dims, saved draws * chains), chains varying fastest
        # ((1, saved draws * chains) for a scalar).
        a = np.asarray(fit[name], dtype=np.float64).reshape(dims + (-1, nc))
        a = np.moveaxis(np.moveaxis(a, -1, 0), -1, 1)[:, warm:]
        out.append(np.ascontiguousarray(a))
    if out[0].shape[1] < 2:
        raise ValueError("the fit has %d post-warmup draws per chain; ln Z needs hundreds"
                         % out[0].shape[1])
    return out, warm


def _sampler_stat(fit: Any, name: str, warm: int) -> Optional[np.ndarray]:
    """A sampler statistic (chains, post-warmup draws), or None."""
    if name not in getattr(fit, "sample_and_sampler_param_names", ()):
        return None
    v = np.asarray(fit[name], dtype=np.float64).reshape(-1, int(fit.num_chains)).T
    out: np.ndarray = np.ascontiguousarray(v[:, warm:])
    return out


def _leapfrog_steps(fit: Any, warm: int) -> Optional[int]:
    steps = _sampler_stat(fit, "n_leapfrog__", warm)
    if steps is None:
        return None
    total = float(np.nansum(steps))
    return int(total) if total > 0 else None


def _check_lp(density: "StanDensity", x: np.ndarray, stored: Optional[np.ndarray]
              ) -> Tuple[np.ndarray, str]:
    """The program's log density at the draws and where it came from:
    Stan's lp__ when it is that (checked at 16 draws spread over the
    chains), else evaluated. An lp__ that differs means the fit is not
    this model's with this data."""
    nc, nd = x.shape[:2]
    flat = x.reshape(nc * nd, -1)
    if stored is None or stored.shape != (nc, nd) or not np.isfinite(stored).all() or \
            not np.any(stored):  # fixed_param writes lp__ = 0
        return density.log_prob(flat).reshape(nc, nd), "model"
    idx = np.linspace(0, nc * nd - 1, min(16, nc * nd)).astype(int)
    ours = density.log_prob(flat[idx])
    theirs = stored.reshape(-1)[idx]
    # lp__ is the same function of the same point, printed with all 17
    # digits; 1e-8 leaves room for a sampler built with other flags.
    bad = np.abs(ours - theirs) > 1e-8 * (1 + np.abs(theirs))
    if np.any(bad):
        i = int(idx[np.argmax(bad)])
        raise ValueError("the fit's lp__ at draw %d of chain %d is %r, but the model's log density "
                         "there is %r: was the fit sampled from this model, with this data?"
                         % (i % nd, i // nd, float(theirs[np.argmax(bad)]),
                            float(ours[np.argmax(bad)])))
    out: np.ndarray = np.ascontiguousarray(stored)
    return out, "sample_stats"


def _check_constant(lp_new: np.ndarray, lp_old: np.ndarray, rw: Rewrite) -> float:
    """The constant lp_new - lp_old, checked to be one on every draw."""
    diff: np.ndarray = np.subtract(lp_new, lp_old).reshape(-1)
    c = float(np.median(diff))
    tol = CONSTANT_ATOL + CONSTANT_RTOL * (np.abs(lp_new) + np.abs(lp_old)).reshape(-1)
    off = np.abs(diff - c) > tol
    if np.any(off) or not np.isfinite(c):
        spread = float(np.max(diff)) - float(np.min(diff))
        raise StanProgramError(
            "gbs.from_stan rewrote the program's `~` statements as `target +=`, but the rewritten "
            "log density does not differ from the program's by one constant on the draws (it "
            "varies by %.3g nats): the constants the `~` statements drop depend on the parameters "
            "(a `~` statement inside a branch on a parameter?), so the draws do not come from the "
            "model with its constants. Write the model with `target +=` and sample that:\n%s"
            % (spread, "\n".join("  line %d: %s\n    %s" % s for s in rw.statements)),
            rw.statements)
    return c


def _rewrite_refused(rw: Rewrite) -> str:
    lines = ["gbs.from_stan(..., rewrite=False): the program's model block has `~` statements (or "
             "_lupdf/_lupmf calls), whose log density drops constants ln Z needs. Write them with "
             "`target +=`, then build and sample the program again (or pass rewrite=True):"]
    lines += ["  line %d: %s\n    %s" % s for s in rw.statements]
    lines += ["  line %d: %s -> %s" % c for c in rw.calls]
    return "\n".join(lines)


class _Calls:
    """The model's functions: the compiled module httpstan loads from its
    cache when it can be loaded (tens of microseconds a call), else
    PyStan's model methods (an HTTP round trip each, milliseconds)."""

    def __init__(self, model: Any):
        self.model = model
        # httpstan reads the data anew at every call, through np.asarray:
        # arrays, not PyStan's lists, halve that cost for large data sets.
        self.data = {k: np.asarray(v) for k, v in model.data.items()}
        self.home = threading.get_ident()
        self.server: Optional[_Server] = None
        self.ext: Any = None
        try:
            import httpstan.models
            self.ext = httpstan.models.import_services_extension_module(model.model_name)
            for fn in ("log_prob", "log_prob_grad", "transform_inits", "write_array"):
                getattr(self.ext, fn)
        except Exception:  # noqa: BLE001  (any failure: fall back on the public methods)
            self.ext = None
        self.kind = "httpstan module" if self.ext is not None else "PyStan model methods"

    def on_home(self, fn: Callable[..., Any], *args: Any) -> Any:
        """fn(*args) on the thread that may run Stan's autodiff."""
        if threading.get_ident() == self.home:
            return fn(*args)
        if self.server is None:
            raise RuntimeError("a Stan model's log density can only be evaluated on the thread "
                               "that built it (Stan's autodiff tape is thread-local)")
        return self.server.submit(fn, args)

    def log_prob(self, x: Sequence[float]) -> float:
        if self.ext is not None:
            return float(self.ext.log_prob(self.data, x, True))
        return float(_run(self.model.log_prob, list(x), adjust_transform=True))

    def grad(self, x: Sequence[float]) -> List[float]:
        if self.ext is not None:
            return list(self.ext.log_prob_grad(self.data, x, True))
        return list(_run(self.model.grad_log_prob, list(x)))

    def unconstrain(self, values: Dict[str, Any]) -> List[float]:
        if self.ext is not None:
            return list(self.ext.transform_inits(self.data, values))
        return list(_run(self.model.unconstrain_pars, values))

    def constrain(self, x: Sequence[float]) -> List[float]:
        if self.ext is not None:
            return list(self.ext.write_array(self.data, x, False, False))
        return list(_run(self.model.constrain_pars, list(x), include_tparams=False,
                         include_gqs=False))


class _Server:
    """Calls that other threads hand to the home thread, which runs them
    in :meth:`serve` while ``work`` runs in a helper thread."""

    def __init__(self) -> None:
        self.requests: "queue.Queue[Optional[Tuple[Callable[..., Any], Tuple[Any, ...], Dict[str, Any], threading.Event]]]" = queue.Queue()
        self.stopped = False

    def submit(self, fn: Callable[..., Any], args: Tuple[Any, ...]) -> Any:
        if self.stopped:
            raise KeyboardInterrupt
        box: Dict[str, Any] = {}
        done = threading.Event()
        self.requests.put((fn, args, box, done))
        done.wait()
        if "exc" in box:
            raise box["exc"]
        return box["value"]

    def serve(self, work: Callable[[], Any]) -> Any:
        """work() in a helper thread; the requests it makes, here, until it
        returns. Ctrl-C here makes its next request raise KeyboardInterrupt
        (gbs then stops the estimate), and is raised once it has ended."""
        out: Dict[str, Any] = {}

        def target() -> None:
            try:
                out["value"] = work()
            except BaseException as exc:  # noqa: BLE001  (raised again on the home thread)
                out["exc"] = exc
            finally:
                self.requests.put(None)

        helper = threading.Thread(target=target, name="gbs-from-stan", daemon=True)
        helper.start()
        interrupted: Optional[BaseException] = None
        while True:
            try:
                item = self.requests.get(timeout=0.05)
            except queue.Empty:
                continue
            except KeyboardInterrupt as exc:
                interrupted, self.stopped = exc, True
                continue
            if item is None:
                break
            fn, args, box, done = item
            try:
                if self.stopped:
                    raise KeyboardInterrupt
                box["value"] = fn(*args)
            except KeyboardInterrupt as exc:
                interrupted, self.stopped = interrupted or exc, True
                box["exc"] = exc
            except BaseException as exc:  # noqa: BLE001  (raised in the requesting thread)
                box["exc"] = exc
            done.set()
        helper.join()
        if interrupted is not None:
            raise interrupted
        if "exc" in out:
            raise out["exc"]
        return out["value"]


def _run(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """A PyStan call, which runs an event loop of its own: refused with
    the fix when one already runs unpatched (Jupyter without
    nest_asyncio), where asyncio would refuse it less clearly."""
    if _loop_running() and not getattr(asyncio, "_nest_patched", False):
        raise RuntimeError("PyStan cannot run inside a running event loop (Jupyter): call "
                           "`import nest_asyncio; nest_asyncio.apply()` first (pip install "
                           "nest-asyncio)")
    return fn(*args, **kwargs)


def _loop_running() -> bool:
    try:
        asyncio.get_running_loop()
        return True
    except RuntimeError:
        return False


class StanDensity:
    """The log density of a PyStan model in Stan's unconstrained space,
    with the log-Jacobian of the transforms (``adjust_transform=True``),
    for gbs's functions.

    Parameters
    ----------
    model : stan.model.Model
        What ``stan.build`` returned.
    rewrite : bool, default True
        Rewrite the program's ``~`` statements (and ``_lupdf`` calls) as
        ``target +=`` and build the copy, so that the density keeps every
        constant (see :func:`gbs.from_stan`); :class:`StanProgramError`
        if one cannot be rewritten safely.

    Attributes
    ----------
    model : stan.model.Model
        The model whose density this is (the rewritten copy, if any).
    dim : int
        The number of unconstrained coordinates.
    labels : list of str
        Their names (``"theta[3]"``), once known: after
        :meth:`unconstrain_draws` or :meth:`unconstrain`.
    calls : str
        Which functions evaluate it: ``"httpstan module"`` (the compiled
        model in this process) or ``"PyStan model methods"`` (HTTP).

    Notes
    -----
    Stan's autodiff runs only on the thread that built the model, and gbs
    calls its callbacks from threads of its own: run a gbs function that
    calls the density inside :meth:`serve`, which evaluates it on this
    thread (called from another thread outside it, the density raises
    RuntimeError).

    Examples
    --------
    >>> density = StanDensity(model)                                      # doctest: +SKIP
    >>> x0 = density.unconstrain({"mu": 0.0, "tau": 1.0, "theta": np.zeros(8)})  # doctest: +SKIP
    >>> draws = density.serve(lambda: gbs.sample(density.log_prob_and_grad, x0))  # doctest: +SKIP
    >>> res = density.serve(lambda: gbs.evidence(density.log_prob, draws,          # doctest: +SKIP
    ...                                          vectorize=True))
    """

    def __init__(self, model: Any, rewrite: bool = True, names: Optional[Sequence[str]] = None):
        self.names = list(names) if names is not None else _parameter_names(model)
        self.rewrite: Optional[Rewrite] = None
        if rewrite:
            rw = rewrite_program(model.program_code)
            if rw.changed:
                model = _build(model, rw.code)
                self.rewrite = rw
        self.model = model
        self._calls = _Calls(model)
        self.calls = self._calls.kind
        self.labels: Optional[List[str]] = None
        # The unconstrained shape of each parameter, once known (as labels).
        self.shapes: Optional[List[Tuple[int, ...]]] = None
        self.dim: Optional[int] = None

    def rewritten(self, rw: Rewrite) -> "StanDensity":
        """The density of the rewritten program (built here)."""
        other = StanDensity.__new__(StanDensity)
        other.names = self.names
        other.rewrite = rw
        other.model = _build(self.model, rw.code)
        other._calls = _Calls(other.model)
        other.calls = other._calls.kind
        other.labels, other.shapes = self.labels, self.shapes
        other.dim = self.dim
        return other

    # -- log density ------------------------------------------------------

    def log_prob(self, x: np.ndarray) -> np.ndarray:
        """log p (with the Jacobian) at one point (d,) -> float array ()
        or at the rows of (n, d) -> (n,). A point where Stan's model
        throws (outside the support of a distribution) has -inf."""
        a = np.asarray(x, dtype=np.float64)
        rows = np.atleast_2d(a)
        out: np.ndarray = self._calls.on_home(self._rows, rows)
        if a.ndim == 1:
            single: np.ndarray = out.reshape(())
            return single
        return out

    def _rows(self, rows: np.ndarray) -> np.ndarray:
        out = np.empty(len(rows))
        for i, row in enumerate(rows):
            try:
                out[i] = self._calls.log_prob(row.tolist())
            except (RuntimeError, ValueError):
                out[i] = -np.inf
        result: np.ndarray = out
        return result

    def serve(self, work: Callable[[], Any]) -> Any:
        """work() (which calls this density from gbs's threads) in a helper
        thread, the density evaluated on this one."""
        server = self._calls.server = _Server()
        try:
            return server.serve(work)
        finally:
            self._calls.server = None

    def batch(self, x: np.ndarray, out: np.ndarray) -> None:
        """gbs.evidence's batch callback: log p of the rows of x into out."""
        out[:] = self.log_prob(x)

    def log_prob_and_grad(self, x: np.ndarray) -> Tuple[float, np.ndarray]:
        """log p and its gradient at one point (d,), for :func:`gbs.sample`."""
        row = np.asarray(x, dtype=np.float64).tolist()
        lp, g = self._calls.on_home(lambda: (self._calls.log_prob(row), self._calls.grad(row)))
        return float(lp), np.asarray(g, dtype=np.float64)

    # -- unconstrained draws ----------------------------------------------

    def unconstrain(self, values: Dict[str, Any]) -> np.ndarray:
        """One point of the parameters block (name -> value in Stan's
        shape) -> its unconstrained coordinates (d,)."""
        v = {k: np.asarray(a, dtype=np.float64).tolist() for k, a in values.items()}
        x: np.ndarray = np.asarray(self._calls.unconstrain(v), dtype=np.float64)
        if self.labels is None:
            self._name_coordinates(x)
        return x

    def unconstrain_draws(self, draws: Sequence[np.ndarray], names: Sequence[str]) -> np.ndarray:
        """Draws (chains, draws, *dims) of each parameter in ``names`` ->
        (chains, draws, d) unconstrained points."""
        nc, nd = draws[0].shape[:2]
        flat = [a.reshape((nc * nd,) + a.shape[2:]) for a in draws]
        rows = []
        for i in range(nc * nd):
            values = {n: a[i].tolist() for n, a in zip(names, flat)}
            try:
                rows.append(self._calls.unconstrain(values))
            except (RuntimeError, ValueError) as exc:
                raise ValueError("Stan cannot map draw %d of chain %d to the unconstrained space: "
                                 "%s" % (i % nd, i // nd, exc)) from exc
        x = np.asarray(rows, dtype=np.float64)
        if self.labels is None:
            self._name_coordinates(x[len(x) // 2])
        if not np.isfinite(x).all():
            i, k = np.argwhere(~np.isfinite(x))[0]
            raise ValueError("draw %d of chain %d maps to %r at the unconstrained coordinate %s: it "
                             "is on the boundary of its parameter's support (e.g. a scale of 0 or "
                             "a probability of 1)" % (i % nd, i // nd, float(x[i, k]),
                                                      (self.labels or [str(k)])[k]))
        out: np.ndarray = np.ascontiguousarray(x.reshape(nc, nd, -1))
        return out

    def _name_coordinates(self, x0: np.ndarray) -> None:
        """Name each unconstrained coordinate after the element of the
        parameter it moves (``theta[2]``), found by moving it a little
        and seeing which constrained values change: the unconstrained
        coordinates of the parameters come in the parameters' order, and
        each moves its own parameter first."""
        self.dim = d = len(x0)
        dims = [tuple(int(n) for n in self.model.dims[self.model.param_names.index(name)])
                for name in self.names]
        sizes = [int(np.prod(s)) if s else 1 for s in dims]
        owner: np.ndarray = np.repeat(np.arange(len(self.names)), sizes)
        # Stan's constrained names ("theta.2.1"), in write_array's order.
        elem = ["%s[%s]" % (n.split(".")[0], ",".join(n.split(".")[1:])) if "." in n else n
                for n in self.model.constrained_param_names[:len(owner)]]
        try:
            base = np.asarray(self._calls.constrain(x0.tolist()))
            moved: List[Optional[np.ndarray]] = []
            for k in range(d):
                xk = x0.copy()
                xk[k] += 1e-3 * max(1.0, abs(xk[k]))
                ch = np.nonzero(np.asarray(self._calls.constrain(xk.tolist())) != base)[0]
                moved.append(ch if len(ch) else None)
        except (RuntimeError, ValueError):
            self.labels = self.shapes = None
            return
        var_of: List[int] = []
        for k in range(d):
            hit = moved[k]
            var_of.append(int(owner[hit[0]]) if hit is not None else (var_of[-1] if k else 0))
        labels: List[str] = []
        shapes: List[Tuple[int, ...]] = []
        for v, name in enumerate(self.names):
            ks = [k for k in range(d) if var_of[k] == v]
            # The unconstrained coordinates keep the parameter's shape
            # where there are as many (a vector, a positive vector), not
            # where a transform changes their number (a simplex).
            shapes.append(dims[v] if len(ks) == sizes[v] else (len(ks),))
            own = [None if moved[k] is None else
                   [int(e) for e in moved[k] if owner[e] == v] for k in ks]  # type: ignore[union-attr]
            first = [o[0] for o in own if o is not None and len(o) == 1]
            if len(ks) == sizes[v] and len(first) == len(ks) and len(set(first)) == len(ks):
                labels += [elem[e] for e in first]
            elif len(ks) == 1 and not dims[v]:
                labels.append(name)
            else:
                labels += ["%s(unconstrained)[%d]" % (name, i + 1) for i in range(len(ks))]
        self.labels = labels if len(labels) == d else None
        self.shapes = shapes if sum(int(np.prod(sh)) for sh in shapes) == d else None


def _build(model: Any, code: str) -> Any:
    """stan.build of ``code`` with ``model``'s data and seed; the same
    parameters, or an error."""
    import stan
    try:
        built = _run(stan.build, code, data=model.data, random_seed=model.random_seed)
    except (ValueError, RuntimeError) as exc:
        if _loop_running() and not getattr(asyncio, "_nest_patched", False):
            raise  # _run's advice
        raise StanProgramError("gbs.from_stan rewrote the program's `~` statements as `target +=`, "
                               "but PyStan could not build the copy (%s); write them with "
                               "`target +=` yourself" % (exc,)) from exc
    if built is None:  # stan.build returns None on Ctrl-C
        raise KeyboardInterrupt
    if tuple(built.param_names) != tuple(model.param_names) or \
            [list(d) for d in built.dims] != [list(d) for d in model.dims]:
        raise StanProgramError("the rewritten program has other variables (%s) than the "
                               "program (%s)" % (list(built.param_names), list(model.param_names)))
    return built
