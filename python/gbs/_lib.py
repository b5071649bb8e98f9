"""Loading libgbs with ctypes and declaring its C functions.

Everything here mirrors include/gbs.h (ABI version 4): the structs, the
callback types and every function's signature. The library is loaded with
``ctypes.CDLL``, so calls release the GIL; Go threads that call back into
Python take it again for the duration of the callback.
"""

import ctypes
import os
import sys
from ctypes import (CFUNCTYPE, POINTER, Structure, c_char, c_char_p, c_double,
                    c_int, c_int32, c_int64, c_size_t, c_uint64, c_void_p)

# The ABI version this package needs at least (include/gbs.h states the
# policy: a library serves every older header).
ABI_VERSION = 4

_HERE = os.path.dirname(os.path.abspath(__file__))

# Status codes (GBS_OK, GBS_ERR_*).
OK = 0
ERR_ARGUMENT = 1
ERR_CALLBACK = 2
ERR_CANCELED = 3
ERR_HANDLE = 4
ERR_BUFFER_TOO_SMALL = 5
ERR_IO = 6
ERR_FAILED = 7
ERR_INTERNAL = 8
ERR_FORKED = 9
STATUS_NAMES = {ERR_FORKED: "GBS_ERR_FORKED", ERR_ARGUMENT: "GBS_ERR_ARGUMENT", ERR_CALLBACK: "GBS_ERR_CALLBACK",
                ERR_CANCELED: "GBS_ERR_CANCELED", ERR_HANDLE: "GBS_ERR_HANDLE",
                ERR_BUFFER_TOO_SMALL: "GBS_ERR_BUFFER_TOO_SMALL", ERR_IO: "GBS_ERR_IO",
                ERR_FAILED: "GBS_ERR_FAILED", ERR_INTERNAL: "GBS_ERR_INTERNAL"}

METHODS = {"bridge": 0, "is": 1, "hm": 2, "warp3": 3}
METHOD_NAMES = {v: k for k, v in METHODS.items()}

UINT64_MASK = (1 << 64) - 1

_dp = POINTER(c_double)
_err = POINTER(POINTER(c_char))

# The callbacks receive their pointers as plain addresses (c_void_p, the
# same ABI as double *): numpy views over them are cheaper to make than
# from ctypes pointer objects.
# int (*)(const double *x, int64_t n, int64_t d, double *logp, void *user)
LOG_DENSITY_FN = CFUNCTYPE(c_int, c_void_p, c_int64, c_int64, c_void_p, c_void_p)
# int (*)(const double *x, int64_t d, double *logp, double *grad, void *user)
LOG_DENSITY_GRAD_FN = CFUNCTYPE(c_int, c_void_p, c_int64, c_void_p, c_void_p, c_void_p)
# int (*)(const double *x, int64_t n, int64_t d, double *logp, double *grad, void *user)
LOG_DENSITY_GRAD_BATCH_FN = CFUNCTYPE(c_int, c_void_p, c_int64, c_int64, c_void_p, c_void_p, c_void_p)
# void (*)(const char *msg, void *user)
LOG_FN = CFUNCTYPE(None, c_char_p, c_void_p)


class EvidenceOptions(Structure):
    _fields_ = [("size", c_size_t), ("method", c_int32),
                ("independent", c_int32), ("concurrent", c_int32),
                ("verbose", c_int32), ("n_q", c_int64),
                ("batch_size", c_int64), ("ncall", c_int64),
                ("seed", c_uint64), ("f_err", c_double), ("f_eva", c_double),
                ("lower", _dp), ("upper", _dp), ("cancel", c_void_p),
                ("cross_fit", c_int32), ("coverage_check", c_int32),
                ("anneal", c_int32), ("reserved", c_int32), ("names", POINTER(c_char_p)),
                ("mode_census", c_int32), ("symmetry", c_int32),
                ("symmetry_groups", POINTER(c_int64)), ("n_symmetry_groups", c_int64)]


class TracePoint(Structure):
    _fields_ = [("n_q", c_int64), ("logz", c_double), ("logzerr", c_double)]


