"""`pip install .` and `pip install -e .` into a fresh virtual environment,
then gbs from outside the source tree: the reference problems with exact
draws give ln Z within 4 sigma of the exact value.

The installs run from a copy of the working tree, so that the test writes
nothing into the source tree (pip builds in place). pip runs from the test
environment with --python (no ensurepip: fast) and reuses its cache.
"""

import glob
import os
import shutil
import subprocess
import sys
import textwrap

import pytest

# pip installs into fresh environments: a minute or more, so make check
# leaves them to make test.
pytestmark = pytest.mark.slow

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
SKIP = {".venv", ".venv-latest", "build", ".git", "bench-out", ".pytest_cache", "__pycache__"}


def copy_tree(dest):
    def ignore(directory, names):
        out = {n for n in names if n in SKIP or n.endswith((".so", ".egg-info"))}
        if os.path.abspath(directory) == ROOT:
            out |= {n for n in names if n.startswith("_scratch")}
        return out

    shutil.copytree(ROOT, dest, ignore=ignore)
    return dest


def run(cmd, **kw):
    out = subprocess.run(cmd, capture_output=True, text=True, **kw)
    assert out.returncode == 0, "%s\n%s\n%s" % (" ".join(map(str, cmd)), out.stdout, out.stderr[-5000:])
    return out.stdout


@pytest.fixture(scope="module")
def venv(tmp_path_factory):
    if shutil.which("go") is None and not os.environ.get("GO"):
        pytest.skip("no Go toolchain")
    base = tmp_path_factory.mktemp("install")
    run([sys.executable, "-m", "venv", "--without-pip", str(base / "venv")])
    src = copy_tree(base / "src")
    py = str(base / "venv" / "bin" / "python")
    env = {k: v for k, v in os.environ.items() if k not in ("GBS_LIBRARY", "PYTHONPATH")}
    return base, src, py, env


def pip(py, *args, env):
    run([sys.executable, "-m", "pip", "--python", py, "install", "--quiet",
         "--disable-pip-version-check", *map(str, args)], env=env)


PROBLEMS = textwrap.dedent("""
    import os, sys
    import numpy as np
    import gbs
    from gbs import problems
    where = sys.argv[1]
    assert os.path.dirname(gbs.__file__) == where, (gbs.__file__, where)
    assert gbs.library_path == os.path.join(where, "libgbs.so"), gbs.library_path
    names = sys.argv[2].split(",")
    for p in problems.all_problems():
        if p.name not in names:
            continue
        assert p.has_sampler
        r = gbs.evidence(p.log_prob, p.sample(20000, seed=11), vectorize=True,
                         bounds=p.box, independent=True, seed=11)
        z = (r.logz - p.logz) / r.logzerr
        print("%-7s d=%2d  ln Z = %.4f +/- %.4f  exact %.4f  (%+.2f sigma)"
              % (p.name, p.dim, r.logz, r.logzerr, p.logz, z))
        assert abs(z) < 4, r.summary()
    print("ok")
""")


def test_pip_install(venv):
    base, src, py, env = venv
    pip(py, src, env=env)
    site = run([py, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"], env=env).strip()
    where = os.path.join(site, "gbs")
    # Only numpy was pulled in; the wheel is platform specific.
    names = run([py, "-c", "import importlib.metadata as m; "
                 "print(sorted(d.metadata['Name'].lower() for d in m.distributions()))"], env=env)
    assert names.strip() == "['gbs-evidence', 'numpy']", names
    info, = glob.glob(os.path.join(site, "gbs_evidence-*.dist-info"))
    wheel = open(os.path.join(info, "WHEEL")).read()
    assert os.path.exists(os.path.join(info, "licenses", "LICENSE")), os.listdir(info)
    assert "Root-Is-Purelib: false" in wheel and "py3-none-linux" in wheel, wheel
    out = run([py, "-c", PROBLEMS, where, "funnel,banana,cauchy"], cwd=str(base), env=env)
    assert out.strip().endswith("ok"), out
    print(out)


def test_editable_install(venv):
    base, src, py, env = venv
    pip(py, "-e", src, env=env)
    where = os.path.join(str(src), "python", "gbs")
    assert os.path.exists(os.path.join(where, "libgbs.so"))
    out = run([py, "-c", PROBLEMS, where, "funnel"], cwd=str(base), env=env)
    assert out.strip().endswith("ok"), out
