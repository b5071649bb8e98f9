"""Findings: what a check found, typed.

Every check of the library has a stable ID (``"rhat"``, ``"coverage"``,
...) and a description; both are defined once, in the library, and read
here through the C ABI (``gbs_checks``, ``gbs_check_get_info``). A
:class:`Finding` is one check's outcome on one run: a warning about the
draws, a warning about the estimate, or information. Code branches on
``finding.check`` and ``finding.kind``, never on the message.
"""

from __future__ import annotations

import ctypes
import math
from typing import Any, Dict, List, Optional, Sequence, Tuple

from . import _lib

__all__ = ["Finding", "CheckInfo", "checks"]

KINDS = ("draws", "estimate", "info")


class CheckInfo:
    """One of the library's checks (see :func:`gbs.checks`).

    Attributes
    ----------
    id : str
        The stable ID, e.g. ``"rhat"``: a :class:`Finding`'s ``check``
        and a raised warning's ``.check``.
    code : int
        The check's code in C (``GBS_CHECK_*``).
    kind : str
        What its warnings are about: ``"draws"`` or ``"estimate"``
        (``"info"`` for a check that only informs); some checks also
        report information when what they found is harmless.
    title, meaning, action : str
        What it found, what that means for ln Z, and what to do.
    """

    def __init__(self, id: str, code: int, kind: str, title: str, meaning: str, action: str):
        self.id, self.code, self.kind = id, code, kind
        self.title, self.meaning, self.action = title, meaning, action

    def __repr__(self) -> str:
        return "CheckInfo(%r, %s: %s)" % (self.id, self.kind, self.title)


_TABLE: Optional[Dict[str, CheckInfo]] = None


def checks() -> Dict[str, CheckInfo]:
    """Every check of the library, by ID, in the order of their codes.

    >>> gbs.checks()["rhat"].title   # doctest: +SKIP
    'the chains have not mixed'
    """
    global _TABLE
    if _TABLE is None:
        n = ctypes.c_int64()
        _lib.call(_lib.lib.gbs_checks, None, 0, ctypes.byref(n))
        codes = (ctypes.c_int32 * n.value)()
        _lib.call(_lib.lib.gbs_checks, codes, n.value, ctypes.byref(n))
        table = {}
        for code in codes:
            c = _lib.new_struct(_lib.CCheckInfo)
            _lib.call(_lib.lib.gbs_check_get_info, code, ctypes.byref(c))
            info = CheckInfo(_text(c.id), int(code), _lib.KINDS[c.kind], _text(c.title),
                             _text(c.meaning), _text(c.action))
            table[info.id] = info
        _TABLE = table
    return dict(_TABLE)


def _text(b: Optional[bytes]) -> str:
    return "" if b is None else b.decode("utf-8", "replace")


class Finding:
    """What one check found on one run.

    Attributes
    ----------
    check : str
        The check's stable ID (a key of :func:`gbs.checks`).
    kind : str
        ``"draws"`` (a warning about the draws: convergence, layout,
        copies, the sampler), ``"estimate"`` (a warning about the
        estimate: overlap, consistency, coverage) or ``"info"`` (a fact
        that is not a warning).
    message : str
        What is wrong, its likely causes and what to do, in words.
    where : str or None
        The quantity it is about: a coordinate's name (the model's, or
        ``"x[k]"``), ``"log p"``, or None.
    value, limit : float
        The check's statistic and the threshold it was compared with
        (nan where there is none).
    """

    def __init__(self, check: str, kind: str, message: str, where: Optional[str] = None,
                 value: float = math.nan, limit: float = math.nan):
        if check not in checks():
            raise ValueError("unknown check %r (see gbs.checks())" % (check,))
        if kind not in KINDS:
            raise ValueError("kind must be one of %s, not %r" % (", ".join(KINDS), kind))
        self.check, self.kind, self.message = check, kind, str(message)
        self.where = where
        self.value, self.limit = float(value), float(limit)

    @property
    def is_warning(self) -> bool:
        """Whether the finding is a warning (about the draws or the
        estimate) rather than information."""
        return self.kind != "info"

    def as_dict(self) -> Dict[str, Any]:
        return {"check": self.check, "kind": self.kind, "message": self.message,
                "where": self.where, "value": self.value, "limit": self.limit}

    def __repr__(self) -> str:
        return "Finding(%r, %r, %.60r...)" % (self.check, self.kind, self.message)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Finding) and _same(self, other)

    __hash__ = None  # type: ignore[assignment]


def _same(a: Finding, b: Finding) -> bool:
    """Equal, counting nan statistics as equal."""
    def eq(x: float, y: float) -> bool:
        return x == y or (math.isnan(x) and math.isnan(y))
    return (a.check, a.kind, a.message, a.where) == (b.check, b.kind, b.message, b.where) and \
        eq(a.value, b.value) and eq(a.limit, b.limit)


def order(findings: Sequence[Finding]) -> List[Finding]:
    """findings with the warnings about the draws first, then those about
    the estimate, then information (the library's order), stably."""
    return sorted(findings, key=lambda f: KINDS.index(f.kind))


def take_report(report: Any, labels: Optional[Sequence[str]]) -> Tuple[List[Finding], Any, str]:
    """The findings, the diagnostics beyond gbs_diagnostics and the
    summary text of a gbs_report handle, which this frees. ``labels``
    name the coordinates a finding's ``where`` refers to."""
    from .result import coordinate_name
    if not report:
        raise _lib.GbsError(_lib.ERR_INTERNAL, "the library returned no report")
    try:
        n = ctypes.c_int64()
        _lib.call(_lib.lib.gbs_report_n_findings, report, ctypes.byref(n))
        found = []
        for i in range(n.value):
            f = _lib.new_struct(_lib.CFinding)
            _lib.call(_lib.lib.gbs_report_finding, report, i, ctypes.byref(f))
            where = None if f.where == _lib.WHERE_NONE else "log p" if f.where < 0 else \
                coordinate_name(int(f.where), labels)
            found.append(Finding(checks_by_code()[f.check], _lib.KINDS[f.kind], _text(f.message),
                                 where, f.value, f.limit))
        ext = _lib.new_struct(_lib.CDiagnosticsExt)
        _lib.call(_lib.lib.gbs_report_diagnostics_ext, report, ctypes.byref(ext))
        length = ctypes.c_int64()
        _lib.call(_lib.lib.gbs_report_summary, report, None, 0, ctypes.byref(length))
        buf = ctypes.create_string_buffer(length.value + 1)
        _lib.call(_lib.lib.gbs_report_summary, report, buf, length.value + 1, ctypes.byref(length))
        return found, ext, _text(buf.value)
    finally:
        _lib.call(_lib.lib.gbs_report_free, report)


def checks_by_code() -> Dict[int, str]:
    """Check IDs by their C code."""
    return {c.code: c.id for c in checks().values()}
