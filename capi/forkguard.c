// The functions of include/gbs.h, defined in C so that each can refuse a
// forked child before it enters Go.
//
// A Go runtime does not survive fork(): the child has only the thread that
// called fork, and the runtime's other threads (the scheduler's Ms, the
// garbage collector's workers, sysmon) are gone while their state says they
// exist, so a call into Go can wait for them forever, even before it
// reaches the function's body. The check must therefore be made here,
// before Go: every function compares getpid() with the process id recorded
// when the library was loaded, and a forked child gets GBS_ERR_FORKED with
// a message saying what happened. The check costs one getpid system call,
// small against the cgo call that follows.
//
// In a forked child, gbs_free_error frees the messages made here and
// ignores other pointers (messages from before the fork belong to the Go
// runtime's bookkeeping, which the child cannot run; leaking the child's
// copy is harmless), gbs_free_warnings does nothing, and
// gbs_debug_live_allocations counts the messages made here that are not
// freed. gbs_abi_version and gbs_version never enter Go.
//
// The wrappers below the helpers were generated from the header's
// prototypes (one per function; const is cast away because cgo cannot
// write it) and are checked against it twice: this file includes gbs.h with
// its prototypes, so a definition that differs is a compile error, and
// tests/c/check_abi.sh compiles the header against cgo's declarations of
// the gbsgo_* functions.

#undef GBS_NO_PROTOTYPES
#include "gbs.h"
#include "_cgo_export.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

// GBS_LIBRARY_VERSION is the string gbs_version returns, "MAJOR.MINOR.PATCH"
// from the header's GBS_VERSION_* macros (the one version number).
#define GBS_STRINGIFY_(x) #x
#define GBS_STRINGIFY(x) GBS_STRINGIFY_(x)
#define GBS_LIBRARY_VERSION                                             \
  GBS_STRINGIFY(GBS_VERSION_MAJOR) "." GBS_STRINGIFY(GBS_VERSION_MINOR) \
  "." GBS_STRINGIFY(GBS_VERSION_PATCH)

static pid_t load_pid;

__attribute__((constructor)) static void record_load_pid(void) { load_pid = getpid(); }

static int in_forked_child(void) { return getpid() != load_pid; }

// The messages of GBS_ERR_FORKED handed out and not yet freed.
static pthread_mutex_t forked_mu = PTHREAD_MUTEX_INITIALIZER;
static char **forked_msgs;
static size_t forked_n, forked_cap;

static int remember(char *msg) {
  int ok = 1;
  pthread_mutex_lock(&forked_mu);
  if (forked_n == forked_cap) {
    size_t cap = forked_cap ? 2 * forked_cap : 8;
    char **grown = realloc(forked_msgs, cap * sizeof *grown);
    if (grown == NULL) {
      ok = 0;
    } else {
      forked_msgs = grown;
      forked_cap = cap;
    }
  }
  if (ok) forked_msgs[forked_n++] = msg;
  pthread_mutex_unlock(&forked_mu);
  return ok;
}

// forget removes msg from the list; 1 if it was there.
static int forget(const char *msg) {
  int found = 0;
  pthread_mutex_lock(&forked_mu);
  for (size_t i = 0; i < forked_n; i++) {
    if (forked_msgs[i] == msg) {
      forked_msgs[i] = forked_msgs[--forked_n];
      found = 1;
      break;
    }
  }
  pthread_mutex_unlock(&forked_mu);
  return found;
}

