"""gbs: Bayesian evidence (ln Z) from posterior samples.

Gaussianized bridge sampling (Jia & Seljak 2019) over the libgbs C library:

>>> import gbs
>>> res = gbs.evidence(log_prob, chain)      # doctest: +SKIP
>>> print(res.logz, res.logzerr)             # doctest: +SKIP
"""

from ._lib import GbsError, version
from .evidence import evidence
from .flow import Flow
from .result import Result
from .sampling import Samples, sample, sample_ensemble

__all__ = ["evidence", "sample", "sample_ensemble", "Flow", "Result", "Samples", "GbsError", "version", "set_threads"]
__version__ = "0.1.0"


def set_threads(n):
    """Cap the number of threads running Go code (0: all cores); returns the
    previous cap."""
    import ctypes

    from . import _lib
    prev = ctypes.c_int32()
    err = _lib.new_error()
    _lib.check(_lib.lib.gbs_set_threads(int(n), ctypes.byref(prev), ctypes.byref(err)), err)
    return prev.value
