"""The example notebook (emcee -> ln Z -> plot) runs from top to bottom."""

import os

import pytest

from conftest import INSTALLED, ROOT

# The kernel imports gbs from the source tree (with the tests' library), or
# under make test-dist the installed package.
SOURCE = [] if INSTALLED else [os.path.join(ROOT, "python")]


@pytest.mark.slow
def test_example_notebook_runs(monkeypatch):
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    pytest.importorskip("emcee")
    pytest.importorskip("matplotlib")
    nb = nbformat.read(os.path.join(ROOT, "examples", "emcee_evidence.ipynb"), as_version=4)
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(
        SOURCE + [os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep))
    # The time limits only guard against a hang: the emcee cell runs 28 000
    # steps (50 tau of its banana) and took minutes on a loaded machine,
    # where a fresh kernel also took over nbclient's default 60 s to start.
    client = nbclient.NotebookClient(nb, timeout=1800, startup_timeout=600, kernel_name="python3",
                                     resources={"metadata": {"path": os.path.join(ROOT, "examples")}})
    client.execute()
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])]
    text = "".join(o.get("text", "") for o in outputs)
    assert "ln Z = " in text and "exact ln Z" in text and " True" in text
    # An ordinary emcee run: no warning (repeated points are normal MCMC,
    # not "a stuck chain"), and the diagnostics are shown.
    assert "warning" not in text.lower(), text
    assert "diagnostics: R-hat" in text
    html = "".join(o.get("data", {}).get("text/html", "") for o in outputs)
    assert "Warnings" not in html and "diagnostics" in html
    assert any("text/html" in o.get("data", {}) for o in outputs), "the Result's table"
    assert any("image/png" in o.get("data", {}) for o in outputs), "the plot"


@pytest.mark.slow
def test_pymc_notebook_runs(monkeypatch):
    """PyMC models -> ln Z -> Bayes factor and model probabilities."""
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    pytest.importorskip("pymc")
    pytest.importorskip("numpyro")
    pytest.importorskip("matplotlib")
    nb = nbformat.read(os.path.join(ROOT, "examples", "pymc_evidence.ipynb"), as_version=4)
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(
        [os.path.join(ROOT, "python"), os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep))
    client = nbclient.NotebookClient(nb, timeout=600, startup_timeout=600, kernel_name="python3",
                                     resources={"metadata": {"path": os.path.join(ROOT, "examples")}})
    client.execute()
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])]
    text = "".join(o.get("text", "") for o in outputs)
    assert text.count("within 4 sigma: True") == 2, text
    assert "ln BF(3 vs 2)" in text and "P(model | data)" in text
    assert any("image/png" in o.get("data", {}) for o in outputs), "the plot"
    assert any("gbs.compare" in o.get("data", {}).get("text/html", "") for o in outputs)


def test_jupyter_interrupt_stops_a_call(monkeypatch, tmp_path):
    """Kernel -> Interrupt during gbs.evidence: KeyboardInterrupt in the cell
    long before the call's work (minutes) would end, and the kernel stays
    usable. The interrupt goes once the log density has been called (a
    file it creates), not after a fixed wait; how fast it acts is printed,
    not bounded (a loaded machine may take seconds)."""
    pytest.importorskip("ipykernel")
    manager = pytest.importorskip("jupyter_client.manager")
    import time
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(SOURCE + [os.path.dirname(__file__)]))
    km, kc = manager.start_new_kernel(kernel_name="python3", startup_timeout=600)
    try:
        kc.execute_interactive("import time, numpy as np, gbs, targets", timeout=600)
        flag = tmp_path / "called"
        msg_id = kc.execute(
            "def slow(x):\n    open(%r, 'w').close()\n    time.sleep(0.005)\n    return targets.gauss(x)\n" % str(flag) +
            "x = np.random.default_rng(0).normal(size=(20000, 2))\n"
            "try:\n    gbs.evidence(slow, x)\nexcept KeyboardInterrupt:\n    print('interrupted')\n")
        deadline = time.time() + 120  # a hang guard only
        while not flag.exists():
            assert time.time() < deadline, "the log density was never called"
            time.sleep(0.05)
        t0 = time.time()
        km.interrupt_kernel()
        out = []
        while True:
            m = kc.get_iopub_msg(timeout=30)
            if m["parent_header"].get("msg_id") != msg_id:
                continue
            if m["msg_type"] == "stream":
                out.append(m["content"]["text"])
            elif m["msg_type"] == "error":
                out.append(m["content"]["ename"])
            elif m["msg_type"] == "status" and m["content"]["execution_state"] == "idle":
                break
        assert out == ["interrupted\n"], out
        print("interrupted %.2f s after the interrupt" % (time.time() - t0))
        reply = kc.execute_interactive(
            "r = gbs.evidence(targets.gauss_vec, x[:3000], vectorize=True, seed=1)\n"
            "assert abs(r.logz - targets.C) < 4 * r.logzerr", timeout=600)
        assert reply["content"]["status"] == "ok"
    finally:
        km.shutdown_kernel(now=True)


@pytest.mark.slow
def test_stan_notebook_runs(monkeypatch):
    """PyStan models -> ln Z: the `~` program rewritten, eight schools,
    both within 3 sigma of the exact value, no gbs warning. Compiles the
    programs of examples/stan/ unless httpstan has them cached."""
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    pytest.importorskip("stan")
    pytest.importorskip("nest_asyncio")
    pytest.importorskip("matplotlib")
    nb = nbformat.read(os.path.join(ROOT, "examples", "stan_evidence.ipynb"), as_version=4)
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(
        SOURCE + [os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep))
    client = nbclient.NotebookClient(nb, timeout=1800, startup_timeout=600, kernel_name="python3",
                                     resources={"metadata": {"path": os.path.join(ROOT, "examples")}})
    client.execute()
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])]
    text = "".join(o.get("text", "") for o in outputs)
    assert text.count("within 3 sigma: True") == 2, text
    assert "the Stan program was rewritten" in text
    assert "target += normal_lpdf(mu | 0, 2);" in text  # the fix rewrite=False shows
    for name in ("GbsWarning", "SamplerWarning", "DiagnosticWarning"):
        assert name not in text, text
    html = "".join(o.get("data", {}).get("text/html", "") for o in outputs)
    assert "Warnings" not in html and "diagnostics" in html
    assert any("image/png" in o.get("data", {}) for o in outputs), "the plot"