// forked_status returns GBS_ERR_FORKED, with the message in *err if err
// is not NULL (NULL if even that message cannot be allocated).
static int forked_status(const char *fn, char **err) {
  if (err == NULL) return GBS_ERR_FORKED;
  *err = NULL;
  char buf[512];
  int n = snprintf(buf, sizeof buf,
                   "%s: libgbs was loaded in process %ld; this is a forked child %ld; "
                   "the Go runtime does not survive fork: load libgbs after fork (or "
                   "exec), or in Python use the 'spawn' or 'forkserver' start method, "
                   "or import gbs in the child only",
                   fn, (long)load_pid, (long)getpid());
  if (n < 0) return GBS_ERR_FORKED;
  size_t len = strlen(buf) + 1;
  char *msg = malloc(len);
  if (msg == NULL) return GBS_ERR_FORKED;
  memcpy(msg, buf, len);
  if (!remember(msg)) {
    free(msg);
    return GBS_ERR_FORKED;
  }
  *err = msg;
  return GBS_ERR_FORKED;
}

int gbs_abi_version(void) { return GBS_ABI_VERSION; }

const char *gbs_version(void) { return GBS_LIBRARY_VERSION; }

void gbs_free_error(char *err) {
  if (in_forked_child()) {
    if (err != NULL && forget(err)) free(err);
    return;
  }
  gbsgo_free_error(err);
}

void gbs_free_warnings(char **warnings) {
  if (in_forked_child()) return;
  gbsgo_free_warnings(warnings);
}

int64_t gbs_debug_live_allocations(void) {
  if (in_forked_child()) {
    pthread_mutex_lock(&forked_mu);
    int64_t n = (int64_t)forked_n;
    pthread_mutex_unlock(&forked_mu);
    return n;
  }
  return gbsgo_debug_live_allocations();
}

// ---------------------------------------------------------------------------
// One wrapper per function with a status.

int gbs_set_threads(int32_t n, int32_t *previous, char **err) {
  if (in_forked_child()) return forked_status(__func__, err);
  return gbsgo_set_threads(n, previous, err);
}

int gbs_set_log_callback(gbs_log_fn fn, void *user, char **err) {
  if (in_forked_child()) return forked_status(__func__, err);
  return gbsgo_set_log_callback(fn, user, err);
}

int gbs_cancel_token_new(gbs_cancel_token **out, char **err) {
  if (in_forked_child()) return forked_status(__func__, err);
  return gbsgo_cancel_token_new(out, err);
}

int gbs_cancel(gbs_cancel_token *token, char **err) {
  if (in_forked_child()) return forked_status(__func__, err);
  return gbsgo_cancel(token, err);
}

int gbs_cancel_token_canceled(gbs_cancel_token *token, int32_t *canceled, char **err) {
  if (in_forked_child()) return forked_status(__func__, err);
  return gbsgo_cancel_token_canceled(token, canceled, err);
}

int gbs_cancel_token_free(gbs_cancel_token *token, char **err) {
  if (in_forked_child()) return forked_status(__func__, err);
  return gbsgo_cancel_token_free(token, err);
}

int gbs_evidence(gbs_log_density_fn logp, void *user, const double *samples, int64_t n_chains, int64_t n_draws, int64_t d, const double *logp_samples, const gbs_evidence_options *opt, gbs_result *result, gbs_trace_point *trace, int64_t trace_cap, char **err) {
  if (in_forked_child()) return forked_status(__func__, err);
  return gbsgo_evidence(logp, user, (double *)samples, n_chains, n_draws, d, (double *)logp_samples, (gbs_evidence_options *)opt, result, trace, trace_cap, err);
}

int gbs_evidence_plan(int64_t n_chains, int64_t n_draws, int64_t d, int32_t have_logp, const gbs_evidence_options *opt, int64_t *planned, int64_t *max_extra, char **err) {
  if (in_forked_child()) return forked_status(__func__, err);
  return gbsgo_evidence_plan(n_chains, n_draws, d, have_logp, (gbs_evidence_options *)opt, planned, max_extra, err);
}

int gbs_evidence_proposal_sample(const double *samples, int64_t n_chains, int64_t n_draws, int64_t d, const gbs_evidence_options *opt, int64_t n, uint64_t seed, double *x, double *logq, char **err) {
  if (in_forked_child()) return forked_status(__func__, err);
  return gbsgo_evidence_proposal_sample((double *)samples, n_chains, n_draws, d, (gbs_evidence_options *)opt, n, seed, x, logq, err);
}

