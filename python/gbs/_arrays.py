"""Input conversion shared by the public functions: arrays, bounds, seeds."""

import ctypes
import operator

import numpy as np

from ._lib import UINT64_MASK

_dp = ctypes.POINTER(ctypes.c_double)


def as_c(a, name="array"):
    """a as a C-contiguous float64 array: the same memory if it already is
    one (no copy), else a converted copy (lists, float32, strided views,
    Fortran order)."""
    try:
        return np.ascontiguousarray(a, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError("%s cannot be converted to a float64 array: %s" % (name, exc)) from None


def ptr(a):
    """A ``double *`` to the data of a C-contiguous float64 array (or NULL
    for None). The caller keeps the array alive during the call."""
    if a is None:
        return None
    return a.ctypes.data_as(_dp)


def bounds_arrays(bounds, d):
    """The lower and upper bounds, two (d,) float64 arrays, from any of

    - an array of shape (d, 2): rows of (low, high), as scipy and dynesty;
    - a pair ``(lower, upper)`` of two length-d sequences (a tuple, as
      ``gbs.problems`` gives), or an array of shape (2, d);
    - for d = 1, ``(low, high)``.

    ``None`` (or ``±inf``) for a side without a bound; NaN is an error. For
    d = 2 the shapes (d, 2) and (2, d) coincide: a tuple is read as (lower,
    upper) and anything else as rows; a reading in which some low >= high
    is discarded in favour of the other.
    """
    try:
        b = np.array(bounds, dtype=object)
        none = np.equal(b, None)
        b = np.where(none, 0.0, b).astype(np.float64)
    except (TypeError, ValueError):
        raise ValueError("bounds must be numbers or None, shape (%d, 2) or (2, %d)" % (d, d)) from None
    # None is an open side; NaN is not (it is what a failed computation
    # leaves behind), so it is an error rather than silently no bound.
    nan = np.isnan(b) & ~none
    b[none] = np.nan
    if b.shape == (2,) and d == 1:
        b, nan = b.reshape(1, 2), nan.reshape(1, 2)
    readings = []  # (lower, upper, NaN in lower, NaN in upper)
    rows = b.shape == (d, 2)
    pair = b.shape == (2, d)
    if rows:
        readings.append((b[:, 0], b[:, 1], nan[:, 0], nan[:, 1]))
    if pair:
        readings.append((b[0], b[1], nan[0], nan[1]))
    if not readings:
        raise ValueError("bounds must have shape (%d, 2) (rows of low, high) or be a pair "
                         "(lower, upper) of length %d, not shape %s" % (d, d, b.shape))
    if rows and pair and isinstance(bounds, tuple):
        readings.reverse()  # a tuple (lower, upper), as problems.bounds
    for side, name, open_side in ((2, "lower", "-inf"), (3, "upper", "inf")):
        bad = np.flatnonzero(readings[0][side])
        if bad.size:
            raise ValueError("bounds: the %s bound of coordinate %d is NaN; use None or %s for "
                             "an open side" % (name, bad[0], open_side))
    valid = []
    for lo, hi, _, _ in readings:
        lo = np.where(np.isnan(lo), -np.inf, lo)
        hi = np.where(np.isnan(hi), np.inf, hi)
        if np.all(lo < hi):
            valid.append((lo, hi))
    if not valid:
        raise ValueError("bounds: every low must be smaller than its high; got %r" % (bounds,))
    lo, hi = valid[0]
    return as_c(lo), as_c(hi)


def check_seed(seed):
    """seed as given, checked: None, a numpy Generator or RandomState, or
    an integer in [0, 2**64) (a Python or numpy integer). Anything else is
    an error rather than a different seed: a float (even 1.0, which is
    usually a computed value that may already have been rounded), a bool,
    a negative number or one of 65 bits or more (the library's seed is a
    uint64, and wrapping would give 2**64 and 0 the same stream)."""
    if seed is None or isinstance(seed, (np.random.Generator, np.random.RandomState)):
        return seed
    if isinstance(seed, (bool, np.bool_)):
        raise TypeError("seed must be an integer, not the bool %r" % (seed,))
    try:
        v = operator.index(seed)  # int, numpy integers, 0-d integer arrays
    except TypeError:
        raise TypeError("seed must be None, an integer in [0, 2**64) or a numpy Generator, not "
                        "%s %r" % (type(seed).__name__, seed)) from None
    if not 0 <= v <= UINT64_MASK:
        raise ValueError("seed must be in [0, 2**64), not %d" % v)
    return v


def seed_value(seed):
    """A uint64 seed for the library. None draws fresh entropy (so repeated
    calls differ; the value is reported in the result); an integer is used
    as is (see :func:`check_seed`); a numpy Generator or RandomState is
    asked for one."""
    seed = check_seed(seed)
    if seed is None:
        return int(np.random.SeedSequence().entropy) & UINT64_MASK
    if isinstance(seed, np.random.Generator):
        return int(seed.integers(0, 2 ** 63))
    if isinstance(seed, np.random.RandomState):
        return int(seed.randint(0, 2 ** 63, dtype=np.int64))
    return seed


def integer(value, name):
    """value as a Python int if it is an integer (a Python or numpy
    integer, or a 0-d integer array), else a TypeError naming the
    argument. A float is an error even when it is integral (500.0): as for
    ``seed``, a float is usually a computed value that may already have
    been rounded, and every integer argument is checked the same way."""
    if isinstance(value, (bool, np.bool_)):
        raise TypeError("%s must be an integer, not the bool %r" % (name, value))
    try:
        return operator.index(value)
    except TypeError:
        pass
    hint = ""
    if isinstance(value, (float, np.floating)) and float(value).is_integer():
        hint = " (write %s=%d, or int(...) for a computed value)" % (name, int(value))
    raise TypeError("%s must be an integer, not %s %r%s" % (name, type(value).__name__, value, hint))


def positive_int(value, name, allow_none=True, bits=64):
    if value is None:
        if allow_none:
            return 0
        raise ValueError("%s is required" % name)
    v = integer(value, name)
    if v < 1:
        raise ValueError("%s must be a positive integer, not %r" % (name, value))
    if v >= 2**(bits - 1):
        # ctypes would silently keep the low bits of the C field.
        raise ValueError("%s = %d does not fit in the library's %d-bit integer (at most %d)"
                         % (name, v, bits, 2**(bits - 1) - 1))
    return v
