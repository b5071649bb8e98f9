"""What a user's log_prob may return, as emcee accepts it."""

from __future__ import annotations

from typing import Any

import numpy as np


def scalar_value(v: Any) -> float:
    """log p of one point as a float. A tuple or list is emcee's
    (log p, *blobs): its first element is log p."""
    if type(v) is float:
        return v
    if isinstance(v, (tuple, list)):
        if not v:
            raise ValueError("log_prob returned an empty %s" % type(v).__name__)
        v = v[0]
    try:
        a = np.asarray(v, dtype=np.float64)
    except (TypeError, ValueError):
        raise TypeError("log_prob must return a number for one point, not %r"
                        % (type(v).__name__,)) from None
    if a.size != 1:
        raise ValueError("log_prob returned shape %s for one point; it must return a float "
                         "(for a batch of points use vectorize=True)" % (a.shape,))
    return float(a.reshape(()))


def batch_values(v: Any, n: int) -> np.ndarray:
    """log p of a batch of n points as an (n,) float64 array. A tuple whose
    first element holds n values is (log p, blobs)."""
    if isinstance(v, tuple) and v and np.ndim(v[0]) >= 1 and np.size(v[0]) == n:
        v = v[0]
    try:
        a: np.ndarray = np.asarray(v, dtype=np.float64)
    except (TypeError, ValueError):
        raise TypeError("log_prob with vectorize=True must return an array of %d numbers, not %r"
                        % (n, type(v).__name__)) from None
    if a.shape != (n,):
        if a.size == n and a.ndim <= 2:
            flat: np.ndarray = a.reshape(n)
            return flat
        raise ValueError("log_prob returned shape %s for a batch of %d points; with "
                         "vectorize=True it must return shape (%d,)" % (a.shape, n, n))
    return a
