"""One version number: include/gbs.h's GBS_VERSION_* macros are the source;
the loaded library, gbs.__version__ and (when installed) the distribution's
metadata must all say the same. Under make test-dist (GBS_TEST_INSTALLED=1)
the package must also be the installed one, not the source tree."""

import os
import re
from importlib import metadata

import gbs
from conftest import INSTALLED, ROOT


def header_define(name):
    with open(os.path.join(ROOT, "include", "gbs.h"), encoding="utf-8") as f:
        return re.search(r"^#define %s\s+(\d+)\s*$" % name, f.read(), re.M).group(1)


def header_version():
    return ".".join(header_define("GBS_VERSION_" + p) for p in ("MAJOR", "MINOR", "PATCH"))


def test_versions_agree():
    want = header_version()
    assert gbs.__version__ == want
    assert gbs.version() == want
    assert gbs.abi_version() == int(header_define("GBS_ABI_VERSION"))


def test_installed_package():
    print("gbs imported from", gbs.__file__)
    source = os.path.join(ROOT, "python", "gbs")
    if not INSTALLED:
        assert os.path.dirname(os.path.abspath(gbs.__file__)) == source
        return
    where = os.path.dirname(os.path.abspath(gbs.__file__))
    assert where != source and "site-packages" in where, where
    assert gbs.library_path == os.path.join(where, "libgbs.so"), gbs.library_path
    assert metadata.version("gbs-evidence") == header_version()
    files = {str(f) for f in metadata.files("gbs-evidence")}
    assert any(f.endswith("LICENSE") for f in files), sorted(files)
