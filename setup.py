"""Builds the gbs Python package; libgbs.so is compiled with Go on the way.

    pip install .          # needs Go >= 1.24 and a C compiler
    pip install -e .       # editable: the library is built into python/gbs/
"""

import os
import shutil
import subprocess

from setuptools import setup
from setuptools.command.build_py import build_py
from setuptools.command.develop import develop

ROOT = os.path.dirname(os.path.abspath(__file__))


def build_library(dest_dir):
    go = shutil.which("go")
    if go is None:
        raise RuntimeError("building gbs needs the Go toolchain (https://go.dev/dl/) on PATH")
    os.makedirs(dest_dir, exist_ok=True)
    out = os.path.join(dest_dir, "libgbs.so")
    subprocess.check_call([go, "build", "-buildmode=c-shared", "-o", out, "./capi"], cwd=ROOT)
    header = os.path.join(dest_dir, "libgbs.h")  # cgo's generated header; include/gbs.h is the real one
    if os.path.exists(header):
        os.remove(header)


class BuildPy(build_py):
    def run(self):
        super().run()
        build_library(os.path.join(self.build_lib, "gbs"))


class Develop(develop):
    def run(self):
        build_library(os.path.join(ROOT, "python", "gbs"))
        super().run()


setup(
    name="gbs",
    version="0.1.0",
    description="Bayesian evidence (ln Z) from posterior samples by Gaussianized bridge sampling",
    long_description=open(os.path.join(ROOT, "README.md")).read(),
    long_description_content_type="text/markdown",
    package_dir={"": "python"},
    packages=["gbs"],
    package_data={"gbs": ["libgbs.so"]},
    python_requires=">=3.9",
    install_requires=["numpy>=1.24"],
    extras_require={"plot": ["matplotlib>=3.7"], "emcee": ["emcee>=3.1"],
                    "progress": ["tqdm"], "dask": ["dask[distributed]"]},
    cmdclass={"build_py": BuildPy, "develop": Develop},
    zip_safe=False,
)
