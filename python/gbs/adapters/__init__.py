"""Adapters: ln Z straight from a probabilistic programming library's model
and posterior draws. One module per ecosystem; each imports its library
only when called, so ``import gbs`` needs numpy alone.

- :func:`gbs.from_pymc` (``pip install 'gbs-evidence[pymc]'``)
- :func:`gbs.from_numpyro` (``pip install 'gbs-evidence[numpyro]'``)
"""

from __future__ import annotations

import importlib
from types import ModuleType


def require(module: str, extra: str, feature: str) -> ModuleType:
    """Import an optional dependency, or raise an ImportError that names
    the extra which installs it."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise ImportError("%s needs %s: pip install 'gbs-evidence[%s]' (%s)"
                          % (feature, module.split(".")[0], extra, exc)) from exc
