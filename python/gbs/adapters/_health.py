"""What the sampler says about its own draws, checked before ln Z is
trusted: divergent transitions, trajectories cut at the maximum tree
depth, and the rank-normalized split R-hat of the draws (Vehtari et al.
2021). A bridge sampling estimate is only as good as the draws: the
centered eight-schools model, whose sampler diverges hundreds of times,
gives an ln Z several sigma off with a small error bar."""

from __future__ import annotations

import warnings
from statistics import NormalDist
from typing import List, Optional, Sequence

import numpy as np

RHAT_MAX = 1.01  # the threshold of Vehtari et al. (2021)


class SamplerWarning(UserWarning):
    """The sampler's own diagnostics (divergences, tree depth, R-hat) say
    its draws may not represent the posterior, so ln Z may be off by more
    than its error bar."""


def _ranknorm(a: np.ndarray) -> np.ndarray:
    """Rank-normalized values (normal scores of the pooled ranks), same
    shape as a."""
    flat = a.ravel()
    ranks = np.empty(flat.size)
    order = np.argsort(flat, kind="mergesort")
    ranks[order] = np.arange(1, flat.size + 1)
    # Ties share their mean rank.
    _, inv, counts = np.unique(flat, return_inverse=True, return_counts=True)
    if counts.max() > 1:
        sums = np.bincount(inv, weights=ranks)
        ranks = sums[inv] / counts[inv]
    p = (ranks - 0.375) / (flat.size + 0.25)  # Blom's offset, as ArviZ
    try:
        from scipy.special import ndtri  # a dependency of PyMC and of JAX
        z: np.ndarray = np.asarray(ndtri(p)).reshape(a.shape)
    except ImportError:
        inv_cdf = NormalDist().inv_cdf
        z = np.array([inv_cdf(v) for v in p]).reshape(a.shape)
    return z


def _split_rhat(a: np.ndarray) -> float:
    """Split R-hat of (chains, draws) values."""
    nc, nd = a.shape
    half = nd // 2
    if half < 2:
        return float("nan")
    s = np.concatenate([a[:, :half], a[:, nd - half:]], axis=0)
    means = s.mean(axis=1)
    w = s.var(axis=1, ddof=1).mean()
    b = half * means.var(ddof=1)
    if w <= 0:
        return float("nan")
    var = (half - 1) / half * w + b / half
    return float(np.sqrt(var / w))


def rhat(x: np.ndarray) -> np.ndarray:
    """Rank-normalized split R-hat of each coordinate of (chains, draws, d)
    draws: the larger of the bulk and the folded (tail) value."""
    out = np.full(x.shape[2], np.nan)
    for k in range(x.shape[2]):
        a = x[:, :, k]
        if np.ptp(a) == 0:
            continue
        bulk = _split_rhat(_ranknorm(a))
        fold = _split_rhat(_ranknorm(np.abs(a - np.median(a))))
        out[k] = np.nanmax([bulk, fold])
    r: np.ndarray = out
    return r


def sampler_warnings(x: np.ndarray, labels: Sequence[str], diverging: Optional[np.ndarray],
                     max_depth_hits: Optional[np.ndarray]) -> List[str]:
    """Warnings about the draws x (chains, draws, d) from the sampler's
    statistics: ``diverging`` and ``max_depth_hits`` are boolean (chains,
    draws) arrays of the post-warmup transitions, or None if unknown."""
    out = []
    n = x.shape[0] * x.shape[1]
    if diverging is not None and np.any(diverging):
        k = int(np.sum(diverging))
        out.append("%d of %d post-warmup transitions diverged: the draws may miss part of the "
                   "posterior (for example the neck of a funnel), and ln Z may be off by more than "
                   "its error; reparameterize (non-centered) or raise target_accept" % (k, n))
    if max_depth_hits is not None and np.any(max_depth_hits):
        k = int(np.sum(max_depth_hits))
        out.append("%d of %d transitions stopped at the maximum tree depth: the chains may not "
                   "have explored the posterior; raise max_treedepth or reparameterize" % (k, n))
    if x.shape[0] >= 2 and x.shape[1] >= 8:
        r = rhat(x)
        if np.nanmax(r, initial=0) > RHAT_MAX:
            k = int(np.nanargmax(r))
            bad = int(np.sum(r > RHAT_MAX))
            out.append("R-hat = %.3f for %s (%d of %d coordinates above %.2f): the chains disagree, "
                       "so they have not converged to the posterior; run longer chains"
                       % (r[k], labels[k], bad, len(r), RHAT_MAX))
    return out


def emit(messages: Sequence[str], stacklevel: int = 3) -> None:
    for m in messages:
        warnings.warn(m, SamplerWarning, stacklevel=stacklevel)
