"""The mode census: with a finite box, a mode of p that no draw visited
is found and raised as a warning naming where it is (check
"missed-mode"); mode_census="off" skips it."""

import math
import warnings

import numpy as np
import pytest

import gbs

MODES = np.array([[5.0, 5.0, 5.0], [-5.0, -5.0, -5.0]])
BOUNDS = [(-10.0, 10.0)] * 3


def planted_logp(x):
    """Two unit Gaussians at ±(5, 5, 5), equal weights, normalized, on the
    box (-10, 10)^3 (-inf outside): ln Z = 3 ln Φ(5), about -8.6e-7."""
    x = np.atleast_2d(x)
    lp = [-0.5 * np.sum((x - m) ** 2, axis=-1) - 1.5 * math.log(2 * math.pi) for m in MODES]
    out = np.logaddexp(lp[0], lp[1]) + math.log(0.5)
    out[np.any(np.abs(x) >= 10, axis=-1)] = -np.inf
    return out


def first_mode_draws(seed=0):
    """8 chains of 2000 draws, all in the (5, 5, 5) mode."""
    return 5.0 + np.random.default_rng(seed).standard_normal((8, 2000, 3))


def test_missed_mode_warns():
    with pytest.warns(gbs.GbsWarning) as rec:
        res = gbs.evidence(planted_logp, first_mode_draws(), vectorize=True, bounds=BOUNDS, seed=3)
    ours = [w.message for w in rec if getattr(w.message, "check", None) == "missed-mode"]
    assert len(ours) == 1
    assert res.found("missed-mode")
    d = res.diagnostics
    assert d.census_modes == 1
    # ln Z misses the mode's half of the mass: ln 2.
    assert abs(d.census_shortfall - math.log(2)) < 0.02
    assert abs(res.logz + d.census_shortfall) < 0.02
    assert 0 < d.census_calls <= res.ncall


def test_mode_census_off():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", gbs.GbsWarning)
        res = gbs.evidence(planted_logp, first_mode_draws(), vectorize=True, bounds=BOUNDS,
                           seed=3, mode_census="off")
    assert not res.found("missed-mode")
    assert res.diagnostics.census_calls == 0 and math.isnan(res.diagnostics.census_shortfall)


def test_mode_census_checked():
    with pytest.raises(ValueError, match="mode_census"):
        gbs.evidence(planted_logp, first_mode_draws(), vectorize=True, bounds=BOUNDS, mode_census="yes")
    with pytest.raises(gbs.GbsError, match="ModeCensus"):
        gbs.evidence(planted_logp, first_mode_draws(), vectorize=True, mode_census="on")
