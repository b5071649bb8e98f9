"""Model comparison from evidences: log Bayes factors and posterior model
probabilities, with errors propagated from the ln Z errors.

The probabilities' errors are Monte Carlo over the ln Z errors, as
bridgesampling's ``post_prob`` does over repeated estimates: each model's
ln Z is drawn from a normal with its estimate and error, the posterior
probabilities are computed for each draw, and their standard deviation is
reported. The estimates themselves are those of the estimated ln Z.
"""

from __future__ import annotations

import html
import math
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple, Union

import numpy as np

__all__ = ["bayes_factor", "compare", "Comparison"]

Evidence = Any  # a gbs.Result, or anything with logz and logzerr, or a pair


def _logz(r: Evidence, name: str) -> Tuple[float, float]:
    if hasattr(r, "logz") and hasattr(r, "logzerr"):
        lz, err = r.logz, r.logzerr
    else:
        try:
            lz, err = r
        except (TypeError, ValueError):
            raise TypeError("%s must be a gbs.Result or a pair (ln Z, error), not %r"
                            % (name, type(r).__name__)) from None
    lz, err = float(lz), float(err)
    if not math.isfinite(lz) or not (err >= 0 and math.isfinite(err)):
        raise ValueError("%s: ln Z = %r +/- %r; both must be finite and the error >= 0"
                         % (name, lz, err))
    return lz, err


def bayes_factor(a: Evidence, b: Evidence) -> Tuple[float, float]:
    """The log Bayes factor ln(Z_a / Z_b) of model a against model b, and
    its standard error.

    Parameters
    ----------
    a, b : gbs.Result or (float, float)
        The evidences of the two models (or pairs ln Z, error), each
        computed from the model's own draws.

    Returns
    -------
    (float, float)
        ``ln B_ab = ln Z_a - ln Z_b`` in nats and its error
        ``sqrt(err_a^2 + err_b^2)`` (the two estimates are independent).
        Positive favours a; ``math.exp`` gives the Bayes factor itself.
    """
    za, ea = _logz(a, "a")
    zb, eb = _logz(b, "b")
    return za - zb, math.hypot(ea, eb)


class Comparison:
    """The table :func:`compare` returns: one row per model.

    Attributes
    ----------
    names : list of str
    logz, logzerr : numpy.ndarray
        Each model's ln Z and its error.
    log_bf, log_bf_err : numpy.ndarray
        ln Z - ln Z of the best model (the largest ln Z), and its error
        (0 for the best itself).
    prior : numpy.ndarray
        Prior model probabilities (normalized).
    prob, prob_err : numpy.ndarray
        Posterior model probabilities (they sum to 1) and their Monte Carlo
        standard errors.
    best : str
        The model with the largest ln Z.
    """

    def __init__(self, names: List[str], logz: np.ndarray, logzerr: np.ndarray, prior: np.ndarray,
                 prob: np.ndarray, prob_err: np.ndarray, n_mc: int):
        self.names = names
        self.logz, self.logzerr, self.prior = logz, logzerr, prior
        self.prob, self.prob_err = prob, prob_err
        b = int(np.argmax(logz))
        self.best = names[b]
        self.log_bf = logz - logz[b]
        self.log_bf_err = np.hypot(logzerr, logzerr[b])
        self.log_bf_err[b] = 0.0
        self.n_mc = n_mc

    def rows(self) -> List[Dict[str, Any]]:
        """The table as a list of dicts, one per model."""
        return [{"model": n, "logz": float(self.logz[i]), "logzerr": float(self.logzerr[i]),
                 "log_bf": float(self.log_bf[i]), "log_bf_err": float(self.log_bf_err[i]),
                 "prior": float(self.prior[i]), "prob": float(self.prob[i]),
                 "prob_err": float(self.prob_err[i])} for i, n in enumerate(self.names)]

    def to_pandas(self) -> Any:
        """The table as a pandas DataFrame indexed by model name (needs
        pandas)."""
        try:
            import pandas as pd
        except ImportError:
            raise ImportError("Comparison.to_pandas needs pandas: pip install pandas") from None
        return pd.DataFrame(self.rows()).set_index("model")

    def __len__(self) -> int:
        return len(self.names)

    def __str__(self) -> str:
        w = max(5, max(len(n) for n in self.names))
        head = "%-*s  %22s  %22s  %20s" % (w, "model", "ln Z", "ln BF vs best", "P(model | data)")
        lines = [head, "-" * len(head)]
        for r in self.rows():
            bf = ("%10.3f +/- %7.3f" % (r["log_bf"], r["log_bf_err"]) if r["model"] != self.best
                  else "%10s %11s" % ("best", ""))
            lines.append("%-*s  %10.3f +/- %7.3f  %22s  %8.4f +/- %6.4f"
                         % (w, r["model"], r["logz"], r["logzerr"], bf, r["prob"], r["prob_err"]))
        if not np.allclose(self.prior, self.prior[0]):
            lines.append("prior: " + ", ".join("%s %.3g" % (n, p) for n, p in zip(self.names, self.prior)))
        return "\n".join(lines)

    def __repr__(self) -> str:
        return "Comparison(%s)" % ", ".join("%s: ln Z=%.4g, P=%.3g" % (n, z, p) for n, z, p in
                                           zip(self.names, self.logz, self.prob))

    def _repr_html_(self) -> str:
        cells = []
        for r in self.rows():
            bf = ("best" if r["model"] == self.best else
                  "%.3f &plusmn; %.3f" % (r["log_bf"], r["log_bf_err"]))
            cells.append("<tr><th style='text-align:left'>%s</th><td>%.3f &plusmn; %.3f</td>"
                         "<td>%s</td><td>%.3g</td><td>%.4f &plusmn; %.4f</td></tr>"
                         % (html.escape(r["model"]), r["logz"], r["logzerr"], bf, r["prior"],
                            r["prob"], r["prob_err"]))
        head = ("<tr><th>model</th><th>ln Z</th><th>ln BF vs best</th><th>prior</th>"
                "<th>P(model | data)</th></tr>")
        return ("<div><p><b>gbs.compare</b></p><table>%s%s</table></div>" % (head, "".join(cells)))

    def _repr_pretty_(self, p: Any, cycle: bool) -> None:
        p.text(str(self) if not cycle else "Comparison(...)")


