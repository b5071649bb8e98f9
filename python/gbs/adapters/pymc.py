"""gbs.from_pymc: ln Z of a PyMC model from its posterior draws, in one call.

What a user would otherwise write by hand, for every transform:

1. map each free variable's draws to PyMC's unconstrained space with the
   model's own transforms (log for a positive scale, logodds/interval for
   a bounded one, simplex, ordered, Cholesky/LKJ, ...);
2. flatten the value variables into one (chains, draws, d) array;
3. evaluate the model's log density with the log-Jacobian of those
   transforms, there (the density whose integral is the evidence).

Here 1 and 3 are compiled PyTensor functions over whole batches of points
(the graph is vectorized, one call per batch), and the sampler's stored
log density is reused when it is the same function.
"""

from __future__ import annotations

import threading
import weakref
from typing import Any, Dict, List, Optional, Sequence, Tuple

import numpy as np

from .._options import check_settings
from .._samples import group_dataset, is_xarray_dataset
from ..evidence import estimate
from ..result import Result
from .. import _warnings
from . import _health, require
from ._symmetry import with_candidates

__all__ = ["from_pymc"]

# Compiled functions per model and choice of variables: compiling costs
# seconds, evaluating milliseconds.
_compiled: "weakref.WeakKeyDictionary[Any, Dict[Tuple[Any, ...], _ModelDensity]]" = \
    weakref.WeakKeyDictionary()
_lock = threading.Lock()


# The PyMC majors the tests run with (tests/python/test_pymc.py).
TESTED_MAJORS = (5,)
_version_warned = False


class UntestedVersionWarning(UserWarning):
    """gbs.from_pymc runs with a PyMC major version the tests do not cover."""


def _check_version(pm: Any) -> None:
    """Warn once per process when PyMC's major version is one the tests do
    not run. PyMC 6 needs Python >= 3.12; the calls the adapter makes
    (Model.free_RVs, rvs_to_values, rvs_to_transforms,
    transform.forward(value, *rv.owner.inputs), Model.logp(jacobian=True),
    pymc.pytensorf.join_nonshared_inputs) are those PyMC 6 documents, but
    they have only been run with PyMC 5 here."""
    global _version_warned
    if _version_warned:
        return
    version = str(getattr(pm, "__version__", "0"))
    try:
        major = int(version.split(".")[0])
    except ValueError:
        return
    if major not in TESTED_MAJORS:
        import warnings
        _version_warned = True
        warnings.warn("gbs.from_pymc is tested with PyMC %s only, and this is PyMC %s: the "
                      "adapter uses the same model API in PyMC 6, but the result has not been "
                      "checked there. Check ln Z on a model with a known evidence (a conjugate "
                      "normal), or compare with gbs.evidence on the model's log density, before "
                      "relying on it" % ("/".join(map(str, TESTED_MAJORS)), version),
                      UntestedVersionWarning, stacklevel=3)


def _clone_replace(outputs: Any, replace: Dict[Any, Any]) -> Any:
    """pytensor.clone_replace, or PyMC's replace_vars_in_graphs where
    pytensor no longer has it (PyTensor 3, which PyMC 6 uses)."""
    import pytensor
    if hasattr(pytensor, "clone_replace"):
        return pytensor.clone_replace(outputs, replace=replace)
    from pymc.pytensorf import replace_vars_in_graphs
    return replace_vars_in_graphs(outputs, replace)


def _scan(fn: Any, xb: Any) -> Any:
    """pytensor.scan of fn over the rows of xb, its outputs only: newer
    PyTensor (PyMC 6's) returns the updates only when asked
    (return_updates), older always returns (outputs, updates)."""
    import inspect

    import pytensor
    if "return_updates" in inspect.signature(pytensor.scan).parameters:
        return pytensor.scan(fn, sequences=[xb], return_updates=False)
    rows, _ = pytensor.scan(fn, sequences=[xb])
    return rows