int gbs_diagnostics_summary(const gbs_diagnostics *diag, char *buf, int64_t cap, int64_t *len, char **err) {
  if (in_forked_child()) return forked_status(__func__, err);
  return gbsgo_diagnostics_summary((gbs_diagnostics *)diag, buf, cap, len, err);
}

int gbs_flow_fit(const double *x, int64_t n, int64_t d, const double *weights, const gbs_flow_options *opt, gbs_flow **out, char **err) {
  if (in_forked_child()) return forked_status(__func__, err);
  return gbsgo_flow_fit((double *)x, n, d, (double *)weights, (gbs_flow_options *)opt, out, err);
}

int gbs_flow_free(gbs_flow *flow, char **err) {
  if (in_forked_child()) return forked_status(__func__, err);
  return gbsgo_flow_free(flow, err);
}

int gbs_flow_get_info(const gbs_flow *flow, gbs_flow_info *info, char **err) {
  if (in_forked_child()) return forked_status(__func__, err);
  return gbsgo_flow_get_info((gbs_flow *)flow, info, err);
}

int gbs_flow_warnings(const gbs_flow *flow, char ***warnings, int64_t *n, char **err) {
  if (in_forked_child()) return forked_status(__func__, err);
  return gbsgo_flow_warnings((gbs_flow *)flow, warnings, n, err);
}

int gbs_flow_log_prob(const gbs_flow *flow, const double *x, int64_t n, double *logq, char **err) {
  if (in_forked_child()) return forked_status(__func__, err);
  return gbsgo_flow_log_prob((gbs_flow *)flow, (double *)x, n, logq, err);
}

int gbs_flow_sample(const gbs_flow *flow, int64_t n, uint64_t seed, double *x, double *logq, char **err) {
  if (in_forked_child()) return forked_status(__func__, err);
  return gbsgo_flow_sample((gbs_flow *)flow, n, seed, x, logq, err);
}

int gbs_flow_forward(const gbs_flow *flow, const double *x, int64_t n, double *z, double *logdet, char **err) {
  if (in_forked_child()) return forked_status(__func__, err);
  return gbsgo_flow_forward((gbs_flow *)flow, (double *)x, n, z, logdet, err);
}

int gbs_flow_inverse(const gbs_flow *flow, const double *z, int64_t n, double *x, double *logdet, char **err) {
  if (in_forked_child()) return forked_status(__func__, err);
  return gbsgo_flow_inverse((gbs_flow *)flow, (double *)z, n, x, logdet, err);
}

int gbs_flow_save(const gbs_flow *flow, const char *path, char **err) {
  if (in_forked_child()) return forked_status(__func__, err);
  return gbsgo_flow_save((gbs_flow *)flow, (char *)path, err);
}

int gbs_flow_load(const char *path, gbs_flow **out, char **err) {
  if (in_forked_child()) return forked_status(__func__, err);
  return gbsgo_flow_load((char *)path, out, err);
}

int gbs_flow_to_buffer(const gbs_flow *flow, void *buf, int64_t cap, int64_t *len, char **err) {
  if (in_forked_child()) return forked_status(__func__, err);
  return gbsgo_flow_to_buffer((gbs_flow *)flow, buf, cap, len, err);
}

int gbs_flow_from_buffer(const void *buf, int64_t len, gbs_flow **out, char **err) {
  if (in_forked_child()) return forked_status(__func__, err);
  return gbsgo_flow_from_buffer((void *)buf, len, out, err);
}

int gbs_nuts_sample(gbs_log_density_grad_fn f, void *user, int64_t d, int64_t n_chains, int64_t n_draws, const gbs_nuts_options *opt, double *draws, double *logp, gbs_nuts_chain_stats *stats, char **err) {
  if (in_forked_child()) return forked_status(__func__, err);
  return gbsgo_nuts_sample(f, user, d, n_chains, n_draws, (gbs_nuts_options *)opt, draws, logp, stats, err);
}