class CDiagnostics(Structure):
    _fields_ = [("rhat_max", c_double), ("rhat_crit", c_double), ("rhat_where", c_int64),
                ("ess_bulk_min", c_double), ("ess_tail_min", c_double),
                ("ess_bulk_where", c_int64), ("ess_tail_where", c_int64),
                ("burnin_z", c_double), ("burnin_where", c_int64),
                ("n_outlier_chains", c_int64), ("outlier_chain", c_int64),
                ("n_stuck_chains", c_int64), ("stuck_chain", c_int64),
                ("spot_checked", c_int64), ("spot_max_diff", c_double),
                ("pareto_k_q", c_double), ("pareto_k_p", c_double),
                ("pareto_k_threshold", c_double), ("crossfit_z", c_double),
                ("consistency_z", c_double), ("is_z", c_double), ("hm_z", c_double),
                ("coverage_frac", c_double), ("coverage_limit", c_double),
                ("coverage_where", c_int64), ("coverage_side", c_int64),
                ("coverage_calls", c_int64)]


class CResult(Structure):
    _fields_ = [("size", c_size_t), ("logz", c_double),
                ("logzerr", c_double), ("n_p", c_int64), ("n_q", c_int64),
                ("ncall", c_int64), ("tau", c_double), ("re2_p", c_double),
                ("re2_q", c_double), ("method", c_int32),
                ("reserved", c_int32), ("n_trace", c_int64),
                ("n_warnings", c_int64), ("warnings", POINTER(c_char_p)),
                ("diagnostics", CDiagnostics),
                ("n_sampler_warnings", c_int64), ("n_info", c_int64),
                ("info", POINTER(c_char_p)), ("report", c_void_p)]


class CFinding(Structure):
    _fields_ = [("size", c_size_t), ("check", c_int32), ("kind", c_int32), ("where", c_int64),
                ("value", c_double), ("limit", c_double), ("message", c_char_p)]


class CCheckInfo(Structure):
    _fields_ = [("size", c_size_t), ("check", c_int32), ("kind", c_int32), ("id", c_char_p),
                ("title", c_char_p), ("meaning", c_char_p), ("action", c_char_p)]


class CDiagnosticsExt(Structure):
    _fields_ = [("size", c_size_t), ("n_copied_groups", c_int64), ("copied_chain", c_int64),
                ("step_corr_max", c_double), ("interleave_period", c_int64),
                ("interleave_rho", c_double), ("sign_corr", c_double),
                ("outside_share", c_double), ("pile_up_where", c_int64),
                ("pile_up_ratio", c_double), ("coverage_covered", c_double),
                ("coverage_ks", c_double), ("coverage_ks_limit", c_double),
                ("coverage_ks_at", c_double), ("anneal_steps", c_int64),
                ("anneal_calls", c_int64), ("census_modes", c_int64),
                ("census_shortfall", c_double), ("census_calls", c_int64),
                ("symmetry_calls", c_int64)]


class CSampling(Structure):
    _fields_ = [("size", c_size_t), ("n_chains", c_int64), ("n_draws", c_int64), ("d", c_int64),
                ("target_accept", c_double), ("retried", c_int32), ("lengthened", c_int32),
                ("global_moves", c_int32), ("reserved", c_int32),
                ("global_accept_rate", c_double), ("grad_calls", c_int64),
                ("logdensity_calls", c_int64), ("sampling_seconds", c_double),
                ("evidence_seconds", c_double)]


# gbs_finding.kind (GBS_KIND_*) and gbs_finding.where's GBS_WHERE_NONE.
KINDS = {1: "draws", 2: "estimate", 3: "info"}
WHERE_NONE = -2


class FlowOptions(Structure):
    _fields_ = [("size", c_size_t), ("max_layers", c_int32), ("layers", c_int32),
                ("directions", c_int32), ("knots", c_int32), ("whiten", c_int32),
                ("rotation", c_int32), ("threads", c_int32), ("conditional", c_int32),
                ("damping", c_double), ("bandwidth", c_double),
                ("validation_fraction", c_double), ("seed", c_uint64),
                ("lower", _dp), ("upper", _dp), ("scale", c_int32)]


