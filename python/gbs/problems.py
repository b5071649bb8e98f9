"""Reference target densities with exact ln Z, in vectorized numpy.

These are the four problems of Jia & Seljak (2019), "Normalizing Constant
Estimation with Gaussianized Bridge Sampling", plus Gaussian and Gaussian
mixture targets whose ln Z is known in closed form. Each is the product of
a likelihood L(x) and a flat, *normalized* prior on a box,

    p(x) = L(x) * prior(x),    prior(x) = 1 / prod_i (upper_i - lower_i)  inside,

so that the exact evidence is ln Z = ln integral p(x) dx. The definitions
and reference values are those of the "Reference problems" page of the
documentation and of the library's Go package ``problems``; the names
mirror the Go names:

===========================  ==  =============================  ===========
name                         d   prior box                      exact ln Z
===========================  ==  =============================  ===========
``funnel``                   16  x1 in (-4, 4), rest (-30, 30)  -63.498811
``banana``                   32  (-15, 15)^32                   -127.364000
``cauchy``                   48  (-100, 100)^48                 -254.626548
``ring``                     64  (-5, 5)^64                     -114.491835
``funnel-<d>`` etc.          d   as above                       computed
``gaussian-<d>``             d   none (unbounded)               0
``correlated-gaussian-<d>``  d   none                           0
``mixture-<d>``              d   none                           0
===========================  ==  =============================  ===========

Everything is in natural-log units and float64. Points are arrays of shape
``(d,)`` (one point) or ``(n, d)`` (a batch of n points, one per row); the
density functions return a float for one point and an ``(n,)`` array for a
batch. Outside the prior box ``log_prob`` is ``-inf``; a NaN coordinate
gives NaN.

The module needs numpy only and imports nothing else of ``gbs``, so it can
be loaded on its own, e.g. by benchmark scripts before the package is
built.

Example
-------
>>> from gbs import problems                               # doctest: +SKIP
>>> p = problems.funnel()
>>> x = p.sample(1000, seed=1)           # exact draws from p/Z, (1000, 16)
>>> p.log_prob(x).shape
(1000,)
>>> round(p.logz, 6)
-63.498811

Notes
-----
This module is a copy of the library's Go package ``problems``, kept so
that it loads without the compiled library. The random matrices (the banana's rotation A, the correlated Gaussian's
mean and covariance) are drawn with numpy's ``default_rng``, so they differ
from the Go package's (math/rand/v2 PCG) for the same seed. ln Z does not
depend on the banana's rotation (see :func:`banana`), and the correlated
Gaussian's ln Z is c whatever its parameters, so the exact values agree;
individual log-density values at a given x do not.

The Go package is the definition, and the package's tests hold this copy
to it: at random points inside and outside each box they compare log p
and its gradient (built with the Go package's rotation, mean and
covariance), the exact ln Z, the prior boxes and which problems have an
exact sampler.
"""

import functools
import math

import numpy as np

__all__ = [
    "Problem",
    "funnel",
    "banana",
    "banana2",
    "cauchy",
    "ring",
    "gaussian",
    "correlated_gaussian",
    "mixture",
    "all_problems",
    "by_name",
    "known_names",
    "funnel_logz",
    "banana_logz",
    "cauchy_logz",
    "ring_logz",
    "random_rotation",
    "BANANA_SEED",
    "CORRELATED_SEED",
]

#: Default seed of the banana's rotation (the Go package's BananaSeed; the
#: numpy rotation it gives is a different matrix, see :func:`banana`).
BANANA_SEED = 20191212

#: Seed of the ``correlated-gaussian-<d>`` problems of :func:`by_name`.
CORRELATED_SEED = 1

_HALF_LOG_2PI = 0.5 * math.log(2 * math.pi)
_MAX_BY_NAME_DIM = 100000

_FUNNEL_X1_BOUND = 4.0
_FUNNEL_BOUND = 30.0
_BANANA_BOUND = 15.0
_BANANA_CURV = 0.01  # the 0.01 of (y_{2i-1}^2 - y_{2i})^2 / 0.01
_CAUCHY_BOUND = 100.0
_CAUCHY_LOC = 5.0
_RING_BOUND = 5.0


# ---------------------------------------------------------------------------
# The Problem class
# ---------------------------------------------------------------------------


