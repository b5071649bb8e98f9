"""Reference problems with exact ln Z (see PROBLEMS.md), in numpy.

Each problem has ``log_prob(x)`` for one point of shape (d,) or a batch of
shape (n, d), ``bounds`` (shape (d, 2), or None), ``logz`` (exact ln Z) and,
where one exists, an exact sampler ``sample(n, seed)`` returning (n, d).
"""

import math

import numpy as np


class Problem:
    """A target density p(x) with known normalizing constant."""

    def __init__(self, name, dim, logz, log_prob, bounds=None, sampler=None, grad=None):
        self.name, self.dim, self.logz = name, dim, float(logz)
        self._log_prob = log_prob
        self.bounds = None if bounds is None else np.asarray(bounds, dtype=float)
        self._sampler = sampler
        self._grad = grad

    def log_prob_and_grad(self, x):
        """(log p, gradient of shape (d,)) at one point x of shape (d,);
        (-inf, zeros) outside the bounds."""
        x = np.asarray(x, dtype=float)
        lp = self.log_prob(x)
        if not np.isfinite(lp):
            return lp, np.zeros(self.dim)
        return lp, self._grad(x)

    def log_prob(self, x):
        """log p at x of shape (d,) (returns a float) or (n, d) (returns (n,))."""
        x = np.asarray(x, dtype=float)
        one = x.ndim == 1
        v = self._log_prob(np.atleast_2d(x))
        if self.bounds is not None:
            inside = np.all((x.reshape(-1, self.dim) > self.bounds[:, 0]) &
                            (x.reshape(-1, self.dim) < self.bounds[:, 1]), axis=1)
            v = np.where(inside, v, -np.inf)
        return float(v[0]) if one else v

    def sample(self, n, seed=None):
        """n exact independent draws, shape (n, d)."""
        if self._sampler is None:
            raise NotImplementedError("%s has no exact sampler" % self.name)
        return self._sampler(n, np.random.default_rng(seed))

    def __repr__(self):
        return "Problem(%r, dim=%d, logz=%.6f)" % (self.name, self.dim, self.logz)


def _box(d, lo, hi):
    return np.tile([lo, hi], (d, 1)).astype(float)


def funnel(d=16):
    """Neal's funnel: x1 ~ N(0, 1) on (-4, 4), x_i ~ N(0, exp(x1)^2) on
    (-30, 30), flat normalized prior. ln Z = -63.498811 for d = 16."""
    if d != 16:
        raise ValueError("only the 16-d funnel has a tabulated ln Z")
    bounds = np.vstack([[-4.0, 4.0], _box(d - 1, -30, 30)])
    logprior = -math.log(8) - (d - 1) * math.log(60)

    def log_prob(x):
        x1, rest = x[:, 0], x[:, 1:]
        return (logprior - 0.5 * x1 ** 2 - 0.5 * math.log(2 * math.pi)
                - 0.5 * np.sum(rest ** 2, axis=1) * np.exp(-2 * x1)
                - (d - 1) * (x1 + 0.5 * math.log(2 * math.pi)))

    def sampler(n, rng):
        out = np.empty((n, d))
        k = 0
        while k < n:
            x1 = rng.normal(size=2 * (n - k))
            x = np.column_stack([x1, rng.normal(size=(len(x1), d - 1)) * np.exp(x1)[:, None]])
            ok = np.all((x > bounds[:, 0]) & (x < bounds[:, 1]), axis=1)
            x = x[ok][: n - k]
            out[k:k + len(x)] = x
            k += len(x)
        return out

    def grad(x):
        x1, rest = x[0], x[1:]
        e = math.exp(-2 * x1)
        return np.concatenate([[-x1 + np.sum(rest ** 2) * e - (d - 1)], -rest * e])

    return Problem("funnel", d, -63.498811, log_prob, bounds, sampler, grad)


def gaussian(d, c=0.0, scale=1.0):
    """p(x) = exp(c) N(x; 0, scale^2 I): ln Z = c in any dimension."""

    def log_prob(x):
        return c - 0.5 * np.sum((x / scale) ** 2, axis=1) - d * (math.log(scale) + 0.5 * math.log(2 * math.pi))

    return Problem("gaussian-%d" % d, d, c, log_prob, None,
                   lambda n, rng: scale * rng.normal(size=(n, d)), lambda x: -x / scale ** 2)


def banana2():
    """The 2-d banana exp(-(y1^2 - y2)^2/0.01 - (y1 - 1)^2) without bounds:
    ln Z = ln(pi * 0.1)."""

    def log_prob(x):
        return -((x[:, 0] ** 2 - x[:, 1]) ** 2 / 0.01 + (x[:, 0] - 1) ** 2)

    def sampler(n, rng):
        y1 = 1 + rng.normal(size=n) / math.sqrt(2)
        return np.column_stack([y1, y1 ** 2 + rng.normal(size=n) * math.sqrt(0.005)])

    def grad(x):
        t = x[0] ** 2 - x[1]
        return np.array([-(4 * x[0] * t / 0.01 + 2 * (x[0] - 1)), 2 * t / 0.01])

    return Problem("banana-2", 2, math.log(math.pi * 0.1), log_prob, None, sampler, grad)


