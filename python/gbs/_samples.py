"""Draws in every form gbs.evidence accepts, as one C-contiguous
(chains, draws, d) float64 array: arrays, emcee samplers, gbs.Samples, and
ArviZ / xarray objects.

ArviZ input is flattened this way (documented in gbs.evidence and
the Python guide): the variables in the order of ``var_names`` (default: the
order of the posterior group), each variable's non-sample axes flattened
in C order (last axis fastest), so a (chain, draw, 2, 3) variable ``b``
gives the six columns b[0,0], b[0,1], b[0,2], b[1,0], ... The chains
stay chains.
"""

from __future__ import annotations

from typing import Any, Dict, List, NamedTuple, Optional, Sequence, Tuple

import numpy as np

from ._arrays import as_c

SAMPLE_DIMS = ("chain", "draw")


def is_inference_data(obj: Any) -> bool:
    """An ArviZ InferenceData, or an xarray DataTree with a posterior group
    (ArviZ >= 1.0)."""
    return hasattr(obj, "posterior") and not hasattr(obj, "get_chain") and not _is_gbs_samples(obj)


def is_xarray_dataset(obj: Any) -> bool:
    return hasattr(obj, "data_vars") and hasattr(obj, "dims")


def is_xarray_dataarray(obj: Any) -> bool:
    return (hasattr(obj, "dims") and hasattr(obj, "values") and hasattr(obj, "coords")
            and not hasattr(obj, "data_vars"))


def _is_emcee(samples: Any) -> bool:
    return hasattr(samples, "get_chain") and hasattr(samples, "get_log_prob")


def emcee_arguments(samples: Any, log_prob: Any) -> Optional[Tuple[Tuple[Any, ...], Dict[str, Any]]]:
    """The args and kwargs an emcee sampler passes to its log-probability
    function (emcee keeps them on ``sampler.log_prob_fn``, a wrapper with
    ``f``, ``args`` and ``kwargs``), when log_prob is that function; None
    otherwise (another object, an emcee backend, another function, which
    may bind its arguments itself)."""
    if not _is_emcee(samples):
        return None
    wrapper = getattr(samples, "log_prob_fn", None)
    if wrapper is None or getattr(wrapper, "f", None) is not log_prob:
        return None
    return tuple(getattr(wrapper, "args", None) or ()), dict(getattr(wrapper, "kwargs", None) or {})


def _is_gbs_samples(samples: Any) -> bool:
    return (hasattr(samples, "draws") and hasattr(samples, "log_prob")
            and not callable(getattr(samples, "log_prob")))


def posterior_columns(posterior: Any, var_names: Optional[Sequence[str]] = None
                      ) -> Tuple[np.ndarray, List[str]]:
    """The variables of an xarray Dataset with (chain, draw) dimensions as
    one (chains, draws, d) float64 array, and the name of each column
    (``"b[1, 0]"`` for an element of a matrix)."""
    names = list(posterior.data_vars) if var_names is None else _names(var_names)
    if not names:
        raise ValueError("the posterior holds no variables")
    missing = [n for n in names if n not in posterior.data_vars]
    if missing:
        raise ValueError("var_names: %s not in the posterior (it has %s)"
                         % (", ".join(map(repr, missing)), ", ".join(map(repr, posterior.data_vars))))
    blocks = []
    labels: List[str] = []
    for name in names:
        da = posterior[name]
        if tuple(da.dims[:2]) != SAMPLE_DIMS:
            if set(SAMPLE_DIMS) <= set(da.dims):
                rest = [dim for dim in da.dims if dim not in SAMPLE_DIMS]
                da = da.transpose(*SAMPLE_DIMS, *rest)
            else:
                raise ValueError("posterior variable %r has dimensions %s; ArviZ draws need "
                                 "'chain' and 'draw'" % (name, tuple(da.dims)))
        a = np.asarray(da.values)
        if a.dtype == bool or not np.issubdtype(a.dtype, np.number):
            raise ValueError("posterior variable %r has dtype %s; only numbers can be flattened"
                             % (name, a.dtype))
        shape = a.shape[2:]
        blocks.append(a.reshape(a.shape[0], a.shape[1], -1).astype(np.float64))
        if shape:
            labels += ["%s[%s]" % (name, ", ".join(map(str, idx))) for idx in np.ndindex(*shape)]
        else:
            labels.append(name)
    return as_c(np.concatenate(blocks, axis=2)), labels


def _names(var_names: Any) -> List[str]:
    if isinstance(var_names, str):
        return [var_names]
    return [str(v) for v in var_names]


