"""The result of an evidence computation."""

from __future__ import annotations

import ctypes
import html
import math
import re
from typing import Any, Dict, List, Optional, Sequence, Union

import numpy as np

from . import _lib
from ._findings import Finding, checks, order

#: The rows of :attr:`Result.repetitions`: (seed, ln Z, error) per
#: repetition, the seed a uint64 as the library used it, so that
#: ``gbs.evidence(..., seed=int(row["seed"]))`` gives that row's ln Z again.
REPETITION_DTYPE = np.dtype([("seed", np.uint64), ("logz", np.float64), ("logzerr", np.float64)])


class Result:
    """ln Z with its error and the facts behind it, as returned by
    :func:`gbs.evidence`.

    Attributes
    ----------
    logz : float
        Estimate of ln Z, the natural log of the integral of p.
    logzerr : float
        Its standard error, sqrt(re2_p + re2_q): the square root of the
        estimator's relative mean squared error, with the chains'
        autocorrelation (an error of ln Z, in nats).
    ncall : int
        Log-density evaluations made by this computation (the sampler's are
        not counted).
    n_p : int
        Posterior draws the estimator compared with the proposal (with
        cross-fitting, both passes': every draw).
    n_q : int
        Proposal draws (both passes').
    tau : float
        Integrated autocorrelation time (in draws) used for the posterior
        side (with cross-fitting, the mean of the passes'); 1 for
        independent draws.
    re2_p, re2_q : float
        Posterior and proposal terms of the squared relative error (with
        cross-fitting re2_p counts the two passes' shared part).
        ``summary()`` prints the proposal's share, re2_q / (re2_p + re2_q),
        as "error share of the proposal". A large share (above about
        50 %) means more proposal draws would shrink the error: pass a
        larger ``n_q`` (or ``f_eva``); a small one means the posterior
        draws limit the error: run longer chains. The adaptive n_q rule
        aims at ``f_err`` = 10 % within its evaluation budget, so a large
        share usually means the budget capped it.
    method : str
        "bridge", "is", "hm" or "warp3".
    findings : list of Finding
        What the library's checks (and an adapter's) found: warnings about
        the draws first, then warnings about the estimate, then
        information. Each has a stable ``check`` ID (see
        :func:`gbs.checks`), a ``kind`` (``"draws"``, ``"estimate"`` or
        ``"info"``), its ``message`` and its numbers. Filter or count them
        by ``check``, never by message text.
    warnings : list of str
        The messages of the findings that are warnings: conditions that
        make the result less reliable (chains too short for the
        autocorrelation time, unmixed chains, draws that do not follow the
        log density...), each saying what to do. Empty when all is well.
        They are also raised through Python's :mod:`warnings` when the
        result is made, as :class:`gbs.SamplerWarning` (about the draws)
        or :class:`gbs.DiagnosticWarning` (about the estimate), both
        :class:`gbs.GbsWarning` with the finding's ``.check``.
    n_sampler_warnings : int
        How many of ``warnings``, at the start, are about the draws.
    info : list of str
        The messages of the findings that are not warnings: designed
        behaviour that worked (a NUTS run repeated at a higher acceptance
        target) or limits the error bar already includes (n_q capped by
        memory). Not raised.
    trace : numpy.ndarray, shape (k, 3)
        Rows (n_q, ln Z, error): the estimate from the first n_q proposal
        draws, for increasing n_q; the last row is the final estimate.
    seed : int
        The seed used (pass it back to reproduce the result).
    n_chains, n_draws, dim : int
        The layout of the samples: chains, draws per chain, dimension d.
    source : dict
        Facts an adapter adds (:func:`gbs.from_pymc`, :func:`gbs.from_numpyro`):
        the variables, and where log p at the draws came from (``"lp"``).
        Empty for :func:`gbs.evidence`.
    diagnostics : Diagnostics
        The numbers behind the checks of the input chains, the stored log p
        and the overlap of p and q (R-hat, ESS, Pareto k-hat, cross-fitting
        and consistency z-scores...), each with its threshold and what to
        do when it fails (see :class:`gbs.result.Diagnostics`); failed
        checks are also in ``warnings``.
    name : str or None
        The model's name (``gbs.evidence(..., name="A")``, or set it):
        :func:`gbs.compare` and :func:`gbs.bayes_factor` label the model
        with it.
    samples : gbs.Samples or None
        For :func:`gbs.run`: the NUTS draws the estimate used (those of
        the last run when the pipeline ran the sampler again), with their
        log p and per-chain statistics; ``samples.ncall`` counts the
        gradient evaluations of every run. None for :func:`gbs.evidence`
        and the adapters (the draws are the caller's).
    sampling : dict or None
        For :func:`gbs.run`: what the pipeline's sampler did.
        ``target_accept`` (of the run the draws come from), ``retried``
        (run again at a higher acceptance target), ``lengthened`` (run
        again with longer chains), ``global_moves`` and
        ``global_accept_rate`` (nan without them), ``grad_calls`` (the
        sampler's evaluations over every run), ``logdensity_calls`` (the
        evidence stage's over every run), ``sampling_seconds`` and
        ``evidence_seconds`` (wall times). The reruns' reasons are
        findings of the check ``"rerun"``. None for :func:`gbs.evidence`.
    repetitions : numpy.ndarray, shape (k,), or None
        With ``repetitions=k``: rows (seed, ln Z, error) of the k
        estimates with independent proposal sets (the first row is this
        result's); None otherwise. A structured array with the fields
        ``seed`` (uint64, exact: ``gbs.evidence(..., seed=int(seed))``
        gives that row's ln Z again), ``logz`` and ``logzerr``: the
        estimates are ``repetitions["logz"]``, and a row unpacks as
        ``seed, logz, logzerr = repetitions[i]``. See
        :meth:`error_measures`.
    """

    def __init__(self, logz: float, logzerr: float, ncall: int, n_p: int, n_q: int, tau: float,
                 re2_p: float, re2_q: float, method: str, findings: Sequence[Finding],
                 trace: Any, seed: Optional[int] = None, n_chains: Optional[int] = None,
                 n_draws: Optional[int] = None, dim: Optional[int] = None,
                 diagnostics: Optional["Diagnostics"] = None):
        self.logz = float(logz)
        self.logzerr = float(logzerr)
        self.ncall = int(ncall)
        self.n_p = int(n_p)
        self.n_q = int(n_q)
        self.tau = float(tau)
        self.re2_p = float(re2_p)
        self.re2_q = float(re2_q)
        self.method = method
        self.findings: List[Finding] = order(findings)
        self.trace = np.asarray(trace, dtype=float).reshape(-1, 3)
        self.seed = seed
        self.n_chains, self.n_draws, self.dim = n_chains, n_draws, dim
        self.diagnostics = diagnostics if diagnostics is not None else Diagnostics()
        self.source: Dict[str, Any] = {}
        self.name: Optional[str] = None
        self.repetitions: Optional[np.ndarray] = None
        self.samples: Any = None
        self.sampling: Optional[Dict[str, Any]] = None
        self._context: Optional[Dict[str, Any]] = None

    # -- findings ------------------------------------------------------------

    @property
    def warnings(self) -> List[str]:
        """The messages of the warnings, those about the draws first."""
        return [f.message for f in self.findings if f.is_warning]

    @property
    def n_sampler_warnings(self) -> int:
        """How many of ``warnings``, at the start, are about the draws."""
        return sum(f.kind == "draws" for f in self.findings)

    @property
    def info(self) -> List[str]:
        """The messages of the findings that are not warnings."""
        return [f.message for f in self.findings if not f.is_warning]

    def found(self, check: str) -> List[Finding]:
        """The findings of ``check`` (an ID of :func:`gbs.checks`)."""
        if check not in checks():
            raise ValueError("unknown check %r (see gbs.checks())" % (check,))
        return [f for f in self.findings if f.check == check]

    def add_findings(self, findings: Sequence[Finding]) -> None:
        """Add findings (an adapter's own checks), keeping the order: the
        new warnings about the draws before the others."""
        self.findings = order(list(findings) + self.findings)

    # -- text ----------------------------------------------------------------

    @property
    def z(self) -> float:
        """exp(logz); may overflow to inf (use logz)."""
        try:
            return math.exp(self.logz)
        except OverflowError:
            return math.inf

    def as_dict(self) -> Dict[str, Any]:
        """The scalar fields and the warnings as a dict (JSON-friendly)."""
        keys = ("logz", "logzerr", "ncall", "n_p", "n_q", "tau", "re2_p", "re2_q", "method",
                "seed", "n_chains", "n_draws", "dim")
        out = {k: getattr(self, k) for k in keys}
        out["findings"] = [f.as_dict() for f in self.findings]
        out["warnings"] = self.warnings
        out["n_sampler_warnings"] = self.n_sampler_warnings
        out["info"] = self.info
        out["trace"] = self.trace.tolist()
        out["diagnostics"] = self.diagnostics.as_dict()
        out["name"] = self.name
        out["repetitions"] = (None if self.repetitions is None else
                              [[int(s), float(z), float(e)] for s, z, e in self.repetitions.tolist()])
        return out

    # -- error measures and tables -------------------------------------------

    def error_measures(self) -> "ErrorMeasures":
        """The error of Z itself, as bridgesampling's ``error_measures``
        reports it: the relative mean squared error, the coefficient of
        variation and the percentage error of Z (see
        :class:`ErrorMeasures`); with ``repetitions``, also the spread of
        the repeated ln Z."""
        return ErrorMeasures.of(self)

    _TABLE_FIELDS = ("logz", "logzerr", "ncall", "n_p", "n_q", "tau", "re2_p", "re2_q", "method",
                     "seed", "n_chains", "n_draws", "dim")

    def _row(self) -> Dict[str, Any]:
        row = {k: getattr(self, k) for k in self._TABLE_FIELDS}
        row["n_warnings"] = len(self.warnings)
        row.update(self.diagnostics.as_dict())
        em = self.error_measures()
        row["cv"], row["percentage_error"] = em.cv, em.percentage
        if self.repetitions is not None:
            row["repetitions"], row["repetitions_sd"] = len(self.repetitions), em.repetitions_sd
        return row

    def to_dataframe(self) -> Any:
        """The result as a one-row pandas DataFrame, indexed by ``name``
        (or "model"): the scalar fields, the number of warnings, the
        diagnostics, and the error measures. Concatenate several with
        ``pandas.concat([r.to_dataframe() for r in results])``.

        Raises
        ------
        ImportError
            pandas is not installed (``pip install pandas``).
        """
        try:
            import pandas as pd
        except ImportError:
            raise ImportError("Result.to_dataframe needs pandas: pip install pandas") from None
        return pd.DataFrame([self._row()], index=pd.Index([self.name or "model"], name="model"))

    def to_xarray(self) -> Any:
        """The result as an xarray Dataset: the scalar fields and the
        diagnostics as 0-d variables, the trace as variables ``trace_logz``
        and ``trace_logzerr`` along the dimension ``trace`` (coordinate
        ``trace_n_q``: the proposal draws of each row), the repetitions
        (if any) along ``repetition``, and the method, name, seed and
        warnings as attributes.

        Raises
        ------
        ImportError
            xarray is not installed (``pip install xarray``).
        """
        try:
            import xarray as xr
        except ImportError:
            raise ImportError("Result.to_xarray needs xarray: pip install xarray") from None
        row = self._row()
        data: Dict[str, Any] = {}
        for k, v in row.items():
            if k in ("method", "seed") or isinstance(v, str) or v is None:
                continue
            data[k] = ((), v)
        data["trace_logz"] = (("trace",), self.trace[:, 1])
        data["trace_logzerr"] = (("trace",), self.trace[:, 2])
        coords: Dict[str, Any] = {"trace_n_q": (("trace",), self.trace[:, 0].astype(np.int64))}
        if self.repetitions is not None:
            data["repetition_logz"] = (("repetition",), self.repetitions["logz"])
            data["repetition_logzerr"] = (("repetition",), self.repetitions["logzerr"])
            coords["repetition"] = np.arange(len(self.repetitions))
            coords["repetition_seed"] = (("repetition",), self.repetitions["seed"])
        attrs = {"method": self.method, "seed": str(self.seed), "name": self.name or "",
                 "warnings": list(self.warnings)}
        for k in ("rhat_where", "ess_bulk_where", "ess_tail_where", "burnin_where"):
            attrs[k] = row.get(k) or ""
        return xr.Dataset(data, coords=coords, attrs=attrs)

    def _share_q(self) -> float:
        tot = self.re2_p + self.re2_q
        return self.re2_q / tot if tot > 0 else 0.0

    def summary(self) -> str:
        """A short multi-line text summary (also what ``print(result)``
        shows)."""
        layout = ""
        if self.n_chains is not None:
            layout = "  samples: %d chain%s x %d draws, d = %d\n" % (
                self.n_chains, "" if self.n_chains == 1 else "s", self.n_draws or 0, self.dim or 0)
        lines = [
            "gbs evidence (%s)" % _METHOD_TITLES.get(self.method, self.method),
            "  ln Z = %.4f +/- %.4f" % (self.logz, self.logzerr),
            layout.rstrip("\n"),
            "  n_p = %d, n_q = %d, log-density calls = %d" % (self.n_p, self.n_q, self.ncall),
            "  tau = %.3g, error share of the proposal = %.0f%%" % (self.tau, 100 * self._share_q()),
        ]
        diag = self.diagnostics.summary()
        if diag:
            lines.append("  diagnostics: " + diag)
        lines = [ln for ln in lines if ln]
        lines += ["  %s [%s]: %s" % ("warning" if f.is_warning else "info", f.check, f.message)
                  for f in self.findings]
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.summary()

    def __repr__(self) -> str:
        return ("Result(logz=%.6g, logzerr=%.3g, method=%r, n_p=%d, n_q=%d, ncall=%d%s)"
                % (self.logz, self.logzerr, self.method, self.n_p, self.n_q, self.ncall,
                   ", warnings=%d" % len(self.warnings) if self.warnings else ""))

    def _repr_html_(self) -> str:
        rows = [("ln Z", "<b>%.4f</b> &plusmn; %.4f" % (self.logz, self.logzerr)),
                ("method", html.escape(_METHOD_TITLES.get(self.method, self.method))),
                ("n<sub>p</sub> / n<sub>q</sub>", "%d / %d" % (self.n_p, self.n_q)),
                ("log-density calls", "%d" % self.ncall),
                ("&tau;", "%.3g" % self.tau),
                ("error share of q", "%.0f%%" % (100 * self._share_q())),
                ("seed", html.escape(str(self.seed)))]
        if self.n_chains is not None:
            rows.insert(2, ("samples", "%d &times; %d, d = %d" % (self.n_chains, self.n_draws or 0,
                                                                  self.dim or 0)))
        diag = self.diagnostics.summary()
        if diag:
            rows.append(("diagnostics", html.escape(diag)))
        body = "".join("<tr><th style='text-align:left'>%s</th><td style='text-align:left'>%s</td></tr>"
                       % r for r in rows)
        warn = "".join("<li><code>%s</code> %s</li>" % (f.check, html.escape(f.message))
                       for f in self.findings if f.is_warning)
        if warn:
            warn = "<p style='color:#a15c00'><b>Warnings</b></p><ul>%s</ul>" % warn
        info = "".join("<li><code>%s</code> %s</li>" % (f.check, html.escape(f.message))
                       for f in self.findings if not f.is_warning)
        if info:
            warn += "<p><b>Info</b></p><ul>%s</ul>" % info
        return "<div><p><b>gbs.Result</b></p><table>%s</table>%s</div>" % (body, warn)

    def _repr_pretty_(self, p: Any, cycle: bool) -> None:
        p.text(self.summary() if not cycle else "Result(...)")

    # -- pickling: the samples are not part of the result ---------------------

    def __getstate__(self) -> Dict[str, Any]:
        state = dict(self.__dict__)
        state["_context"] = None
        return state

    # -- the proposal and the plot -------------------------------------------

    def proposal_draws(self, n: int = 2000, seed: Optional[int] = None) -> np.ndarray:
        """n draws of the proposal q the estimator used, shape (n, d).

        The library fits q again from the same draws, bounds and seed, as
        the estimate did (the fit is deterministic for a seed), and draws
        from it (gbs_evidence_proposal_sample): for "bridge" and "hm" the q
        fitted on the first half of the draws (with cross-fitting, the
        first pass's), for "warp3" the Gaussian of that half, for "is" the
        q fitted on all draws. ``seed`` chooses the draws (default: the
        result's seed).

        Raises
        ------
        ValueError
            If the result was not made by :func:`gbs.evidence` in this
            process (an unpickled result holds no samples).
        """
        from ._arrays import ptr

        ctx = self._context
        if ctx is None:
            raise ValueError("this Result holds no samples (it was not made by gbs.evidence in "
                             "this process)")
        n = int(n)
        if n < 1:
            raise ValueError("n must be >= 1, not %r" % (n,))
        x = ctx["x"]
        nc, nd, d = x.shape
        out: np.ndarray = np.empty((n, d))
        draw_seed = ctx["seed"] if seed is None else int(seed) & _lib.UINT64_MASK
        _lib.call(_lib.lib.gbs_evidence_proposal_sample, ptr(x), nc, nd, d, ctx["options"].byref(),
                  n, draw_seed, ptr(out), None)
        return out

    def plot(self, exact: Optional[float] = None, dims: Optional[Sequence[Union[int, str]]] = None,
             n: int = 2000, labels: Optional[Sequence[str]] = None, fig: Any = None) -> Any:
        """Posterior draws against proposal draws (corner style) above
        ln Z against the number of proposal draws.

        Parameters
        ----------
        exact : float, optional
            A reference ln Z, drawn as a horizontal line.
        dims : sequence of int or str, optional
            Coordinates in the corner plot, by index or (for ArviZ input
            and the adapters) by column name such as ``"sigma"`` or
            ``"b[1]"``; default the first four. The figure's title says
            which are shown.
        n : int
            Points of each kind in the corner plot.
        labels : sequence of str, optional
            Names of the coordinates in ``dims`` (default: the column names
            when known, else x_i).
        fig : matplotlib.figure.Figure, optional
            Figure to draw into (default: a new one).

        Returns
        -------
        matplotlib.figure.Figure
            Save it with ``fig.savefig("gbs.png")``.
        """
        try:
            import matplotlib.pyplot as plt
        except ImportError:
            raise ImportError("Result.plot needs matplotlib: pip install matplotlib (or the 'plot' "
                              "extra)") from None
        ctx = self._context
        if ctx is None:
            fig = fig or plt.figure(figsize=(5.5, 3.5))
            self._plot_trace(fig.add_subplot(1, 1, 1), exact)
            fig.tight_layout()
            return fig
        x = ctx["x"].reshape(-1, ctx["x"].shape[2])
        d = x.shape[1]
        names = ctx.get("labels")
        if dims is None:
            cols = list(range(min(4, d)))
        else:
            cols = [_dim_index(i, names, d) for i in dims]
        if not cols or min(cols) < 0 or max(cols) >= d:
            raise ValueError("dims must be coordinates in 0..%d, not %r" % (d - 1, dims))
        if labels is None:
            labels = [names[i] if names else "$x_{%d}$" % i for i in cols]
        elif len(labels) != len(cols):
            raise ValueError("labels: %d names for %d coordinates (dims)" % (len(labels), len(cols)))
        k = len(cols)
        p = x[np.random.default_rng(0).choice(len(x), size=min(n, len(x)), replace=False)]
        q = self.proposal_draws(n)
        size = 2.2 * k + 1.6
        fig = fig or plt.figure(figsize=(size, size + 2.6))
        height = fig.get_size_inches()[1]
        # Room above the grid for the title and the legend (0.6 inch).
        grid = fig.add_gridspec(k + 1, k, height_ratios=[1] * k + [1.2], hspace=0.45, wspace=0.3,
                                top=1 - 0.6 / height, bottom=0.55 / height)
        for i, a in enumerate(cols):
            for j, b in enumerate(cols[: i + 1]):
                ax = fig.add_subplot(grid[i, j])
                if i == j:
                    lo, hi = np.percentile(np.concatenate([p[:, a], q[:, a]]), [0.5, 99.5])
                    bins = np.linspace(lo, hi, 40) if hi > lo else 20
                    ax.hist(p[:, a], bins=bins, density=True, histtype="step", color="C0",
                            label="posterior draws")
                    ax.hist(q[:, a], bins=bins, density=True, histtype="step", color="C1",
                            label="proposal q")
                    ax.set_yticks([])
                else:
                    ax.plot(q[:, b], q[:, a], ".", ms=1.5, alpha=0.35, color="C1", rasterized=True)
                    ax.plot(p[:, b], p[:, a], ".", ms=1.5, alpha=0.35, color="C0", rasterized=True)
                    if j == 0:
                        ax.set_ylabel(labels[i])
                if i == k - 1:
                    ax.set_xlabel(labels[j])
        # The legend and which coordinates are shown go above the grid, not
        # over a histogram.
        shown = ", ".join(str(i) for i in cols)
        title = ("coordinates %s of %d" % (shown, d) if k < d else "all %d coordinates" % d)
        if k < d:
            title += " (choose with dims=)"
        fig.suptitle(title, fontsize=9, y=1 - 0.08 / height, va="top")
        handles = [plt.Line2D([], [], color="C0", label="posterior draws"),
                   plt.Line2D([], [], color="C1", label="proposal q")]
        fig.legend(handles=handles, loc="upper center", ncol=2, fontsize=8, frameon=False,
                   bbox_to_anchor=(0.5, 1 - 0.28 / height))
        self._plot_trace(fig.add_subplot(grid[k, :]), exact)
        return fig

    def _plot_trace(self, ax: Any, exact: Optional[float]) -> None:
        t = self.trace
        if len(t):
            ax.errorbar(t[:, 0], t[:, 1], yerr=t[:, 2], fmt="o-", capsize=3,
                        label="gbs (%s)" % self.method)
        if exact is not None:
            ax.axhline(exact, color="k", lw=1, ls="--", label="exact")
        if len(t) and t[:, 0].max() > 2 * t[:, 0].min():
            ax.set_xscale("log")
        ax.set_xlabel("proposal draws $n_q$")
        ax.set_ylabel(r"$\ln Z$")
        ax.legend(fontsize=8)


