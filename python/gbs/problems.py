"""Reference problems with exact ln Z (see PROBLEMS.md), in numpy.

Each problem has ``log_prob(x)`` for one point of shape (d,) or a batch of
shape (n, d), ``bounds`` (shape (d, 2), or None), ``logz`` (exact ln Z) and,
where one exists, an exact sampler ``sample(n, seed)`` returning (n, d).
"""

import math

import numpy as np


class Problem:
    """A target density p(x) with known normalizing constant."""

    def __init__(self, name, dim, logz, log_prob, bounds=None, sampler=None):
        self.name, self.dim, self.logz = name, dim, float(logz)
        self._log_prob = log_prob
        self.bounds = None if bounds is None else np.asarray(bounds, dtype=float)
        self._sampler = sampler

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

    return Problem("funnel", d, -63.498811, log_prob, bounds, sampler)


def gaussian(d, c=0.0, scale=1.0):
    """p(x) = exp(c) N(x; 0, scale^2 I): ln Z = c in any dimension."""

    def log_prob(x):
        return c - 0.5 * np.sum((x / scale) ** 2, axis=1) - d * (math.log(scale) + 0.5 * math.log(2 * math.pi))

    return Problem("gaussian-%d" % d, d, c, log_prob, None,
                   lambda n, rng: scale * rng.normal(size=(n, d)))


def banana2():
    """The 2-d banana exp(-(y1^2 - y2)^2/0.01 - (y1 - 1)^2) without bounds:
    ln Z = ln(pi * 0.1)."""

    def log_prob(x):
        return -((x[:, 0] ** 2 - x[:, 1]) ** 2 / 0.01 + (x[:, 0] - 1) ** 2)

    def sampler(n, rng):
        y1 = 1 + rng.normal(size=n) / math.sqrt(2)
        return np.column_stack([y1, y1 ** 2 + rng.normal(size=n) * math.sqrt(0.005)])

    return Problem("banana-2", 2, math.log(math.pi * 0.1), log_prob, None, sampler)
