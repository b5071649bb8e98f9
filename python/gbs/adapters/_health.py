"""What the sampler says about its own draws, checked before ln Z is
trusted: divergent transitions and trajectories cut at the maximum tree
depth. A bridge sampling estimate is only as good as the draws: the
centered eight-schools model, whose sampler diverges hundreds of times,
gives an ln Z several sigma off with a small error bar.

Convergence (R-hat, ESS, burn-in) is not computed here: the library checks
every evidence call's chains (internal/mcmc, thresholds included) and its
warnings name the model's variables (gbs.evidence's ``labels``)."""

from __future__ import annotations

from typing import List, Optional, Sequence

import numpy as np

from .._findings import Finding
from .._warnings import SamplerWarning  # noqa: F401  (gbs.SamplerWarning, defined once)


def sampler_warnings(n: int, diverging: Optional[np.ndarray],
                     max_depth_hits: Optional[np.ndarray]) -> List[Finding]:
    """Warnings about n post-warmup draws from the sampler's statistics:
    ``diverging`` and ``max_depth_hits`` are boolean (chains, draws)
    arrays of the post-warmup transitions, or None if unknown."""
    out = []
    if diverging is not None and np.any(diverging):
        k = int(np.sum(diverging))
        out.append(Finding("divergences", "draws",
                           "%d of %d post-warmup transitions diverged: the draws may miss part of the "
                           "posterior (for example the neck of a funnel), and ln Z may be off by more "
                           "than its error; reparameterize (non-centered) or raise target_accept"
                           % (k, n), value=k / n, limit=0.0))
    if max_depth_hits is not None and np.any(max_depth_hits):
        k = int(np.sum(max_depth_hits))
        out.append(Finding("tree-depth", "draws",
                           "%d of %d transitions stopped at the maximum tree depth: the chains may "
                           "not have explored the posterior; raise max_treedepth or reparameterize"
                           % (k, n), value=k / n, limit=0.0))
    return out