# The names of the quantities a check locates by a negative index: log p,
# and the coverage check's largest standardized deviation over the
# coordinates (gbs/coverage.go, coverageExtreme).
_QUANTITIES = {-1: "log p", -2: "largest deviation"}


def coordinate_name(k: int, labels: Optional[Sequence[str]] = None) -> str:
    """The name users see for flat coordinate k: the model's (``labels[k]``,
    e.g. ``"mu"`` or ``"theta[3]"``) when known, else ``"x[k]"``."""
    if labels is not None and 0 <= k < len(labels):
        return str(labels[k])
    return "x[%d]" % k


def coordinate_index(where: Optional[str], labels: Optional[Sequence[str]] = None) -> int:
    """The flat coordinate that coordinate_name named ``where``; -1 for
    "log p" or None."""
    if where is None or where == "log p":
        return -1
    if labels is not None and where in labels:
        return list(labels).index(where)
    m = re.fullmatch(r"x\[(\d+)\]", where)
    return int(m.group(1)) if m else -1


class ErrorMeasures:
    """The error of the evidence Z (not of ln Z), as R's bridgesampling
    reports it with ``error_measures()``.

    Attributes
    ----------
    re2 : float
        The relative mean squared error of Z, E[(Z_hat - Z)^2] / Z^2:
        ``re2_p + re2_q`` (Frühwirth-Schnatter 2004), the square of
        ``logzerr``.
    cv : float
        The coefficient of variation of Z, sqrt(re2) (= ``logzerr``, to
        first order: a relative error of Z of 1 % is an error of ln Z of
        0.01).
    percentage : float
        100 cv: the percentage error of Z.
    repetitions_sd, repetitions_min, repetitions_max, repetitions_iqr : float
        With ``repetitions=k``: the standard deviation, range and
        interquartile range of the k estimates of ln Z (nan otherwise).
        The repetitions share the posterior draws and differ in the
        proposal (fit and draws), so their spread measures the proposal's
        part of the error: compare it with ``sqrt(re2_q)``, not with
        ``logzerr``. It also holds the variation of the flow fit, which
        re2_q does not: on a 4-d Gaussian it came out 1.5 to 2 times
        ``sqrt(re2_q)`` (the benchmark methods page, "Repetitions").
    """

    def __init__(self, re2: float, repetitions: Optional[np.ndarray] = None):
        self.re2 = float(re2)
        self.cv = math.sqrt(self.re2) if self.re2 >= 0 else math.nan
        self.percentage = 100 * self.cv
        nan = math.nan
        self.repetitions_sd = self.repetitions_min = self.repetitions_max = nan
        self.repetitions_iqr = nan
        if repetitions is not None and len(repetitions) >= 2:
            lz = np.asarray(repetitions, dtype=float)
            self.repetitions_sd = float(np.std(lz, ddof=1))
            self.repetitions_min, self.repetitions_max = float(lz.min()), float(lz.max())
            q1, q3 = np.percentile(lz, [25, 75])
            self.repetitions_iqr = float(q3 - q1)

    @classmethod
    def of(cls, r: "Result") -> "ErrorMeasures":
        rep = None if r.repetitions is None else r.repetitions["logz"]
        return cls(r.re2_p + r.re2_q, rep)

    def as_dict(self) -> Dict[str, float]:
        return {k: getattr(self, k) for k in ("re2", "cv", "percentage", "repetitions_sd",
                                               "repetitions_min", "repetitions_max",
                                               "repetitions_iqr")}

    def __str__(self) -> str:
        s = "re2 = %.3g, cv = %.3g, percentage error of Z = %.3g%%" % (self.re2, self.cv, self.percentage)
        if not math.isnan(self.repetitions_sd):
            s += (", repetitions: sd of ln Z %.3g, range %.4f to %.4f, IQR %.3g"
                  % (self.repetitions_sd, self.repetitions_min, self.repetitions_max,
                     self.repetitions_iqr))
        return s

    def __repr__(self) -> str:
        return "ErrorMeasures(%s)" % self


