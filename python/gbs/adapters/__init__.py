"""Adapters: ln Z straight from a probabilistic programming library's model
and posterior draws. One module per ecosystem; each imports its library
only when called, so ``import gbs`` needs numpy alone.

- :func:`gbs.from_pymc` (``pip install pymc``, or the ``pymc`` extra)
- :func:`gbs.from_numpyro` (``pip install numpyro``, or the ``numpyro`` extra)
- :func:`gbs.from_stan` (``pip install pystan``, or the ``stan`` extra)
"""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import Optional


def require(module: str, extra: str, feature: str, package: Optional[str] = None) -> ModuleType:
    """Import an optional dependency, or raise an ImportError that names
    the extra which installs it; ``package`` is its name on PyPI when
    that is not the module's (PyStan's module is ``stan``)."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        top = package or module.split(".")[0]
        raise ImportError("%s needs %s: pip install %s (or install gbs with its %r extra: "
                          "pip install '.[%s]' from a checkout) (%s)"
                          % (feature, top, top, extra, extra, exc)) from exc
