"""Conjugate models with exact evidence and exact posterior draws, shared
by the PyMC and NumPyro adapter tests. Each function returns the data, the
exact ln Z and exact posterior draws (chains, draws, ...) by name."""

import math

import numpy as np
from scipy import special, stats

CHAINS, DRAWS = 4, 1000


def normal_mean(seed=0, n=20, s0=2.0):
    """y_i ~ N(mu, 1), mu ~ N(0, s0^2)."""
    rng = np.random.default_rng(seed)
    y = rng.normal(1.0, 1.0, size=n)
    prec = 1 / s0 ** 2 + n
    logz = (-0.5 * n * math.log(2 * math.pi) - 0.5 * math.log(s0 ** 2 * prec)
            - 0.5 * (y @ y - y.sum() ** 2 / prec))
    mu = rng.normal(y.sum() / prec, prec ** -0.5, size=(CHAINS, DRAWS))
    return {"y": y, "s0": s0}, logz, {"mu": mu}


def beta_binomial(seed=0, n=30, a=2.0, b=3.0):
    """k ~ Binomial(n, p), p ~ Beta(a, b)."""
    rng = np.random.default_rng(seed)
    k = int(rng.binomial(n, 0.3))
    logz = (math.log(math.comb(n, k)) + special.betaln(a + k, b + n - k) - special.betaln(a, b))
    p = rng.beta(a + k, b + n - k, size=(CHAINS, DRAWS))
    return {"n": n, "k": k, "a": a, "b": b}, logz, {"p": p}


def gamma_poisson(seed=0, n=15, alpha=3.0, beta=1.5):
    """y_i ~ Poisson(lam), lam ~ Gamma(alpha, rate=beta)."""
    rng = np.random.default_rng(seed)
    y = rng.poisson(2.5, size=n)
    s = y.sum()
    logz = (alpha * math.log(beta) - special.gammaln(alpha) + special.gammaln(alpha + s)
            - (alpha + s) * math.log(beta + n) - special.gammaln(y + 1).sum())
    lam = rng.gamma(alpha + s, 1 / (beta + n), size=(CHAINS, DRAWS))
    return {"y": y, "alpha": alpha, "beta": beta}, logz, {"lam": lam}


def dirichlet_multinomial(seed=0, alpha=(1.0, 2.0, 1.5, 0.5)):
    """counts ~ Multinomial(N, p), p ~ Dirichlet(alpha)."""
    rng = np.random.default_rng(seed)
    alpha = np.asarray(alpha)
    counts = rng.multinomial(40, [0.1, 0.4, 0.3, 0.2])
    N = counts.sum()
    logz = (special.gammaln(N + 1) - special.gammaln(counts + 1).sum()
            + special.gammaln(alpha.sum()) - special.gammaln(alpha.sum() + N)
            + (special.gammaln(alpha + counts) - special.gammaln(alpha)).sum())
    p = rng.dirichlet(alpha + counts, size=(CHAINS, DRAWS))
    return {"counts": counts, "alpha": alpha}, logz, {"p": p}


def regression(seed=0, n=40, k=3, a0=3.0, b0=2.0, v0=4.0, X=None, y=None):
    """y ~ N(X beta, sigma2 I), beta | sigma2 ~ N(0, sigma2 v0 I),
    sigma2 ~ InvGamma(a0, b0): the normal-inverse-gamma conjugate prior."""
    rng = np.random.default_rng(seed)
    if X is None:
        X = rng.normal(size=(n, k))
        y = X @ np.linspace(1.0, -0.5, k) + rng.normal(0, 0.8, size=n)
    n, k = X.shape
    V0inv = np.eye(k) / v0
    Vn = np.linalg.inv(V0inv + X.T @ X)
    mn = Vn @ X.T @ y
    an = a0 + n / 2
    bn = b0 + 0.5 * (y @ y - mn @ np.linalg.solve(Vn, mn))
    logz = (-n / 2 * math.log(2 * math.pi) + 0.5 * (np.linalg.slogdet(Vn)[1] - k * math.log(v0))
            + a0 * math.log(b0) - an * math.log(bn) + special.gammaln(an) - special.gammaln(a0))
    sigma2 = stats.invgamma.rvs(an, scale=bn, size=(CHAINS, DRAWS), random_state=rng)
    L = np.linalg.cholesky(Vn)
    beta = mn + np.sqrt(sigma2)[..., None] * (rng.normal(size=(CHAINS, DRAWS, k)) @ L.T)
    return {"X": X, "y": y, "a0": a0, "b0": b0, "v0": v0}, logz, {"sigma2": sigma2, "beta": beta}