class Diagnostics:
    """The checks every evidence call runs: a small object whose
    attributes are also readable as ``d["rhat_max"]`` and returned by
    ``as_dict()``. A value that was not computed is nan (or None for a
    location). A failed check adds a warning to ``Result.warnings`` (the
    spot-check raises an error instead); the "Diagnostics" page of the
    documentation gives each check's reasoning and tests.

    Notes
    -----
    The checks, their thresholds and what to do when one fails:

    Convergence (``rhat_max``, ``ess_*``)
        Warns when R-hat exceeds both 1.01 and ``rhat_crit`` (what chance
        gives for chains this long), or when the bulk or tail ESS is below
        100. Run longer chains, start them from dispersed points; for
        several modes use a sampler that moves between them.
    Burn-in (``burnin_z``)
        Warns when the first 10 % of the chains differ from their last
        50 % by more than 5 standard errors. Discard more warm-up
        (``discard=``).
    Chains apart or stuck (``n_outlier_chains``, ``n_stuck_chains``)
        A chain whose mean sits more than 5 standard errors from the
        others' (named in the R-hat warning), or that moves in fewer than
        1 % of its steps. Find out why (another mode, a bad start); drop a
        chain only when you know it is wrong.
    Spot-check of the stored log p (``spot_checked``, ``spot_max_diff``)
        The stored log p is evaluated again at 32 draws; a difference above
        1e-5 (1 + abs(log p)) is an error: pass log p in the samples' layout,
        from the same density, or leave it out.
    Overlap of p and q (``pareto_k_q``, ``pareto_k_p``)
        Pareto k-hat of p/q at the proposal draws and of q/p at the
        posterior draws. The bridge warns only when both exceed 1 and the
        cross-fitting or consistency checks also disagree; "is" and "hm"
        warn above ``pareto_k_threshold`` = min(1 - 1/log10 S, 0.7). A
        negative k-hat (such as -0.06) is a good value, not an error: the
        ratios have a bounded tail, as when q covers p well; it is printed
        as computed.
    Consistency (``crossfit_z``, ``consistency_z``, ``is_z``, ``hm_z``)
        Warns above 4 standard errors: the two cross-fitting passes, the
        draws against the log density (the tilt identity), or importance /
        reciprocal importance sampling against the bridge disagree. The
        usual cause is a log density that is not the one the draws came
        from (another prior, a missing Jacobian, a temperature); then
        unconverged chains or unvisited modes.
    Coverage (``coverage_frac``, ``coverage_limit``)
        Short independence Metropolis-Hastings chains proposed by the flow
        (and a widened copy) warn when their fraction of steps beyond the
        range of the draws exceeds ``coverage_limit`` (a false-alarm rate of
        1e-3 per run, times 2) with at least 4 distinct points there, not
        resting on the one point the chains held longest:
        every chain missed the same mass (a funnel's neck, heavy tails),
        and ln Z is low. Run the sampler longer or with a better
        adaptation there, or reparameterize (non-centred).

    Attributes
    ----------
    rhat_max, rhat_where, rhat_crit : float, str, float
        Largest rank-normalized split-R-hat (Vehtari et al. 2021) over the
        coordinates and log p, where (the coordinate's name: the model's,
        such as "mu" or "theta[3]", when the draws were named, else
        "x[k]"; or "log p"), and the value chance reaches for chains this
        long; a warning needs both 1.01 and rhat_crit exceeded.
    ess_bulk_min, ess_bulk_where, ess_tail_min, ess_tail_where : float, str
        Smallest bulk and tail effective sample sizes, and where.
    burnin_z, burnin_where : float, str
        Largest abs(z) of the first 10% of the chains against their last 50%.
    n_outlier_chains, outlier_chain, n_stuck_chains, stuck_chain : int
        Chains whose draws sit apart, chains that never move (the count,
        and the first one's index, or None when there is none); the
        warnings list all of them.
    spot_checked, spot_max_diff : int, float
        Draws whose stored log p was evaluated again, and the largest
        difference (a mismatch is an error, not a warning).
    pareto_k_q, pareto_k_p, pareto_k_threshold : float
        Pareto k-hat of p/q at the proposal draws and of q/p at the
        posterior draws (Vehtari et al. 2024), and min(1 - 1/log10 S, 0.7).
    crossfit_z, consistency_z, is_z, hm_z : float
        The two cross-fitting passes' difference, the draws-vs-log-density
        checks, and importance / reciprocal importance sampling with the
        same proposal against the bridge, in standard errors.
    coverage_frac, coverage_limit : float
        The coverage check (bridge; section 8 of the Diagnostics page): the
        fraction of the independence Metropolis-Hastings chains' steps
        beyond the range of the draws at the worst quantity and side (0
        when none had enough distinct points there, or the excess rested
        on one point), and the limit above
        which it warns; nan when the check did not run. The check's
        two-sample test of log p (mass reached in the wrong proportion)
        reports through its warning only.
    coverage_where, coverage_side : str, int
        That quantity ("x[k]", "log p", or "largest deviation", the
        largest standardized deviation ``max_k |x_k - median_k| / scale_k``;
        None when none) and side (-1 below the range, +1 above, 0 none).
    coverage_calls : int
        Log-density calls the check spent (included in ``ncall``).
    n_copied_groups, copied_chain : int
        Groups of chains that copy each other, and the first chain of the
        first group (None when there is none).
    step_corr_max : float
        The largest correlation of two chains' steps.
    interleave_period, interleave_rho : int, float
        The number of chains a single chain looks interleaved from (0:
        none), and its autocorrelation at that lag.
    sign_corr : float
        Rank correlation of log p and log q at the draws (negative: the
        log density's sign looks flipped).
    outside_share : float
        Share of the proposal draws where log p = -inf.
    pile_up_where, pile_up_ratio : str, float
        The coordinate whose draws end most abruptly at a side without a
        bound (None: none), and that side's spread ratio.
    coverage_covered : float
        The bridge function beyond the draws' range over its mean at the
        draws, where the coverage check looked: near 1 when ln Z accounts
        for the region the draws missed.
    coverage_ks, coverage_ks_limit, coverage_ks_at : float
        The coverage check's two-sample distance of log p, its limit, and
        the log p where it is largest.
    anneal_steps, anneal_calls : int
        Rungs of the annealed bridge (0: not used) and its log-density
        calls (included in ``ncall``).
    census_modes, census_shortfall, census_calls : int, float, int
        The mode census (with a finite box; ``mode_census``): the modes of
        p it found that no draw visited, ln(1 + Σ m/Z) over their masses
        (what ln Z is low by; 0: none, NaN: the census did not run), and
        its log-density calls (included in ``ncall``).
    symmetry_calls : int
        The log-density calls the symmetry search spent testing candidate
        relabelings (included in ``ncall``).
    """

    # The fields of the C structs gbs_diagnostics and gbs_diagnostics_ext
    # (include/gbs.h), in their order: the header is their one definition.
    _BASE = tuple(f[0] for f in _lib.CDiagnostics._fields_)
    _EXT = tuple(f[0] for f in _lib.CDiagnosticsExt._fields_ if f[0] != "size")
    _FIELDS = _BASE + _EXT
    # Where a C field names a coordinate (-1: log p or none).
    _COORDINATES = ("rhat_where", "ess_bulk_where", "ess_tail_where", "burnin_where",
                    "coverage_where", "pile_up_where")
    # Where a C field names a chain (-1: none).
    _CHAINS = ("outlier_chain", "stuck_chain", "copied_chain")

    rhat_max: float
    rhat_where: Optional[str]
    rhat_crit: float
    ess_bulk_min: float
    ess_bulk_where: Optional[str]
    ess_tail_min: float
    ess_tail_where: Optional[str]
    burnin_z: float
    burnin_where: Optional[str]
    n_outlier_chains: int
    outlier_chain: Optional[int]
    n_stuck_chains: int
    stuck_chain: Optional[int]
    spot_checked: int
    spot_max_diff: float
    pareto_k_q: float
    pareto_k_p: float
    pareto_k_threshold: float
    crossfit_z: float
    consistency_z: float
    is_z: float
    hm_z: float
    coverage_frac: float
    coverage_limit: float
    coverage_where: Optional[str]
    coverage_side: int
    coverage_calls: int
    n_copied_groups: int
    copied_chain: Optional[int]
    step_corr_max: float
    interleave_period: int
    interleave_rho: float
    sign_corr: float
    outside_share: float
    pile_up_where: Optional[str]
    pile_up_ratio: float
    coverage_covered: float
    coverage_ks: float
    coverage_ks_limit: float
    coverage_ks_at: float
    anneal_steps: int
    anneal_calls: int
    census_modes: int
    census_shortfall: float
    census_calls: int
    symmetry_calls: int

    def __init__(self, **values: Any) -> None:
        self._labels: Optional[List[str]] = None
        self._summary: Optional[str] = None
        for k in self._FIELDS:
            setattr(self, k, values.pop(k, None if k.endswith("_where") else math.nan))
        if values:
            raise TypeError("unknown diagnostics %s" % ", ".join(sorted(values)))

    @classmethod
    def from_c(cls, c: Any, labels: Optional[Sequence[str]] = None, ext: Any = None,
               summary: Optional[str] = None) -> "Diagnostics":
        """From the library's gbs_diagnostics struct c and, when given,
        its gbs_diagnostics_ext ext: integer fields as int, and each
        "where" field (a coordinate, or -1 for log p) as the coordinate's
        name (``labels[k]`` when given, such as ``"mu"`` or
        ``"theta[3]"``, else ``"x[k]"``) or "log p", or None when the
        value it locates (the struct's first field of the same name before
        "_where") was not computed. ``summary`` is the library's one-line
        text of them, with the coordinates named."""
        v: Dict[str, Any] = {}
        for struct in (c, ext):
            if struct is None:
                continue
            for f in struct._fields_:
                k, ctype = f[0], f[1]
                if k == "size":
                    continue
                value = getattr(struct, k)
                if k in cls._COORDINATES:
                    located = next(f for f in cls._FIELDS if f.startswith(k[: -len("where")]) and f != k)
                    v[k] = None if math.isnan(getattr(struct, located)) else (
                        _QUANTITIES.get(int(value), "log p") if value < 0 else coordinate_name(int(value), labels))
                else:
                    v[k] = int(value) if issubclass(ctype, ctypes.c_int64) else float(value)
        # The coverage check names a quantity only when one had points
        # beyond the draws' range (coverage_side != 0); no pile-up is -1.
        if v.get("coverage_side") == 0:
            v["coverage_where"] = None
        if v.get("pile_up_where") == "log p":
            v["pile_up_where"] = None
        # The library's -1 for "no such chain" is None here, as a missing
        # coordinate location is.
        for k in cls._CHAINS:
            if k in v and v[k] < 0:
                v[k] = None
        d = cls(**v)
        d._labels = None if labels is None else list(labels)
        d._summary = summary
        return d

    def __getitem__(self, key: str) -> Any:
        if key not in self._FIELDS:
            raise KeyError(key)
        return getattr(self, key)

    def keys(self) -> List[str]:
        return list(self._FIELDS)

    def as_dict(self) -> Dict[str, Any]:
        """The fields as a dict (nan kept as float nan)."""
        return {k: getattr(self, k) for k in self._FIELDS}

    def to_c(self) -> Any:
        """The fields as the library's gbs_diagnostics struct (a "where"
        field back to its coordinate, -1 for log p or none; an integer not
        computed as 0, or -1 for a chain)."""
        c = _lib.CDiagnostics()
        for f in _lib.CDiagnostics._fields_:
            k, ctype = f[0], f[1]
            v = getattr(self, k)
            if k in self._COORDINATES:
                v = coordinate_index(v, self._labels)
            elif issubclass(ctype, ctypes.c_int64):
                # Not computed: no chain (-1), a count of 0.
                v = int(v) if v is not None and math.isfinite(v) else -1 if k.endswith("_chain") else 0
            elif v is None:
                v = math.nan
            setattr(c, k, v)
        return c

    def summary(self) -> str:
        """One line of the main numbers, the library's text
        (gbs_diagnostics_summary, Go's Diagnostics.String), with the
        coordinates named as the estimate named them; empty when none was
        computed."""
        if self._summary is not None:
            return self._summary
        c = self.to_c()
        n = ctypes.c_int64()
        _lib.call(_lib.lib.gbs_diagnostics_summary, ctypes.byref(c), None, 0, ctypes.byref(n))
        buf = ctypes.create_string_buffer(n.value + 1)
        _lib.call(_lib.lib.gbs_diagnostics_summary, ctypes.byref(c), buf, n.value + 1, ctypes.byref(n))
        return buf.value.decode("utf-8", "replace")

    def __repr__(self) -> str:
        return "Diagnostics(%s)" % self.summary()


_METHOD_TITLES = {"bridge": "Gaussianized bridge sampling", "is": "importance sampling",
                  "hm": "reciprocal importance sampling (harmonic mean)",
                  "warp3": "warp-III bridge sampling"}


def _dim_index(i: Union[int, str], names: Optional[List[str]], d: int) -> int:
    """A coordinate of the plot, given by index or by column name."""
    if isinstance(i, str):
        if not names or i not in names:
            raise ValueError("dims: no coordinate named %r%s" % (
                i, "" if not names else " (the names are %s)" % ", ".join(names[:12])))
        return names.index(i)
    k = int(i)
    if k != i:
        raise ValueError("dims must be coordinates in 0..%d, not %r" % (d - 1, i))
    return k