class Problem:
    """A target density p(x) = L(x) * prior(x) with a known ln Z.

    Parameters
    ----------
    name : str
        Identifier; for the built-in families ``by_name(name)`` builds the
        same problem again.
    dim : int
        Dimension d of the parameter space.
    logz : float
        Exact natural log of the normalizing constant, ln integral p(x) dx.
    log_likelihood : callable
        ``f(x) -> (n,)`` for a batch x of shape ``(n, d)``: ln L(x), defined
        (finite) everywhere, also outside the box.
    grad_log_likelihood : callable, optional
        ``g(x) -> (n, d)``: the gradient of ln L with respect to x, for a
        batch x of shape ``(n, d)``.
    lower, upper : array_like, optional
        Bounds of the flat, normalized prior box, shape ``(d,)`` each, or
        both None for an unbounded problem (then p = L and ln prior = 0).
        The box is open: points on its faces are outside.
    sampler : callable, optional
        ``s(n, rng) -> (n, d)``: n exact, independent draws from p/Z, all
        strictly inside the box, using only the ``numpy.random.Generator``
        rng. None if the problem has no exact sampler.
    description : str, optional
        One line on the definition, shown by ``repr``.

    Attributes
    ----------
    name, dim, logz, description
        As given.
    bounds : tuple of two (d,) arrays, or None
        ``(lower, upper)`` of the prior box. ``numpy.asarray(bounds)`` has
        shape (2, d); :attr:`box` has the (d, 2) layout (rows of low, high).
    lower, upper : (d,) arrays, or None
        The two halves of :attr:`bounds`.
    box : (d, 2) array, or None
        Rows of (low, high). Prefer it over :attr:`bounds` when a function
        accepts both layouts and d may be 2, where (2, d) and (d, 2) are
        ambiguous.
    log_prior_value : float
        ln prior inside the box, ``-sum(ln(upper - lower))`` (0 without box).

    Notes
    -----
    ``log_prob = log_likelihood + log_prior`` holds everywhere (with -inf
    outside the box). The arrays held by a problem are read-only, so a
    problem can be shared between threads.
    """

    def __init__(self, name, dim, logz, log_likelihood, grad_log_likelihood=None,
                 lower=None, upper=None, sampler=None, description="", loglike_and_grad=None):
        dim = int(dim)
        if dim < 1:
            raise ValueError("problems: dimension must be >= 1, not %d" % dim)
        if (lower is None) != (upper is None):
            raise ValueError("problems: give both lower and upper, or neither")
        self.name = str(name)
        self.dim = dim
        self.logz = float(logz)
        self.description = description
        self._loglike = log_likelihood
        self._grad = grad_log_likelihood
        # Both at once where they share work (the same values): the
        # per-step cost of a Python sampler's callback.
        self._both = loglike_and_grad
        self._sampler = sampler
        # The library's name of the same density (Go package problems),
        # set by the factories whose density the library holds too.
        self._native_name = None
        if lower is None:
            self.lower = self.upper = self.bounds = self.box = None
            self.log_prior_value = 0.0
        else:
            lo = np.array(lower, dtype=np.float64).reshape(-1)
            hi = np.array(upper, dtype=np.float64).reshape(-1)
            if lo.shape != (dim,) or hi.shape != (dim,):
                raise ValueError("problems: %s: bounds must have shape (%d,), not %s and %s"
                                 % (name, dim, lo.shape, hi.shape))
            if not np.all(hi > lo) or not np.all(np.isfinite(hi - lo)):
                raise ValueError("problems: %s: need finite lower < upper in every coordinate" % name)
            box = np.column_stack([lo, hi])
            for a in (lo, hi, box):
                a.flags.writeable = False
            self.lower, self.upper, self.box = lo, hi, box
            self.bounds = (lo, hi)
            self.log_prior_value = -float(np.sum(np.log(hi - lo)))

    # -- helpers ----------------------------------------------------------

    def _points(self, x):
        """x as a float (n, d) array and whether it was a single point."""
        x = np.asarray(x, dtype=np.float64)
        if x.ndim == 1 and x.shape[0] == self.dim:
            return x.reshape(1, self.dim), True
        if x.ndim == 2 and x.shape[1] == self.dim:
            return x, False
        raise ValueError("problems: %s: x must have shape (%d,) or (n, %d), not %s"
                         % (self.name, self.dim, self.dim, x.shape))

    def _outside(self, x):
        """(n,) bool: rows on or outside the box (NaN coordinates are not
        outside, so that NaN propagates)."""
        if self.lower is None:
            return np.zeros(x.shape[0], dtype=bool)
        return np.any((x <= self.lower) | (x >= self.upper), axis=1)

    # -- densities --------------------------------------------------------

    def log_likelihood(self, x):
        """ln L(x), the target without the prior.

        Parameters
        ----------
        x : array_like, shape (d,) or (n, d)

        Returns
        -------
        float, or (n,) ndarray
            Finite for finite x, also outside the box (the formula of the
            likelihood is evaluated as is), so that nested samplers can use
            it with :meth:`prior_transform`.
        """
        x, one = self._points(x)
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            v = self._loglike(x)
        return float(v[0]) if one else v

    def log_prior(self, x):
        """ln prior(x): :attr:`log_prior_value` inside the box, -inf on or
        outside it, NaN for a point with a NaN coordinate; 0 everywhere for
        an unbounded problem.

        Parameters
        ----------
        x : array_like, shape (d,) or (n, d)

        Returns
        -------
        float, or (n,) ndarray
        """
        x, one = self._points(x)
        v = np.full(x.shape[0], self.log_prior_value)
        if self.lower is not None:
            v[self._outside(x)] = -np.inf
            v[np.isnan(x).any(axis=1)] = np.nan
        return float(v[0]) if one else v

    def log_prob(self, x):
        """ln p(x) = ln L(x) + ln prior(x), the unnormalized target.

        Parameters
        ----------
        x : array_like, shape (d,) or (n, d)

        Returns
        -------
        float, or (n,) ndarray
            -inf on or outside the box, NaN where x has a NaN coordinate.
        """
        x, one = self._points(x)
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            v = self._loglike(x) + self.log_prior_value
        if self.lower is not None:
            v = np.where(self._outside(x), -np.inf, v)
        return float(v[0]) if one else v

    __call__ = log_prob

    def log_prob_and_grad(self, x):
        """ln p(x) and its gradient with respect to x.

        Parameters
        ----------
        x : array_like, shape (d,) or (n, d)

        Returns
        -------
        logp : float, or (n,) ndarray
        grad : (d,) or (n, d) ndarray
            The gradient of ln p (that of ln L: the prior is flat). Outside
            the box logp is -inf and the gradient is zero.
        """
        if self._grad is None:
            raise NotImplementedError("problems: %s has no gradient" % self.name)
        x, one = self._points(x)
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            if self._both is not None:
                v, g = self._both(x)
                v = v + self.log_prior_value
            else:
                v = self._loglike(x) + self.log_prior_value
                g = np.array(self._grad(x), dtype=np.float64).reshape(x.shape)
        if self.lower is not None:
            out = self._outside(x)
            if out.any():
                v = np.where(out, -np.inf, v)
                g[out] = 0.0
        if one:
            return float(v[0]), g[0]
        return v, g

    def inside(self, x):
        """Whether x lies strictly inside the box (any finite x for an
        unbounded problem).

        Parameters
        ----------
        x : array_like, shape (d,) or (n, d)

        Returns
        -------
        bool, or (n,) bool ndarray
        """
        x, one = self._points(x)
        if self.lower is None:
            v = np.all(np.isfinite(x), axis=1)
        else:
            v = np.all((x > self.lower) & (x < self.upper), axis=1)
        return bool(v[0]) if one else v

    def prior_transform(self, u):
        """Map the unit cube onto the prior box, for nested sampling.

        Parameters
        ----------
        u : array_like, shape (d,) or (n, d)
            Points of [0, 1]^d.

        Returns
        -------
        ndarray of the shape of u
            ``lower + u * (upper - lower)``: uniform u gives draws from the
            flat prior.

        Raises
        ------
        ValueError
            For an unbounded problem, which has no prior box.
        """
        if self.lower is None:
            raise ValueError("problems: %s is unbounded: it has no prior box to map the unit cube onto"
                             % self.name)
        u, one = self._points(u)
        x = self.lower + u * (self.upper - self.lower)
        return x[0] if one else x

    # -- exact draws ------------------------------------------------------

    @property
    def has_sampler(self):
        """Whether :meth:`sample` can draw exactly from p/Z."""
        return self._sampler is not None

    def sample(self, n, seed=None):
        """n exact, independent draws from p/Z.

        Parameters
        ----------
        n : int
            Number of draws, >= 0.
        seed : None, int, SeedSequence or numpy.random.Generator
            Passed to ``numpy.random.default_rng``; a Generator is used (and
            advanced) as is. The same integer seed gives the same draws.

        Returns
        -------
        (n, d) ndarray
            All rows strictly inside the prior box.

        Raises
        ------
        NotImplementedError
            If the problem has no exact sampler (the ring: use MCMC, e.g.
            NUTS).
        """
        if self._sampler is None:
            raise NotImplementedError("problems: %s has no exact sampler (use MCMC, e.g. NUTS)" % self.name)
        n = int(n)
        if n < 0:
            raise ValueError("problems: n must be >= 0, not %d" % n)
        rng = np.random.default_rng(seed)
        if n == 0:
            return np.empty((0, self.dim))
        return self._sampler(n, rng)

    def native(self):
        """The library's copy of this problem, evaluated without Python:
        a :class:`gbs.NativeDensity` for :func:`gbs.run` and
        :func:`gbs.sample`, thread-safe, with this problem's box as its
        ``bounds`` and ``logz``.

        Needs the compiled library (this module does not). Offered for
        the problems whose density the library defines identically:
        funnel, cauchy, ring, banana with the identity rotation,
        gaussian and mixture with their default parameters (the library
        draws the banana's and the correlated Gaussian's random matrices
        with another generator).

        Raises
        ------
        ValueError
            The library has no copy of this density.
        """
        if self._native_name is None:
            raise ValueError("problems: %s has no copy in the library (its parameters are this "
                             "module's own); use log_prob_and_grad" % self.name)
        from .native import native_problem
        return native_problem(self._native_name)

    def __repr__(self):
        return "Problem(%r, dim=%d, logz=%.6f%s)" % (
            self.name, self.dim, self.logz, ", " + self.description if self.description else "")


