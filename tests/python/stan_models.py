"""The Stan programs of examples/stan/ with their data and exact ln Z, for
the tests of gbs.from_stan: three conjugate models (closed forms in
conjugate.py) and eight schools (a one-dimensional integral by
quadrature, checked two ways)."""

import math
import os

import numpy as np
from scipy import integrate, stats

import conjugate

STAN_DIR = os.path.join(os.path.dirname(__file__), "..", "..", "examples", "stan")


def program(name):
    with open(os.path.join(STAN_DIR, name + ".stan")) as f:
        return f.read()


def normal():
    data, logz, _ = conjugate.normal_mean(s0=2.0)  # the programs' prior scale
    return {"N": len(data["y"]), "y": data["y"]}, logz


def beta_binomial():
    data, logz, _ = conjugate.beta_binomial()
    return {"n": data["n"], "k": data["k"], "a": data["a"], "b": data["b"]}, logz


def gamma_poisson():
    data, logz, _ = conjugate.gamma_poisson()
    return {"N": len(data["y"]), "y": data["y"], "alpha": data["alpha"], "beta": data["beta"]}, logz


EIGHT_SCHOOLS = {"J": 8, "y": [28.0, 8.0, -3.0, 7.0, -1.0, 1.0, 18.0, 12.0],
                 "sigma": [15.0, 10.0, 16.0, 11.0, 9.0, 11.0, 10.0, 18.0]}


def eight_schools():
    """ln Z of examples/stan/eight_schools.stan: theta_tilde and mu
    integrate out in closed form (y | tau ~ N(0, 25 + diag(sigma^2 +
    tau^2))), tau by quadrature against its half-Cauchy(0, 5) prior. The
    integral is computed over tau and over log tau; the two agree to
    1e-9 or the reference is refused."""
    y = np.array(EIGHT_SCHOOLS["y"])
    s2 = np.array(EIGHT_SCHOOLS["sigma"]) ** 2
    J = len(y)

    def log_marginal(tau):
        cov = 25.0 * np.ones((J, J)) + np.diag(s2 + tau ** 2)
        return stats.multivariate_normal.logpdf(y, np.zeros(J), cov)

    def log_prior(tau):
        return math.log(2) + stats.cauchy.logpdf(tau, 0, 5)

    shift = log_marginal(0.0) + log_prior(0.0)  # the integrand's scale, for exp

    def f(tau):
        return math.exp(log_marginal(tau) + log_prior(tau) - shift)

    def g(u):
        tau = math.exp(u)
        return f(tau) * tau

    a, err_a = integrate.quad(f, 0, np.inf, epsabs=0, epsrel=1e-12, limit=500)
    b, err_b = integrate.quad(g, -30, 12, epsabs=0, epsrel=1e-12, limit=500, points=[0, 2, 4])
    assert abs(a - b) < 1e-9 * a and err_a < 1e-9 * a and err_b < 1e-9 * b, (a, err_a, b, err_b)
    return dict(EIGHT_SCHOOLS), shift + math.log(a)


def mixture():
    """examples/stan/mixture.stan with 25 points at -2 and 25 at +2, and
    its ln Z by the trapezoid rule on a grid of step 0.01 over (-6, 6)^2
    (the posterior's two copies have widths near 0.2; the prior's mass
    beyond the grid is below e^-30 of the total)."""
    y = np.array([-2.0] * 25 + [2.0] * 25)
    mu = np.arange(-6.0, 6.0 + 1e-9, 0.01)
    m1, m2 = np.meshgrid(mu, mu, indexing="ij")
    lp = stats.norm.logpdf(m1, 0, 5) + stats.norm.logpdf(m2, 0, 5)
    for v, n in ((-2.0, 25), (2.0, 25)):
        lp += n * np.logaddexp(stats.norm.logpdf(v, m1, 1), stats.norm.logpdf(v, m2, 1)) + n * math.log(0.5)
    top = lp.max()
    z = np.trapezoid(np.trapezoid(np.exp(lp - top), mu, axis=1), mu)
    return {"N": len(y), "y": y.tolist()}, top + math.log(z)