def from_pymc(idata: Any, model: Any = None, *, var_names: Optional[Sequence[str]] = None,
              compile_kwargs: Optional[Dict[str, Any]] = None, strict: bool = False,
              **evidence_kwargs: Any) -> Result:
    """ln Z of a PyMC model from its posterior draws.

    Parameters
    ----------
    idata : arviz.InferenceData
        What ``pm.sample`` returned (or any InferenceData whose posterior
        group holds draws of every free variable of ``model``, such as
        exact posterior draws). Deterministics and other variables in it
        are ignored. ``sample_stats`` is read when present: the stored log
        density ``lp`` is reused if it matches the model's, the number of
        leapfrog steps feeds the adaptive n_q rule, and divergences and hits
        of the maximum tree depth raise a :class:`gbs.SamplerWarning` (also
        listed in ``Result.warnings``). Convergence (R-hat, ESS, burn-in)
        is checked by the library for every estimate, with its warnings
        naming the value variables (``"mu"``, ``"theta[3]"``), raised as
        :class:`gbs.SamplerWarning` too; failed checks of the estimate
        raise a :class:`gbs.DiagnosticWarning`.
    model : pymc.Model, optional
        The model the draws came from; default the model on PyMC's context
        stack (inside ``with model:``), as PyMC's own functions do.
    var_names : sequence of str, optional
        The order of the free variables in the flat vector of the estimate
        (default: the model's order). It must name every free variable:
        the evidence integrates over all of them.
    compile_kwargs : dict, optional
        Passed to ``pytensor.function`` for the transforms and the log
        density, as ``pm.sample``'s: ``{"mode": "JAX"}`` compiles with JAX
        in seconds where PyTensor's default C backend may take a minute the
        first time (it caches what it built).
    strict : bool, default False
        Raise :class:`gbs.GbsWarningError` (a :class:`gbs.GbsError`)
        instead of warning: before the estimate if the sampler's own
        statistics already condemn the draws.
    **evidence_kwargs
        The estimator's keyword arguments of :func:`gbs.evidence`:
        ``method``, ``n_q``, ``seed``, ``progress``, ``discard``, ``thin``,
        ``batch_size``, ``f_err``, ``f_eva``, ``cross_fit``, ``ncall``,
        ``independent`` (True for exact draws).

    Returns
    -------
    gbs.Result
        ``logz`` is the log marginal likelihood of the model's observed data
        (with its potentials), in nats. The estimate runs in the
        unconstrained space: ``dim`` counts the unconstrained coordinates
        (a Dirichlet over k categories gives k - 1); ``Result.plot()``
        shows them, named after PyMC's value variables
        (``"sigma_log__"``). ``Result.source`` says where log p at the draws
        came from (``"lp"``: ``"sample_stats"`` or ``"model"``).

    Raises
    ------
    ImportError
        PyMC is not installed (``pip install 'gbs-evidence[pymc]'``).
    ValueError
        No model given or on the context stack; the model has discrete
        free variables (not supported: the evidence is an integral over
        continuous parameters; marginalize them out first); a free
        variable has no draws in ``idata.posterior``, or draws of another
        shape.
    """
    pm = require("pymc", "pymc", "gbs.from_pymc")
    _check_version(pm)
    settings = check_settings(**evidence_kwargs)
    if model is None:
        try:
            model = pm.modelcontext(None)
        except TypeError:
            raise ValueError("gbs.from_pymc: no model given and none on PyMC's context stack; pass "
                             "model= (the pm.Model the draws came from) or call it inside "
                             "`with model:`") from None
    if not isinstance(model, pm.Model):
        raise TypeError("model must be a pymc.Model, not %r" % (type(model).__name__,))
    rvs = _free_variables(model, var_names)
    posterior = group_dataset(idata, "posterior") if not is_xarray_dataset(idata) else idata
    if posterior is None:
        raise ValueError("idata has no posterior group: pass what pm.sample returned")
    constrained = _posterior_draws(posterior, rvs)
    nc, nd = constrained[0].shape[:2]
    stats = group_dataset(idata, "sample_stats") if not is_xarray_dataset(idata) else None

    density = _density(model, rvs, [a.shape[2:] for a in constrained], compile_kwargs or {})
    x = density.unconstrained(constrained)
    lp, lp_source = _stored_lp(stats, density, x)
    ncall = _leapfrog_steps(stats)
    if settings.discard or settings.thin != 1:
        x = np.ascontiguousarray(x[:, settings.discard::settings.thin])
        lp = None if lp is None else np.ascontiguousarray(lp[:, settings.discard::settings.thin])
    sl = slice(settings.discard, None, settings.thin)
    health = _health.sampler_warnings(x.shape[0] * x.shape[1], _stat(stats, "diverging", sl),
                                      _max_depth_hits(stats, sl))
    if strict:
        _warnings.refuse(health)
    settings = with_candidates(settings, density.value_shapes)
    res = estimate(density.batch, x, lp, settings, ncall, labels=density.labels,
                   desc="gbs.from_pymc")
    res.add_findings(health)
    res.source = {"lp": lp_source, "var_names": [rv.name for rv in rvs],
                "value_vars": [v.name for v in density.value_vars], "draws": (nc, nd)}
    _warnings.emit(res, strict=strict)
    return res


