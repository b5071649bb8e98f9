"""Model comparison from evidences: Bayes factors and posterior model
probabilities, with errors propagated from the ln Z errors, ranked as
``arviz.compare`` ranks.

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

__all__ = ["bayes_factor", "compare", "Comparison", "BayesFactor", "error_measures"]

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


def _warning_count(r: Evidence) -> int:
    """How many warnings the evidence carries: those of a gbs.Result (or of
    anything with a ``warnings`` list), 0 for a pair (ln Z, error). The one
    place compare and bayes_factor read a result's warnings."""
    w = getattr(r, "warnings", None)
    return len(w) if w is not None else 0


# Kass & Raftery (1995), section 3.2: the strength of evidence by 2 ln B.
KASS_RAFTERY = ((2.0, "not worth more than a bare mention"), (6.0, "positive"),
                (10.0, "strong"), (math.inf, "very strong"))
# Jeffreys (1961), appendix B, as usually quoted: by B itself.
JEFFREYS = ((10 ** 0.5, "barely worth mentioning"), (10.0, "substantial"), (10 ** 1.5, "strong"),
            (100.0, "very strong"), (math.inf, "decisive"))


class BayesFactor(tuple):  # type: ignore[type-arg]
    """The Bayes factor B_ab = Z_a / Z_b of model a against model b, as
    :func:`bayes_factor` returns it.

    It is also the pair ``(ln B, error)`` that ``bayes_factor`` returned
    before it had a class: ``lbf, err = gbs.bayes_factor(a, b)`` and
    ``bf[0]`` still give the log Bayes factor and its error. ``float(bf)``
    is the Bayes factor itself, B = exp(ln B) (``inf`` when it overflows:
    use ``bf.log``).

    Attributes
    ----------
    log : float
        ln B_ab = ln Z_a - ln Z_b, in nats.
    log_err : float
        Its standard error, sqrt(err_a^2 + err_b^2) (the two estimates are
        independent).
    value : float
        B_ab = exp(ln B_ab).
    value_err : float
        Its first-order error, B_ab * log_err.
    names : (str, str)
        The two models' names (``Result.name``, or "a" and "b").
    favours, against : str
        The model with the larger evidence, and the other.
    strength : str
        The words of Kass and Raftery's scale for 2 abs(ln B) (see
        :meth:`interpret`).
    resolved : bool
        Whether the sign of ln B is resolved: abs(ln B) > 2 log_err. When it
        is not, the estimate cannot say which model is favoured.
    n_warnings : (int, int)
        How many warnings each model's result carries (0 for a pair ln Z,
        error). A result with warnings may be off by more than its error
        bar, and then so is ln B: the text says so.
    """

    log: float
    log_err: float
    names: Tuple[str, str]
    n_warnings: Tuple[int, int]

    def __new__(cls, log: float, log_err: float, names: Tuple[str, str] = ("a", "b"),
                n_warnings: Tuple[int, int] = (0, 0)) -> "BayesFactor":
        self = super().__new__(cls, (float(log), float(log_err)))
        self.log, self.log_err = float(log), float(log_err)
        self.names = (str(names[0]), str(names[1]))
        self.n_warnings = (int(n_warnings[0]), int(n_warnings[1]))
        return self

    def __getnewargs__(self) -> Tuple[Any, ...]:
        return (self.log, self.log_err, self.names, self.n_warnings)

    @property
    def value(self) -> float:
        try:
            return math.exp(self.log)
        except OverflowError:
            return math.inf

    @property
    def value_err(self) -> float:
        return self.value * self.log_err

    def __float__(self) -> float:
        return self.value

    @property
    def favours(self) -> str:
        return self.names[0] if self.log >= 0 else self.names[1]

    @property
    def against(self) -> str:
        return self.names[1] if self.log >= 0 else self.names[0]

    @property
    def resolved(self) -> bool:
        return abs(self.log) > 2 * self.log_err

    @property
    def strength(self) -> str:
        return self.interpret("kass-raftery")

    def interpret(self, scale: str = "kass-raftery") -> str:
        """The strength of the evidence for the favoured model, in words.

        Parameters
        ----------
        scale : {"kass-raftery", "jeffreys"}
            ``"kass-raftery"`` (Kass & Raftery 1995) by 2 abs(ln B): below 2
            "not worth more than a bare mention", 2 to 6 "positive", 6 to 10
            "strong", above 10 "very strong". ``"jeffreys"`` (Jeffreys
            1961) by B (or 1/B): below 10^0.5 "barely worth mentioning", to 10
            "substantial", to 10^1.5 "strong", to 100 "very strong", above
            "decisive".

        Returns
        -------
        str

        Notes
        -----
        These scales are conventions for reading B, not tests: the
        estimate's error (``log_err``) says whether the value is known
        well enough to read it at all (``resolved``).
        """
        table: Tuple[Tuple[float, str], ...]
        if scale in ("kass-raftery", "kass_raftery", "kr"):
            x, table = 2 * abs(self.log), KASS_RAFTERY
        elif scale == "jeffreys":
            x, table = math.exp(min(abs(self.log), 700.0)), JEFFREYS
        else:
            raise ValueError("scale must be 'kass-raftery' or 'jeffreys', not %r" % (scale,))
        for bound, words in table:
            if x < bound:
                return words
        return table[-1][1]

    def summary(self) -> str:
        """What the Bayes factor says, in one paragraph."""
        a, b = self.names
        if self.value == math.inf or self.value >= 1e6 or self.value < 1e-4:
            val = "exp(%.4g)" % self.log
        else:
            val = "%.4g" % self.value
        head = ("Bayes factor B(%s : %s) = %s, ln B = %.3f +/- %.3f"
                % (a, b, val, self.log, self.log_err))
        if not self.resolved:
            text = (head + "\n  not resolved: |ln B| is within 2 errors of 0, so the estimate does "
                    "not say which model the data favour (reduce the ln Z errors: more draws, a "
                    "larger n_q)")
        else:
            text = (head + "\n  in favour of %s over %s: %s evidence (Kass & Raftery: 2 ln B = %.2f; "
                    "Jeffreys: %s)" % (self.favours, self.against, self.strength, 2 * abs(self.log),
                                       self.interpret("jeffreys")))
        warned = [(n, k) for n, k in zip(self.names, self.n_warnings) if k]
        if warned:
            first = "%s's result carries %d warning%s" % (warned[0][0], warned[0][1],
                                                          "" if warned[0][1] == 1 else "s")
            if len(warned) == 2:
                first += " and %s's %d" % warned[1]
            text += ("\n  %s: ln Z may be off by more than its error bar, and then so is ln B; read "
                     "result.warnings before trusting this" % first)
        return text

    def __str__(self) -> str:
        return self.summary()

    def __repr__(self) -> str:
        return ("BayesFactor(log=%.6g, log_err=%.3g, names=%r)" % (self.log, self.log_err, self.names))

    def _repr_pretty_(self, p: Any, cycle: bool) -> None:
        p.text(self.summary())


