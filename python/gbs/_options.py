"""The options of an evidence computation: checked once, packed into the
library's struct, shared by :func:`gbs.evidence` and the adapters
(:func:`gbs.from_pymc`, :func:`gbs.from_numpyro`)."""

from __future__ import annotations

import ctypes
from dataclasses import dataclass
from typing import Any, Callable, Optional, Sequence, Tuple, Union

import numpy as np

from . import _lib
from ._arrays import bounds_arrays, check_seed, integer, positive_int, ptr, seed_value

ProgressArg = Union[bool, Callable[[str], Any]]
Groups = Tuple[Tuple[Tuple[int, ...], ...], ...]


def symmetry_groups_arg(groups: Any) -> Optional[Groups]:
    """``symmetry_groups`` checked: a sequence of groups, each a sequence
    of K >= 2 blocks, each block a coordinate index or a sequence of L
    indices (one L per group). ``[[0, 1]]`` exchanges coordinates 0 and 1;
    ``[[[0, 2], [1, 3]]]`` exchanges (x0, x2) with (x1, x3)."""
    if groups is None:
        return None
    out = []
    for gi, g in enumerate(groups):
        try:
            blocks = tuple(tuple(integer(k, "symmetry_groups[%d]" % gi) for k in
                                 (b if isinstance(b, (list, tuple, np.ndarray)) else [b])) for b in g)
        except TypeError:
            raise TypeError("symmetry_groups[%d] must be a sequence of blocks (coordinate indices or "
                            "sequences of them), not %r" % (gi, g)) from None
        if len(blocks) < 2 or len({len(b) for b in blocks}) != 1 or not blocks[0]:
            raise ValueError("symmetry_groups[%d] must hold at least 2 blocks of one non-zero length, "
                             "not %r" % (gi, g))
        out.append(blocks)
    return tuple(out)


@dataclass
class EvidenceSettings:
    """What :func:`gbs.evidence` does with the draws, whatever they came
    from: the checked keyword arguments of the estimator."""

    method: str = "bridge"
    n_q: int = 0          # 0: the adaptive rule
    seed: Any = None      # as given; resolved by resolve_seed()
    bounds: Any = None
    pool: Any = None
    progress: ProgressArg = False
    discard: int = 0
    thin: int = 1
    independent: bool = False
    ensemble: bool = False  # the chains are an ensemble's walkers (from the samples, not a keyword)
    ncall: Optional[int] = None
    batch_size: int = 0   # 0: the library's default
    f_err: float = 0.0    # 0: the library's default
    f_eva: float = 0.0
    cross_fit: bool = True
    coverage_check: bool = True
    anneal: str = "auto"
    mode_census: str = "auto"
    symmetry: str = "auto"
    symmetry_groups: Optional[Groups] = None  # checked: groups of blocks of coordinates
    name: Optional[str] = None  # Result.name
    repetitions: int = 1        # independent proposal sets


