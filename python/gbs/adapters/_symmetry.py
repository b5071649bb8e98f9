"""Candidate symmetries from a model's variables, for the adapters: the
vector variables of one length K >= 2 may be a mixture's exchangeable
components. The library checks each candidate against the log density
before using it, so a candidate that is not a symmetry costs one
log-density call and changes nothing."""

from __future__ import annotations

import dataclasses
from itertools import combinations
from typing import Any, Dict, List, Sequence, Tuple

from .._options import symmetry_groups_arg

# Variables of one length beyond which only each alone and all together
# are tried (2^L - 1 subsets otherwise).
_MAX_SUBSET_VARS = 4


def candidate_groups(shapes: Sequence[Tuple[int, ...]]) -> List[List[List[int]]]:
    """Groups of blocks of flattened coordinates (C order, variables in
    turn, with the given unconstrained shapes): for every length K >= 2,
    each 1-d variable of length K alone, and subsets of them together
    (component a's block holds entry a of each), finest first."""
    offsets, off = [], 0
    for s in shapes:
        offsets.append(off)
        n = 1
        for v in s:
            n *= int(v)
        off += n
    by_len: Dict[int, List[int]] = {}
    for i, s in enumerate(shapes):
        if len(s) == 1 and int(s[0]) >= 2:
            by_len.setdefault(int(s[0]), []).append(i)
    groups: List[List[List[int]]] = []
    for k, vars_ in sorted(by_len.items()):
        if len(vars_) <= _MAX_SUBSET_VARS:
            subsets = [c for r in range(1, len(vars_) + 1) for c in combinations(vars_, r)]
        else:
            subsets = [(v,) for v in vars_] + [tuple(vars_)]
        for sub in subsets:
            groups.append([[offsets[v] + a for v in sub] for a in range(k)])
    return groups


def with_candidates(settings: Any, shapes: Sequence[Tuple[int, ...]]) -> Any:
    """settings with the model's candidate groups, unless the caller gave
    groups or turned the search off."""
    if settings.symmetry == "off" or settings.symmetry_groups is not None:
        return settings
    groups = candidate_groups(shapes)
    if not groups:
        return settings
    return dataclasses.replace(settings, symmetry_groups=symmetry_groups_arg(groups))
