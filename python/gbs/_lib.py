"""Loading libgbs and declaring its C functions (see include/gbs.h)."""

import ctypes
import os
from ctypes import (CFUNCTYPE, POINTER, Structure, c_char_p, c_double, c_int,
                    c_int32, c_int64, c_size_t, c_uint64, c_void_p)

_HERE = os.path.dirname(os.path.abspath(__file__))

LOG_DENSITY_FN = CFUNCTYPE(c_int, POINTER(c_double), c_int64, c_int64,
                           POINTER(c_double), c_void_p)

LOG_DENSITY_GRAD_FN = CFUNCTYPE(c_int, POINTER(c_double), c_int64,
                                POINTER(c_double), POINTER(c_double), c_void_p)

METHODS = {"bridge": 0, "is": 1, "hm": 2, "warp3": 3}
METHOD_NAMES = {v: k for k, v in METHODS.items()}

ERR_CALLBACK = 2
ERR_CANCELED = 3


class EvidenceOptions(Structure):
    _fields_ = [("size", c_size_t), ("method", c_int32),
                ("independent", c_int32), ("concurrent", c_int32),
                ("verbose", c_int32), ("n_q", c_int64),
                ("batch_size", c_int64), ("ncall", c_int64),
                ("seed", c_uint64), ("f_err", c_double), ("f_eva", c_double),
                ("lower", POINTER(c_double)), ("upper", POINTER(c_double)),
                ("cancel", c_void_p)]


class TracePoint(Structure):
    _fields_ = [("n_q", c_int64), ("logz", c_double), ("logzerr", c_double)]


class CResult(Structure):
    _fields_ = [("size", c_size_t), ("logz", c_double),
                ("logzerr", c_double), ("n_p", c_int64), ("n_q", c_int64),
                ("ncall", c_int64), ("tau", c_double), ("re2_p", c_double),
                ("re2_q", c_double), ("method", c_int32),
                ("reserved", c_int32), ("n_trace", c_int64),
                ("n_warnings", c_int64), ("warnings", POINTER(c_char_p))]


class FlowOptions(Structure):
    _fields_ = [("size", c_size_t), ("max_layers", c_int32), ("layers", c_int32),
                ("directions", c_int32), ("knots", c_int32), ("whiten", c_int32),
                ("rotation", c_int32), ("threads", c_int32), ("reserved", c_int32),
                ("damping", c_double), ("bandwidth", c_double),
                ("validation_fraction", c_double), ("seed", c_uint64),
                ("lower", POINTER(c_double)), ("upper", POINTER(c_double))]


class FlowInfo(Structure):
    _fields_ = [("size", c_size_t), ("dim", c_int64), ("layers", c_int64),
                ("n_warnings", c_int64)]


class NutsOptions(Structure):
    _fields_ = [("size", c_size_t), ("warmup", c_int64), ("max_depth", c_int32),
                ("metric", c_int32), ("concurrent", c_int32), ("reserved", c_int32),
                ("target_accept", c_double), ("step_size", c_double),
                ("seed", c_uint64), ("init", POINTER(c_double)),
                ("lower", POINTER(c_double)), ("upper", POINTER(c_double)),
                ("cancel", c_void_p)]


class NutsChainStats(Structure):
    _fields_ = [("size", c_size_t), ("step_size", c_double), ("mean_accept", c_double),
                ("mean_tree_depth", c_double), ("divergences", c_int64),
                ("warmup_divergences", c_int64), ("max_depth_hits", c_int64),
                ("leapfrogs", c_int64), ("grad_calls", c_int64)]


class EnsembleOptions(Structure):
    _fields_ = [("size", c_size_t), ("walkers", c_int64), ("steps", c_int64),
                ("burn", c_int64), ("thin", c_int64), ("move", c_int32),
                ("reserved", c_int32), ("a", c_double), ("seed", c_uint64),
                ("init", POINTER(c_double)), ("lower", POINTER(c_double)),
                ("upper", POINTER(c_double)), ("cancel", c_void_p)]


class EnsembleInfo(Structure):
    _fields_ = [("size", c_size_t), ("walkers", c_int64), ("draws", c_int64),
                ("burn", c_int64), ("thin", c_int64), ("ncall", c_int64),
                ("tau_max", c_double), ("acceptance", c_double), ("n_warnings", c_int64)]


def _find_library():
    env = os.environ.get("GBS_LIBRARY")
    if env:
        return env
    candidates = [os.path.join(_HERE, "libgbs.so"),
                  os.path.join(_HERE, "..", "..", "build", "lib", "libgbs.so")]
    for path in candidates:
        if os.path.exists(path):
            return os.path.abspath(path)
    raise OSError(
        "libgbs.so not found: install the package with `pip install .`, "
        "run `make lib`, or set GBS_LIBRARY to the library's path")