def _free_variables(model: Any, var_names: Optional[Sequence[str]]) -> List[Any]:
    free = list(model.free_RVs)
    discrete = [rv.name for rv in free if np.dtype(rv.type.dtype).kind in "biu"]
    if discrete:
        raise ValueError(
            "gbs.from_pymc: the model has discrete free variables %s, which are not supported: "
            "ln Z here is an integral over continuous parameters. Marginalize them out of the "
            "model (sum over their values in the likelihood, e.g. pm.Mixture or "
            "pymc_extras.marginalize) and sample that model" % ", ".join(map(repr, discrete)))
    if not free:
        raise ValueError("gbs.from_pymc: the model has no free variables; ln Z is its log "
                         "likelihood, model.compile_logp()({})")
    if var_names is None:
        return free
    names = [var_names] if isinstance(var_names, str) else list(var_names)
    by_name = {rv.name: rv for rv in free}
    unknown = [n for n in names if n not in by_name]
    if unknown:
        raise ValueError("var_names: %s not free variables of the model (those are %s; "
                         "deterministics and observed variables do not enter)"
                         % (", ".join(map(repr, unknown)), ", ".join(map(repr, by_name))))
    missing = [n for n in by_name if n not in names]
    if missing or len(set(names)) != len(names):
        raise ValueError("var_names must name every free variable once (the evidence integrates "
                         "over all of them); missing: %s" % ", ".join(map(repr, missing)))
    return [by_name[n] for n in names]


def _posterior_draws(posterior: Any, rvs: Sequence[Any]) -> List[np.ndarray]:
    out = []
    for rv in rvs:
        if rv.name not in posterior.data_vars:
            raise ValueError("idata.posterior has no draws of the free variable %r; were the draws "
                             "made from this model? (the posterior has %s)"
                             % (rv.name, ", ".join(map(repr, posterior.data_vars))))
        da = posterior[rv.name]
        rest = [dim for dim in da.dims if dim not in ("chain", "draw")]
        a = np.asarray(da.transpose("chain", "draw", *rest).values, dtype=np.float64)
        want = rv.type.shape
        if len(want) != a.ndim - 2 or any(w is not None and w != g for w, g in zip(want, a.shape[2:])):
            raise ValueError("idata.posterior[%r] has draws of shape %s; the model's variable has "
                             "shape %s" % (rv.name, a.shape[2:], want))
        out.append(a)
    if len({a.shape[:2] for a in out}) != 1:
        raise ValueError("the posterior variables have different (chain, draw) shapes")
    return out


