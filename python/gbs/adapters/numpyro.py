"""gbs.from_numpyro: ln Z of a NumPyro model from a finished MCMC run.

The draws of the latent sites are mapped to NumPyro's unconstrained space
with NumPyro's own ``unconstrain_fn`` (vmapped over the draws, so a bound
that depends on another latent site is right for every draw), flattened
site by site in the model's order, and the log density with the Jacobian
is ``-potential_energy``, jitted and vmapped over batches of points.
"""

from __future__ import annotations

from typing import Any, Callable, Dict, List, Optional, Tuple

import numpy as np

from .._options import check_settings
from ..evidence import estimate
from ..result import Result
from .. import _warnings
from . import _health, require
from ._symmetry import with_candidates

__all__ = ["from_numpyro"]


def from_numpyro(mcmc: Any, *, model_args: Optional[Tuple[Any, ...]] = None,
                 model_kwargs: Optional[Dict[str, Any]] = None, strict: bool = False,
                 **evidence_kwargs: Any) -> Result:
    """ln Z of a NumPyro model from a finished ``numpyro.infer.MCMC``.

    Parameters
    ----------
    mcmc : numpyro.infer.MCMC
        After ``mcmc.run(rng_key, *args, **kwargs)`` with a kernel built on
        a model (``NUTS(model)``, ``HMC(model)``). Its model, the arguments
        of its run and its samples are used. Extra fields are read when
        collected: ``diverging`` (always), ``num_steps`` (hits of the
        maximum tree depth; the evaluations for the adaptive n_q rule) and
        ``potential_energy`` (log p at the draws, reused if it matches).
    model_args, model_kwargs : optional
        The model's arguments, if not those of the run (default: the run's).
    strict : bool, default False
        Raise :class:`gbs.GbsWarningError` (a :class:`gbs.GbsError`)
        instead of warning: before the estimate if the sampler's own
        statistics already condemn the draws.
    **evidence_kwargs
        The estimator's keyword arguments of :func:`gbs.evidence`
        (``method``, ``n_q``, ``seed``, ``progress``, ``discard``,
        ``thin``, ``batch_size``, ``cross_fit``, ...).

    Returns
    -------
    gbs.Result
        ``logz``, the log marginal likelihood of the observed sites, in
        nats. ``dim`` counts the unconstrained coordinates; the columns are
        the latent sites in the model's order, each flattened in C order.
        Sampler warnings (divergences, tree depth, R-hat, the core's checks
        of the draws) are raised as :class:`gbs.SamplerWarning`, failed
        checks of the estimate as :class:`gbs.DiagnosticWarning`; all are
        listed in ``Result.warnings``. ``Result.source`` says where log p
        at the draws came from.

    Notes
    -----
    With JAX's default 32-bit floats, log p has about 7 significant
    digits; ``jax.config.update("jax_enable_x64", True)`` before sampling
    gives float64 throughout.

    Raises
    ------
    ImportError
        NumPyro (or JAX) is not installed (``pip install 'gbs-evidence[numpyro]'``).
    ValueError
        The MCMC has not run, its kernel has no model (a ``potential_fn``
        kernel), or the model has discrete latent sites (not supported).
    """
    numpyro = require("numpyro", "numpyro", "gbs.from_numpyro")
    require("numpyro.infer.util", "numpyro", "gbs.from_numpyro")
    jax = require("jax", "numpyro", "gbs.from_numpyro")
    settings = check_settings(**evidence_kwargs)
    if not isinstance(mcmc, numpyro.infer.MCMC):
        raise TypeError("mcmc must be a numpyro.infer.MCMC, not %r" % (type(mcmc).__name__,))
    model = getattr(mcmc.sampler, "model", None)
    if model is None:
        raise ValueError("gbs.from_numpyro: the MCMC's kernel has no model (it was built from a "
                         "potential_fn); use gbs.evidence with that log density instead")
    if getattr(mcmc, "_states", None) is None:
        raise ValueError("gbs.from_numpyro: the MCMC has no samples; call mcmc.run(...) first")
    args = tuple(getattr(mcmc, "_args", ())) if model_args is None else tuple(model_args)
    kwargs = dict(getattr(mcmc, "_kwargs", {}) or {}) if model_kwargs is None else dict(model_kwargs)

    samples = mcmc.get_samples(group_by_chain=True)
    sites = _latent_sites(model, args, kwargs, samples)
    density = _NumpyroDensity(jax, model, args, kwargs, sites, samples)
    x = density.x
    extra = mcmc.get_extra_fields(group_by_chain=True)
    lp, lp_source = None, "model"
    if "potential_energy" in extra:
        lp, lp_source = _stored_lp(-np.asarray(extra["potential_energy"], dtype=np.float64),
                                   density, x)
    steps = np.asarray(extra["num_steps"]) if "num_steps" in extra else None
    ncall = int(steps.sum()) if steps is not None and steps.sum() > 0 else None
    sl = slice(settings.discard, None, settings.thin)
    if settings.discard or settings.thin != 1:
        x = np.ascontiguousarray(x[:, sl])
        lp = None if lp is None else np.ascontiguousarray(lp[:, sl])
    diverging = np.asarray(extra["diverging"])[:, sl] if "diverging" in extra else None
    depth_hits = None
    if steps is not None:
        max_depth = getattr(mcmc.sampler, "_max_tree_depth", 10)
        if isinstance(max_depth, tuple):  # (warmup, sampling)
            max_depth = max_depth[-1]
        depth_hits = steps[:, sl] >= 2 ** int(max_depth) - 1
    health = _health.sampler_warnings(x.shape[0] * x.shape[1], diverging, depth_hits)
    if strict:
        _warnings.refuse(health)
    settings = with_candidates(settings, density.shapes)
    res = estimate(density.batch, x, lp, settings, ncall, labels=density.labels,
                   desc="gbs.from_numpyro")
    res.add_findings(health)
    res.source = {"lp": lp_source, "var_names": [s for s, _ in sites],
                "x64": bool(jax.config.jax_enable_x64)}
    _warnings.emit(res, strict=strict)
    return res


