"""KL divergences of Gaussians fitted to few draws per dimension (issue 25).

Exact draws of the correlated Gaussian of cmd/gbs-scale (eigenvalues
log-spaced from 0.1 to 10, a Haar-random rotation), then KL(p||q) and
KL(q||p) in closed form for q = N(mean, S) with S:

* the sample covariance (what the flow's whitening used before issue 25);
* Ledoit-Wolf and OAS linear shrinkage towards a multiple of the identity;
* the oracle eigenvalues for the sample eigenvectors, u'Su (best KL(p||q))
  and their nonlinear-shrinkage estimate (Ledoit & Wolf 2020);
* the geometric mean of the KL(p||q) and KL(q||p) estimates, which is
  what flow/shrink.go uses, and its oracle.

    python bench/shrinkage_kl.py --d 1000 --n 8000      # numpy only
"""
import argparse

import numpy as np


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--d", type=int, default=1000)
    ap.add_argument("--n", type=int, default=8000, help="training points (0.8 of half the draws in gbs)")
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    d, nt = a.d, a.n
    rng = np.random.default_rng(a.seed)
    Q, _ = np.linalg.qr(rng.standard_normal((d, d)))
    lam = 10 ** (-1 + 2 * np.arange(d) / (d - 1))
    S = (Q * lam) @ Q.T
    Si = (Q / lam) @ Q.T
    X = rng.standard_normal((nt, d)) @ (Q * np.sqrt(lam)).T
    ldS = np.sum(np.log(lam))

    def kl(mu, C):
        Ci = np.linalg.inv(C)
        _, ld = np.linalg.slogdet(C)
        pq = 0.5 * (np.trace(Ci @ S) + mu @ Ci @ mu - d + ld - ldS)
        qp = 0.5 * (np.trace(Si @ C) + mu @ Si @ mu - d + ldS - ld)
        return "KL(p||q) %7.2f  KL(q||p) %7.2f" % (pq, qp)

    mu = X.mean(0)
    Xc = X - mu
    C = Xc.T @ Xc / nt
    print("d = %d, %d points, d^2/(4n) = %.1f" % (d, nt, d * d / (4 * nt)))
    print("sample covariance          ", kl(mu, C))
    m = np.trace(C) / d
    d2 = np.sum((C - m * np.eye(d)) ** 2)
    b2 = sum(np.sum((np.outer(x, x) - C) ** 2) for x in Xc) / nt / nt
    rho = min(b2, d2) / d2
    print("Ledoit-Wolf linear (%.3f)  " % rho, kl(mu, (1 - rho) * C + rho * m * np.eye(d)))
    tr2, tr = np.trace(C @ C), np.trace(C)
    rho = min(1, ((1 - 2 / d) * tr2 + tr ** 2) / ((nt + 1 - 2 / d) * (tr2 - tr ** 2 / d)))
    print("OAS linear (%.3f)          " % rho, kl(mu, (1 - rho) * C + rho * m * np.eye(d)))
    w, U = np.linalg.eigh(C)
    n = nt - 1
    lamb = w * nt / n
    h = n ** (-1 / 3)
    L = np.tile(lamb[:, None], (1, d))
    H = h * L.T
    x = (L - L.T) / H
    f = (3 / 4 / np.sqrt(5)) * np.mean(np.maximum(1 - x ** 2 / 5, 0) / H, axis=1)
    with np.errstate(divide="ignore"):
        Hf = (-3 / 10 / np.pi) * x + (3 / 4 / np.sqrt(5) / np.pi) * (1 - x ** 2 / 5) * np.log(np.abs((np.sqrt(5) - x) / (np.sqrt(5) + x)))
    edge = np.abs(x) == np.sqrt(5)
    Hf[edge] = ((-3 / 10 / np.pi) * x)[edge]
    Hft = np.mean(Hf / H, axis=1)
    c = d / n
    frob = lamb / ((np.pi * c * lamb * f) ** 2 + (1 - c - np.pi * c * lamb * Hft) ** 2)
    stein = lamb / (1 - c - 2 * np.pi * c * lamb * Hft)
    a_or = np.einsum("ij,ji->i", U.T @ S, U)
    b_or = np.einsum("ij,ji->i", U.T @ Si, U)
    print("nonlinear, u'Su oracle     ", kl(mu, (U * a_or) @ U.T))
    print("nonlinear, u'Su estimate   ", kl(mu, (U * frob) @ U.T))
    print("geometric mean, oracle     ", kl(mu, (U * np.sqrt(a_or / b_or)) @ U.T))
    print("geometric mean (gbs)       ", kl(mu, (U * np.sqrt(frob * stein)) @ U.T))


if __name__ == "__main__":
    main()