def bayes_factor(a: Evidence, b: Evidence) -> BayesFactor:
    """The Bayes factor Z_a / Z_b of model a against model b, with its log
    and error, and which model it favours.

    Parameters
    ----------
    a, b : gbs.Result or (float, float)
        The evidences of the two models (or pairs ln Z, error), each
        computed from the model's own draws.

    Returns
    -------
    BayesFactor
        ``.log`` = ln B_ab = ln Z_a - ln Z_b in nats and ``.log_err`` =
        sqrt(err_a^2 + err_b^2); ``.value`` (also ``float(bf)``) = B_ab;
        ``.favours`` and ``.strength`` (Kass & Raftery's words). It
        unpacks as the pair ``(ln B, error)``: ``lbf, err =
        gbs.bayes_factor(a, b)``. Printing it says which model the data
        favour and how strongly, and whether either result carries
        warnings (``.n_warnings``).

    Examples
    --------
    >>> bf = gbs.bayes_factor((-10.0, 0.03), (-12.5, 0.04))
    >>> round(bf.log, 3), round(bf.value, 2), bf.strength
    (2.5, 12.18, 'positive')
    """
    za, ea = _logz(a, "a")
    zb, eb = _logz(b, "b")
    names = (_name(a, "a"), _name(b, "b"))
    if names[0] == names[1]:
        names = (names[0] + " (a)", names[1] + " (b)")
    return BayesFactor(za - zb, math.hypot(ea, eb), names, (_warning_count(a), _warning_count(b)))


