"""gbs.sample(..., global_moves=...): independence Metropolis-Hastings moves
from a flow fitted on the chains set the weights of separated modes that
NUTS alone keeps in the proportions the chains start in."""

import numpy as np
import pytest

import gbs

D = 4


def two_modes(x):
    """0.2 N(-4·1, I) + 0.8 N(+4·1, I): modes 16 apart, which no NUTS
    trajectory crosses."""
    a = np.log(0.2) - 0.5 * np.sum((x + 4) ** 2)
    b = np.log(0.8) - 0.5 * np.sum((x - 4) ** 2)
    m = max(a, b)
    lp = m + np.log(np.exp(a - m) + np.exp(b - m))
    r = np.exp(a - lp)
    return lp, -r * (x + 4) - (1 - r) * (x - 4)


def wrong_starts(chains=8):
    # All but the last chain in the minor mode: 7:1 instead of 1:4.
    x0 = np.full((chains, D), -4.0)
    x0[-1] = 4.0
    return x0


def minor_fraction(s):
    return float((s.draws.sum(axis=-1) < 0).mean())


def test_global_moves_set_mode_weights():
    kw = dict(n_draws=400, n_warmup=200, seed=3, bounds=[(-10, 10)] * D)
    plain = gbs.sample(two_modes, wrong_starts(), global_moves=False, **kw)
    assert minor_fraction(plain) == pytest.approx(7 / 8, abs=0.01)
    assert plain.global_accept_rate is None
    assert all(st["global_proposed"] == 0 for st in plain.stats)

    s = gbs.sample(two_modes, wrong_starts(), global_moves=True, global_stage_iters=60, **kw)
    # 8 × 400 draws with acceptance ~0.7: the weight's standard error is
    # about 0.01; measured 0.19 at this seed.
    assert minor_fraction(s) == pytest.approx(0.2, abs=0.04)
    assert 0.3 < s.global_accept_rate <= 1
    for st in s.stats:
        assert st["global_proposed"] == 400
        assert st["global_warmup_proposed"] == 60  # stage 1 has no q yet
        assert 0 < st["global_calls"] <= 460 and st["global_calls"] < st["grad_calls"]


def test_global_moves_arguments():
    with pytest.raises(ValueError, match="global_moves_per_iter"):
        gbs.sample(two_modes, wrong_starts(2), n_draws=10, n_warmup=10, global_moves=True, global_moves_per_iter=0)
    with pytest.raises(ValueError, match="global_stage_iters"):
        gbs.sample(two_modes, wrong_starts(2), n_draws=10, n_warmup=10, global_moves=True, global_stage_iters=-1)
