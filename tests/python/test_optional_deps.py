"""import gbs needs numpy only; an adapter without its library raises an
ImportError that names the extra to install."""

import subprocess
import sys

import pytest

import gbs


@pytest.mark.parametrize("fn,module,package,extra", [
    (lambda: gbs.from_pymc(None), "pymc", "pymc", "pymc"),
    (lambda: gbs.from_numpyro(None), "numpyro", "numpyro", "numpyro"),
    (lambda: gbs.from_stan(None, None), "stan", "pystan", "stan"),  # PyStan's module is stan
])
def test_missing_library_names_the_extra(monkeypatch, fn, module, package, extra):
    monkeypatch.setitem(sys.modules, module, None)  # import fails as if not installed
    with pytest.raises(ImportError, match=r"pip install %s \(or install gbs with its '%s' extra" % (package, extra)):
        fn()


def test_import_gbs_loads_no_optional_library(subprocess_env):
    code = ("import sys, gbs; heavy = [m for m in ('pymc', 'pytensor', 'numpyro', 'jax', 'arviz', "
            "'xarray', 'pandas', 'scipy', 'stan', 'httpstan') if m in sys.modules]; print(heavy)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env=subprocess_env, check=True)
    assert out.stdout.strip() == "[]", out.stdout + out.stderr