def _dataarray_error(da: Any) -> ValueError:
    dims = tuple(da.dims)
    name = getattr(da, "name", None) or "x"
    if set(dims) == set(SAMPLE_DIMS):
        return ValueError(
            "samples is an xarray DataArray %r with dimensions %s and no parameter axis: it is "
            "one scalar variable, not draws of a d-dimensional point. Pass the InferenceData "
            "(or idata.posterior) and choose the variables with var_names=[%r, ...]; they are "
            "flattened in that order into the columns log_prob receives" % (name, dims, name))
    return ValueError(
        "samples is an xarray DataArray %r with dimensions %s; pass the InferenceData (or "
        "idata.posterior) with var_names=[...], or an array of shape (chains, draws, d)"
        % (name, dims))


def group_dataset(idata: Any, group: str) -> Any:
    """A group of an InferenceData (or of an ArviZ >= 1.0 DataTree) as an
    xarray Dataset, or None if it has none."""
    try:
        g = getattr(idata, group)
    except (AttributeError, KeyError):
        return None
    if g is not None and not is_xarray_dataset(g) and hasattr(g, "to_dataset"):
        g = g.to_dataset()  # a DataTree node
    return g


def xarray_draws(samples: Any, var_names: Optional[Sequence[str]]
                 ) -> Optional[Tuple[np.ndarray, List[str]]]:
    """(chains, draws, d) draws and column names from an InferenceData, an
    xarray Dataset or DataArray; None for anything else."""
    if is_inference_data(samples):
        posterior = group_dataset(samples, "posterior")
        if posterior is None:
            raise ValueError("the %s has no posterior group" % type(samples).__name__)
        return posterior_columns(posterior, var_names)
    if is_xarray_dataset(samples):
        return posterior_columns(samples, var_names)
    if is_xarray_dataarray(samples):
        dims = tuple(samples.dims)
        if len(dims) <= 2 or not set(SAMPLE_DIMS) <= set(dims):
            raise _dataarray_error(samples)
        name = samples.name if samples.name is not None else "x"
        return posterior_columns(samples.to_dataset(name=name), None)
    return None


class Draws(NamedTuple):
    x: np.ndarray                 # (chains, draws, d), C order, finite
    lp: Optional[np.ndarray]      # (chains, draws) log p, or None
    ncall: Optional[int]          # the sampler's log-density evaluations
    labels: Optional[List[str]]   # names of the d columns, when known
    lp_source: Optional[str] = None  # where lp came from, as messages name it
    ensemble: bool = False        # the chains are an ensemble sampler's walkers


def draws_of(samples: Any, log_prob_samples: Any = None, chain_axis: int = 0, discard: int = 0,
             thin: int = 1, var_names: Optional[Sequence[str]] = None
             ) -> Tuple[np.ndarray, Optional[np.ndarray], Optional[int]]:
    """The draws as a C-contiguous (chains, draws, d) float64 array (the
    caller's memory when it already is one), their log p as (chains, draws)
    or None, and the sampler's number of log-density evaluations or None."""
    dr = normalize(samples, log_prob_samples, chain_axis, discard, thin, var_names)
    return dr.x, dr.lp, dr.ncall


def normalize(samples: Any, log_prob_samples: Any = None, chain_axis: int = 0, discard: int = 0,
              thin: int = 1, var_names: Optional[Sequence[str]] = None) -> Draws:
    """draws_of, with the names of the columns of ArviZ input."""
    x, lp, ncall, labels = _normalize(samples, log_prob_samples, chain_axis, discard, thin, var_names)
    if lp is None:
        source = None
    elif _is_emcee(samples):
        source = "emcee"
    elif _is_gbs_samples(samples):
        source = "%s.log_prob" % type(samples).__name__
    else:
        source = "log_prob_samples"
    # emcee's walkers move together: the library applies emcee's 50 tau
    # rule to them. gbs.sample_ensemble applied it itself, before thinning.
    return Draws(x, lp, ncall, labels, source, _is_emcee(samples))


