"""`pip install .` into a fresh virtual environment, then the funnel with
exact draws from outside the source tree."""

import os
import subprocess
import sys
import textwrap

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


def test_pip_install_fresh_venv(tmp_path):
    venv = tmp_path / "venv"
    subprocess.check_call([sys.executable, "-m", "venv", str(venv)])
    py = str(venv / "bin" / "python")
    subprocess.check_call([py, "-m", "pip", "install", "--quiet", ROOT])
    script = textwrap.dedent("""
        import gbs, numpy as np
        from gbs import problems
        assert "site-packages" in gbs.__file__, gbs.__file__
        p = problems.funnel()
        r = gbs.evidence(p.log_prob, p.sample(20000, seed=11), vectorize=True,
                         bounds=p.bounds, independent=True, seed=11)
        print(r.summary())
        assert abs(r.logz - p.logz) < 4 * r.logzerr and r.logzerr < 0.03
    """)
    env = {k: v for k, v in os.environ.items() if k not in ("GBS_LIBRARY", "PYTHONPATH")}
    out = subprocess.run([py, "-c", script], cwd=str(tmp_path), env=env,
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stdout + out.stderr