def compare(results: Mapping[str, Evidence], prior: Union[None, Mapping[str, float], Sequence[float]] = None,
            *, n_mc: int = 10000, seed: Optional[int] = 0) -> Comparison:
    """Compare models by their evidences.

    Parameters
    ----------
    results : mapping of str to gbs.Result (or (ln Z, error) pairs)
        The models, by name, each with its own evidence.
    prior : mapping or sequence of float, optional
        Prior model probabilities (any positive weights; normalized),
        by name or in the order of ``results``; default equal.
    n_mc : int, default 10000
        Monte Carlo draws of the ln Z values for the probabilities' errors.
    seed : int, optional
        Seed of those draws (the table is then reproducible).

    Returns
    -------
    Comparison
        ln Z +/- error, the log Bayes factor of each model against the
        best (with its error) and the posterior model probabilities
        ``P_i = prior_i Z_i / sum_j prior_j Z_j`` with Monte Carlo errors;
        prints as a text table, shows as an HTML table in Jupyter,
        ``.to_pandas()`` gives a DataFrame.
    """
    if not isinstance(results, Mapping) or not results:
        raise TypeError("results must be a non-empty mapping of model names to gbs.Result")
    names = [str(n) for n in results]
    pairs = [_logz(r, "results[%r]" % n) for n, r in results.items()]
    logz = np.array([p[0] for p in pairs])
    err = np.array([p[1] for p in pairs])
    if prior is None:
        w = np.ones(len(names))
    elif isinstance(prior, Mapping):
        unknown = set(map(str, prior)) - set(names)
        if unknown or len(prior) != len(names):
            raise ValueError("prior must give a probability for each model %s, got %s"
                             % (names, list(prior)))
        w = np.array([float(prior[n]) for n in results])
    else:
        w = np.asarray(prior, dtype=float)
        if w.shape != (len(names),):
            raise ValueError("prior: %d probabilities for %d models" % (w.size, len(names)))
    if not np.all(np.isfinite(w)) or np.any(w <= 0):
        raise ValueError("prior probabilities must be positive and finite, not %s" % (w,))
    w = w / w.sum()
    n_mc = int(n_mc)
    if n_mc < 2:
        raise ValueError("n_mc must be >= 2, not %r" % (n_mc,))
    prob = _posterior_probs(logz[None, :], w)[0]
    rng = np.random.default_rng(seed)
    draws = logz + err * rng.standard_normal((n_mc, len(names)))
    prob_err = _posterior_probs(draws, w).std(axis=0, ddof=1)
    return Comparison(names, logz, err, w, prob, prob_err, n_mc)


def _posterior_probs(logz: np.ndarray, prior: np.ndarray) -> np.ndarray:
    """Rows of ln Z -> rows of posterior model probabilities (a softmax of
    ln Z + ln prior, stable for ln Z of any size)."""
    a = logz + np.log(prior)
    a = a - a.max(axis=1, keepdims=True)
    e = np.exp(a)
    p: np.ndarray = e / e.sum(axis=1, keepdims=True)
    return p
