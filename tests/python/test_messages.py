"""Each message of issue 26 says what to do: a test per message, for the
mistakes a new user makes first."""

import numpy as np
import pytest

import gbs


def batch_log_prob(v):
    return -0.5 * np.sum(v * v, axis=1)


def test_vectorized_log_prob_without_vectorize_hints():
    x = np.random.default_rng(0).normal(size=(3000, 2))
    with pytest.raises(np.exceptions.AxisError, match="pass vectorize=True") as e:
        gbs.evidence(batch_log_prob, x, seed=1)
    assert "axis 1 is out of bounds" in str(e.value) and "one point of shape (2,)" in str(e.value)
    assert isinstance(e.value.__cause__, np.exceptions.AxisError)
    with pytest.raises(IndexError, match="pass vectorize=True"):
        gbs.evidence(lambda v: -0.5 * v[:, 0] ** 2 - 0.5 * v[:, 1] ** 2, x, seed=1)


def test_chains_by_draws_of_a_1d_model_says_add_an_axis():
    x = np.random.default_rng(0).normal(size=(4, 750))
    with pytest.raises(ValueError, match=r"pass samples\[\.\.\., None\] \(shape \(4, 750, 1\)\)"):
        gbs.evidence(lambda v: -0.5 * v[0] ** 2, x, seed=1)
    with pytest.raises(ValueError, match=r"samples\[\.\.\., None\]"):
        gbs.evidence(lambda v: -0.5 * v[0] ** 2, x, log_prob_samples=-0.5 * x ** 2, seed=1)
    # Following the hint works.
    r = gbs.evidence(lambda v: -0.5 * v[0] ** 2, x[..., None], seed=1)
    assert abs(r.logz - 0.5 * np.log(2 * np.pi)) < 4 * r.logzerr


def test_thin_that_leaves_too_few_draws_is_named():
    x = np.random.default_rng(0).normal(size=(3000, 2))
    with pytest.raises(gbs.GbsError, match=r"discard=0 and thin=1000 kept: 1 chain x 3 draws; keep more"):
        gbs.evidence(batch_log_prob, x, vectorize=True, seed=1, thin=1000)
    # The failure inside the flow fit names thin too.
    x4 = np.random.default_rng(0).normal(size=(4, 1000, 5))
    with pytest.raises(gbs.GbsError, match=r"fitting the proposal.*thin=500 kept: 4 chains x 2 draws"):
        gbs.evidence(batch_log_prob, x4, vectorize=True, seed=1, thin=500)


def test_inference_data_first_points_to_from_pymc():
    az = pytest.importorskip("arviz")
    idata = az.from_dict(posterior={"mu": np.zeros((2, 50))})
    with pytest.raises(TypeError, match=r"gbs.from_pymc\(idata, model\)") as e:
        gbs.evidence(idata)
    assert "var_names=" in str(e.value) and "from_numpyro" in str(e.value)
    with pytest.raises(TypeError, match="samples is missing"):
        gbs.evidence(batch_log_prob)


def test_emcee_density_mismatch_names_the_sampler():
    emcee = pytest.importorskip("emcee")

    def log_prob(v):
        return -0.5 * float(v @ v)
    rng = np.random.default_rng(0)
    sampler = emcee.EnsembleSampler(8, 2, log_prob)
    sampler.run_mcmc(rng.normal(size=(8, 2)), 400, progress=False)
    with pytest.raises(gbs.GbsError) as e:
        gbs.evidence(lambda v: log_prob(v) + 1.0, sampler, discard=100, seed=1)
    msg = str(e.value)
    assert "emcee sampler's stored log-probabilities (get_log_prob())" in msg
    assert "the log_prob, args and kwargs the sampler was created with" in msg
    assert "log_prob_samples" not in msg
    # Given by the user, the values are named as the user passed them.
    x = sampler.get_chain(discard=100)
    with pytest.raises(gbs.GbsError, match=r"at the draws \(log_prob_samples\)"):
        gbs.evidence(log_prob, x, chain_axis=1, log_prob_samples=sampler.get_log_prob(discard=100) + 1,
                     seed=1)


@pytest.mark.parametrize("name", ["discard", "thin", "n_q", "ncall", "batch_size", "seed"])
def test_integer_arguments_reject_floats_alike(name):
    x = np.random.default_rng(0).normal(size=(3000, 2))
    with pytest.raises(TypeError, match="%s must be (None, )?an integer" % name):
        gbs.evidence(batch_log_prob, x, vectorize=True, **{name: 2.0})
    # numpy integers are integers.
    gbs.evidence(batch_log_prob, x, vectorize=True, **{name: np.int64(2 if name == "thin" else 2000)})


def test_float_discard_says_how_to_write_it():
    x = np.random.default_rng(0).normal(size=(3000, 2))
    with pytest.raises(TypeError, match=r"discard must be an integer, not float 500.0 \(write discard=500"):
        gbs.evidence(batch_log_prob, x, vectorize=True, discard=500.0)


def test_untested_pymc_major_warns_once(monkeypatch):
    import types

    from gbs.adapters import pymc as adapter
    monkeypatch.setattr(adapter, "_version_warned", False)
    with pytest.warns(adapter.UntestedVersionWarning, match=r"tested with PyMC 5 only, and this is "
                                                            r"PyMC 6\.2\.0"):
        adapter._check_version(types.SimpleNamespace(__version__="6.2.0"))
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        adapter._check_version(types.SimpleNamespace(__version__="6.2.0"))  # once per process
        monkeypatch.setattr(adapter, "_version_warned", False)
        adapter._check_version(types.SimpleNamespace(__version__="5.28.5"))  # tested: silent


def test_warning_messages_name_the_models_variables():
    """The library words its messages with the names it is given (an
    InferenceData's variables), never "coordinate k"; without names it
    says "coordinate k"."""
    az = pytest.importorskip("arviz")
    rng = np.random.default_rng(0)
    theta = rng.standard_normal((2, 500, 3))
    theta[1, :, 2] += 2.0  # chain 1 of theta[2] elsewhere: R-hat
    idata = az.from_dict(posterior={"theta": theta})
    with pytest.warns(gbs.GbsWarning):
        res = gbs.evidence(batch_log_prob, idata, vectorize=True, seed=1)
    rhat = res.found("rhat")[0].message
    assert "R-hat of theta[2] is" in rhat and "coordinate" not in rhat, rhat
    with pytest.warns(gbs.GbsWarning):
        res = gbs.evidence(batch_log_prob, np.ascontiguousarray(theta), vectorize=True, seed=1)
    assert "R-hat of coordinate 2 is" in res.found("rhat")[0].message


def test_flipped_sign_message_names_the_cause():
    x = np.random.default_rng(7).standard_normal((4000, 2)) + 1.0
    with pytest.warns(gbs.GbsWarning):
        res = gbs.evidence(lambda v: 0.5 * np.sum((v - 1) ** 2, axis=1), x, vectorize=True,
                           independent=True, seed=8)
    assert "lowest where the draws are densest" in res.found("sign")[0].message
    for f in res.found("consistency"):
        assert "likely cause: the sign" in f.message, f.message