def _density(model: Any, rvs: Sequence[Any], shapes: Sequence[Tuple[int, ...]],
             compile_kwargs: Dict[str, Any]) -> "_ModelDensity":
    key = (tuple(id(rv) for rv in rvs), tuple(tuple(s) for s in shapes),
           tuple(sorted((k, repr(v)) for k, v in compile_kwargs.items())),
           tuple(id(v) for v in model.value_vars), len(model.observed_RVs), len(model.potentials))
    with _lock:
        try:
            per_model = _compiled.setdefault(model, {})
        except TypeError:  # not weakly referenceable: no cache
            per_model = {}
        d = per_model.get(key)
        if d is None:
            d = per_model[key] = _ModelDensity(model, rvs, shapes, compile_kwargs)
    return d


class _ModelDensity:
    """The model's transforms and log density, compiled for batches.

    ``unconstrained(draws)``: the constrained draws of the free variables
    -> (chains, draws, d) unconstrained points, each value variable
    flattened in C order, in the order of rvs. ``batch(x, out)``: log p
    with the log-Jacobian at the (n, d) points x."""

    def __init__(self, model: Any, rvs: Sequence[Any], shapes: Sequence[Tuple[int, ...]],
                 compile_kwargs: Dict[str, Any]):
        import pytensor
        import pytensor.tensor as pt
        from pytensor.graph.replace import vectorize_graph

        self._compile_kwargs = dict(compile_kwargs)

        self.value_vars = [model.rvs_to_values[rv] for rv in rvs]
        transforms = [model.rvs_to_transforms.get(rv) for rv in rvs]
        # 1. constrained -> unconstrained: transform.forward(value, *inputs)
        # as PyMC's initial point does, with every free variable replaced
        # by a placeholder for its draw (a bound may depend on another).
        holders = [rv.type(name=rv.name) for rv in rvs]
        forward = [rv if tr is None else tr.forward(rv, *rv.owner.inputs)
                   for rv, tr in zip(rvs, transforms)]
        forward = _clone_replace(forward, dict(zip(rvs, holders)))
        batched = [pt.tensor(dtype=h.type.dtype, shape=(None,) + tuple(s), name=h.name)
                   for h, s in zip(holders, shapes)]
        try:
            outs = vectorize_graph(forward, dict(zip(holders, batched)))
            self._forward = pytensor.function(batched, outs, on_unused_input="ignore",
                                              **self._compile_kwargs)
            self._forward_batched = True
        except NotImplementedError:  # an op without a batched form: one draw at a time
            self._forward = pytensor.function(holders, forward, on_unused_input="ignore",
                                              **self._compile_kwargs)
            self._forward_batched = False

        # The value variables' shapes, from one draw.
        self.value_shapes: List[Tuple[int, ...]] = []
        self.labels: List[str] = []
        self._shapes = [tuple(s) for s in shapes]

        # 2. log p with the Jacobian over one flat vector, then over a
        # batch (n, d) of them.
        self._model = model
        self._rvs = list(rvs)
        self._logp_fn: Any = None
        self._logp_batched = True

    def _compile_logp(self, point: Dict[str, np.ndarray]) -> None:
        import pytensor
        import pytensor.tensor as pt
        from pymc.pytensorf import join_nonshared_inputs
        from pytensor.graph.replace import vectorize_graph

        logp = self._model.logp(jacobian=True)
        [out], flat = join_nonshared_inputs(point, [logp], self.value_vars)
        xb = pt.matrix("x", dtype=flat.type.dtype)
        try:
            self._logp_fn = pytensor.function([xb], vectorize_graph(out, {flat: xb}),
                                              **self._compile_kwargs)
        except NotImplementedError:
            # No batched form of some op: a scan over the rows, still one
            # compiled call per batch.
            rows = _scan(lambda row: _clone_replace(out, {flat: row}), xb)
            self._logp_fn = pytensor.function([xb], rows, **self._compile_kwargs)
            self._logp_batched = False

    def unconstrained(self, draws: Sequence[np.ndarray]) -> np.ndarray:
        nc, nd = draws[0].shape[:2]
        n = nc * nd
        flat_in = [a.reshape((n,) + a.shape[2:]) for a in draws]
        if self._forward_batched:
            outs = self._forward(*flat_in)
        else:
            rows = [self._forward(*[a[i] for a in flat_in]) for i in range(n)]
            outs = [np.stack([r[k] for r in rows]) for k in range(len(flat_in))]
        outs = [np.asarray(o, dtype=np.float64) for o in outs]
        if self._logp_fn is None:
            self.value_shapes = [o.shape[1:] for o in outs]
            self.labels = []
            for v, shape in zip(self.value_vars, self.value_shapes):
                if shape:
                    self.labels += ["%s[%s]" % (v.name, ", ".join(map(str, i))) for i in np.ndindex(*shape)]
                else:
                    self.labels.append(v.name)
            self._compile_logp({v.name: o[0] for v, o in zip(self.value_vars, outs)})
        x = np.concatenate([o.reshape(n, -1) for o in outs], axis=1)
        if not np.isfinite(x).all():
            i, k = np.argwhere(~np.isfinite(x))[0]
            raise ValueError("the draw %d (chain %d) maps to %r at the unconstrained coordinate %s: "
                             "it is on the boundary of its variable's support (e.g. a scale of "
                             "0 or a probability of 1)" % (i % nd, i // nd, float(x[i, k]),
                                                           self.labels[k]))
        flat: np.ndarray = np.ascontiguousarray(x.reshape(nc, nd, -1))
        return flat

    def batch(self, x: np.ndarray, out: np.ndarray) -> None:
        out[:] = self._logp_fn(x)

    def logp(self, x: np.ndarray) -> np.ndarray:
        v: np.ndarray = np.asarray(self._logp_fn(x), dtype=np.float64)
        return v