class FlowInfo(Structure):
    _fields_ = [("size", c_size_t), ("dim", c_int64), ("layers", c_int64),
                ("n_warnings", c_int64), ("conditional_layers", c_int64)]


class NutsOptions(Structure):
    _fields_ = [("size", c_size_t), ("warmup", c_int64), ("max_depth", c_int32),
                ("metric", c_int32), ("concurrent", c_int32), ("reserved", c_int32),
                ("target_accept", c_double), ("step_size", c_double),
                ("seed", c_uint64), ("init", _dp), ("lower", _dp), ("upper", _dp),
                ("cancel", c_void_p),
                ("global_moves", c_int32), ("global_moves_per_iter", c_int32),
                ("global_stages", c_int64), ("global_stage_iters", c_int64)]


# gbs_evidence_options.independent (GBS_DRAWS_*).
DRAWS_CHAINS = 0
DRAWS_INDEPENDENT = 1
DRAWS_ENSEMBLE = 2


# gbs_evidence_options.anneal (GBS_ANNEAL_*).
ANNEAL = {"auto": 0, "off": 1, "on": 2}

# gbs_evidence_options.mode_census (GBS_MODE_CENSUS_*).
MODE_CENSUS = {"auto": 0, "off": 1, "on": 2}
# gbs_evidence_options.symmetry (GBS_SYMMETRY_*).
SYMMETRY = {"auto": 0, "off": 1, "on": 2}


# gbs_nuts_options.global_moves (GBS_GLOBAL_*).
GLOBAL_DEFAULT = 0
GLOBAL_ON = 1
GLOBAL_OFF = 2


class NutsChainStats(Structure):
    _fields_ = [("size", c_size_t), ("step_size", c_double), ("mean_accept", c_double),
                ("mean_tree_depth", c_double), ("divergences", c_int64),
                ("warmup_divergences", c_int64), ("max_depth_hits", c_int64),
                ("leapfrogs", c_int64), ("grad_calls", c_int64),
                ("global_proposed", c_int64), ("global_accepted", c_int64),
                ("global_warmup_proposed", c_int64), ("global_warmup_accepted", c_int64),
                ("global_calls", c_int64)]


class EnsembleOptions(Structure):
    _fields_ = [("size", c_size_t), ("walkers", c_int64), ("steps", c_int64),
                ("burn", c_int64), ("thin", c_int64), ("move", c_int32),
                ("reserved", c_int32), ("a", c_double), ("seed", c_uint64),
                ("init", _dp), ("lower", _dp), ("upper", _dp), ("cancel", c_void_p)]


class EnsembleInfo(Structure):
    _fields_ = [("size", c_size_t), ("walkers", c_int64), ("draws", c_int64),
                ("burn", c_int64), ("thin", c_int64), ("ncall", c_int64),
                ("tau_max", c_double), ("acceptance", c_double), ("n_warnings", c_int64)]


# The ctypes struct of every struct of include/gbs.h, by its C name:
# tests/python/test_abi_layout.py compiles a table of the header's sizeof
# and offsetof and compares it with these, field by field.
STRUCTS = {"gbs_evidence_options": EvidenceOptions, "gbs_trace_point": TracePoint,
           "gbs_diagnostics": CDiagnostics, "gbs_result": CResult,
           "gbs_flow_options": FlowOptions, "gbs_flow_info": FlowInfo,
           "gbs_nuts_options": NutsOptions, "gbs_nuts_chain_stats": NutsChainStats,
           "gbs_ensemble_options": EnsembleOptions, "gbs_ensemble_info": EnsembleInfo,
           "gbs_finding": CFinding, "gbs_check_info": CCheckInfo,
           "gbs_diagnostics_ext": CDiagnosticsExt, "gbs_sampling": CSampling}


