package main

/*
#include "gbs.h"

extern int gbs_problem_log_density_grad(const double *x, int64_t d, double *logp, double *grad, void *problem);
extern int gbs_problem_log_density(const double *x, int64_t n, int64_t d, double *logp, void *problem);

static gbs_log_density_grad_fn gbs_problem_grad_fn(void) { return gbs_problem_log_density_grad; }
static gbs_log_density_fn gbs_problem_density_fn(void) { return gbs_problem_log_density; }
*/
import "C"

// Go names of the C types and constants of gbs.h, for the package's tests:
// test files cannot import "C".
type (
	cChar             = C.char
	cDouble           = C.double
	cInt32            = C.int32_t
	cInt64            = C.int64_t
	cSize             = C.size_t
	cLogDensityFn     = C.gbs_log_density_fn
	cLogDensityGradFn = C.gbs_log_density_grad_fn
	cLogFn            = C.gbs_log_fn
	cEvidenceOptions  = C.gbs_evidence_options
	cResult           = C.gbs_result
	cTracePoint       = C.gbs_trace_point
	cFlow             = C.gbs_flow
	cFlowOptions      = C.gbs_flow_options
	cNutsOptions      = C.gbs_nuts_options
	cNutsChainStats   = C.gbs_nuts_chain_stats
	cEnsembleOptions  = C.gbs_ensemble_options
	cEnsemble         = C.gbs_ensemble
	cCancelToken      = C.gbs_cancel_token
	cFinding          = C.gbs_finding
	cCheckInfo        = C.gbs_check_info
	cDiagnosticsExt   = C.gbs_diagnostics_ext
	cSampling         = C.gbs_sampling
	cProblem          = C.gbs_problem
)

// The library's problem densities as C function pointers, as a C program
// passes them.
func problemGradFn() cLogDensityGradFn { return C.gbs_problem_grad_fn() }
func problemDensityFn() cLogDensityFn  { return C.gbs_problem_density_fn() }

const (
	statusOK       = C.GBS_OK
	statusArgument = C.GBS_ERR_ARGUMENT
	statusCallback = C.GBS_ERR_CALLBACK
	statusCanceled = C.GBS_ERR_CANCELED
	statusHandle   = C.GBS_ERR_HANDLE
	statusInternal = C.GBS_ERR_INTERNAL
	statusTooSmall = C.GBS_ERR_BUFFER_TOO_SMALL
)