def _normalize(samples: Any, log_prob_samples: Any, chain_axis: int, discard: int, thin: int,
               var_names: Optional[Sequence[str]]
               ) -> Tuple[np.ndarray, Optional[np.ndarray], Optional[int], Optional[List[str]]]:
    ncall = None
    xr = xarray_draws(samples, var_names)
    if xr is None and var_names is not None:
        raise ValueError("var_names chooses variables of an ArviZ InferenceData or xarray "
                         "Dataset; samples is a %s" % type(samples).__name__)
    if xr is not None:
        x = xr[0]
        lp = None
        if log_prob_samples is not None:
            lp = as_c(log_prob_samples, "log_prob_samples")
            if is_xarray_dataarray(log_prob_samples) and tuple(log_prob_samples.dims) != SAMPLE_DIMS:
                lp = as_c(log_prob_samples.transpose(*SAMPLE_DIMS).values)
            if lp.shape != x.shape[:2]:
                raise ValueError("log_prob_samples has shape %s; the posterior's (chain, draw) "
                                 "shape is %s" % (lp.shape, x.shape[:2]))
        x, lp = _burned(x, lp, discard, thin, "the posterior")
        return _checked(x, discard, thin), _checked_lp(lp), ncall, xr[1]
    if _is_emcee(samples):
        if log_prob_samples is not None:
            raise ValueError("log_prob_samples: the log-probabilities are taken from the emcee sampler")
        _check_emcee_steps(samples, discard, thin)
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
        if lp.shape != x.shape[:2]:
            raise ValueError("the emcee sampler's log-probabilities have shape %s, the draws %s"
                             % (lp.shape, x.shape))
        return _checked(x, discard, thin), _checked_lp(lp), ncall, None
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
        x, lp = _burned(x, lp, discard, thin, type(samples).__name__)
        return _checked(x, discard, thin), _checked_lp(lp), ncall, None
    x = as_c(samples, "samples")
    lp = None if log_prob_samples is None else as_c(log_prob_samples, "log_prob_samples")
    flat = x.ndim == 2
    if x.ndim == 1:
        x = x.reshape(-1, 1)
    if x.ndim == 2:
        if lp is not None and lp.shape == x.shape and x.shape[1] > 1:
            raise ValueError("log_prob_samples has the samples' shape %s: if the samples are "
                             "(chains, draws) of a one-dimensional model, pass samples[..., None] "
                             "(shape %s); an (n, d) array of draws needs log_prob_samples of "
                             "shape (n,)" % (x.shape, x.shape + (1,)))
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
    x, lp = _burned(x, lp, discard, thin, "samples")
    return _checked(x, discard, thin, flat), _checked_lp(lp), ncall, None


def _burned(x: np.ndarray, lp: Optional[np.ndarray], discard: int, thin: int, what: str
            ) -> Tuple[np.ndarray, Optional[np.ndarray]]:
    """x[:, discard::thin] and the same of lp; discard must leave a draw."""
    if not discard and thin == 1:
        return x, lp
    if x.ndim == 3 and x.shape[1] and discard >= x.shape[1]:
        raise ValueError("discard=%d drops every draw: %s of shape %s hold %d draws per chain"
                         % (discard, what, x.shape, x.shape[1]))
    return as_c(x[:, discard::thin]), None if lp is None else as_c(lp[:, discard::thin])


def _check_emcee_steps(sampler: Any, discard: int, thin: int) -> None:
    """discard and thin against the steps an emcee sampler ran: emcee keeps
    steps discard + thin - 1, discard + 2 thin - 1, ..., so either can
    leave nothing, and the message names the one that did."""
    steps = getattr(sampler, "iteration", None)
    if not steps:
        return  # emcee's own message (the sampler never ran)
    if discard >= steps:
        raise ValueError("discard=%d drops every step: the emcee sampler ran %d" % (discard, steps))
    if discard + thin > steps:
        raise ValueError("thin=%d keeps no step: the emcee sampler ran %d, %d after discard=%d "
                         "(thin can be at most %d)" % (thin, steps, steps - discard, discard,
                                                       steps - discard))


def _checked(x: np.ndarray, discard: int = 0, thin: int = 1, flat: bool = False) -> np.ndarray:
    """x, checked: draws left, more of them than dimensions, all finite.
    ``flat``: x came from a 2-d (n, d) array (the hint then covers the two
    ways such an array is usually meant)."""
    nc, nd, d = x.shape
    if d == 0 or nc == 0 or nd == 0:
        raise ValueError("samples of shape %s hold no draws" % (x.shape,))
    if nc * nd <= d:
        kept = ""
        if discard or thin != 1:
            kept = " (what discard=%d and thin=%d keep)" % (discard, thin)
        hint = ""
        if flat and not kept:
            hint = ("; a 2-d array is read as (n, d), one draw per row. If it holds (chains, draws) "
                    "of a one-dimensional model, pass samples[..., None] (shape %s); if it is "
                    "transposed, (d, n), pass samples.T" % ((nd, d, 1),))
        elif flat:
            hint = "; keep more draws (a smaller discard or thin)"
        raise ValueError("%d draws of dimension %d%s are too few to estimate ln Z%s"
                         % (nc * nd, d, kept, hint))
    if not np.isfinite(x).all():
        c, t, k = np.argwhere(~np.isfinite(x))[0]
        raise ValueError("samples: value %r at chain %d, draw %d, coordinate %d; every value must be "
                         "finite" % (float(x[c, t, k]), c, t, k))
    return x


def _checked_lp(lp: Optional[np.ndarray]) -> Optional[np.ndarray]:
    """log p at the draws: finite (a draw of p has p > 0)."""
    if lp is not None and not np.isfinite(lp).all():
        c, t = np.argwhere(~np.isfinite(lp))[0]
        raise ValueError("log_prob_samples: log p = %r at chain %d, draw %d; the log-probabilities "
                         "of the draws must be finite" % (float(lp[c, t]), c, t))
    return lp