def new_struct(cls):
    """An instance of a gbs options/result struct with its size set."""
    s = cls()
    s.size = ctypes.sizeof(cls)
    return s


# (name, restype, argtypes) of every function of include/gbs.h.
_SIGNATURES = [
    ("gbs_abi_version", c_int, []),
    ("gbs_version", c_char_p, []),
    ("gbs_free_error", None, [POINTER(c_char)]),
    ("gbs_free_warnings", None, [POINTER(c_char_p)]),
    ("gbs_set_threads", c_int, [c_int32, POINTER(c_int32), _err]),
    ("gbs_set_log_callback", c_int, [LOG_FN, c_void_p, _err]),
    ("gbs_cancel_token_new", c_int, [POINTER(c_void_p), _err]),
    ("gbs_cancel", c_int, [c_void_p, _err]),
    ("gbs_cancel_token_canceled", c_int, [c_void_p, POINTER(c_int32), _err]),
    ("gbs_cancel_token_free", c_int, [c_void_p, _err]),
    ("gbs_evidence", c_int, [LOG_DENSITY_FN, c_void_p, _dp, c_int64, c_int64, c_int64, _dp,
                             POINTER(EvidenceOptions), POINTER(CResult), POINTER(TracePoint),
                             c_int64, _err]),
    ("gbs_evidence_plan", c_int, [c_int64, c_int64, c_int64, c_int32, POINTER(EvidenceOptions),
                                  POINTER(c_int64), POINTER(c_int64), _err]),
    ("gbs_evidence_proposal_sample", c_int, [_dp, c_int64, c_int64, c_int64, POINTER(EvidenceOptions),
                                             c_int64, c_uint64, _dp, _dp, _err]),
    ("gbs_diagnostics_summary", c_int, [POINTER(CDiagnostics), POINTER(c_char), c_int64,
                                        POINTER(c_int64), _err]),
    ("gbs_flow_fit", c_int, [_dp, c_int64, c_int64, _dp, POINTER(FlowOptions),
                             POINTER(c_void_p), _err]),
    ("gbs_flow_free", c_int, [c_void_p, _err]),
    ("gbs_flow_get_info", c_int, [c_void_p, POINTER(FlowInfo), _err]),
    ("gbs_flow_warnings", c_int, [c_void_p, POINTER(POINTER(c_char_p)), POINTER(c_int64), _err]),
    ("gbs_flow_log_prob", c_int, [c_void_p, _dp, c_int64, _dp, _err]),
    ("gbs_flow_sample", c_int, [c_void_p, c_int64, c_uint64, _dp, _dp, _err]),
    ("gbs_flow_forward", c_int, [c_void_p, _dp, c_int64, _dp, _dp, _err]),
    ("gbs_flow_inverse", c_int, [c_void_p, _dp, c_int64, _dp, _dp, _err]),
    ("gbs_flow_save", c_int, [c_void_p, c_char_p, _err]),
    ("gbs_flow_load", c_int, [c_char_p, POINTER(c_void_p), _err]),
    ("gbs_flow_to_buffer", c_int, [c_void_p, c_void_p, c_int64, POINTER(c_int64), _err]),
    ("gbs_flow_from_buffer", c_int, [c_void_p, c_int64, POINTER(c_void_p), _err]),
    ("gbs_nuts_sample", c_int, [LOG_DENSITY_GRAD_FN, c_void_p, c_int64, c_int64, c_int64,
                                POINTER(NutsOptions), _dp, _dp, POINTER(NutsChainStats), _err]),
    ("gbs_nuts_evidence", c_int, [LOG_DENSITY_GRAD_FN, c_void_p, c_int64, c_int64, c_int64,
                                  POINTER(NutsOptions), POINTER(EvidenceOptions), POINTER(CResult),
                                  POINTER(TracePoint), c_int64, _dp, _dp, POINTER(NutsChainStats),
                                  _err]),
    ("gbs_nuts_sample_batch", c_int, [LOG_DENSITY_GRAD_BATCH_FN, c_void_p, c_int64, c_int64, c_int64,
                                      POINTER(NutsOptions), _dp, _dp, POINTER(NutsChainStats), _err]),
    ("gbs_nuts_evidence_batch", c_int, [LOG_DENSITY_GRAD_BATCH_FN, c_void_p, c_int64, c_int64, c_int64,
                                        POINTER(NutsOptions), POINTER(EvidenceOptions), POINTER(CResult),
                                        POINTER(TracePoint), c_int64, _dp, _dp, POINTER(NutsChainStats),
                                        _err]),
    ("gbs_ensemble_sample", c_int, [LOG_DENSITY_FN, c_void_p, c_int64, POINTER(EnsembleOptions),
                                    POINTER(c_void_p), _err]),
    ("gbs_ensemble_get_info", c_int, [c_void_p, POINTER(EnsembleInfo), _err]),
    ("gbs_ensemble_get_draws", c_int, [c_void_p, _dp, _dp, _err]),
    ("gbs_ensemble_warnings", c_int, [c_void_p, POINTER(POINTER(c_char_p)), POINTER(c_int64), _err]),
    ("gbs_ensemble_free", c_int, [c_void_p, _err]),
    ("gbs_ensemble_evidence", c_int, [LOG_DENSITY_FN, c_void_p, c_int64, POINTER(EnsembleOptions),
                                      POINTER(EvidenceOptions), POINTER(CResult), POINTER(TracePoint),
                                      c_int64, POINTER(c_int64), _err]),
    ("gbs_report_free", c_int, [c_void_p, _err]),
    ("gbs_result_free", None, [POINTER(CResult)]),
    ("gbs_report_n_findings", c_int, [c_void_p, POINTER(c_int64), _err]),
    ("gbs_report_finding", c_int, [c_void_p, c_int64, POINTER(CFinding), _err]),
    ("gbs_report_diagnostics_ext", c_int, [c_void_p, POINTER(CDiagnosticsExt), _err]),
    ("gbs_report_summary", c_int, [c_void_p, POINTER(c_char), c_int64, POINTER(c_int64), _err]),
    ("gbs_report_sampling", c_int, [c_void_p, POINTER(CSampling), _err]),
    ("gbs_report_draws", c_int, [c_void_p, _dp, _dp, POINTER(NutsChainStats), _err]),
    ("gbs_checks", c_int, [POINTER(c_int32), c_int64, POINTER(c_int64), _err]),
    ("gbs_check_get_info", c_int, [c_int32, POINTER(CCheckInfo), _err]),
    ("gbs_problem_new", c_int, [c_char_p, POINTER(c_void_p), _err]),
    ("gbs_problem_free", c_int, [c_void_p, _err]),
    ("gbs_problem_dim", c_int, [c_void_p, POINTER(c_int64), _err]),
    ("gbs_problem_log_z", c_int, [c_void_p, POINTER(c_double), _err]),
    ("gbs_problem_bounds", c_int, [c_void_p, _dp, _dp, POINTER(c_int32), _err]),
    ("gbs_problem_log_density_grad", c_int, [c_void_p, c_int64, c_void_p, c_void_p, c_void_p]),
    ("gbs_problem_log_density", c_int, [c_void_p, c_int64, c_int64, c_void_p, c_void_p]),
    ("gbs_debug_live_allocations", c_int64, []),
]