# ---------------------------------------------------------------------------
# Numerical helpers
# ---------------------------------------------------------------------------


def _composite_gl(lo, hi, panels, order):
    """Nodes and weights of a composite Gauss-Legendre rule: (lo, hi) cut
    into ``panels`` equal parts with ``order`` nodes each."""
    t, w = np.polynomial.legendre.leggauss(order)
    edges = np.linspace(lo, hi, panels + 1)
    a, b = edges[:-1, None], edges[1:, None]
    x = 0.5 * (b - a) * t[None, :] + 0.5 * (a + b)
    return x.ravel(), (0.5 * (b - a) * w[None, :]).ravel()


def _logsumexp(v):
    v = np.asarray(v, dtype=np.float64)
    m = np.max(v)
    if not np.isfinite(m):
        return float(m)
    return float(m + np.log(np.sum(np.exp(v - m))))


_erf = np.vectorize(math.erf, otypes=[np.float64])
_erfc = np.vectorize(math.erfc, otypes=[np.float64])


def _erf_diff(a, b):
    """erf(a) - erf(b) for a >= b, elementwise, through erfc on the side
    where both are close to +-1 so the difference keeps its precision."""
    a, b = np.broadcast_arrays(np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64))
    out = np.empty(a.shape)
    pos, neg = b >= 0, a <= 0
    mid = ~(pos | neg)
    out[pos] = _erfc(b[pos]) - _erfc(a[pos])
    out[neg] = _erfc(-a[neg]) - _erfc(-b[neg])
    out[mid] = _erf(a[mid]) - _erf(b[mid])
    return out


def random_rotation(d, seed=None):
    """A d x d Haar-random rotation matrix (orthogonal, det +1).

    Parameters
    ----------
    d : int
    seed : None, int, SeedSequence or numpy.random.Generator

    Returns
    -------
    (d, d) ndarray
        Q of the QR decomposition of a matrix of standard normal draws
        (``default_rng(seed).standard_normal((d, d))``), with the signs of
        its columns chosen so that R has a positive diagonal (which makes Q
        Haar-distributed), and its first row negated if the determinant is
        -1.
    """
    rng = np.random.default_rng(seed)
    q, r = np.linalg.qr(rng.standard_normal((d, d)))
    q = q * np.where(np.diag(r) < 0, -1.0, 1.0)[None, :]
    if np.linalg.det(q) < 0:
        q[0] = -q[0]
    return q


def _suffix_name(base, d, paper_dim):
    return base if d == paper_dim else "%s-%d" % (base, d)


def _check_dim(fn, d, minimum=1):
    if isinstance(d, bool) or int(d) != d or d < minimum:
        raise ValueError("problems: %s: dimension must be an integer >= %d, not %r" % (fn, minimum, d))
    return int(d)


# ---------------------------------------------------------------------------
# Funnel
# ---------------------------------------------------------------------------


