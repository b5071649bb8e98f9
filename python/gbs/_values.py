"""What a user's log_prob may return, as emcee accepts it, checked to be a
number: a value of another type (None, a str such as "-1.0", bytes...) is
a TypeError naming the callback, the type and the point, not something
converted or read as NaN."""

import numbers

import numpy as np

_f64 = np.float64
_NUMERIC = "fiu"  # numpy dtype kinds that are real numbers


def callback_name(role, fn):
    """How messages name a user's function: its role, and its own name
    when it has one (``log_prob (my_log_prob)``)."""
    own = getattr(fn, "__name__", None)
    return "%s (%s)" % (role, own) if own and own != role else role


def _point(x):
    return np.array2string(np.asarray(x), precision=6, threshold=8, separator=", ")


def _not_a_number(name, v, x, batch=False):
    what = "an array of numbers" if batch else "a number"
    at = "for " + x if isinstance(x, str) else "at x = " + _point(x)
    return TypeError("%s returned %s %s %s; it must return %s (a float, a numpy scalar or "
                     "array)" % (name, type(v).__name__, _short(v), at, what))


def _short(v):
    r = repr(v)
    return r if len(r) <= 60 else r[:57] + "..."


def real_value(v, x, name="log_prob"):
    """v as a float if it is a real number (a float, an int, a numpy
    scalar, a 0-d or one-element numeric array, or an array-like such as a
    jax array), else a TypeError naming name, the type of v and the point x."""
    t = type(v)
    if t is float:
        return v
    # The common cases first, each with a cheap test.
    if t is np.ndarray and v.dtype.kind in _NUMERIC and v.size == 1:
        return float(v if v.ndim == 0 else v.reshape(()))
    if isinstance(v, (float, np.floating, np.integer)) or (t is int):
        return float(v)
    if isinstance(v, numbers.Real) and not isinstance(v, (bool, np.bool_)):
        return float(v)
    if isinstance(v, (str, bytes, bool, np.bool_)) or v is None:
        raise _not_a_number(name, v, x)
    try:
        a = np.asarray(v)
    except Exception:
        raise _not_a_number(name, v, x) from None
    if a.dtype.kind not in _NUMERIC:
        if a.dtype.kind == "O" and a.size == 1:
            item = a.reshape(()).item()
            if item is not v:  # a one-element list or object array
                return real_value(item, x, name)
            if hasattr(type(v), "__float__"):  # decimal.Decimal and the like
                return float(v)
        raise _not_a_number(name, v, x)
    if a.size != 1:
        raise ValueError("%s returned shape %s at x = %s; it must return a float for one point "
                         "(for a batch of points use vectorize=True)" % (name, a.shape, _point(x)))
    return float(a.reshape(()))


def scalar_value(v, x, name="log_prob"):
    """log p of one point x as a float. A tuple or list is emcee's
    (log p, *blobs): its first element is log p."""
    if type(v) is float:
        return v
    if isinstance(v, (tuple, list)):
        if not v:
            raise ValueError("%s returned an empty %s at x = %s" % (name, type(v).__name__, _point(x)))
        v = v[0]
    return real_value(v, x, name)


def batch_values(v, x, name="log_prob"):
    """log p of the batch of points x, (n, d), as an (n,) float64 array. A
    tuple whose first element holds n values is (log p, blobs)."""
    n = len(x)
    if isinstance(v, tuple) and v and np.ndim(v[0]) >= 1 and np.size(v[0]) == n:
        v = v[0]
    if isinstance(v, (str, bytes)) or v is None:
        raise _not_a_number(name, v, x[0] if n == 1 else "a batch of %d points" % n, batch=True)
    try:
        a = np.asarray(v)
    except Exception:
        raise _not_a_number(name, v, "a batch of %d points" % n, batch=True) from None
    if a.dtype.kind not in _NUMERIC:
        if (a.dtype.kind == "O" or not isinstance(v, np.ndarray)) and a.size == n:
            # A list with a non-number in it: name the first one and its point.
            items = v if isinstance(v, (list, tuple)) and len(v) == n else a.reshape(n)
            a = np.array([real_value(items[i], x[i], "%s (element %d of the batch)" % (name, i))
                          for i in range(n)])
        else:
            raise TypeError("%s with vectorize=True returned %s of dtype %s for a batch of %d "
                            "points; it must return %d numbers"
                            % (name, type(v).__name__, a.dtype, n, n))
    elif a.dtype != _f64:
        a = a.astype(_f64)
    if a.shape != (n,):
        if a.size == n and a.ndim <= 2:
            return a.reshape(n)
        raise ValueError("%s returned shape %s for a batch of %d points; with "
                         "vectorize=True it must return shape (%d,)" % (name, a.shape, n, n))
    return a