int gbs_nuts_evidence(gbs_log_density_grad_fn f, void *user, int64_t d, int64_t n_chains, int64_t n_draws, const gbs_nuts_options *nuts_opt, const gbs_evidence_options *ev_opt, gbs_result *result, gbs_trace_point *trace, int64_t trace_cap, double *draws, double *logp, gbs_nuts_chain_stats *stats, char **err) {
  if (in_forked_child()) return forked_status(__func__, err);
  return gbsgo_nuts_evidence(f, user, d, n_chains, n_draws, (gbs_nuts_options *)nuts_opt, (gbs_evidence_options *)ev_opt, result, trace, trace_cap, draws, logp, stats, err);
}

int gbs_ensemble_sample(gbs_log_density_fn f, void *user, int64_t d, const gbs_ensemble_options *opt, gbs_ensemble **out, char **err) {
  if (in_forked_child()) return forked_status(__func__, err);
  return gbsgo_ensemble_sample(f, user, d, (gbs_ensemble_options *)opt, out, err);
}

int gbs_ensemble_get_info(const gbs_ensemble *run, gbs_ensemble_info *info, char **err) {
  if (in_forked_child()) return forked_status(__func__, err);
  return gbsgo_ensemble_get_info((gbs_ensemble *)run, info, err);
}

int gbs_ensemble_get_draws(const gbs_ensemble *run, double *draws, double *logp, char **err) {
  if (in_forked_child()) return forked_status(__func__, err);
  return gbsgo_ensemble_get_draws((gbs_ensemble *)run, draws, logp, err);
}

int gbs_ensemble_warnings(const gbs_ensemble *run, char ***warnings, int64_t *n, char **err) {
  if (in_forked_child()) return forked_status(__func__, err);
  return gbsgo_ensemble_warnings((gbs_ensemble *)run, warnings, n, err);
}

int gbs_ensemble_free(gbs_ensemble *run, char **err) {
  if (in_forked_child()) return forked_status(__func__, err);
  return gbsgo_ensemble_free(run, err);
}

int gbs_ensemble_evidence(gbs_log_density_fn f, void *user, int64_t d, const gbs_ensemble_options *ens_opt, const gbs_evidence_options *ev_opt, gbs_result *result, gbs_trace_point *trace, int64_t trace_cap, int64_t *sampler_calls, char **err) {
  if (in_forked_child()) return forked_status(__func__, err);
  return gbsgo_ensemble_evidence(f, user, d, (gbs_ensemble_options *)ens_opt, (gbs_evidence_options *)ev_opt, result, trace, trace_cap, sampler_calls, err);
}

int gbs_nuts_sample_batch(gbs_log_density_grad_batch_fn f, void *user, int64_t d, int64_t n_chains, int64_t n_draws, const gbs_nuts_options *opt, double *draws, double *logp, gbs_nuts_chain_stats *stats, char **err) {
  if (in_forked_child()) return forked_status(__func__, err);
  return gbsgo_nuts_sample_batch(f, user, d, n_chains, n_draws, (gbs_nuts_options *)opt, draws, logp, stats, err);
}

int gbs_nuts_evidence_batch(gbs_log_density_grad_batch_fn f, void *user, int64_t d, int64_t n_chains, int64_t n_draws, const gbs_nuts_options *nuts_opt, const gbs_evidence_options *ev_opt, gbs_result *result, gbs_trace_point *trace, int64_t trace_cap, double *draws, double *logp, gbs_nuts_chain_stats *stats, char **err) {
  if (in_forked_child()) return forked_status(__func__, err);
  return gbsgo_nuts_evidence_batch(f, user, d, n_chains, n_draws, (gbs_nuts_options *)nuts_opt, (gbs_evidence_options *)ev_opt, result, trace, trace_cap, draws, logp, stats, err);
}