class _Funnel:
    def __init__(self, d):
        self.d = d

    def loglike(self, x):
        x1 = x[:, 0]
        ss = np.einsum("ij,ij->i", x[:, 1:], x[:, 1:])
        m = self.d - 1
        return -self.d * _HALF_LOG_2PI - 0.5 * x1 * x1 - m * x1 - 0.5 * ss * np.exp(-2 * x1)

    def grad(self, x):
        x1 = x[:, 0]
        prec = np.exp(-2 * x1)
        ss = np.einsum("ij,ij->i", x[:, 1:], x[:, 1:])
        g = np.empty_like(x)
        g[:, 0] = -x1 - (self.d - 1) + ss * prec
        g[:, 1:] = -x[:, 1:] * prec[:, None]
        return g

    def loglike_and_grad(self, x):
        # loglike and grad (the same expressions, so the same values) with
        # the shared terms computed once.
        x1 = x[:, 0]
        xr = x[:, 1:]
        prec = np.exp(-2 * x1)
        ss = np.einsum("ij,ij->i", xr, xr)
        m = self.d - 1
        v = -self.d * _HALF_LOG_2PI - 0.5 * x1 * x1 - m * x1 - 0.5 * ss * prec
        g = np.empty_like(x)
        g[:, 0] = -x1 - m + ss * prec
        np.multiply(-xr, prec[:, None], out=g[:, 1:])
        return v, g

    def sample(self, n, rng):
        # Draw x1 ~ N(0, 1), then x_i | x1 ~ N(0, exp(x1)^2), and redraw
        # the *whole* vector when any coordinate leaves the box (redrawing
        # only the offending coordinate would sample another density).
        out = np.empty((n, self.d))
        k = 0
        while k < n:
            m = max(16, int(1.1 * (n - k)) + 16)
            x1 = rng.standard_normal(m)
            x = np.empty((m, self.d))
            x[:, 0] = x1
            x[:, 1:] = rng.standard_normal((m, self.d - 1)) * np.exp(x1)[:, None]
            ok = (np.abs(x1) < _FUNNEL_X1_BOUND) & np.all(np.abs(x[:, 1:]) < _FUNNEL_BOUND, axis=1)
            x = x[ok][: n - k]
            out[k:k + len(x)] = x
            k += len(x)
        return out


def funnel_logz(d):
    """Exact ln Z of the d-dimensional funnel.

    Integrates x_2..x_d in closed form and x1 by composite Gauss-Legendre
    (64 panels of 20 nodes on (-4, 4), converged to rounding error):

        Z = 1/8 * 60^-(d-1) * integral_{-4}^{4} N(t; 0, 1) erf(30 e^-t / sqrt 2)^(d-1) dt.
    """
    d = _check_dim("funnel_logz", d)
    t, w = _composite_gl(-_FUNNEL_X1_BOUND, _FUNNEL_X1_BOUND, 64, 20)
    mass = _erf(_FUNNEL_BOUND * np.exp(-t) / math.sqrt(2))
    terms = np.log(w) - _HALF_LOG_2PI - 0.5 * t * t + (d - 1) * np.log(mass)
    return _logsumexp(terms) - math.log(2 * _FUNNEL_X1_BOUND) - (d - 1) * math.log(2 * _FUNNEL_BOUND)


def funnel(d=16):
    """Neal's funnel of the paper (d = 16: ln Z = -63.498811).

    ::

        ln L(x) = ln N(x1; 0, 1) + sum_{i>=2} ln N(x_i; 0, sd = exp(x1))

    with the flat prior x1 in (-4, 4), x_2..x_d in (-30, 30). Note the
    *standard deviation* exp(x1) (variance exp(2 x1)): that is what the
    paper's reference value corresponds to.

    Parameters
    ----------
    d : int
        Dimension, >= 1.

    Returns
    -------
    Problem
        Named ``"funnel"`` for d = 16, else ``"funnel-<d>"``; ln Z from
        :func:`funnel_logz`; with gradient and exact sampler.
    """
    d = _check_dim("funnel", d)
    f = _Funnel(d)
    lo = np.full(d, -_FUNNEL_BOUND)
    hi = np.full(d, _FUNNEL_BOUND)
    lo[0], hi[0] = -_FUNNEL_X1_BOUND, _FUNNEL_X1_BOUND
    p = Problem(_suffix_name("funnel", d, 16), d, funnel_logz(d), f.loglike, f.grad, lo, hi, f.sample,
                "Neal's funnel, sd exp(x1)", loglike_and_grad=f.loglike_and_grad)
    p._native_name = p.name
    return p


# ---------------------------------------------------------------------------
# Banana
# ---------------------------------------------------------------------------


class _Banana:
    def __init__(self, d, a):
        self.d = d
        self.a = a  # (d, d) rotation, y = A x; None for the identity

    def _y(self, x):
        return x if self.a is None else x @ self.a.T

    def loglike(self, x):
        y = self._y(x)
        ya, yb = y[:, 0::2], y[:, 1::2]
        r = ya * ya - yb
        return -np.sum(r * r / _BANANA_CURV + (ya - 1) ** 2, axis=1)

    def grad(self, x):
        y = self._y(x)
        ya, yb = y[:, 0::2], y[:, 1::2]
        r = ya * ya - yb
        gy = np.empty_like(y)
        gy[:, 0::2] = -4 * ya * r / _BANANA_CURV - 2 * (ya - 1)
        gy[:, 1::2] = 2 * r / _BANANA_CURV
        return gy if self.a is None else gy @ self.a  # grad_x = A^T grad_y

    def draw_unbounded(self, n, rng):
        """Exact draws without the box: y_{2i-1} ~ N(1, 1/2),
        y_{2i} | y_{2i-1} ~ N(y_{2i-1}^2, 0.005), x = A^T y."""
        h = self.d // 2
        y = np.empty((n, self.d))
        ya = 1 + math.sqrt(0.5) * rng.standard_normal((n, h))
        y[:, 0::2] = ya
        y[:, 1::2] = ya * ya + math.sqrt(_BANANA_CURV / 2) * rng.standard_normal((n, h))
        return y if self.a is None else y @ self.a

    def sample(self, n, rng):
        out = np.empty((n, self.d))
        k = 0
        while k < n:
            m = (n - k) + 16
            x = self.draw_unbounded(m, rng)
            x = x[np.all(np.abs(x) < _BANANA_BOUND, axis=1)][: n - k]
            out[k:k + len(x)] = x
            k += len(x)
        return out


