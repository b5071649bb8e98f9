"""Builds the gbs Python package; libgbs.so is compiled with Go on the way.

    pip install .          # needs Go >= 1.24 and a C compiler (cgo)
    pip install -e .       # editable: the library is built into python/gbs/

Environment: GO names the Go command (default: `go` on PATH); CC, GOARCH
and CGO_* reach `go build` unchanged, so that `make dist` cross-compiles
with zig cc; GBS_WHEEL_PLATFORM sets the wheel's platform tag (for example
manylinux_2_17_aarch64.manylinux2014_aarch64) instead of this machine's.
The package loads python/gbs/libgbs.so, or the file GBS_LIBRARY names.
"""

import os
import re
import shutil
import subprocess
import sysconfig

from setuptools import Distribution, setup
from setuptools.command.build_py import build_py
from setuptools.command.develop import develop

try:  # setuptools >= 70.1
    from setuptools.command.bdist_wheel import bdist_wheel
except ImportError:  # older setuptools with the wheel package
    try:
        from wheel.bdist_wheel import bdist_wheel
    except ImportError:
        bdist_wheel = None

ROOT = os.path.dirname(os.path.abspath(__file__))
SOURCE_PACKAGE = os.path.join(ROOT, "python", "gbs")


def header_version():
    """GBS_VERSION_MAJOR.MINOR.PATCH of include/gbs.h, the one version number."""
    with open(os.path.join(ROOT, "include", "gbs.h"), encoding="utf-8") as f:
        src = f.read()
    parts = []
    for name in ("MAJOR", "MINOR", "PATCH"):
        m = re.search(r"^#define GBS_VERSION_%s\s+(\d+)\s*$" % name, src, re.M)
        if m is None:
            raise RuntimeError("include/gbs.h has no #define GBS_VERSION_%s" % name)
        parts.append(m.group(1))
    return ".".join(parts)


def build_library(dest_dir):
    """go build -buildmode=c-shared -o dest_dir/libgbs.so ./capi"""
    go = os.environ.get("GO") or shutil.which("go")
    if not go:
        raise RuntimeError(
            "building gbs needs the Go toolchain >= 1.24 (https://go.dev/dl/) on PATH "
            "(or its path in the GO environment variable) and a C compiler for cgo")
    os.makedirs(dest_dir, exist_ok=True)
    out = os.path.join(dest_dir, "libgbs.so")
    env = dict(os.environ, CGO_ENABLED="1")
    print("building %s with %s" % (out, go))
    # -trimpath: no build directory in the binary; -s -w: no symbol table or
    # DWARF, a third of the size (make lib keeps them for C debugging).
    subprocess.check_call([go, "build", "-buildmode=c-shared", "-trimpath", "-ldflags=-s -w",
                           "-o", out, "./capi"], cwd=ROOT, env=env)
    # cgo also writes its generated header; include/gbs.h is the real one.
    header = os.path.join(dest_dir, "libgbs.h")
    if os.path.exists(header):
        os.remove(header)


class BuildPy(build_py):
    def run(self):
        if not getattr(self, "editable_mode", False):
            # Start from an empty package directory: a module deleted from
            # the source must not linger in the wheel.
            shutil.rmtree(os.path.join(self.build_lib, "gbs"), ignore_errors=True)
        super().run()
        if getattr(self, "editable_mode", False):
            # PEP 660 editable install: the package is imported from
            # python/gbs, so the library must be there.
            build_library(SOURCE_PACKAGE)
        else:
            build_library(os.path.join(self.build_lib, "gbs"))


class Develop(develop):
    """`setup.py develop` (legacy editable installs)."""

    def run(self):
        build_library(SOURCE_PACKAGE)
        super().run()


class BinaryDistribution(Distribution):
    """The wheel holds a shared library: it is platform specific."""

    def has_ext_modules(self):
        return True


cmdclass = {"build_py": BuildPy, "develop": Develop}

if bdist_wheel is not None:
    class BdistWheel(bdist_wheel):
        # libgbs.so talks to Python through ctypes only, so the wheel fits
        # any Python 3 on this platform: py3-none-<platform>.
        def finalize_options(self):
            super().finalize_options()
            self.root_is_pure = False

        def get_tag(self):
            plat = os.environ.get("GBS_WHEEL_PLATFORM") or \
                sysconfig.get_platform().replace("-", "_").replace(".", "_")
            return "py3", "none", plat

    cmdclass["bdist_wheel"] = BdistWheel


VERSION = header_version()
with open(os.path.join(SOURCE_PACKAGE, "__init__.py"), encoding="utf-8") as f:
    if '__version__ = "%s"' % VERSION not in f.read():
        raise RuntimeError("python/gbs/__init__.py's __version__ is not %s, the version of "
                           "include/gbs.h: set it to the header's" % VERSION)

# Name, description, dependencies, extras and the rest of the metadata are
# in pyproject.toml; the version comes from the header.
setup(
    version=VERSION,
    package_dir={"": "python"},
    packages=["gbs", "gbs.adapters"],
    package_data={"gbs": ["libgbs.so", "py.typed"]},
    cmdclass=cmdclass,
    distclass=BinaryDistribution,
    # build/lib belongs to the Makefile (libgbs.so for C users).
    options={"build": {"build_base": os.path.join("build", "python")}},
    zip_safe=False,
)