int gbs_report_free(gbs_report *report, char **err) {
  if (in_forked_child()) return forked_status(__func__, err);
  return gbsgo_report_free(report, err);
}

void gbs_result_free(gbs_result *result) {
  if (in_forked_child()) return;
  gbsgo_result_free(result);
}

int gbs_report_n_findings(const gbs_report *report, int64_t *n, char **err) {
  if (in_forked_child()) return forked_status(__func__, err);
  return gbsgo_report_n_findings((gbs_report *)report, n, err);
}

int gbs_report_finding(const gbs_report *report, int64_t i, gbs_finding *out, char **err) {
  if (in_forked_child()) return forked_status(__func__, err);
  return gbsgo_report_finding((gbs_report *)report, i, out, err);
}

int gbs_report_diagnostics_ext(const gbs_report *report, gbs_diagnostics_ext *out, char **err) {
  if (in_forked_child()) return forked_status(__func__, err);
  return gbsgo_report_diagnostics_ext((gbs_report *)report, out, err);
}

int gbs_report_summary(const gbs_report *report, char *buf, int64_t cap, int64_t *len, char **err) {
  if (in_forked_child()) return forked_status(__func__, err);
  return gbsgo_report_summary((gbs_report *)report, buf, cap, len, err);
}

int gbs_report_sampling(const gbs_report *report, gbs_sampling *out, char **err) {
  if (in_forked_child()) return forked_status(__func__, err);
  return gbsgo_report_sampling((gbs_report *)report, out, err);
}

int gbs_report_draws(const gbs_report *report, double *draws, double *logp, gbs_nuts_chain_stats *stats, char **err) {
  if (in_forked_child()) return forked_status(__func__, err);
  return gbsgo_report_draws((gbs_report *)report, draws, logp, stats, err);
}

int gbs_checks(int32_t *codes, int64_t cap, int64_t *n, char **err) {
  if (in_forked_child()) return forked_status(__func__, err);
  return gbsgo_checks(codes, cap, n, err);
}

int gbs_check_get_info(int32_t check, gbs_check_info *out, char **err) {
  if (in_forked_child()) return forked_status(__func__, err);
  return gbsgo_check_get_info(check, out, err);
}

int gbs_problem_new(const char *name, gbs_problem **out, char **err) {
  if (in_forked_child()) return forked_status(__func__, err);
  return gbsgo_problem_new((char *)name, out, err);
}

int gbs_problem_free(gbs_problem *problem, char **err) {
  if (in_forked_child()) return forked_status(__func__, err);
  return gbsgo_problem_free(problem, err);
}

int gbs_problem_dim(const gbs_problem *problem, int64_t *d, char **err) {
  if (in_forked_child()) return forked_status(__func__, err);
  return gbsgo_problem_dim((gbs_problem *)problem, d, err);
}

int gbs_problem_log_z(const gbs_problem *problem, double *log_z, char **err) {
  if (in_forked_child()) return forked_status(__func__, err);
  return gbsgo_problem_log_z((gbs_problem *)problem, log_z, err);
}

int gbs_problem_bounds(const gbs_problem *problem, double *lower, double *upper, int32_t *bounded, char **err) {
  if (in_forked_child()) return forked_status(__func__, err);
  return gbsgo_problem_bounds((gbs_problem *)problem, lower, upper, bounded, err);
}

// The density functions are callbacks: no error message, the status alone.
int gbs_problem_log_density_grad(const double *x, int64_t d, double *logp, double *grad, void *problem) {
  if (in_forked_child()) return GBS_ERR_FORKED;
  return gbsgo_problem_log_density_grad((double *)x, d, logp, grad, problem);
}

int gbs_problem_log_density(const double *x, int64_t n, int64_t d, double *logp, void *problem) {
  if (in_forked_child()) return GBS_ERR_FORKED;
  return gbsgo_problem_log_density((double *)x, n, d, logp, problem);
}