def _rotation(d, seed):
    q, r = np.linalg.qr(np.random.default_rng(seed).normal(size=(d, d)))
    q = q * np.sign(np.diag(r))
    if np.linalg.det(q) < 0:
        q[:, 0] = -q[:, 0]
    return q


def banana(d=32, seed=20191212):
    """The paper's banana in d (even) dimensions on the box (-15, 15)^d:
    16 (d/2) 2-d bananas in coordinates y = A x, A a random rotation.
    ln Z = -127.364000 for d = 32. ln Z does not depend on A; this A comes
    from numpy and differs from the Go package's."""
    if d != 32:
        raise ValueError("only the 32-d banana has a tabulated ln Z")
    a = _rotation(d, seed)
    logprior = -d * math.log(30)

    def log_prob(x):
        y = x @ a.T
        yo, ye = y[:, 0::2], y[:, 1::2]
        return logprior - np.sum((yo ** 2 - ye) ** 2 / 0.01 + (yo - 1) ** 2, axis=1)

    def grad(x):
        y = a @ x
        yo, ye = y[0::2], y[1::2]
        t = yo ** 2 - ye
        gy = np.empty(d)
        gy[0::2] = -(4 * yo * t / 0.01 + 2 * (yo - 1))
        gy[1::2] = 2 * t / 0.01
        return a.T @ gy

    def sampler(n, rng):
        yo = 1 + rng.normal(size=(n, d // 2)) / math.sqrt(2)
        y = np.empty((n, d))
        y[:, 0::2], y[:, 1::2] = yo, yo ** 2 + rng.normal(size=(n, d // 2)) * math.sqrt(0.005)
        return y @ a

    return Problem("banana", d, -127.364000, log_prob, _box(d, -15, 15), sampler, grad)


def cauchy(d=48):
    """Each coordinate a mixture of Cauchy(5, 1) and Cauchy(-5, 1) on
    (-100, 100), flat normalized prior; ln Z in closed form
    (-254.626548 for d = 48)."""
    def cdf(x, m):
        return 0.5 + math.atan(x - m) / math.pi

    mass = 0.5 * (cdf(100, 5) - cdf(-100, 5) + cdf(100, -5) - cdf(-100, -5))
    logz = d * (math.log(mass) - math.log(200))

    def dens(x, m):
        return 1 / (math.pi * (1 + (x - m) ** 2))

    def log_prob(x):
        return -d * math.log(200) + np.sum(np.log(0.5 * (dens(x, 5) + dens(x, -5))), axis=1)

    def grad(x):
        num = -2 * (x - 5) * math.pi * dens(x, 5) ** 2 - 2 * (x + 5) * math.pi * dens(x, -5) ** 2
        return num / (dens(x, 5) + dens(x, -5))

    def sampler(n, rng):
        m = np.where(rng.random((n, d)) < 0.5, 5.0, -5.0)
        lo, hi = 0.5 + np.arctan(-100 - m) / math.pi, 0.5 + np.arctan(100 - m) / math.pi
        u = lo + (hi - lo) * rng.random((n, d))
        return m + np.tan(math.pi * (u - 0.5))

    return Problem("cauchy", d, logz, log_prob, _box(d, -100, 100), sampler, grad)


def ring_logz(d, nodes=400):
    """ln Z of the d-dimensional ring on (-5, 5)^d: ln Tr(K^d) - d ln 10
    with K(x, y) = exp(-(x^2 + y^2 - 2)^2) discretized by Gauss-Legendre."""
    t, w = np.polynomial.legendre.leggauss(nodes)
    x, w = 5 * t, 5 * w
    k = np.exp(-(x[:, None] ** 2 + x[None, :] ** 2 - 2) ** 2)
    sw = np.sqrt(w)
    lam = np.linalg.eigvalsh(sw[:, None] * k * sw[None, :])
    top = np.max(np.abs(lam))
    return d * math.log(top) + math.log(np.sum((lam / top) ** d)) - d * math.log(10)


def ring(d=64):
    """The periodic ring -Σ (x_i^2 + x_{i+1}^2 - 2)^2 on (-5, 5)^d; no exact
    sampler (use NUTS). ln Z = -114.491835 for d = 64."""
    def log_prob(x):
        t = x ** 2 + np.roll(x, -1, axis=1) ** 2 - 2
        return -d * math.log(10) - np.sum(t ** 2, axis=1)

    def grad(x):
        t = x ** 2 + np.roll(x, -1) ** 2 - 2
        return -4 * x * (t + np.roll(t, 1))

    return Problem("ring", d, ring_logz(d), log_prob, _box(d, -5, 5), None, grad)


def all_problems():
    """The paper's four problems."""
    return [funnel(), banana(), cauchy(), ring()]


def by_name(name):
    """A problem by name: funnel, banana, cauchy, ring, banana-2 or gaussian-<d>."""
    fixed = {"funnel": funnel, "banana": banana, "cauchy": cauchy, "ring": ring, "banana-2": banana2}
    if name in fixed:
        return fixed[name]()
    if name.startswith("gaussian-") and name[9:].isdigit():
        return gaussian(int(name[9:]))
    raise ValueError("unknown problem %r: use funnel, banana, cauchy, ring, banana-2 or gaussian-<d>" % name)
