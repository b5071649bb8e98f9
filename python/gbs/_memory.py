"""Output arrays whose size the caller chose: a size that cannot be
allocated is a ValueError naming it, not a MemoryError from deep inside
numpy (libgbs checks its own allocations the same way)."""

import numpy as np


def _format_bytes(b):
    for unit in ("B", "kB", "MB", "GB", "TB", "PB"):
        if b < 1000 or unit == "PB":
            return ("%d %s" if unit == "B" else "%.1f %s") % (b, unit)
        b /= 1000.0


def empty(shape, what):
    """np.empty(shape) of float64; ``what`` names the sizes, e.g.
    "n_chains × n_draws = 4 × 10^12 draws of dimension 2"."""
    need = 8
    for n in (shape if isinstance(shape, tuple) else (shape,)):
        need *= int(n)
    try:
        return np.empty(shape)
    except (MemoryError, ValueError) as e:
        raise ValueError("%s need %s, more than can be allocated (%s)"
                         % (what, _format_bytes(need), e)) from None
