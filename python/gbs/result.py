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

    def plot(self, ax=None, exact=None):
        """Plot ln Z against the number of proposal draws.

        Parameters
        ----------
        ax : matplotlib Axes, optional
            Where to draw; a new figure if None.
        exact : float, optional
            A reference value of ln Z drawn as a horizontal line.

        Returns
        -------
        matplotlib.figure.Figure
        """
        import matplotlib.pyplot as plt

        if ax is None:
            fig, ax = plt.subplots(figsize=(5, 3.5))
        else:
            fig = ax.figure
        t = self.trace
        ax.errorbar(t[:, 0], t[:, 1], yerr=t[:, 2], fmt="o-", capsize=3,
                    label="gbs (%s)" % self.method)
        if exact is not None:
            ax.axhline(exact, color="k", lw=1, ls="--", label="exact")
        ax.set_xscale("log")
        ax.set_xlabel("proposal draws $n_q$")
        ax.set_ylabel(r"$\ln Z$")
        ax.legend()
        fig.tight_layout()
        return fig
