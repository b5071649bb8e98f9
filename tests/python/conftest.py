import os
import sys

import pytest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
# Tests run against the source tree and the library `make lib` builds
# (or the one GBS_LIBRARY names), or, with GBS_TEST_INSTALLED=1 (make
# test-dist), against the gbs package installed in this Python.
INSTALLED = os.environ.get("GBS_TEST_INSTALLED") == "1"
if not INSTALLED:
    sys.path.insert(0, os.path.join(ROOT, "python"))
    os.environ.setdefault("GBS_LIBRARY", os.path.join(ROOT, "build", "lib", "libgbs.so"))
sys.path.insert(0, os.path.dirname(__file__))  # targets.py, for spawned workers too


def pytest_configure(config):
    # A healthy test run raises no gbs warning: each one is an error, and
    # tests that expect one catch it with pytest.warns (issue 23: no false
    # alarms). Added here, not in pyproject.toml, because pytest resolves
    # ini filters before this file puts the package on sys.path.
    import gbs  # noqa: F401  (the package under test, for the filter's category)
    config.addinivalue_line("filterwarnings", "error::gbs.GbsWarning")


@pytest.fixture
def subprocess_env():
    """Environment for a child Python that imports gbs and targets from
    the source tree."""
    env = dict(os.environ)
    paths = [os.path.dirname(__file__)] if INSTALLED else [os.path.join(ROOT, "python"), os.path.dirname(__file__)]
    env["PYTHONPATH"] = os.pathsep.join(paths + [env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    return env
