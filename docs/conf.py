"""Sphinx configuration of gbs's documentation: `make docs` builds it into
build/docs/html from a staging copy (build/docs-src) of docs/, the example
notebooks and the C headers, with warnings treated as errors."""

import os
import sys

# The repository's root: make docs sets GBS_ROOT (the sources are staged
# under build/); run from docs/ itself, its parent.
ROOT = os.environ.get("GBS_ROOT", os.path.abspath(os.path.join(os.path.dirname(__file__), "..")))
sys.path.insert(0, os.path.join(ROOT, "python"))
os.environ.setdefault("GBS_LIBRARY", os.path.join(ROOT, "build", "lib", "libgbs.so"))

import gbs  # noqa: E402  (after the path is set)

project = "gbs"
author = "the gbs developers"
copyright = "the gbs developers"
release = gbs.version()
version = release

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.napoleon",
    "sphinx.ext.mathjax",
    "myst_nb",
]

# Notebooks are rendered with their stored outputs, never executed: the
# build needs no kernel, no PyMC, no network.
nb_execution_mode = "off"
myst_enable_extensions = ["dollarmath", "colon_fence"]
myst_heading_anchors = 3

exclude_patterns = ["_build", "**.ipynb_checkpoints", "stage.py", "_generated"]
source_suffix = {".md": "myst-nb", ".ipynb": "myst-nb"}

autodoc_member_order = "bysource"
autodoc_typehints = "none"
napoleon_numpy_docstring = True
napoleon_google_docstring = False
napoleon_use_ivar = False

html_theme = "alabaster"
html_title = "gbs %s" % release
html_theme_options = {"description": "Bayesian evidence from the posterior samples you already have",
                      "fixed_sidebar": True}
