"""Warnings a user cannot miss: every warning of a Result is also raised
through Python's :mod:`warnings` module, at the user's line.

The hierarchy::

    UserWarning
    └── gbs.GbsWarning
        ├── gbs.DiagnosticWarning   the estimate (overlap of q and p, draws
        │                           and log density that disagree, the fit)
        └── gbs.SamplerWarning      the draws (convergence, burn-in, layout,
                                    copied or stuck chains, divergences)

``strict=True`` (on :func:`gbs.evidence`, :func:`gbs.from_pymc`,
:func:`gbs.from_numpyro`) raises :class:`gbs.GbsWarningError`, a
:class:`gbs.GbsError`, instead. Facts that are not warnings (a NUTS retry
that worked, n_q capped by memory) go to ``Result.info`` and are not
raised. Which list a message belongs to is decided once, in the Go core
(gbs/result.go); the adapters' own sampler checks add SamplerWarnings.

Each raised warning carries the finding it reports: ``.check`` (the
check's stable ID, see :func:`gbs.checks`) and ``.finding``. Silence them
as any warning, or one check by its ID::

    import warnings
    warnings.simplefilter("ignore", gbs.GbsWarning)

    with warnings.catch_warnings(record=True) as caught:
        res = gbs.evidence(log_prob, samples)
    checks = [w.message.check for w in caught]
"""

from __future__ import annotations

import os
import sys
import warnings
from typing import TYPE_CHECKING, Any, List, Optional, Sequence, Type

from ._lib import ERR_FAILED, GbsError

if TYPE_CHECKING:
    from ._findings import Finding
    from .result import Result

__all__ = ["GbsWarning", "DiagnosticWarning", "SamplerWarning", "GbsWarningError", "emit"]


class GbsWarning(UserWarning):
    """A condition that makes a gbs result less reliable; the message says
    what is wrong and what to do. Never raised on a healthy run (the
    "Diagnostics" page of the documentation gives each check's threshold
    and false-alarm rate; :class:`gbs.Diagnostics` lists the thresholds).

    Attributes
    ----------
    check : str or None
        The stable ID of the check that warned (a key of
        :func:`gbs.checks`): branch on it, never on the message.
    finding : gbs.Finding or None
        The finding the warning reports, with its numbers.
    """

    def __init__(self, message: str = "", finding: Optional["Finding"] = None):
        super().__init__(message)
        self.finding = finding
        self.check: Optional[str] = None if finding is None else finding.check


class DiagnosticWarning(GbsWarning):
    """A check of the estimate failed: the proposal and the draws barely
    overlap, the draws and the log density disagree, the estimators that
    share the proposal disagree... ln Z may be off by more than its error
    bar."""


class SamplerWarning(GbsWarning):
    """The draws may not represent the posterior (unmixed, unconverged,
    copied or stuck chains, burn-in left in, divergent transitions), so
    ln Z may be off by more than its error bar."""


class GbsWarningError(GbsError):
    """A warning that ``strict=True`` turned into an error.

    Attributes
    ----------
    category : type
        The warning class it would have been (:class:`gbs.SamplerWarning`
        or :class:`gbs.DiagnosticWarning`).
    warnings : list of str
        Every warning of the run (the message names the first).
    result : gbs.Result or None
        The result the warnings belong to (None when the sampler's checks
        refused the draws before any estimate).
    check : str
        The ID of the check of the first warning.
    """

    def __init__(self, message: str, category: Type[GbsWarning], all_warnings: Sequence[str],
                 result: Optional["Result"] = None, check: Optional[str] = None):
        super().__init__(ERR_FAILED, message)
        self.category = category
        self.warnings = list(all_warnings)
        self.result = result
        self.check = check


_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__)) + os.sep


def _user_stacklevel() -> int:
    """The stacklevel that makes warnings.warn, called from the function
    that calls this one, name the first frame outside the gbs package:
    the user's line, whichever gbs function they called (directly or
    through an adapter)."""
    level = 1
    frame: Any = sys._getframe(1)  # the caller of this function: level 1
    while frame is not None:
        fname = os.path.abspath(frame.f_code.co_filename)
        if not fname.startswith(_PACKAGE_DIR):
            return level
        frame = frame.f_back
        level += 1
    return level


def category(finding: "Finding") -> Type[GbsWarning]:
    """The warning class of a finding that is a warning."""
    return SamplerWarning if finding.kind == "draws" else DiagnosticWarning


def refuse(findings: Sequence["Finding"], result: Optional["Result"] = None) -> None:
    """Raise GbsWarningError for the first warning among findings, if any."""
    warns = [f for f in findings if f.is_warning]
    if not warns:
        return
    more = len(warns) - 1
    text = "strict=True: %s%s" % (warns[0].message, " (and %d more warning%s)" % (more, "s" * (more > 1))
                                  if more else "")
    raise GbsWarningError(text, category(warns[0]), [f.message for f in warns], result,
                          check=warns[0].check)


def warn_all(findings: Sequence["Finding"]) -> None:
    """Raise each warning among findings at the user's line."""
    level = _user_stacklevel()
    for f in findings:
        if f.is_warning:
            warnings.warn(category(f)(f.message, f), stacklevel=level)


def emit(result: "Result", strict: bool = False) -> None:
    """Raise result's warnings through :mod:`warnings` (each with its
    class and check, at the user's line), or with ``strict`` raise a
    GbsWarningError for the first of them (the draws' problems come first:
    they are the root of the others)."""
    if strict:
        refuse(result.findings, result)
    warn_all(result.findings)
