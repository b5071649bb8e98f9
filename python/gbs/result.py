"""The result of an evidence computation."""

import html

import numpy as np


class Result:
    """ln Z with its error and the facts behind it.

    Attributes
    ----------
    logz : float
        Estimate of ln Z (natural log).
    logzerr : float
        Its standard error (from the relative mean squared error of the
        estimator, with the chains' autocorrelation).
    ncall : int
        Log-density evaluations made by the evidence computation.
    n_p, n_q : int
        Posterior draws used by the estimator, proposal draws.
    tau : float
        Integrated autocorrelation time used for the posterior side (1 for
        independent draws).
    re2_p, re2_q : float
        Posterior and proposal terms of the squared relative error.
    method : str
        "bridge", "is", "hm" or "warp3".
    warnings : list of str
        Conditions that may make the result less reliable.
    trace : numpy.ndarray, shape (k, 3)
        Rows (n_q, ln Z, error) from growing numbers of proposal draws.
    """

    def __init__(self, logz, logzerr, ncall, n_p, n_q, tau, re2_p, re2_q,
                 method, warnings, trace):
        self.logz = float(logz)
        self.logzerr = float(logzerr)
        self.ncall = int(ncall)
        self.n_p = int(n_p)
        self.n_q = int(n_q)
        self.tau = float(tau)
        self.re2_p = float(re2_p)
        self.re2_q = float(re2_q)
        self.method = method
        self.warnings = list(warnings)
        self.trace = np.asarray(trace, dtype=float).reshape(-1, 3)

    def summary(self):
        """Return a short multi-line text summary (also printed by print())."""
        lines = [
            "gbs %s evidence" % self.method,
            "  ln Z = %.4f +/- %.4f" % (self.logz, self.logzerr),
            "  n_p = %d, n_q = %d, log-density calls = %d, tau = %.3g"
            % (self.n_p, self.n_q, self.ncall, self.tau),
        ]
        lines += ["  warning: " + w for w in self.warnings]
        return "\n".join(lines)

    def __str__(self):
        return self.summary()

    def __repr__(self):
        return ("Result(logz=%.6g, logzerr=%.3g, method=%r, n_p=%d, n_q=%d)"
                % (self.logz, self.logzerr, self.method, self.n_p, self.n_q))

    def _repr_html_(self):
        rows = [("ln Z", "%.4f &plusmn; %.4f" % (self.logz, self.logzerr)),
                ("method", html.escape(self.method)),
                ("n<sub>p</sub> / n<sub>q</sub>", "%d / %d" % (self.n_p, self.n_q)),
                ("log-density calls", "%d" % self.ncall),
                ("&tau;", "%.3g" % self.tau)]
        body = "".join("<tr><th style='text-align:left'>%s</th><td>%s</td></tr>" % r
                       for r in rows)
        warn = "".join("<li>%s</li>" % html.escape(w) for w in self.warnings)
        if warn:
            warn = "<p><b>Warnings</b></p><ul>%s</ul>" % warn
        return "<table>%s</table>%s" % (body, warn)

    def proposal_draws(self, n=2000):
        """n draws, shape (n, d), of the proposal q the estimator used,
        rebuilt from the same draws, bounds and seed (None for warp3, whose
        proposal is the Gaussian of the fitted half)."""
        from .evidence import derive_seed, fit_half
        from .flow import Flow

        ctx = getattr(self, "_context", None)
        if ctx is None:
            raise ValueError("this Result does not come from gbs.evidence")
        x = ctx["x"]
        fit = x.reshape(-1, x.shape[2]) if self.method == "is" else fit_half(x)
        if self.method == "warp3":
            rng = np.random.default_rng(ctx["seed"])
            return rng.multivariate_normal(fit.mean(axis=0), np.atleast_2d(np.cov(fit.T)), size=n)
        bounds = None if ctx["lower"] is None else np.column_stack([ctx["lower"], ctx["upper"]])
        flow = Flow.fit(fit, bounds=bounds, seed=derive_seed(ctx["seed"], 1))
        return flow.sample(n, seed=ctx["seed"])

    def plot(self, exact=None, dims=None, n=2000):
        """Corner-style plot of posterior draws against proposal draws, and
        ln Z against the number of proposal draws.

        Parameters
        ----------
        exact : float, optional
            A reference value of ln Z drawn as a horizontal line.
        dims : sequence of int, optional
            Coordinates shown in the corner plot; default the first four.
        n : int
            Points of each kind shown.

        Returns
        -------
        matplotlib.figure.Figure
        """
        import matplotlib.pyplot as plt

        ctx = getattr(self, "_context", None)
        if ctx is None:
            fig, ax = plt.subplots(figsize=(5, 3.5))
            self._plot_trace(ax, exact)
            fig.tight_layout()
            return fig
        x = ctx["x"].reshape(-1, ctx["x"].shape[2])
        dims = list(range(min(4, x.shape[1]))) if dims is None else list(dims)
        k = len(dims)
        p = x[np.random.default_rng(0).choice(len(x), size=min(n, len(x)), replace=False)]
        q = self.proposal_draws(n)
        fig = plt.figure(figsize=(2.4 * k + 1.5, 2.4 * k + 2.4))
        grid = fig.add_gridspec(k + 1, k, height_ratios=[1] * k + [1.1], hspace=0.45, wspace=0.3)
        axes = [[fig.add_subplot(grid[i, j]) if j <= i else None for j in range(k)] for i in range(k)]
        for i, a in enumerate(dims):
            for j, b in enumerate(dims):
                ax = axes[i][j]
                if ax is None:
                    continue
                if i == j:
                    lo, hi = np.percentile(np.concatenate([p[:, a], q[:, a]]), [0.5, 99.5])
                    bins = np.linspace(lo, hi, 40)
                    ax.hist(p[:, a], bins=bins, density=True, histtype="step", label="posterior")
                    ax.hist(q[:, a], bins=bins, density=True, histtype="step", label="proposal q")
                    ax.set_yticks([])
                else:
                    ax.plot(q[:, b], q[:, a], ".", ms=1.5, alpha=0.4, color="C1")
                    ax.plot(p[:, b], p[:, a], ".", ms=1.5, alpha=0.4, color="C0")
                if i == k - 1:
                    ax.set_xlabel("x%d" % b)
                if j == 0 and i != j:
                    ax.set_ylabel("x%d" % a)
        axes[0][0].legend(fontsize=7, loc="upper left")
        self._plot_trace(fig.add_subplot(grid[k, :]), exact)
        return fig

    def _plot_trace(self, ax, exact):
        t = self.trace
        ax.errorbar(t[:, 0], t[:, 1], yerr=t[:, 2], fmt="o-", capsize=3,
                    label="gbs (%s)" % self.method)
        if exact is not None:
            ax.axhline(exact, color="k", lw=1, ls="--", label="exact")
        ax.set_xscale("log")
        ax.set_xlabel("proposal draws $n_q$")
        ax.set_ylabel(r"$\ln Z$")
        ax.legend(fontsize=8)
