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

Silence them as any warning::

    import warnings
    warnings.simplefilter("ignore", gbs.GbsWarning)
"""

from __future__ import annotations

import os
import sys
import warnings
from typing import TYPE_CHECKING, Any, List, Optional, Sequence, Type

from ._lib import ERR_FAILED, GbsError

if TYPE_CHECKING:
    from .result import Result

__all__ = ["GbsWarning", "DiagnosticWarning", "SamplerWarning", "GbsWarningError", "emit"]


class GbsWarning(UserWarning):
    """A condition that makes a gbs result less reliable; the message says
    what is wrong and what to do. Never raised on a healthy run (the
    "Diagnostics" page of the documentation gives each check's threshold
    and false-alarm rate; :class:`gbs.Diagnostics` lists the thresholds)."""


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
    """

    def __init__(self, message: str, category: Type[GbsWarning], all_warnings: Sequence[str],
                 result: Optional["Result"] = None):
        super().__init__(ERR_FAILED, message)
        self.category = category
        self.warnings = list(all_warnings)
        self.result = result


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


def categories(result: "Result") -> List[Type[GbsWarning]]:
    """The warning class of each of result.warnings."""
    k = getattr(result, "n_sampler_warnings", 0)
    return [SamplerWarning if i < k else DiagnosticWarning for i in range(len(result.warnings))]


def refuse(messages: Sequence[str], category: Type[GbsWarning], result: Optional["Result"] = None
           ) -> None:
    """Raise GbsWarningError for the first of messages, if any."""
    if not messages:
        return
    more = len(messages) - 1
    text = "strict=True: %s%s" % (messages[0], " (and %d more warning%s)" % (more, "s" * (more > 1))
                                  if more else "")
    raise GbsWarningError(text, category, messages, result)


def warn_all(messages: Sequence[str], category: Type[GbsWarning]) -> None:
    """Raise each of messages as a category warning at the user's line."""
    level = _user_stacklevel()
    for msg in messages:
        warnings.warn(msg, category, stacklevel=level)


def emit(result: "Result", strict: bool = False) -> None:
    """Raise result's warnings through :mod:`warnings` (each with its
    class, at the user's line), or with ``strict`` raise a GbsWarningError
    for the first of them."""
    cats = categories(result)
    if strict and result.warnings:
        # The draws' problems first: they are the root of the others.
        refuse(result.warnings, cats[0], result)
    level = _user_stacklevel()
    for msg, cat in zip(result.warnings, cats):
        warnings.warn(msg, cat, stacklevel=level)