def _candidates():
    yield os.path.join(_HERE, "libgbs.so")
    # A source checkout with `make lib` (python/gbs -> build/lib).
    root = os.path.dirname(os.path.dirname(_HERE))
    if os.path.exists(os.path.join(root, "include", "gbs.h")):
        yield os.path.join(root, "build", "lib", "libgbs.so")


def find_library():
    """Path of the libgbs.so to load: $GBS_LIBRARY, else the one installed
    next to this package, else (in a source checkout) build/lib/libgbs.so."""
    env = os.environ.get("GBS_LIBRARY")
    if env:
        if not os.path.exists(env):
            raise OSError("GBS_LIBRARY=%s: no such file" % env)
        return os.path.abspath(env)
    for path in _candidates():
        if os.path.exists(path):
            return os.path.abspath(path)
    raise OSError(
        "libgbs.so not found next to the gbs package (%s): install the package "
        "with `pip install .` (which builds it with Go), run `make lib` in a "
        "source checkout, or set GBS_LIBRARY to the library's path" % _HERE)


def _load():
    path = find_library()
    # CDLL, not PyDLL: calls release the GIL, so that Go threads calling
    # back into Python can take it.
    lib = ctypes.CDLL(path)
    missing = []
    for name, restype, argtypes in _SIGNATURES:
        try:
            fn = getattr(lib, name)
        except AttributeError:
            missing.append(name)
            continue
        fn.restype = restype
        fn.argtypes = argtypes
    if "gbs_abi_version" in missing:
        raise OSError("%s is not libgbs (no gbs_abi_version)" % path)
    abi = lib.gbs_abi_version()
    if abi < ABI_VERSION:
        raise OSError("%s has ABI version %d; this gbs package needs %d or later: rebuild the "
                      "library or reinstall the package" % (path, abi, ABI_VERSION))
    if missing:
        raise OSError("%s lacks %s: rebuild it from the same source as this package"
                      % (path, ", ".join(missing)))
    return lib, path