def _load():
    # CDLL, not PyDLL: calls release the GIL, so Go threads that call back
    # into Python can take it.
    lib = ctypes.CDLL(_find_library())
    err = POINTER(ctypes.c_char)
    lib.gbs_abi_version.restype = c_int
    lib.gbs_version.restype = c_char_p
    lib.gbs_free_error.argtypes = [err]
    lib.gbs_free_error.restype = None
    lib.gbs_free_warnings.argtypes = [POINTER(c_char_p)]
    lib.gbs_free_warnings.restype = None
    lib.gbs_cancel_token_new.argtypes = [POINTER(c_void_p), POINTER(err)]
    lib.gbs_cancel.argtypes = [c_void_p, POINTER(err)]
    lib.gbs_cancel_token_free.argtypes = [c_void_p, POINTER(err)]
    lib.gbs_set_threads.argtypes = [c_int32, POINTER(c_int32), POINTER(err)]
    lib.gbs_evidence.argtypes = [
        LOG_DENSITY_FN, c_void_p, POINTER(c_double), c_int64, c_int64,
        c_int64, POINTER(c_double), POINTER(EvidenceOptions),
        POINTER(CResult), POINTER(TracePoint), c_int64, POINTER(err)]
    lib.gbs_evidence.restype = c_int
    dp = POINTER(c_double)
    lib.gbs_flow_fit.argtypes = [dp, c_int64, c_int64, dp, POINTER(FlowOptions),
                                 POINTER(c_void_p), POINTER(err)]
    lib.gbs_flow_free.argtypes = [c_void_p, POINTER(err)]
    lib.gbs_flow_get_info.argtypes = [c_void_p, POINTER(FlowInfo), POINTER(err)]
    lib.gbs_flow_warnings.argtypes = [c_void_p, POINTER(POINTER(c_char_p)),
                                      POINTER(c_int64), POINTER(err)]
    lib.gbs_flow_log_prob.argtypes = [c_void_p, dp, c_int64, dp, POINTER(err)]
    lib.gbs_flow_sample.argtypes = [c_void_p, c_int64, c_uint64, dp, dp, POINTER(err)]
    lib.gbs_flow_forward.argtypes = [c_void_p, dp, c_int64, dp, dp, POINTER(err)]
    lib.gbs_flow_inverse.argtypes = [c_void_p, dp, c_int64, dp, dp, POINTER(err)]
    lib.gbs_flow_save.argtypes = [c_void_p, c_char_p, POINTER(err)]
    lib.gbs_flow_load.argtypes = [c_char_p, POINTER(c_void_p), POINTER(err)]
    lib.gbs_flow_to_buffer.argtypes = [c_void_p, c_void_p, c_int64, POINTER(c_int64), POINTER(err)]
    lib.gbs_flow_from_buffer.argtypes = [c_void_p, c_int64, POINTER(c_void_p), POINTER(err)]
    lib.gbs_nuts_sample.argtypes = [LOG_DENSITY_GRAD_FN, c_void_p, c_int64, c_int64, c_int64,
                                    POINTER(NutsOptions), dp, dp, POINTER(NutsChainStats),
                                    POINTER(err)]
    lib.gbs_ensemble_sample.argtypes = [LOG_DENSITY_FN, c_void_p, c_int64,
                                        POINTER(EnsembleOptions), POINTER(c_void_p), POINTER(err)]
    lib.gbs_ensemble_get_info.argtypes = [c_void_p, POINTER(EnsembleInfo), POINTER(err)]
    lib.gbs_ensemble_get_draws.argtypes = [c_void_p, dp, dp, POINTER(err)]
    lib.gbs_ensemble_warnings.argtypes = [c_void_p, POINTER(POINTER(c_char_p)),
                                          POINTER(c_int64), POINTER(err)]
    lib.gbs_ensemble_free.argtypes = [c_void_p, POINTER(err)]
    if lib.gbs_abi_version() != 1:
        raise OSError("libgbs ABI version %d, this package needs 1"
                      % lib.gbs_abi_version())
    return lib


lib = _load()


class GbsError(RuntimeError):
    """An error reported by libgbs; ``status`` is its GBS_ERR_* code."""

    def __init__(self, status, message):
        super().__init__(message)
        self.status = status


def new_error():
    return POINTER(ctypes.c_char)()


def check(status, err):
    """Raise GbsError for a non-zero status, freeing the C message."""
    if status == 0:
        return
    msg = ctypes.string_at(err).decode("utf-8", "replace") if err else ""
    lib.gbs_free_error(err)
    raise GbsError(status, msg or "libgbs error %d" % status)


class CancelToken:
    """A libgbs cancel token, freed with the object."""

    def __init__(self):
        self.handle = c_void_p()
        err = new_error()
        check(lib.gbs_cancel_token_new(ctypes.byref(self.handle),
                                       ctypes.byref(err)), err)

    def cancel(self):
        lib.gbs_cancel(self.handle, None)

    def __del__(self):
        if self.handle:
            lib.gbs_cancel_token_free(self.handle, None)
            self.handle = c_void_p()


def version():
    """Version string of the loaded libgbs."""
    return lib.gbs_version().decode()