def banana_logz(d, rotation=None):
    """Exact ln Z of the d-dimensional banana on (-15, 15)^d.

    Parameters
    ----------
    d : int
        Even dimension.
    rotation : (d, d) array, or None
        A of y = A x; None for the identity.

    Returns
    -------
    float
        For the identity (any d) and for d = 2 the value includes the mass
        that the box cuts off (about 2.4e-5 per pair for the identity): a
        1-D composite Gauss-Legendre quadrature over y1 of the exact y2
        integral on the interval the box leaves. For a rotation in d > 2 it
        is the untruncated closed form ``(d/2) ln(0.1 pi) - d ln 30``: a
        random rotation spreads each y over all coordinates, and the box
        holds the whole mass to better than 5e-7 for d = 32 (checked by
        the tests).
    """
    d = _check_dim("banana_logz", d, 2)
    if d % 2:
        raise ValueError("problems: banana: dimension %d is not even" % d)
    log_prior = -d * math.log(2 * _BANANA_BOUND)
    if rotation is None:
        return (d // 2) * _banana_pair_logz(np.eye(2)) + log_prior
    if d == 2:
        return _banana_pair_logz(np.asarray(rotation, dtype=np.float64)) + log_prior
    return (d // 2) * math.log(math.pi * math.sqrt(_BANANA_CURV)) + log_prior


@functools.lru_cache(maxsize=16)
def _banana_pair_logz_cached(a00, a01, a10, a11):
    a = np.array([[a00, a01], [a10, a11]])
    y1, w = _composite_gl(-7.0, 9.0, 3200, 10)
    lo = np.full_like(y1, -np.inf)
    hi = np.full_like(y1, np.inf)
    empty = np.zeros(y1.shape, dtype=bool)
    for j in range(2):
        # x_j = A_0j y1 + A_1j y2 must lie in (-15, 15).
        c0, c1 = a[0, j] * y1, a[1, j]
        if abs(c1) < 1e-300:
            empty |= np.abs(c0) >= _BANANA_BOUND
            continue
        l, h = (-_BANANA_BOUND - c0) / c1, (_BANANA_BOUND - c0) / c1
        lo, hi = np.maximum(lo, np.minimum(l, h)), np.minimum(hi, np.maximum(l, h))
    keep = (hi > lo) & ~empty
    s = math.sqrt(_BANANA_CURV)
    t = y1[keep]
    inner = 0.5 * math.sqrt(math.pi) * s * _erf_diff((hi[keep] - t * t) / s, (lo[keep] - t * t) / s)
    return math.log(np.sum(w[keep] * np.exp(-(t - 1) ** 2) * inner))


def _banana_pair_logz(a):
    """ln of the integral of exp(-(y1^2-y2)^2/0.01 - (y1-1)^2) over x in
    (-15, 15)^2 with y = A x, for a 2 x 2 rotation A (no prior factor)."""
    return _banana_pair_logz_cached(*(float(v) for v in np.asarray(a).ravel()))


def banana(d=32, seed=BANANA_SEED, rotation=None):
    """The paper's rotated banana (d = 32: ln Z = -127.364000).

    ::

        ln L(x) = -sum_{i=1}^{d/2} [ (y_{2i-1}^2 - y_{2i})^2 / 0.01 + (y_{2i-1} - 1)^2 ],   y = A x,

    with the flat prior on (-15, 15)^d and A a fixed random rotation.

    Parameters
    ----------
    d : int
        Even dimension, >= 2.
    seed : None, int or SeedSequence
        Seed of A, ``random_rotation(d, seed)`` (numpy's default_rng). The
        Go package draws its A with a different generator, so the matrices
        differ; ln Z does not depend on A (see :func:`banana_logz`).
    rotation : (d, d) array, optional
        An explicit orthogonal A (e.g. ``numpy.eye(d)``, or the Go
        package's ``BananaRotation``) instead of a seeded one.

    Returns
    -------
    Problem
        ``"banana"`` for d = 32 and the default seed, ``"banana-<d>"`` for
        other d, ``"banana-<d>-seed<s>"`` for other seeds,
        ``"banana-<d>-identity"`` for A = I, ``"banana-<d>-custom"`` for
        another explicit A; with gradient and exact sampler (each pair
        drawn exactly, x = A^T y, whole vector redrawn in the rare case it
        leaves the box). The rotation is the attribute ``rotation`` of the
        returned problem.
    """
    d = _check_dim("banana", d, 2)
    if d % 2:
        raise ValueError("problems: banana: dimension %d is not even" % d)
    if rotation is None:
        a = random_rotation(d, seed)
        if seed == BANANA_SEED:
            name = _suffix_name("banana", d, 32)
        else:
            name = "banana-%d-seed%s" % (d, seed)
    else:
        a = np.array(rotation, dtype=np.float64)
        if a.shape != (d, d):
            raise ValueError("problems: banana: rotation must have shape (%d, %d), not %s" % (d, d, a.shape))
        if not np.allclose(a @ a.T, np.eye(d), atol=1e-10):
            raise ValueError("problems: banana: rotation is not orthogonal")
        if np.array_equal(a, np.eye(d)):
            a, name = None, "banana-%d-identity" % d
        else:
            name = "banana-%d-custom" % d
    if a is not None:
        a.flags.writeable = False
    b = _Banana(d, a)
    box = np.full(d, _BANANA_BOUND)
    p = Problem(name, d, banana_logz(d, a), b.loglike, b.grad, -box, box, b.sample,
                "rotated banana, curvature 0.01")
    p.rotation = np.eye(d) if a is None else a
    if a is None:
        p._native_name = name
    return p


class _Banana2:
    def loglike(self, x):
        r = x[:, 0] ** 2 - x[:, 1]
        return -(r * r / _BANANA_CURV + (x[:, 0] - 1) ** 2)

    def grad(self, x):
        r = x[:, 0] ** 2 - x[:, 1]
        return np.column_stack([-4 * x[:, 0] * r / _BANANA_CURV - 2 * (x[:, 0] - 1), 2 * r / _BANANA_CURV])

    def sample(self, n, rng):
        y1 = 1 + math.sqrt(0.5) * rng.standard_normal(n)
        return np.column_stack([y1, y1 * y1 + math.sqrt(_BANANA_CURV / 2) * rng.standard_normal(n)])


def banana2():
    """One unbounded 2-d banana, ``exp(-(x1^2 - x2)^2 / 0.01 - (x1 - 1)^2)``.

    No prior box, no rotation: ln Z = ln(0.1 pi) exactly. Named
    ``"banana-2-unbounded"`` (a Python-only problem; ``"banana-2"`` is the
    boxed, rotated :func:`banana` with d = 2, as in the Go package).
    """
    b = _Banana2()
    return Problem("banana-2-unbounded", 2, math.log(math.pi * math.sqrt(_BANANA_CURV)), b.loglike, b.grad,
                   sampler=b.sample, description="unbounded 2-d banana")


# ---------------------------------------------------------------------------
# Cauchy mixture
# ---------------------------------------------------------------------------


class _Cauchy:
    def __init__(self, d):
        self.d = d
        self.c1 = math.log(0.5 / math.pi)

    def loglike(self, x):
        a, b = x - _CAUCHY_LOC, x + _CAUCHY_LOC
        return self.d * self.c1 + np.sum(np.log(1 / (1 + a * a) + 1 / (1 + b * b)), axis=1)

    def grad(self, x):
        a, b = x - _CAUCHY_LOC, x + _CAUCHY_LOC
        u, w = 1 / (1 + a * a), 1 / (1 + b * b)
        return -2 * (a * u * u + b * w * w) / (u + w)

    def sample(self, n, rng):
        # Each coordinate from the mixture truncated to (-100, 100): both
        # components lose the same mass to the box, so each is picked with
        # probability 1/2; then inversion in angle space, x = m + tan(theta)
        # with theta uniform between the angles of the box ends (precise in
        # the tails). Rounding can land on an end: draw those again.
        shape = (n, self.d)
        m = np.where(rng.random(shape) < 0.5, -_CAUCHY_LOC, _CAUCHY_LOC)
        lo, hi = np.arctan(-_CAUCHY_BOUND - m), np.arctan(_CAUCHY_BOUND - m)
        x = m + np.tan(lo + (hi - lo) * rng.random(shape))
        bad = ~((x > -_CAUCHY_BOUND) & (x < _CAUCHY_BOUND))
        while bad.any():
            k = int(bad.sum())
            x[bad] = m[bad] + np.tan(lo[bad] + (hi[bad] - lo[bad]) * rng.random(k))
            bad = ~((x > -_CAUCHY_BOUND) & (x < _CAUCHY_BOUND))
        return x


def cauchy_logz(d):
    """Exact ln Z of the d-dimensional Cauchy mixture: d times
    ``ln((atan 95 + atan 105) / pi) - ln 200`` (closed form from the Cauchy
    CDF on (-100, 100))."""
    d = _check_dim("cauchy_logz", d)
    mass = (math.atan(_CAUCHY_BOUND - _CAUCHY_LOC) + math.atan(_CAUCHY_BOUND + _CAUCHY_LOC)) / math.pi
    return d * (math.log(mass) - math.log(2 * _CAUCHY_BOUND))


def cauchy(d=48):
    """The paper's product of Cauchy mixtures (d = 48: ln Z = -254.626548).

    ::

        ln L(x) = sum_i ln( [Cauchy(x_i; 5, 1) + Cauchy(x_i; -5, 1)] / 2 ),

    with the flat prior on (-100, 100)^d; bimodal in every coordinate, so
    2^d modes.

    Parameters
    ----------
    d : int
        Dimension, >= 1.

    Returns
    -------
    Problem
        ``"cauchy"`` for d = 48, else ``"cauchy-<d>"``; ln Z from
        :func:`cauchy_logz`; with gradient and exact sampler.
    """
    d = _check_dim("cauchy", d)
    c = _Cauchy(d)
    box = np.full(d, _CAUCHY_BOUND)
    p = Problem(_suffix_name("cauchy", d, 48), d, cauchy_logz(d), c.loglike, c.grad, -box, box, c.sample,
                "Cauchy mixture, modes at +-5")
    p._native_name = p.name
    return p


# ---------------------------------------------------------------------------
# Ring
# ---------------------------------------------------------------------------


class _Ring:
    def __init__(self, d):
        self.d = d

    def _t(self, x):
        x2 = x * x
        return x2 + np.roll(x2, -1, axis=1) - 2  # t_i = x_i^2 + x_{i+1}^2 - 2, x_{d+1} = x_1

    def loglike(self, x):
        t = self._t(x)
        return -np.einsum("ij,ij->i", t, t)

    def grad(self, x):
        # Term i involves x_i and x_{i+1}: d/dx_i = -4 x_i (t_i + t_{i-1}).
        # For d = 1 both are x_1 and the two contributions add up.
        t = self._t(x)
        return -4 * x * (t + np.roll(t, 1, axis=1))


@functools.lru_cache(maxsize=8)
def _ring_eigenvalues(panels, order):
    x, w = _composite_gl(-_RING_BOUND, _RING_BOUND, panels, order)
    t = x[:, None] ** 2 + x[None, :] ** 2 - 2
    sw = np.sqrt(w)
    lam = np.linalg.eigvalsh(sw[:, None] * np.exp(-t * t) * sw[None, :])
    lam = lam[np.argsort(-np.abs(lam))]
    lam.flags.writeable = False
    return lam


def ring_logz(n, panels=30, order=12):
    """Exact ln Z of the n-dimensional periodic ring on (-5, 5)^n.

    The chain is periodic, so Z = 10^-n Tr(K^n) with the kernel
    K(x, y) = exp(-(x^2 + y^2 - 2)^2) on (-5, 5). K is discretized on
    composite Gauss-Legendre nodes (Nystrom; ``panels`` x ``order`` nodes,
    360 by default), and with the eigenvalues lambda of W^1/2 K W^1/2,

        ln Z = n ln lambda_0 + ln(1 + sum_{k>0} (lambda_k / lambda_0)^n) - n ln 10,

    where lambda_0 > 0 is the leading (Perron-Frobenius) eigenvalue. The
    kernel is entire and below e^-49 for abs(x) > 3, so the eigenvalues
    converge exponentially: the default rule is converged to ~1e-12.

    Parameters
    ----------
    n : int
        Dimension, >= 1.
    panels, order : int
        The quadrature rule.

    Returns
    -------
    float
        -28.622683 for n = 16, -57.245917 for n = 32, -114.491835 for n = 64.
    """
    n = _check_dim("ring_logz", n)
    lam = _ring_eigenvalues(int(panels), int(order))
    l0 = lam[0]
    if not l0 > 0:
        raise ArithmeticError("problems: ring: leading eigenvalue %g is not positive" % l0)
    rest = float(np.sum((lam[1:] / l0) ** n))
    return n * math.log(l0) + math.log1p(rest) - n * math.log(2 * _RING_BOUND)


def ring(d=64):
    """The paper's periodic ring (d = 64: ln Z = -114.491835).

    ::

        ln L(x) = -sum_{i=1}^{d} (x_i^2 + x_{i+1}^2 - 2)^2,   x_{d+1} = x_1,

    with the flat prior on (-5, 5)^d. (The paper's equation 7 has an extra
    outer square; its reference value uses this form.)

    Parameters
    ----------
    d : int
        Dimension, >= 1 (the paper's ring has d >= 3; for d = 1, 2 the
        terms repeat).

    Returns
    -------
    Problem
        ``"ring"`` for d = 64, else ``"ring-<d>"``; ln Z from
        :func:`ring_logz`; with gradient, and *no* exact sampler
        (:meth:`Problem.sample` raises NotImplementedError).
    """
    d = _check_dim("ring", d)
    r = _Ring(d)
    box = np.full(d, _RING_BOUND)
    p = Problem(_suffix_name("ring", d, 64), d, ring_logz(d), r.loglike, r.grad, -box, box, None,
                "periodic ring")
    p._native_name = p.name
    return p


# ---------------------------------------------------------------------------
# Gaussians and a Gaussian mixture (unbounded, ln Z = c)
# ---------------------------------------------------------------------------


class _Gaussian:
    def __init__(self, mean, cov, c):
        d = len(mean)
        self.mean = mean
        try:
            chol = np.linalg.cholesky(cov)
        except np.linalg.LinAlgError:
            raise ValueError("problems: gaussian: covariance is not positive definite") from None
        self.chol = chol  # cov = L L^T
        self.linv = np.linalg.inv(chol)
        self.prec = self.linv.T @ self.linv
        self.lognorm = c - d * _HALF_LOG_2PI - float(np.sum(np.log(np.diag(chol))))
        for a in (self.mean, self.chol, self.linv, self.prec):
            a.flags.writeable = False

    def loglike(self, x):
        z = (x - self.mean) @ self.linv.T
        return self.lognorm - 0.5 * np.einsum("ij,ij->i", z, z)

    def grad(self, x):
        return -(x - self.mean) @ self.prec

    def sample(self, n, rng):
        return self.mean + rng.standard_normal((n, len(self.mean))) @ self.chol.T


def gaussian(d, c=0.0, mean=None, cov=None):
    """p(x) = exp(c) N(x; mean, cov), whose ln Z is c in any dimension.

    Parameters
    ----------
    d : int
        Dimension, >= 1.
    c : float
        ln Z.
    mean : (d,) array, optional
        Default zeros.
    cov : (d, d) array, optional
        Symmetric positive definite; default the identity.

    Returns
    -------
    Problem
        ``"gaussian-<d>"``; unbounded (no prior box: ``bounds`` is None,
        ``log_prior`` is 0, ``prior_transform`` raises); with gradient and
        exact sampler (mean + L z with cov = L L^T).
    """
    d = _check_dim("gaussian", d)
    if not math.isfinite(c):
        raise ValueError("problems: gaussian: c is not finite")
    mu = np.zeros(d) if mean is None else np.array(mean, dtype=np.float64).reshape(-1)
    sigma = np.eye(d) if cov is None else np.array(cov, dtype=np.float64)
    if mu.shape != (d,) or sigma.shape != (d, d):
        raise ValueError("problems: gaussian: mean must have shape (%d,) and cov (%d, %d), not %s and %s"
                         % (d, d, d, mu.shape, sigma.shape))
    if not (np.all(np.isfinite(mu)) and np.all(np.isfinite(sigma))):
        raise ValueError("problems: gaussian: mean and cov must be finite")
    if not np.allclose(sigma, sigma.T, rtol=1e-12, atol=0):
        raise ValueError("problems: gaussian: covariance is not symmetric")
    g = _Gaussian(mu, sigma, float(c))
    p = Problem("gaussian-%d" % d, d, c, g.loglike, g.grad, sampler=g.sample, description="Gaussian")
    p.mean, p.cov = g.mean, sigma
    p.cov.flags.writeable = False
    if mean is None and cov is None and c == 0:
        p._native_name = p.name
    return p


def correlated_gaussian(d, seed=CORRELATED_SEED, c=0.0):
    """exp(c) N(mu, Sigma) with a random mean and a dense random covariance
    of condition number exactly 100; ln Z = c.

    Sigma = Q^T diag(lambda) Q with Q = ``random_rotation`` and eigenvalues
    log-spaced from 0.1 to 10 (standard deviations 0.32 to 3.2 along the
    principal axes); mu_i ~ N(0, 1). Q and then mu are drawn from one
    ``numpy.random.default_rng(seed)`` (not the Go package's generator, so
    the matrices differ from Go's for the same seed).

    Parameters
    ----------
    d : int
        Dimension, >= 1.
    seed : None, int or SeedSequence
    c : float
        ln Z.

    Returns
    -------
    Problem
        ``"correlated-gaussian-<d>"`` for the default seed, else
        ``"correlated-gaussian-<d>-seed<s>"``; unbounded; attributes
        ``mean`` and ``cov``.
    """
    d = _check_dim("correlated_gaussian", d)
    rng = np.random.default_rng(seed)
    q = random_rotation(d, rng)
    mu = rng.standard_normal(d)
    lam = np.logspace(-1, 1, d) if d > 1 else np.ones(1)
    cov = (q.T * lam) @ q
    cov = 0.5 * (cov + cov.T)
    p = gaussian(d, c, mu, cov)
    p.name = "correlated-gaussian-%d" % d + ("" if seed == CORRELATED_SEED else "-seed%s" % seed)
    p.description = "correlated Gaussian, condition number 100"
    return p


class _Mixture:
    def __init__(self, d, weights, means, sds, c):
        self.d = d
        self.cum = np.cumsum(weights)
        self.cum[-1] = 1.0
        self.means, self.sds = means, sds
        self.logw = np.log(weights) + c - d * (_HALF_LOG_2PI + np.log(sds))

    def _comp(self, x):
        # (n, k): ln w_k + c + ln N(x; mu_k, sd_k^2 I)
        diff = x[:, None, :] - self.means[None, :, :]
        ss = np.einsum("nkd,nkd->nk", diff, diff)
        return self.logw[None, :] - 0.5 * ss / self.sds[None, :] ** 2, diff

    def loglike(self, x):
        lc, _ = self._comp(x)
        m = np.max(lc, axis=1)
        return m + np.log(np.sum(np.exp(lc - m[:, None]), axis=1))

    def grad(self, x):
        lc, diff = self._comp(x)
        r = np.exp(lc - np.max(lc, axis=1, keepdims=True))
        r /= r.sum(axis=1, keepdims=True)
        return -np.einsum("nk,nkd->nd", r / self.sds[None, :] ** 2, diff)

    def sample(self, n, rng):
        k = np.searchsorted(self.cum, rng.random(n), side="right")
        k = np.minimum(k, len(self.sds) - 1)
        return self.means[k] + self.sds[k, None] * rng.standard_normal((n, self.d))


def mixture(d, weights=(0.3, 0.7), means=(-1.0, 1.0), sds=(0.5, 1.0), c=0.0):
    """exp(c) times a mixture of isotropic Gaussians; ln Z = c.

    The defaults are the Go package's ``StandardMixture``: weights 0.3 and
    0.7, means -1 and +1 in every coordinate, standard deviations 0.5 and
    1. Its modes are 2 sqrt(d) apart, a test of multimodality.

    Parameters
    ----------
    d : int
        Dimension, >= 1.
    weights : (k,) array_like
        Positive; normalized here.
    means : (k,) or (k, d) array_like
        A scalar per component (the same in every coordinate) or full mean
        vectors.
    sds : (k,) array_like
        Positive standard deviations, one per component.
    c : float
        ln Z.

    Returns
    -------
    Problem
        ``"mixture-<d>"``; unbounded; with gradient and exact sampler.
    """
    d = _check_dim("mixture", d)
    w = np.array(weights, dtype=np.float64).reshape(-1)
    sd = np.array(sds, dtype=np.float64).reshape(-1)
    mu = np.array(means, dtype=np.float64)
    k = len(w)
    if mu.ndim == 1:
        mu = np.repeat(mu[:, None], d, axis=1)
    if k == 0 or sd.shape != (k,) or mu.shape != (k, d):
        raise ValueError("problems: mixture: %d weights, sds of shape %s and means of shape %s do not match d = %d"
                         % (k, sd.shape, mu.shape, d))
    if not (np.all(w > 0) and np.all(np.isfinite(w)) and np.all(sd > 0) and np.all(np.isfinite(sd))
            and np.all(np.isfinite(mu)) and math.isfinite(c)):
        raise ValueError("problems: mixture: weights and sds must be positive and finite, means and c finite")
    m = _Mixture(d, w / w.sum(), mu, sd, float(c))
    p = Problem("mixture-%d" % d, d, c, m.loglike, m.grad, sampler=m.sample, description="Gaussian mixture")
    if (tuple(weights), tuple(np.ravel(means)), tuple(sds), c) == ((0.3, 0.7), (-1.0, 1.0), (0.5, 1.0), 0.0):
        p._native_name = p.name
    return p


# ---------------------------------------------------------------------------
# Lookup
# ---------------------------------------------------------------------------


def all_problems():
    """New instances of the paper's four problems, in its order: funnel
    (d=16), banana (d=32), cauchy (d=48), ring (d=64)."""
    return [funnel(), banana(), cauchy(), ring()]


_FAMILIES = [
    # prefix, suffix, minimum d, must be even, constructor
    ("funnel-", "", 1, False, funnel),
    ("banana-", "-identity", 2, True, lambda d: banana(d, rotation=np.eye(d))),
    ("banana-", "-unbounded", 2, True, None),  # only banana-2-unbounded, handled below
    ("banana-", "", 2, True, banana),
    ("cauchy-", "", 1, False, cauchy),
    ("ring-", "", 1, False, ring),
    ("correlated-gaussian-", "", 1, False, correlated_gaussian),
    ("gaussian-", "", 1, False, gaussian),
    ("mixture-", "", 1, False, mixture),
]


def known_names():
    """The name forms :func:`by_name` accepts, sorted."""
    return sorted(["funnel", "banana", "cauchy", "ring", "funnel-<d>", "banana-<d>", "banana-<d>-identity",
                   "banana-2-unbounded", "cauchy-<d>", "ring-<d>", "gaussian-<d>", "correlated-gaussian-<d>",
                   "mixture-<d>"])


def by_name(name):
    """The problem with the given name, as in the Go package's ByName.

    Known names (case-insensitive)::

        funnel, banana, cauchy, ring   the paper's problems (d = 16, 32, 48, 64)
        funnel-<d>                     funnel(d), d >= 1
        banana-<d>                     banana(d), d even, default seed
        banana-<d>-identity            banana with A = I, d even
        banana-2-unbounded             banana2() (Python only)
        cauchy-<d>                     cauchy(d)
        ring-<d>                       ring(d)
        gaussian-<d>                   standard normal N(0, I_d), ln Z = 0
        correlated-gaussian-<d>        correlated_gaussian(d, CORRELATED_SEED)
        mixture-<d>                    mixture(d)

    Raises
    ------
    ValueError
        For an unknown or malformed name (the message lists the known
        forms) or a dimension out of range for its family.
    """
    n = str(name).strip().lower()
    fixed = {"funnel": funnel, "banana": banana, "cauchy": cauchy, "ring": ring, "banana-2-unbounded": banana2}
    if n in fixed:
        return fixed[n]()
    for prefix, suffix, minimum, even, make in _FAMILIES:
        if make is None or not n.startswith(prefix) or not n.endswith(suffix):
            continue
        num = n[len(prefix):len(n) - len(suffix)]
        if not num.isdigit():
            continue
        d = int(num)
        if d < minimum or (even and d % 2) or d > _MAX_BY_NAME_DIM:
            raise ValueError("problems: %r: dimension %d out of range for this family (min %d, max %d, even: %s)"
                             % (name, d, minimum, _MAX_BY_NAME_DIM, even))
        return make(d)
    raise ValueError("problems: unknown problem %r; known: %s" % (name, ", ".join(known_names())))
