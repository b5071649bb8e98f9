"""gbs.evidence with ArviZ / xarray draws: the flattening order, var_names,
chains kept as chains, and errors that say what to pass."""

import numpy as np
import pytest
from targets import C, gauss_vec

import gbs

az = pytest.importorskip("arviz")


def _idata(seed=0, chains=4, draws=1000):
    """Exact draws of a standard normal in 1 + 2*3 = 7 dimensions, stored as
    a scalar 'mu' and a (2, 3) matrix 'b', plus a deterministic 'mu2'."""
    rng = np.random.default_rng(seed)
    mu = rng.normal(size=(chains, draws))
    b = rng.normal(size=(chains, draws, 2, 3))
    return az.from_dict(posterior={"mu": mu, "b": b, "mu2": mu ** 2}), mu, b


def test_inference_data_flattening_order_and_logz():
    idata, mu, b = _idata()
    seen = []

    def log_prob(x):
        seen.append(x[:3].copy())
        return gauss_vec(x)

    res = gbs.evidence(log_prob, idata, var_names=["mu", "b"], vectorize=True, seed=1)
    # gauss_vec is a normalized normal times e^C in any d: ln Z = C.
    assert abs(res.logz - C) < 4 * res.logzerr and res.logzerr < 0.05, res.summary()
    assert (res.n_chains, res.n_draws, res.dim) == (4, 1000, 7)
    x = res._context["x"]
    # mu first, then b in C order: b[0,0], b[0,1], b[0,2], b[1,0], ...
    np.testing.assert_array_equal(x[2, 5], np.concatenate([[mu[2, 5]], b[2, 5].ravel()]))
    assert res._context["labels"] == ["mu", "b[0, 0]", "b[0, 1]", "b[0, 2]", "b[1, 0]",
                                      "b[1, 1]", "b[1, 2]"]
    # The same from the posterior Dataset, and another order.
    res2 = gbs.evidence(gauss_vec, idata.posterior, var_names=["b", "mu"], vectorize=True, seed=1)
    np.testing.assert_array_equal(res2._context["x"][2, 5, :6], b[2, 5].ravel())
    assert res2._context["x"][2, 5, 6] == mu[2, 5]


def test_all_variables_by_default_and_draw_chain_order():
    rng = np.random.default_rng(2)
    a = rng.normal(size=(3, 800))
    ds = az.from_dict(posterior={"a": a, "c": rng.normal(size=(3, 800, 2))}).posterior
    res = gbs.evidence(gauss_vec, ds.transpose("draw", "chain", ...), vectorize=True, seed=2)
    assert res.dim == 3 and res.n_chains == 3
    np.testing.assert_array_equal(res._context["x"][1, :, 0], a[1])
    assert abs(res.logz - C) < 4 * res.logzerr


def test_xarray_errors_say_what_to_pass():
    idata, _, _ = _idata(draws=100)
    with pytest.raises(ValueError, match=r"no parameter axis.*var_names=\['mu'"):
        gbs.evidence(gauss_vec, idata.posterior["mu"], vectorize=True)
    with pytest.raises(ValueError, match="'sigma' not in the posterior"):
        gbs.evidence(gauss_vec, idata, var_names=["mu", "sigma"], vectorize=True)
    with pytest.raises(ValueError, match="var_names chooses variables"):
        gbs.evidence(gauss_vec, np.zeros((100, 2)), var_names=["mu"], vectorize=True)
    # A DataArray with a parameter axis is one variable: accepted.
    res = gbs.evidence(gauss_vec, idata.posterior["b"], vectorize=True, seed=3)
    assert res.dim == 6


def test_plot_names_its_coordinates():
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    idata, _, _ = _idata(draws=500)
    res = gbs.evidence(gauss_vec, idata, var_names=["mu", "b"], vectorize=True, seed=4)
    fig = res.plot(n=300)
    assert fig._suptitle.get_text() == "coordinates 0, 1, 2, 3 of 7 (choose with dims=)"
    assert [ax.get_xlabel() for ax in fig.axes[:-1] if ax.get_xlabel()][:1] == ["mu"]
    # The legend is the figure's, above the grid: no axes holds one.
    assert fig.legends and not any(ax.get_legend() for ax in fig.axes[:-1])
    plt.close(fig)
    fig = res.plot(dims=["b[1, 2]", 0], n=300)
    assert fig._suptitle.get_text().startswith("coordinates 6, 0 of 7")
    assert fig.axes[2].get_xlabel() == "mu" and fig.axes[1].get_ylabel() == "mu"
    plt.close(fig)
    with pytest.raises(ValueError, match="no coordinate named 'nope'"):
        res.plot(dims=["nope"])


def test_progress_bar_has_a_total(capsys):
    pytest.importorskip("tqdm")
    x = np.random.default_rng(5).normal(size=(2000, 2))
    lp = gauss_vec(x)
    res = gbs.evidence(gauss_vec, x, log_prob_samples=lp, vectorize=True, seed=5, n_q=3000,
                       progress=True)
    err = capsys.readouterr().err
    # Given log p at the draws and n_q: exactly n_q evaluations are
    # planned, the 32 of the spot-check of the given log p and the 300
    # (n_q/10) of the coverage check.
    assert res.diagnostics.coverage_calls == 300
    assert res.ncall == 3332 and "3332/3332" in err, err[-300:]
    assert abs(res.logz - C) < 4 * res.logzerr