def _name(r: Evidence, default: str) -> str:
    n = getattr(r, "name", None)
    return default if n is None else str(n)


class Comparison:
    """The table :func:`compare` returns: one row per model, ranked by ln Z
    (the best first), as ``arviz.compare`` ranks by ELPD.

    Attributes
    ----------
    names : list of str
        The models, best first.
    rank : numpy.ndarray of int
        0 for the model with the largest ln Z, 1 for the next...
    logz, logzerr : numpy.ndarray
        Each model's ln Z and its error.
    log_bf, log_bf_err : numpy.ndarray
        ln Z - ln Z of the best model (<= 0: the log Bayes factor against
        the best) and its error (0 for the best itself).
    dlogz : numpy.ndarray
        -log_bf: how far below the best each model is, in nats (as
        ``elpd_diff`` in ``arviz.compare``).
    prior : numpy.ndarray
        Prior model probabilities (normalized).
    prob, prob_err : numpy.ndarray
        Posterior model probabilities (they sum to 1; ``arviz.compare``'s
        ``weight``) and their Monte Carlo standard errors.
    n_warnings : numpy.ndarray of int
        How many warnings each model's result carries (0 for a pair ln Z,
        error), as the ``warning`` column of ``arviz.compare``: a model
        whose result has warnings may be ranked on an ln Z that is off by
        more than its error bar. Printed as the column "warnings".
    best : str
        The model with the largest ln Z.
    """

    def __init__(self, names: List[str], logz: np.ndarray, logzerr: np.ndarray, prior: np.ndarray,
                 prob: np.ndarray, prob_err: np.ndarray, n_mc: int,
                 n_warnings: Optional[np.ndarray] = None):
        order = np.argsort(-logz, kind="stable")
        self.names = [names[i] for i in order]
        self.logz, self.logzerr, self.prior = logz[order], logzerr[order], prior[order]
        self.prob, self.prob_err = prob[order], prob_err[order]
        warned = np.zeros(len(names), dtype=np.int64) if n_warnings is None else np.asarray(n_warnings)
        self.n_warnings: np.ndarray = warned.astype(np.int64)[order]
        self.rank = np.arange(len(names))
        self.best = self.names[0]
        self.log_bf = self.logz - self.logz[0]
        self.log_bf_err = np.hypot(self.logzerr, self.logzerr[0])
        self.log_bf_err[0] = 0.0
        self.dlogz = -self.log_bf
        self.n_mc = n_mc

    @property
    def weight(self) -> np.ndarray:
        """The posterior model probabilities (``prob``), under
        ``arviz.compare``'s name."""
        p: np.ndarray = self.prob
        return p

    def rows(self) -> List[Dict[str, Any]]:
        """The table as a list of dicts, one per model, best first."""
        return [{"model": n, "rank": int(self.rank[i]), "logz": float(self.logz[i]),
                 "logzerr": float(self.logzerr[i]), "log_bf": float(self.log_bf[i]),
                 "log_bf_err": float(self.log_bf_err[i]), "prior": float(self.prior[i]),
                 "prob": float(self.prob[i]), "prob_err": float(self.prob_err[i]),
                 "warnings": int(self.n_warnings[i])}
                for i, n in enumerate(self.names)]

    def to_dataframe(self) -> Any:
        """The table as a pandas DataFrame indexed by model name, best
        first (needs pandas)."""
        try:
            import pandas as pd
        except ImportError:
            raise ImportError("Comparison.to_dataframe needs pandas: pip install pandas") from None
        return pd.DataFrame(self.rows()).set_index("model")

    to_pandas = to_dataframe

    def bayes_factor(self, a: str, b: Optional[str] = None) -> "BayesFactor":
        """The Bayes factor of model a against model b (default: against
        the best model; against the second best when a is the best)."""
        if a not in self.names:
            raise KeyError("no model %r (the models are %s)" % (a, ", ".join(self.names)))
        if b is None:
            b = self.names[1] if a == self.best and len(self.names) > 1 else self.best
        if b not in self.names:
            raise KeyError("no model %r (the models are %s)" % (b, ", ".join(self.names)))
        i, j = self.names.index(a), self.names.index(b)
        return BayesFactor(self.logz[i] - self.logz[j], math.hypot(self.logzerr[i], self.logzerr[j]),
                           (a, b), (int(self.n_warnings[i]), int(self.n_warnings[j])))

    def __len__(self) -> int:
        return len(self.names)

    def _warned_note(self) -> str:
        """A line naming the models whose results carry warnings ("" when
        none does)."""
        warned = ["%s (%d)" % (n, k) for n, k in zip(self.names, self.n_warnings) if k]
        if not warned:
            return ""
        return ("warnings: %s: ranked on ln Z that may be off by more than its error; read "
                "result.warnings" % ", ".join(warned))

    def __str__(self) -> str:
        w = max(5, max(len(n) for n in self.names))
        head = "%4s  %-*s  %22s  %22s  %20s  %8s" % ("rank", w, "model", "ln Z", "ln BF vs best",
                                                     "P(model | data)", "warnings")
        lines = [head, "-" * len(head)]
        for r in self.rows():
            bf = ("%10.3f +/- %7.3f" % (r["log_bf"], r["log_bf_err"]) if r["rank"] != 0
                  else "%10s %11s" % ("best", ""))
            lines.append("%4d  %-*s  %10.3f +/- %7.3f  %22s  %8.4f +/- %6.4f  %8d"
                         % (r["rank"], w, r["model"], r["logz"], r["logzerr"], bf, r["prob"],
                            r["prob_err"], r["warnings"]))
        if not np.allclose(self.prior, self.prior[0]):
            lines.append("prior: " + ", ".join("%s %.3g" % (n, p) for n, p in zip(self.names, self.prior)))
        note = self._warned_note()
        if note:
            lines.append(note)
        return "\n".join(lines)

    def __repr__(self) -> str:
        return "Comparison(%s)" % ", ".join("%s: ln Z=%.4g, P=%.3g" % (n, z, p) for n, z, p in
                                           zip(self.names, self.logz, self.prob))

    def _repr_html_(self) -> str:
        cells = []
        for r in self.rows():
            bf = ("best" if r["rank"] == 0 else
                  "%.3f &plusmn; %.3f" % (r["log_bf"], r["log_bf_err"]))
            cells.append("<tr><td>%d</td><th style='text-align:left'>%s</th><td>%.3f &plusmn; %.3f</td>"
                         "<td>%s</td><td>%.3g</td><td>%.4f &plusmn; %.4f</td><td>%d</td></tr>"
                         % (r["rank"], html.escape(r["model"]), r["logz"], r["logzerr"], bf,
                            r["prior"], r["prob"], r["prob_err"], r["warnings"]))
        head = ("<tr><th>rank</th><th>model</th><th>ln Z</th><th>ln BF vs best</th><th>prior</th>"
                "<th>P(model | data)</th><th>warnings</th></tr>")
        note = self._warned_note()
        foot = "<p>%s</p>" % html.escape(note) if note else ""
        return ("<div><p><b>gbs.compare</b></p><table>%s%s</table>%s</div>"
                % (head, "".join(cells), foot))

    def _repr_pretty_(self, p: Any, cycle: bool) -> None:
        p.text(str(self) if not cycle else "Comparison(...)")