class _ForkGuard:
    """The library's functions, each checking first that it runs in the
    process that loaded the library.

    A Go runtime does not survive fork: a forked child that calls into
    libgbs hangs (only the forking thread exists in the child, and the
    runtime waits for threads that are gone). So every call checks a flag
    that os.register_at_fork sets in a child whose pid differs from the
    one recorded at load time, and raises GbsForkError instead. A fork
    Python does not see (from C code) still gets GBS_ERR_FORKED from the
    library's own check in C, raised as the same GbsForkError.
    """

    def __init__(self, cdll):
        self._cdll = cdll

    def __getattr__(self, name):
        fn = getattr(self._cdll, name)

        def guarded(*args):
            if _forked:
                raise fork_error()
            return fn(*args)

        guarded.__name__ = guarded.__qualname__ = name
        setattr(self, name, guarded)  # found directly from now on
        return guarded


def forked():
    """True in a process forked from the one that loaded libgbs."""
    return _forked or os.getpid() != LOAD_PID


def _after_fork_in_child():
    global _forked
    _forked = os.getpid() != LOAD_PID


def fork_error():
    return GbsForkError(
        ERR_FORKED,
        "libgbs was loaded in process %d; this is a forked child %d; Go runtimes do not "
        "survive fork; use the 'spawn' or 'forkserver' start method of multiprocessing, or "
        "import gbs in the child only" % (LOAD_PID, os.getpid()))


LOAD_PID = os.getpid()
_forked = False
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)
_cdll, path = _load()
lib = _ForkGuard(_cdll)


def function_address(name):
    """The address of the library's function ``name``, to pass it as a
    callback (the reference problems' densities)."""
    return ctypes.cast(getattr(_cdll, name), c_void_p).value


# ---------------------------------------------------------------------------
# Errors
# ---------------------------------------------------------------------------

class GbsError(RuntimeError):
    """An error reported by libgbs.

    Attributes
    ----------
    status : int
        The GBS_ERR_* code of the C API (the "C and C++" page of the
        documentation lists them).
    """

    def __init__(self, status, message):
        super().__init__(message)
        self.status = status

    @property
    def status_name(self):
        return STATUS_NAMES.get(self.status, str(self.status))


class GbsArgumentError(GbsError, ValueError):
    """Input the library rejects (bad shapes or values, too few draws, NaN
    samples...): also a ValueError."""


class GbsCallbackError(GbsError):
    """The log density returned NaN or +inf (or the callback failed)."""


class GbsIOError(GbsError, OSError):
    """A flow file could not be read or written: also an OSError."""


class GbsForkError(GbsError):
    """A call into libgbs from a process forked after the library was
    loaded (the Go runtime does not survive fork); use the spawn or
    forkserver start method."""