def _latent_sites(model: Any, args: Tuple[Any, ...], kwargs: Dict[str, Any],
                  samples: Dict[str, Any]) -> List[Tuple[str, Tuple[int, ...]]]:
    """(name, event shape) of the latent sample sites, in the model's
    order, from a trace of the model at the first draw."""
    from numpyro import handlers

    first = {k: np.asarray(v)[0, 0] for k, v in samples.items()}
    tr = handlers.trace(handlers.seed(handlers.substitute(model, data=first), 0)).get_trace(*args, **kwargs)
    sites = []
    discrete = []
    for name, site in tr.items():
        if site["type"] != "sample" or site.get("is_observed", False):
            continue
        if getattr(site["fn"], "is_discrete", False):
            discrete.append(name)
            continue
        if name not in samples:
            raise ValueError("gbs.from_numpyro: the MCMC holds no samples of the latent site %r" % name)
        sites.append((name, tuple(np.shape(samples[name])[2:])))
    if discrete:
        raise ValueError(
            "gbs.from_numpyro: the model has discrete latent sites %s, which are not supported: ln Z "
            "here is an integral over continuous parameters. Sum them out in the model (e.g. with "
            "a mixture distribution) and sample that" % ", ".join(map(repr, discrete)))
    if not sites:
        raise ValueError("gbs.from_numpyro: the model has no latent sites")
    return sites


class _NumpyroDensity:
    """Unconstrained draws (chains, draws, d) and the batched log density
    with the Jacobian at flat points."""

    def __init__(self, jax: Any, model: Any, args: Tuple[Any, ...], kwargs: Dict[str, Any],
                 sites: List[Tuple[str, Tuple[int, ...]]], samples: Dict[str, Any]):
        import jax.numpy as jnp
        from numpyro.infer.util import potential_energy, unconstrain_fn

        names = [s for s, _ in sites]
        nc, nd = np.shape(samples[names[0]])[:2]
        params = {k: jnp.reshape(jnp.asarray(samples[k]), (nc * nd,) + shape) for k, shape in sites}
        unc = jax.jit(jax.vmap(lambda p: unconstrain_fn(model, args, kwargs, p)))(params)
        shapes = [tuple(np.shape(unc[k])[1:]) for k in names]
        sizes = [int(np.prod(s)) for s in shapes]
        self.shapes = shapes
        self.labels: List[str] = []
        for k, s in zip(names, shapes):
            self.labels += (["%s[%s]" % (k, ", ".join(map(str, i))) for i in np.ndindex(*s)]
                            if s else [k])
        x = np.concatenate([np.asarray(unc[k], dtype=np.float64).reshape(nc * nd, -1)
                            for k in names], axis=1)
        if not np.isfinite(x).all():
            i, c = np.argwhere(~np.isfinite(x))[0]
            raise ValueError("the draw %d (chain %d) maps to %r at the unconstrained coordinate %s: "
                             "it is on the boundary of its site's support"
                             % (i % nd, i // nd, float(x[i, c]), self.labels[c]))
        self.x = np.ascontiguousarray(x.reshape(nc, nd, -1))
        offsets = np.cumsum([0] + sizes)

        def unravel(flat: Any) -> Dict[str, Any]:
            return {k: jnp.reshape(flat[offsets[j]:offsets[j + 1]], s)
                    for j, (k, s) in enumerate(zip(names, shapes))}

        def logp(flat: Any) -> Any:
            return -potential_energy(model, args, kwargs, unravel(flat))

        self._fn: Callable[[Any], Any] = jax.jit(jax.vmap(logp))
        self._dtype = jnp.asarray(0.0).dtype

    def logp(self, x: np.ndarray) -> np.ndarray:
        # Batches are padded to a power of two (with copies of the first
        # point) so that jit compiles a few shapes, not one per size.
        n = len(x)
        m = max(64, 1 << (n - 1).bit_length())
        if m != n:
            x = np.concatenate([x, np.repeat(x[:1], m - n, axis=0)])
        v: np.ndarray = np.asarray(self._fn(x.astype(self._dtype)), dtype=np.float64)[:n]
        return v

    def batch(self, x: np.ndarray, out: np.ndarray) -> None:
        out[:] = self.logp(x)


def _stored_lp(lp: np.ndarray, density: _NumpyroDensity, x: np.ndarray
               ) -> Tuple[Optional[np.ndarray], str]:
    """-potential_energy of the run when it is log p at these draws
    (checked at 16 draws), else None."""
    if lp.shape != x.shape[:2] or not np.isfinite(lp).all():
        return None, "model"
    nc, nd = lp.shape
    idx = np.linspace(0, nc * nd - 1, min(16, nc * nd)).astype(int)
    ours = density.logp(x.reshape(nc * nd, -1)[idx])
    theirs = lp.reshape(-1)[idx]
    # float32 (JAX's default) keeps about 7 digits of each term.
    tol = 1e-5 if density._dtype == np.float32 else 1e-8
    if np.all(np.abs(ours - theirs) <= tol * (1 + np.abs(theirs))):
        return np.ascontiguousarray(lp), "sample_stats"
    return None, "model"