def _stat(stats: Any, name: str, sl: slice) -> Optional[np.ndarray]:
    if stats is None or name not in stats.data_vars:
        return None
    da = stats[name]
    if tuple(da.dims[:2]) != ("chain", "draw"):
        da = da.transpose("chain", "draw", ...)
    v: np.ndarray = np.asarray(da.values)[:, sl]
    return v


def _max_depth_hits(stats: Any, sl: slice) -> Optional[np.ndarray]:
    hits = _stat(stats, "reached_max_treedepth", sl)
    if hits is not None:
        return hits.astype(bool)
    return None


def _leapfrog_steps(stats: Any) -> Optional[int]:
    """The sampler's log-density (gradient) evaluations, for the adaptive
    n_q rule: the leapfrog steps of the stored draws."""
    steps = _stat(stats, "n_steps", slice(None))
    if steps is None:
        return None
    total = float(np.nansum(steps))
    return int(total) if total > 0 else None


def _stored_lp(stats: Any, density: _ModelDensity, x: np.ndarray
               ) -> Tuple[Optional[np.ndarray], str]:
    """sample_stats.lp when it is this model's log density with the
    Jacobian at these draws (checked at 16 draws spread over the chains),
    else None: the library then evaluates it. pm.sample with
    nuts_sampler="numpyro" stores NumPyro's potential energy, -log p, as
    lp: that is recognized too."""
    stored = _stat(stats, "lp", slice(None))
    if stored is None or stored.shape != x.shape[:2] or not np.isfinite(stored).all():
        return None, "model"
    lp: np.ndarray = np.ascontiguousarray(stored, dtype=np.float64)
    nc, nd = lp.shape
    idx = np.linspace(0, nc * nd - 1, min(16, nc * nd)).astype(int)
    ours = density.logp(x.reshape(nc * nd, -1)[idx])
    theirs = lp.reshape(-1)[idx]
    # A float32 sampler stores lp to about 1e-7 relative; the rounding of
    # a sum of many terms can reach 1e-5 of its largest term.
    for sign in (1.0, -1.0):
        if np.all(np.abs(ours - sign * theirs) <= 1e-5 * (1 + np.abs(theirs))):
            return (lp if sign > 0 else np.ascontiguousarray(-lp)), "sample_stats"
    return None, "model"
