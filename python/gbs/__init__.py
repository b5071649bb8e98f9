"""gbs: Bayesian evidence (ln Z) from posterior samples.

Gaussianized bridge sampling (Jia & Seljak 2019) over libgbs, a Go library
loaded with ctypes. Give it the draws you already have and the log density
they came from:

>>> import gbs
>>> res = gbs.evidence(log_prob, sampler, discard=1000)   # doctest: +SKIP
>>> print(res.summary())                                  # doctest: +SKIP

Main entry points
-----------------
run(log_prob_and_grad, x0, ...) -> Result
    Without a sampler of your own: NUTS draws and ln Z from them in one
    call, with the library's repairs (reruns after divergences, longer
    chains when they have not mixed, global moves); the draws are
    Result.samples.
evidence(log_prob, samples, ...) -> Result
    ln Z from an (n, d) or 3-d array of draws, an emcee EnsembleSampler,
    an ArviZ InferenceData, or what sample / sample_ensemble return.
from_pymc(idata, model=None, ...) -> Result
    ln Z of a PyMC model from its posterior draws (needs pymc).
from_numpyro(mcmc, ...) -> Result
    ln Z of a NumPyro model from a finished MCMC (needs numpyro).
from_stan(fit, model, ...) -> Result
    ln Z of a PyStan 3 model from its fit (needs pystan); `~` statements
    are rewritten as `target +=` so that the constants ln Z needs are kept.
bayes_factor(a, b) -> BayesFactor, compare([result, ...]) -> Comparison
    Bayes factors (value, log, error, which model they favour) and ranked
    posterior model probabilities with errors; error_measures(result).
Result
    logz, logzerr, ncall, n_p, n_q, tau, method, warnings, info, summary(),
    plot(), and a table in Jupyter.
GbsWarning, SamplerWarning, DiagnosticWarning
    Every warning of a Result is also raised, at the caller's line:
    SamplerWarning for the draws, DiagnosticWarning for the estimate,
    each with the ``.check`` ID of the check that found it.
    strict=True raises GbsWarningError (a GbsError) instead.
Finding, checks()
    Result.findings: what each check found (check ID, kind, message,
    numbers); checks() describes every check.
Flow
    The Gaussianizing normalizing flow: Flow.fit(x), log_prob, sample,
    save / Flow.load.
sample(log_prob_and_grad, x0, ...) -> Samples
    NUTS chains; sample_ensemble(log_prob, ...) the gradient-free ensemble
    sampler.
problems
    Reference targets with exact ln Z and exact samplers;
    ``problems.<name>(d).native()`` is the library's own copy, a
    NativeDensity.
NativeDensity(fn, dim, user)
    A compiled log density with gradient (C, a numba cfunc) that run and
    sample call with no Python in the loop.

The library runs a Go runtime in this process: use the spawn or
forkserver start method of multiprocessing, not fork.
"""

from . import problems
from ._lib import (GbsArgumentError, GbsCallbackError, GbsError, GbsForkError, GbsIOError,
                   abi_version, set_threads, version)
from ._lib import path as library_path
from ._findings import CheckInfo, Finding, checks
from ._warnings import DiagnosticWarning, GbsWarning, GbsWarningError, SamplerWarning
from .adapters.numpyro import from_numpyro
from .adapters.pymc import from_pymc
from .adapters.stan import from_stan
from .compare import BayesFactor, Comparison, bayes_factor, compare, error_measures
from .evidence import evidence
from .flow import Flow
from .result import Diagnostics, ErrorMeasures, Result
from .native import NativeDensity, native_problem
from .pipeline import run
from .sampling import Samples, sample, sample_ensemble

__all__ = ["run", "evidence", "from_pymc", "from_numpyro", "from_stan", "bayes_factor", "compare", "Comparison",
           "BayesFactor", "error_measures", "ErrorMeasures", "Diagnostics",
           "GbsWarning", "DiagnosticWarning", "SamplerWarning", "GbsWarningError", "Result", "Flow",
           "Finding", "CheckInfo", "checks",
           "sample", "sample_ensemble", "Samples", "problems", "NativeDensity", "native_problem",
           "GbsError", "GbsArgumentError", "GbsCallbackError", "GbsIOError", "GbsForkError", "version",
           "abi_version", "set_threads", "library_path"]
__version__ = "0.1.0"