def check_settings(method: str = "bridge", n_q: Optional[int] = None, seed: Any = None,
                   bounds: Any = None, pool: Any = None, progress: ProgressArg = False,
                   discard: int = 0, thin: int = 1, independent: bool = False,
                   ncall: Optional[int] = None, batch_size: Optional[int] = None,
                   f_err: Optional[float] = None, f_eva: Optional[float] = None,
                   cross_fit: bool = True, coverage_check: bool = True, anneal: str = "auto",
                   symmetry: str = "auto", symmetry_groups: Any = None,
                   name: Optional[str] = None, repetitions: int = 1,
                   mode_census: str = "auto") -> EvidenceSettings:
    """The estimator's keyword arguments, checked: a ValueError or
    TypeError naming the argument for a bad one. Adapters pass their
    ``**evidence_kwargs`` here, so an unknown name is a TypeError."""
    if method not in _lib.METHODS:
        raise ValueError("method must be one of %s, not %r" % (", ".join(map(repr, _lib.METHODS)), method))
    if anneal not in _lib.ANNEAL:
        raise ValueError("anneal must be one of %s, not %r" % (", ".join(map(repr, _lib.ANNEAL)), anneal))
    if mode_census not in _lib.MODE_CENSUS:
        raise ValueError("mode_census must be one of %s, not %r"
                         % (", ".join(map(repr, _lib.MODE_CENSUS)), mode_census))
    if symmetry not in _lib.SYMMETRY:
        raise ValueError("symmetry must be one of %s, not %r" % (", ".join(map(repr, _lib.SYMMETRY)), symmetry))
    discard_i = integer(discard, "discard")
    if discard_i < 0:
        raise ValueError("discard must be an integer >= 0, not %r" % (discard,))
    for arg, v in (("f_err", f_err), ("f_eva", f_eva)):
        if v is not None and not 0 < v < 1:
            raise ValueError("%s must be in (0, 1), not %r" % (arg, v))
    if ncall is not None:
        calls: int = integer(ncall, "ncall")
        if calls < 0:
            raise ValueError("ncall must be an integer >= 0, not %r" % (ncall,))
        ncall = calls
    return EvidenceSettings(
        method=method, n_q=positive_int(n_q, "n_q"), seed=check_seed(seed), bounds=bounds, pool=pool,
        progress=progress, discard=discard_i, thin=positive_int(thin, "thin", allow_none=False),
        independent=bool(independent), ncall=ncall, batch_size=positive_int(batch_size, "batch_size"),
        f_err=float(f_err or 0), f_eva=float(f_eva or 0), cross_fit=bool(cross_fit),
        coverage_check=bool(coverage_check), anneal=anneal, mode_census=mode_census, symmetry=symmetry,
        symmetry_groups=symmetry_groups_arg(symmetry_groups), name=None if name is None else str(name),
        repetitions=positive_int(repetitions, "repetitions", allow_none=False))


class PackedOptions:
    """The library's GbsEvidenceOptions for draws of dimension d, with the
    arrays its pointers refer to (kept alive by this object) and the seed
    actually used."""

    def __init__(self, s: EvidenceSettings, d: int, ncall: Optional[int],
                 labels: Optional[Sequence[str]] = None):
        self.lower: Optional[np.ndarray] = None
        self.upper: Optional[np.ndarray] = None
        if s.bounds is not None:
            self.lower, self.upper = bounds_arrays(s.bounds, d)
        self.seed: int = seed_value(s.seed)
        self.token = _lib.CancelToken()
        opt = _lib.new_struct(_lib.EvidenceOptions)
        opt.method = _lib.METHODS[s.method]
        opt.independent = (_lib.DRAWS_INDEPENDENT if s.independent else
                           _lib.DRAWS_ENSEMBLE if s.ensemble else _lib.DRAWS_CHAINS)
        opt.verbose = int(bool(s.progress))
        opt.n_q = s.n_q
        opt.batch_size = s.batch_size
        opt.ncall = int(ncall or 0)
        opt.seed = self.seed
        opt.f_err = s.f_err
        opt.f_eva = s.f_eva
        opt.lower, opt.upper = ptr(self.lower), ptr(self.upper)
        opt.cross_fit = 0 if s.cross_fit else 1
        opt.coverage_check = 0 if s.coverage_check else 1
        opt.anneal = _lib.ANNEAL[s.anneal]
        opt.mode_census = _lib.MODE_CENSUS[s.mode_census]
        opt.symmetry = _lib.SYMMETRY[s.symmetry]
        self.groups: Optional[np.ndarray] = None
        if s.symmetry_groups:
            flat = []
            for g in s.symmetry_groups:
                flat += [len(g), len(g[0])] + [k for b in g for k in b]
            self.groups = np.ascontiguousarray(flat, dtype=np.int64)
            opt.symmetry_groups = self.groups.ctypes.data_as(ctypes.POINTER(ctypes.c_int64))
            opt.n_symmetry_groups = len(flat)
        opt.cancel = self.token.handle
        # The library names the coordinates in its messages by labels.
        self.names: Any = None
        if labels is not None:
            if len(labels) != d:
                raise ValueError("%d coordinate labels for d = %d" % (len(labels), d))
            self.names = (ctypes.c_char_p * d)(*[str(v).encode("utf-8") for v in labels])
            opt.names = ctypes.cast(self.names, ctypes.POINTER(ctypes.c_char_p))
        self.struct = opt

    def byref(self) -> Any:
        return ctypes.byref(self.struct)