_ERROR_CLASSES = {ERR_FORKED: GbsForkError, ERR_ARGUMENT: GbsArgumentError, ERR_HANDLE: GbsArgumentError,
                  ERR_CALLBACK: GbsCallbackError, ERR_IO: GbsIOError}


def new_error():
    """A NULL ``char *`` for a function's ``char **err`` parameter."""
    return POINTER(c_char)()


def take_error(err):
    """The message in err (freed) as a str, or ''."""
    if not err:
        return ""
    msg = ctypes.string_at(err).decode("utf-8", "replace")
    lib.gbs_free_error(err)
    return msg


def error(status, err):
    """The exception for a non-zero status; frees the C message."""
    msg = take_error(err) or "libgbs error %s" % STATUS_NAMES.get(status, status)
    return _ERROR_CLASSES.get(status, GbsError)(status, msg)


def check(status, err):
    """Raise the GbsError for a non-zero status, freeing the C message."""
    if status != OK:
        raise error(status, err)


def call(fn, *args):
    """fn(*args, &err), raising GbsError on failure."""
    err = new_error()
    check(fn(*args, ctypes.byref(err)), err)


def take_warnings(arr, n=None):
    """A warning list (NULL-terminated char **) as a list of str, freed."""
    if not arr:
        return []
    out = []
    i = 0
    while (n is None or i < n) and arr[i] is not None:
        out.append(arr[i].decode("utf-8", "replace"))
        i += 1
    lib.gbs_free_warnings(arr)
    return out


class CancelToken:
    """A libgbs cancel token, freed with the object."""

    def __init__(self):
        self.handle = c_void_p()
        call(lib.gbs_cancel_token_new, ctypes.byref(self.handle))

    def cancel(self):
        if self.handle:
            lib.gbs_cancel(self.handle, None)

    @property
    def canceled(self):
        v = c_int32()
        call(lib.gbs_cancel_token_canceled, self.handle, ctypes.byref(v))
        return bool(v.value)

    def __del__(self):
        handle = getattr(self, "handle", None)
        if handle and lib is not None and not forked():
            lib.gbs_cancel_token_free(handle, None)
            self.handle = c_void_p()


# ---------------------------------------------------------------------------
# Library messages (progress reports of calls made with progress=True)
# ---------------------------------------------------------------------------

_log_sinks = []  # stack of callables receiving one message (str)


def _on_log(msg, _user):
    try:
        text = msg.decode("utf-8", "replace") if msg else ""
        sink = _log_sinks[-1] if _log_sinks else None
        if sink is not None:
            sink(text)
        else:
            print("gbs: " + text, file=sys.stderr, flush=True)
    except BaseException:  # never unwind into Go
        pass


_log_fn = LOG_FN(_on_log)  # kept alive for the life of the process
_log_installed = False


def push_log_sink(sink):
    """Route library messages to sink(str) until pop_log_sink()."""
    global _log_installed
    if not _log_installed:
        call(lib.gbs_set_log_callback, _log_fn, None)
        _log_installed = True
    _log_sinks.append(sink)


def pop_log_sink(sink):
    try:
        _log_sinks.remove(sink)
    except ValueError:
        pass


def version():
    """Version string of the loaded libgbs, e.g. "0.1.0"."""
    return lib.gbs_version().decode()


def abi_version():
    """ABI version of the loaded libgbs (GBS_ABI_VERSION of its header)."""
    return int(lib.gbs_abi_version())


def live_allocations():
    """Objects the library has handed out and not yet had back (error
    messages, warning lists, flows, tokens, ensemble runs): for leak tests."""
    return int(lib.gbs_debug_live_allocations())


def set_threads(n):
    """Cap the number of threads that run library code at once (Go's
    GOMAXPROCS); ``n=0`` only queries. Returns the previous value. Results
    do not depend on it."""
    n = int(n)
    if n < 0:
        raise ValueError("set_threads: n must be >= 0, not %d" % n)
    prev = c_int32()
    call(lib.gbs_set_threads, n, ctypes.byref(prev))
    return int(prev.value)