def _named(results: Any) -> List[Tuple[str, Evidence]]:
    """(name, evidence) pairs from a mapping or a sequence; the names of a
    sequence's items are their ``name`` (``gbs.evidence(..., name=...)``)
    or "model_i"."""
    if isinstance(results, Mapping):
        items = [(str(n), r) for n, r in results.items()]
    elif isinstance(results, (str, bytes)) or not isinstance(results, Sequence):
        raise TypeError("results must be a mapping of model names to gbs.Result, or a sequence "
                        "of gbs.Result (named by gbs.evidence(..., name=...)), not %s"
                        % type(results).__name__)
    else:
        items = [(_name(r, "model_%d" % i), r) for i, r in enumerate(results)]
    if not items:
        raise ValueError("results is empty: compare needs at least one model")
    names = [n for n, _ in items]
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        raise ValueError("two models are named %s; give each result its own name (gbs.evidence(..., "
                         "name=...), or result.name = ...) or pass a mapping {name: result}"
                         % ", ".join(map(repr, dup)))
    return items


def compare(results: Union[Mapping[str, Evidence], Sequence[Evidence]],
            prior: Union[None, Mapping[str, float], Sequence[float]] = None,
            *, n_mc: int = 10000, seed: Optional[int] = 0) -> Comparison:
    """Compare models by their evidences, ranked as ``arviz.compare`` ranks
    (the best first).

    Parameters
    ----------
    results : mapping of str to gbs.Result, or sequence of gbs.Result
        The models, each with its own evidence (a ``(ln Z, error)`` pair is
        accepted for a result). A mapping names them; the items of a
        sequence are named by their ``name`` (``gbs.evidence(...,
        name="A")``, or ``result.name = "A"``), else ``"model_0"``,
        ``"model_1"``...
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
        Rows ranked by ln Z, best first: rank, ln Z +/- error, the log
        Bayes factor against the best (``log_bf``, <= 0, with its error;
        ``dlogz = -log_bf``), and the posterior model probabilities
        ``P_i = prior_i Z_i / sum_j prior_j Z_j`` with Monte Carlo errors
        (``prob``, also ``weight``), and how many warnings each model's
        result carries (``n_warnings``, the column "warnings", as
        ``arviz.compare``'s warning column; the table names the models
        that have any). Prints as a text table, shows as an HTML table in
        Jupyter; ``.to_dataframe()`` gives a pandas DataFrame,
        ``.bayes_factor("A", "B")`` a :class:`BayesFactor`.

    Notes
    -----
    The probabilities' errors are Monte Carlo over the ln Z errors, as
    bridgesampling's ``post_prob`` does over repeated estimates: each
    model's ln Z is drawn from a normal with its estimate and error, the
    probabilities are computed for each draw, and their standard deviation
    is reported.
    """
    items = _named(results)
    names = [n for n, _ in items]
    pairs = [_logz(r, "results[%r]" % n) for n, r in items]
    logz = np.array([p[0] for p in pairs])
    err = np.array([p[1] for p in pairs])
    if prior is None:
        w = np.ones(len(names))
    elif isinstance(prior, Mapping):
        unknown = set(map(str, prior)) - set(names)
        if unknown or len(prior) != len(names):
            raise ValueError("prior must give a probability for each model %s, got %s"
                             % (names, list(prior)))
        w = np.array([float(prior[n]) for n in names])
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
    warned = np.array([_warning_count(r) for _, r in items], dtype=np.int64)
    return Comparison(names, logz, err, w, prob, prob_err, n_mc, warned)


def error_measures(result: Any) -> Any:
    """The error of the evidence Z of a result, as bridgesampling's
    ``error_measures``: ``result.error_measures()`` (a
    :class:`gbs.ErrorMeasures`: re2, cv, percentage, and the spread of
    the repetitions when there are any)."""
    if not hasattr(result, "error_measures"):
        raise TypeError("error_measures takes a gbs.Result, not %s" % type(result).__name__)
    return result.error_measures()


def _posterior_probs(logz: np.ndarray, prior: np.ndarray) -> np.ndarray:
    """Rows of ln Z -> rows of posterior model probabilities (a softmax of
    ln Z + ln prior, stable for ln Z of any size)."""
    a = logz + np.log(prior)
    a = a - a.max(axis=1, keepdims=True)
    e = np.exp(a)
    p: np.ndarray = e / e.sum(axis=1, keepdims=True)
    return p
