/*
 * gbs.h -- C interface of libgbs: Bayesian evidence (ln Z) with Gaussianized
 * bridge sampling, Gaussianizing normalizing flows and NUTS sampling.
 *
 * ABI version 4.  Link with `pkg-config --cflags --libs gbs`.
 *
 * Conventions (they hold for every function unless its comment says
 * otherwise):
 *
 * Status.  Functions return an int status: GBS_OK (0) on success, one of
 *   the GBS_ERR_* codes below on failure.  Nothing ever aborts the process:
 *   bad arguments, failing callbacks and internal errors (a Go panic is
 *   recovered inside the library) all come back as a status.
 *
 * Error messages.  The last parameter, `char **err`, may be NULL.  If it is
 *   not, *err is set to NULL on success and, on failure, to a newly
 *   allocated NUL-terminated UTF-8 message that the caller owns and must
 *   release with gbs_free_error().
 *
 * Outputs.  Arrays are allocated by the caller with the sizes documented for
 *   each function; the library writes into them and keeps no pointer to them
 *   after the call returns.  On failure the content of output arrays is
 *   unspecified.  The only memory the library allocates for the caller is
 *   error messages (gbs_free_error) and warning lists (gbs_free_warnings).
 *
 * Arrays.  All arrays are dense and row-major (C order): a set of n points
 *   of dimension d is an array of n*d doubles, point i at x[i*d .. i*d+d-1].
 *   Sizes are int64_t and must not be negative.  Input arrays are only read,
 *   and only during the call.
 *
 * Options structs.  Every options struct starts with `size_t size`, which
 *   the caller sets to sizeof(the struct).  A zero value in any other field
 *   means "default" (so `T o = {sizeof o};` or memset to zero then setting
 *   size gives all defaults); a NULL options pointer also means all defaults.
 *   A size smaller than the struct of ABI version 1 is an error
 *   (GBS_ERR_ARGUMENT); a struct that grew in a later ABI version also
 *   accepts the sizes it had before (gbs_result: GBS_RESULT_SIZE_V1 and
 *   GBS_RESULT_SIZE_V2), and
 *   the library then fills only the fields that size holds, so programs
 *   built against an older header keep working unchanged.  A larger size (a struct from a newer header) is
 *   accepted when the bytes this library does not know are all zero.
 *   Result structs (gbs_result, gbs_flow_info, gbs_nuts_chain_stats...)
 *   also start with `size_t size`, set by the caller, checked the same way.
 *
 * Handles.  Long-lived objects (a fitted flow, a cancel token) are opaque
 *   handles created by a *_new / *_fit / *_load function and released by the
 *   matching *_free function.  A handle value is never reused: using a freed
 *   handle gives GBS_ERR_HANDLE, not a crash.  Passing a value that was never
 *   returned by the library also gives GBS_ERR_HANDLE.
 *
 * Callbacks.  Log densities are evaluated through user callbacks that receive
 *   a `void *user` pointer, passed through untouched.  A callback returns 0 on
 *   success; any other value aborts the library call, which then returns
 *   GBS_ERR_CALLBACK with the message "log-density callback returned error
 *   code N".  The buffers a callback receives are valid only until it
 *   returns: copy what you need.  A callback may call other gbs_ functions.
 *   It must not unwind through the library (no longjmp, no C++ exception
 *   out of the callback).  Unless the call's options set `concurrent`, the
 *   callback is never called from two threads at once, but it may be called
 *   from a thread other than the caller's (one at a time, with the caller
 *   blocked in the library).
 *
 * Threads.  All functions may be called from any thread, concurrently, on
 *   different or the same handles (a fitted flow is immutable).  The library
 *   runs a Go runtime with its own worker threads; gbs_set_threads() caps how
 *   many run Go code at once.  One libgbs per process; after fork() only
 *   exec is safe (use spawn / forkserver in Python multiprocessing): a
 *   forked child that calls the library gets GBS_ERR_FORKED, not a hang.
 *
 * Cancellation.  Long calls take an optional gbs_cancel_token in their
 *   options; gbs_cancel() from another thread makes the call return
 *   GBS_ERR_CANCELED soon after (between two callback invocations: a callback
 *   that is running is not interrupted).
 */
#ifndef GBS_H
#define GBS_H

#include <stddef.h>
#include <stdint.h>

/* GBS_NO_PROTOTYPES is defined only while libgbs itself is compiled (cgo
 * generates the functions' definitions with non-const parameters); user
 * code never defines it. */

#ifdef __cplusplus
extern "C" {
#endif

/* ABI version of this header.  The version policy, the one place it is
 * written (CHANGELOG.md and the Python package follow it):
 *
 *   The ABI version rises by one with every release that changes the C
 *   interface.  Every change so far is an addition (a function, a
 *   #define, a field at the end of a struct that carries its own size),
 *   so a library serves programs built against its own header and every
 *   older one: a program checks gbs_abi_version() >= GBS_ABI_VERSION.  A
 *   change that breaks older programs would need a new library soname and
 *   a major release.
 *
 * Version 2 added gbs_result.diagnostics; 3 the coverage check
 * (gbs_evidence_options.coverage_check, the coverage_* fields at the end
 * of gbs_diagnostics, gbs_result.n_sampler_warnings and info) and global
 * moves (gbs_nuts_options.global_*, gbs_nuts_chain_stats.global_*); 4 the
 * annealed bridge (gbs_evidence_options.anneal), the flow's scale layer
 * (gbs_flow_options.scale), coordinate names (gbs_evidence_options.names)
 * the report (gbs_result.report: typed findings with check codes,
 * every diagnostic number, a pipeline's draws) and the reference problems
 * as native densities (gbs_problem_*).  gbs_diagnostics is
 * frozen: new numbers go to gbs_diagnostics_ext, reached from the
 * report. */
#define GBS_ABI_VERSION 4

/* Release version of this header and of the library built from it: the one
 * version number of gbs.  setup.py (the Python package), the Makefile
 * (gbs.pc, gbsConfigVersion.cmake) and capi (gbs_version) read it from
 * here; the Go constant gbs.Version and Python's gbs.__version__ are
 * checked against it by tests. */
#define GBS_VERSION_MAJOR 0
#define GBS_VERSION_MINOR 1
#define GBS_VERSION_PATCH 0

/* ------------------------------------------------------------------------ */
/* Status codes                                                              */
/* ------------------------------------------------------------------------ */

#define GBS_OK 0
/* An argument is invalid: a NULL pointer where an array is required, a
 * negative or zero size, a bad options or result struct size, an option out
 * of its enumeration or negative, a size whose arrays cannot fit in the
 * memory available (n_q, chains x draws, walkers x steps, flow layers and
 * knots, flow draws: checked before anything is allocated, the message
 * names the size and the bytes it needs), or (gbs_flow_fit) data a flow
 * cannot be fit to.  Sample values the estimator rejects (NaN or infinite samples, too few
 * draws, an option value out of range) are GBS_ERR_FAILED, whose message
 * names the value. */
#define GBS_ERR_ARGUMENT 1
/* A user callback returned a non-zero code, or a log density callback wrote
 * NaN or +Inf. */
#define GBS_ERR_CALLBACK 2
/* The call was cancelled through its gbs_cancel_token. */
#define GBS_ERR_CANCELED 3
/* A handle is NULL where one is required, was freed, or is not a handle of
 * the expected kind. */
#define GBS_ERR_HANDLE 4
/* A caller buffer is too small; the needed size was written where the
 * function says. */
#define GBS_ERR_BUFFER_TOO_SMALL 5
/* A file could not be read or written. */
#define GBS_ERR_IO 6
/* The estimator or sampler refused the input or failed, for the reason
 * given in the message (for example NaN in the samples, too few draws, no
 * overlap between the proposal and the target, a corrupt serialized flow). */
#define GBS_ERR_FAILED 7
/* An internal error (a bug in libgbs); the message says where.  The library
 * remains usable. */
#define GBS_ERR_INTERNAL 8
/* The call was made in a process forked from the one that loaded the
 * library, whose Go runtime does not survive fork (it would hang); nothing
 * was done.  Load libgbs after fork (or exec); in Python use the spawn or
 * forkserver start method.  In a forked child every function with a status
 * returns this, gbs_free_error frees only these messages, gbs_free_warnings
 * does nothing, and gbs_abi_version and gbs_version work as usual. */
#define GBS_ERR_FORKED 9

/* ------------------------------------------------------------------------ */
/* Version, errors, runtime                                                  */
/* ------------------------------------------------------------------------ */

/* Message sink: receives one NUL-terminated message (no trailing newline),
 * valid only during the call.  Calls are serialized by the library (never
 * two at once) but may come from any thread. */
typedef void (*gbs_log_fn)(const char *msg, void *user);

#ifndef GBS_NO_PROTOTYPES
/* Returns the ABI version the library was built with (GBS_ABI_VERSION of its
 * header).  Cannot fail. */
int gbs_abi_version(void);

/* Returns the library version as a static NUL-terminated string such as
 * "0.1.0".  The string is owned by the library and never freed.  Cannot
 * fail. */
const char *gbs_version(void);

/* Frees an error message returned through a `char **err` parameter.  NULL
 * is a no-op; a pointer that is not an outstanding message of the library
 * (already freed, or never allocated by it) is ignored.  Thread-safe. */
void gbs_free_error(char *err);

/* Frees a NULL-terminated array of warning strings returned by the library
 * (gbs_result.warnings, gbs_flow_warnings), strings included.  NULL is a
 * no-op; a pointer that is not an outstanding warning list of the library is
 * ignored.  Thread-safe. */
void gbs_free_warnings(char **warnings);

/* Sets the number of threads that may run library code at once
 * (Go's GOMAXPROCS) to n if n > 0; n == 0 only queries.  The previous value
 * is written to *previous unless previous is NULL.  n < 0 is
 * GBS_ERR_ARGUMENT.  The default is the number of CPUs available to the
 * process.  Process-wide; results do not depend on it (reproducibility). */
int gbs_set_threads(int32_t n, int32_t *previous, char **err);

/* Routes the library's messages (progress reports of calls whose options set
 * `verbose`) to fn, called with user.  fn == NULL restores the default:
 * messages go to stderr.  Process-wide; takes effect for calls that start
 * afterwards.  The Python package uses this to print into Jupyter. */
int gbs_set_log_callback(gbs_log_fn fn, void *user, char **err);
#endif

/* ------------------------------------------------------------------------ */
/* Cancellation                                                              */
/* ------------------------------------------------------------------------ */

typedef struct gbs_cancel_token gbs_cancel_token;

#ifndef GBS_NO_PROTOTYPES
/* Creates a cancel token in *out (not cancelled).  Free it with
 * gbs_cancel_token_free(). */
int gbs_cancel_token_new(gbs_cancel_token **out, char **err);

/* Cancels every running and future call whose options carry this token: they
 * return GBS_ERR_CANCELED soon (within one callback invocation plus a few
 * milliseconds; a flow fit inside the call is not interrupted).  Cancelling
 * is permanent: make a new token for new calls.  Cancelling twice is fine.
 * Callable from any thread, but it is not async-signal-safe: from a signal
 * handler, set a flag and cancel from a normal thread. */
int gbs_cancel(gbs_cancel_token *token, char **err);

/* Writes 1 to *canceled if the token was cancelled, else 0. */
int gbs_cancel_token_canceled(gbs_cancel_token *token, int32_t *canceled, char **err);

/* Frees a token.  Calls running with it are not affected (they can no longer
 * be cancelled).  NULL is a no-op (GBS_OK); a freed token is GBS_ERR_HANDLE. */
int gbs_cancel_token_free(gbs_cancel_token *token, char **err);
#endif

/* ------------------------------------------------------------------------ */
/* Callbacks                                                                 */
/* ------------------------------------------------------------------------ */

/* Batch log density: evaluate log p, up to an additive constant, at the n
 * points x (n*d doubles, row-major) and write the n values into logp.
 * -INFINITY is valid (zero density, e.g. outside the prior); NaN and +Inf
 * are errors (the call returns GBS_ERR_CALLBACK).  n >= 1.  x and logp are
 * valid only during the call.  Return 0, or non-zero to abort. */
typedef int (*gbs_log_density_fn)(const double *x, int64_t n, int64_t d,
                                  double *logp, void *user);

/* Log density and gradient at one point x (d doubles): write log p into
 * *logp and its gradient into grad (d doubles).  -INFINITY, NaN or a
 * non-finite gradient marks a point the sampler must not enter (a divergent
 * transition, not an error).  x, logp and grad are valid only during the
 * call.  Return 0, or non-zero to abort. */
typedef int (*gbs_log_density_grad_fn)(const double *x, int64_t d,
                                       double *logp, double *grad,
                                       void *user);

/* ------------------------------------------------------------------------ */
/* Evidence                                                                  */
/* ------------------------------------------------------------------------ */

/* Estimators (gbs_evidence_options.method). */
#define GBS_METHOD_BRIDGE 0 /* Gaussianized bridge sampling (default) */
#define GBS_METHOD_IS 1     /* importance sampling with the fitted flow */
#define GBS_METHOD_HM 2     /* reciprocal importance sampling (harmonic mean) */
#define GBS_METHOD_WARP3 3  /* warp-III bridge sampling, a Gaussian baseline */

/* Cross-fitting of the bridge estimate (gbs_evidence_options.cross_fit). */
#define GBS_CROSS_FIT_AUTO 0 /* bridge: a second pass fits q on the second
                                half and estimates on the first; ln Z is the
                                mean of the passes (about half the posterior
                                variance; n_q and the f_eva budget are
                                shared).  Default */
#define GBS_CROSS_FIT_OFF 1  /* one pass, as in Jia & Seljak (2019) */

/* The coverage check of the bridge (gbs_evidence_options.coverage_check;
 * docs/diagnostics.md, section 8): short independence Metropolis-Hastings
 * chains proposed by the fitted flow and a widened copy of it look for mass
 * of p beyond the range of the draws, which every chain may have missed
 * alike, and compare their log p with the draws' by a two-sample test
 * (mass reached in the wrong proportion; its numbers are in the warning).
 * It costs about n_q/10 log-density calls, counted in ncall. */
#define GBS_COVERAGE_CHECK_AUTO 0 /* on for the bridge.  Default */
#define GBS_COVERAGE_CHECK_OFF 1  /* off */

/* The annealed bridge (gbs_evidence_options.anneal; docs/benchmarks.md,
 * "The annealed bridge"): where the draws are few for the dimension
 * (d^2/(4n) of at least 1 nat for n draws per fit) and the direct bridge's
 * overlap is poor, q is joined to p by the geometric path q^(1-b) p^b, and
 * particles from q and from held-out draws cross it (one log-density call
 * per particle and rung, no gradient; result->info says when it ran, with
 * its rungs and calls, which ncall includes). */
#define GBS_ANNEAL_AUTO 0 /* only where the direct bridge's diagnostics say
                             it is unreliable.  Default */
#define GBS_ANNEAL_OFF 1  /* never: the direct bridge, as in Jia & Seljak */
#define GBS_ANNEAL_ON 2   /* always (bridge method) */

/* The mode census (gbs_evidence_options.mode_census; docs/diagnostics.md,
 * "missed-mode"): where lower and upper bound every coordinate, log p is
 * climbed from points spread over the box and from draws of a widened
 * proposal, and a local maximum that neither the draws nor the proposal
 * reach is a finding (GBS_CHECK_MISSED_MODE) naming where it is and what
 * ln Z misses.  A few thousand log-density calls at small d, counted in
 * ncall. */
#define GBS_MODE_CENSUS_AUTO 0 /* on when the box is finite.  Default */
#define GBS_MODE_CENSUS_OFF 1  /* off */
#define GBS_MODE_CENSUS_ON 2   /* on; a box that is not finite is an error */
/* Label switching (gbs_evidence_options.symmetry; docs/diagnostics.md,
 * "symmetry"): relabelings of blocks of coordinates (exchangeable mixture
 * components) under which log p is unchanged at 32 draws, while the draws
 * hold one labeling.  ln Z then uses the proposal averaged over the
 * relabelings and the draws relabeled at random, and a GBS_CHECK_SYMMETRY
 * finding says what was found.  The search tests the groups given
 * (symmetry_groups) first, then pairs of coordinates and block layouts for d up
 * to 256: at most 65 log-density calls, plus 32 per generator of a group
 * that passes, counted in ncall. */
#define GBS_SYMMETRY_AUTO 0 /* correct where the draws hold one labeling.
                               Default */
#define GBS_SYMMETRY_OFF 1  /* never look */
#define GBS_SYMMETRY_ON 2   /* also average where the draws already cover
                               the relabelings alike */

/* gbs_evidence_options.independent: what the chains are.  Any other
 * non-zero value means GBS_DRAWS_INDEPENDENT, as before these names. */
#define GBS_DRAWS_CHAINS 0      /* MCMC chains (default) */
#define GBS_DRAWS_INDEPENDENT 1 /* independent (exact) draws: tau is 1 */
#define GBS_DRAWS_ENSEMBLE 2    /* the walkers of one ensemble sampler (emcee):
                                   they move together, and a warning says
                                   when a walker holds fewer than 50
                                   autocorrelation times of a coordinate
                                   (emcee's rule) */

typedef struct gbs_evidence_options {
  size_t size;         /* sizeof(gbs_evidence_options) */
  int32_t method;      /* GBS_METHOD_*; default GBS_METHOD_BRIDGE */
  int32_t independent; /* GBS_DRAWS_*: non-zero, other than
                          GBS_DRAWS_ENSEMBLE: the draws are independent
                          (exact draws); the autocorrelation time is then 1 */
  int32_t concurrent;  /* non-zero: the callback is thread-safe and may be
                          called from several threads at once */
  int32_t verbose;     /* non-zero: send progress messages to the log
                          callback (gbs_set_log_callback) or stderr */
  int64_t n_q;         /* number of proposal draws; 0: the adaptive rule
                          (bridge: from n_p/tau, the effective number of
                          draws, up to f_eva of ncall) or the number of
                          draws (IS) */
  int64_t batch_size;  /* points per callback invocation; default 4096 */
  int64_t ncall;       /* log-density evaluations the sampler spent on the
                          draws, for the adaptive n_q rule; 0: unknown
                          (10 per draw assumed) */
  uint64_t seed;       /* seed of every random choice; same seed, same
                          result, whatever the number of threads */
  double f_err;        /* target share of the proposal in the squared error,
                          in (0,1); default 0.1 */
  double f_eva;        /* cap on the proposal's share of all log-density
                          evaluations, in (0,1); default 0.1 */
  const double *lower; /* NULL, or d lower bounds of the support of p
                          (-INFINITY for none): the proposal then puts no
                          mass outside the box; read during the call only */
  const double *upper; /* NULL, or d upper bounds (+INFINITY for none) */
  gbs_cancel_token *cancel; /* NULL, or a token that can cancel the call */
  int32_t cross_fit;   /* GBS_CROSS_FIT_*; default auto.  Other methods
                          ignore it */
  int32_t coverage_check; /* GBS_COVERAGE_CHECK_*; default auto.  ABI
                          version 3 (it fills what was padding: the
                          struct's size is unchanged) */
  int32_t anneal;      /* GBS_ANNEAL_*; default auto.  ABI version 4: a
                          size from an older header (up to coverage_check)
                          is accepted and means auto */
  int32_t reserved;    /* zero */
  const char *const *names; /* NULL, or d NUL-terminated UTF-8 names of the
                          coordinates ("mu", "theta[3]"), which messages use
                          instead of "coordinate k"; read during the call
                          only.  ABI version 4 */
  int32_t mode_census; /* GBS_MODE_CENSUS_*; default auto.  A size from an
                          older header (up to names) means auto */
  int32_t symmetry;    /* GBS_SYMMETRY_*; default auto.  A size from an
                          older header (up to mode_census) is accepted
                          and means auto with no groups given */
  const int64_t *symmetry_groups; /* NULL, or candidate symmetries, group
                          after group: K (blocks, at least 2), L (their
                          length, at least 1), then the K blocks' L
                          coordinates (0-based) block after block.  log p
                          must be unchanged when the blocks' values are
                          exchanged, position by position: {2, 1, 0, 1}
                          exchanges coordinates 0 and 1; {2, 2, 0, 2, 1, 3}
                          exchanges (x0, x2) with (x1, x3).  Each group is
                          checked at the draws before use; read during the
                          call only */
  int64_t n_symmetry_groups; /* number of int64 values at symmetry_groups */
} gbs_evidence_options;

/* The report of an evidence or pipeline call (opaque; see "Reports"). */
typedef struct gbs_report gbs_report;

/* ln Z estimated from the first n_q proposal draws. */
typedef struct gbs_trace_point {
  int64_t n_q;
  double logz;
  double logzerr;
} gbs_trace_point;

/* The numbers behind the checks every evidence call runs on its input and
 * on its estimate (docs/diagnostics.md explains each, with its threshold);
 * failed checks also add a message to gbs_result.warnings.  A value not
 * computed is NaN; a "where" field names a coordinate (0..d-1) or log p
 * (-1).  Added in ABI version 2. */
typedef struct gbs_diagnostics {
  double rhat_max;        /* largest rank-normalized split-R-hat over the
                             coordinates and log p (Vehtari et al. 2021) */
  double rhat_crit;       /* the R-hat chance reaches for chains this long */
  int64_t rhat_where;
  double ess_bulk_min;    /* smallest bulk effective sample size */
  double ess_tail_min;    /* smallest tail effective sample size */
  int64_t ess_bulk_where;
  int64_t ess_tail_where;
  double burnin_z;        /* largest |z|, first 10% against last 50% */
  int64_t burnin_where;
  int64_t n_outlier_chains; /* chains whose draws sit apart from the others */
  int64_t outlier_chain;    /* the first of them, or -1 */
  int64_t n_stuck_chains;   /* chains that never or almost never move */
  int64_t stuck_chain;      /* the first of them, or -1 */
  int64_t spot_checked;   /* draws whose stored log p was evaluated again */
  double spot_max_diff;   /* largest |stored - recomputed| among them */
  double pareto_k_q;      /* Pareto k-hat of p/q at the proposal draws */
  double pareto_k_p;      /* Pareto k-hat of q/p at the posterior draws */
  double pareto_k_threshold; /* min(1 - 1/log10 S, 0.7) */
  double crossfit_z;      /* difference of the cross-fitting passes / error */
  double consistency_z;   /* largest |z| of the draws-vs-log p checks */
  double is_z;            /* importance sampling (same q) vs bridge, in sigma */
  double hm_z;            /* reciprocal importance sampling vs bridge */
  /* ABI version 3: the coverage check (GBS_COVERAGE_CHECK_*). */
  double coverage_frac;   /* the independence chains' fraction of steps
                             beyond the range of the draws, at the worst
                             quantity and side (0: none had enough distinct
                             points there, or the excess rested on one
                             point; NaN: the check did not run) */
  double coverage_limit;  /* the limit it is compared with: a warning above
                             it (false-alarm rate about 1e-3 per call) */
  int64_t coverage_where; /* the quantity: a coordinate, log p (-1), or the largest standardized deviation (-2) */
  int64_t coverage_side;  /* -1 below the range, +1 above, 0 none */
  int64_t coverage_calls; /* log-density calls the check spent (in ncall) */
} gbs_diagnostics;

typedef struct gbs_result {
  size_t size;      /* set by the caller: sizeof(gbs_result), or
                       GBS_RESULT_SIZE_V1 from code written for ABI
                       version 1 (then diagnostics is not written) */
  double logz;      /* estimate of ln Z */
  double logzerr;   /* its standard error, sqrt(re2_p + re2_q) */
  int64_t n_p;      /* posterior draws used by the estimator (cross-fitted:
                       summed over both passes, so every draw) */
  int64_t n_q;      /* proposal draws (cross-fitted: both passes') */
  int64_t ncall;    /* log-density evaluations made by this call */
  double tau;       /* integrated autocorrelation time used (1 if
                       independent) */
  double re2_p;     /* posterior term of the squared relative error
                       (cross-fitted: with the passes' shared part) */
  double re2_q;     /* proposal term of the squared relative error */
  int32_t method;   /* GBS_METHOD_* used */
  int32_t reserved; /* zero */
  int64_t n_trace;  /* number of trace points the estimator produced (the
                       last one is the final estimate); min(n_trace,
                       trace_cap) were written to the trace buffer */
  int64_t n_warnings; /* number of strings in warnings */
  char **warnings;  /* NULL if there are none, else a NULL-terminated array
                       of n_warnings messages, owned by the caller: free with
                       gbs_free_warnings(warnings).  Warnings are conditions
                       that make the result less reliable, each saying what
                       to do; none is expected on a healthy run.  The first
                       n_sampler_warnings entries are about the draws (the
                       chains' convergence, burn-in, layout, copied or stuck
                       chains, the sampler's divergences), the others about
                       the estimate (the overlap of proposal and posterior,
                       draws and log density that disagree, the proposal's
                       fit). */
  gbs_diagnostics diagnostics; /* ABI version 2 */
  int64_t n_sampler_warnings; /* ABI version 3: see warnings */
  int64_t n_info;   /* ABI version 3: number of strings in info */
  char **info;      /* ABI version 3: NULL if there are none, else a
                       NULL-terminated array of n_info messages that are not
                       warnings (a NUTS run repeated at a higher acceptance
                       target, n_q capped by memory...), owned by the caller:
                       free with gbs_free_warnings(info) */
  gbs_report *report; /* ABI version 4: the whole report of the call, owned
                       by the caller: its findings (gbs_report_finding,
                       each with its check code), every diagnostic number
                       (gbs_report_diagnostics_ext) and, from a pipeline,
                       the sampler's draws (gbs_report_sampling).  Free it
                       with gbs_report_free (gbs_result_free frees it with
                       warnings and info).  Not written for a struct from
                       an older header (a smaller size). */
} gbs_result;

/* sizeof(gbs_result) in ABI version 1, before diagnostics. */
#define GBS_RESULT_SIZE_V1 offsetof(gbs_result, diagnostics)
/* sizeof(gbs_result) in ABI version 2, before the coverage fields of
 * diagnostics (and n_sampler_warnings and info after it). */
#define GBS_RESULT_SIZE_V2 offsetof(gbs_result, diagnostics.coverage_frac)
/* sizeof(gbs_result) in ABI version 3, before report. */
#define GBS_RESULT_SIZE_V3 offsetof(gbs_result, report)

#ifndef GBS_NO_PROTOTYPES
/* Estimates ln Z = ln  integral p(x) dx  of the unnormalized density
 * evaluated by logp, from draws of p.
 *
 * logp, user:   the batch log density and its user pointer (see
 *               gbs_log_density_fn); required.
 * samples:      n_chains*n_draws*d doubles: chain c, draw t, coordinate k at
 *               samples[(c*n_draws + t)*d + k].  Several chains are split
 *               by chains (first half fits the proposal), one chain by
 *               draws.  All values finite.
 * n_chains, n_draws, d: all >= 1.
 * logp_samples: NULL, or n_chains*n_draws values of log p at the samples
 *               (same order), which are then not evaluated again; finite.
 * opt:          NULL for defaults.
 * result:       required, result->size set by the caller.  Filled on success;
 *               on failure zeroed (warnings and info NULL) except size.
 *               The caller frees result->warnings and result->info with
 *               gbs_free_warnings().
 * trace, trace_cap: optional caller buffer (NULL, 0 for none) receiving up to
 *               trace_cap points of ln Z against n_q, in increasing n_q.
 *
 * Errors: GBS_ERR_ARGUMENT (shapes, NULLs, options struct),
 * GBS_ERR_CALLBACK (callback failed or returned NaN/+Inf), GBS_ERR_CANCELED,
 * GBS_ERR_FAILED (bad sample values, too few draws, out-of-range options, no
 * overlap between proposal and target...).
 * Threading: blocks the calling thread; see opt->concurrent. */
int gbs_evidence(gbs_log_density_fn logp, void *user, const double *samples,
                 int64_t n_chains, int64_t n_draws, int64_t d,
                 const double *logp_samples, const gbs_evidence_options *opt,
                 gbs_result *result, gbs_trace_point *trace,
                 int64_t trace_cap, char **err);

/* What the library computes for Python (and any other binding), so that no
 * binding copies the library's accounting, fitting or text: */

/* The number of log-density evaluations gbs_evidence will make for
 * n_chains*n_draws draws of dimension d, with (have_logp non-zero) or
 * without logp_samples, and the options opt (NULL: defaults; its ncall
 * counts the sampler's evaluations): the spot-check of stored log p, log p
 * at the draws each bridge pass estimates with unless given, the proposal
 * draws, and warp-III's second evaluation at the reflection of every point.
 * *planned (required): the number when opt->n_q is set, else when the
 * adaptive rule keeps its first n_q for draws with autocorrelation time 1.
 * *max_extra (NULL or written): the most the adaptive rule can add (0 when
 * n_q is set).  For a progress bar's total.  Evaluates nothing.
 * Errors: GBS_ERR_ARGUMENT (sizes < 1, NULL planned, options struct). */
int gbs_evidence_plan(int64_t n_chains, int64_t n_draws, int64_t d,
                      int32_t have_logp, const gbs_evidence_options *opt,
                      int64_t *planned, int64_t *max_extra, char **err);

/* Draws n points from the proposal q that gbs_evidence fits for the same
 * samples and options (the fit is deterministic for opt->seed): for the
 * bridge and the harmonic mean the q fitted on the first half of the draws
 * (with cross-fitting, the first pass's), for warp-III the Gaussian of that
 * half, for importance sampling the q fitted on all draws.  Writes n*d
 * doubles to x (required) and, if logq is not NULL, log q at each draw
 * (n doubles).  seed chooses the draws; the same seed gives the same draws.
 * samples, n_chains, n_draws, d, opt: as for gbs_evidence (no log density
 * is evaluated, so none is passed).
 * Errors: GBS_ERR_ARGUMENT, GBS_ERR_FAILED (bad sample values, too few
 * draws, a proposal that cannot be fitted). */
int gbs_evidence_proposal_sample(const double *samples, int64_t n_chains,
                                 int64_t n_draws, int64_t d,
                                 const gbs_evidence_options *opt, int64_t n,
                                 uint64_t seed, double *x, double *logq,
                                 char **err);

/* The one-line text summary of diagnostics (R-hat, ESS, burn-in, Pareto
 * k-hat, cross-fitting and consistency z, the spot-check), the same text
 * the Go library prints; values that are NaN are left out, and an empty
 * string means none was computed.  Writes the UTF-8 text and a
 * terminating NUL into buf (cap bytes) and its length without the NUL to
 * *len (required).  With buf == NULL only *len is written: call once to
 * size the buffer, then again.  If cap <= *len, returns
 * GBS_ERR_BUFFER_TOO_SMALL with *len set. */
int gbs_diagnostics_summary(const gbs_diagnostics *diag, char *buf,
                            int64_t cap, int64_t *len, char **err);
#endif

/* ------------------------------------------------------------------------ */
/* Flows                                                                     */
/* ------------------------------------------------------------------------ */

typedef struct gbs_flow gbs_flow;

/* Linear map opening the flow (gbs_flow_options.whiten). */
#define GBS_WHITEN_CHOLESKY 0 /* mean and Cholesky factor (default) */
#define GBS_WHITEN_PCA 1      /* mean and principal axes */
#define GBS_WHITEN_NONE 2     /* data used as they are */

/* Direction choice per layer (gbs_flow_options.rotation). */
#define GBS_ROTATION_MAX_SLICED 0 /* maximize the sliced Wasserstein
                                     distance (default) */
#define GBS_ROTATION_RANDOM 1     /* random orthonormal frame */

/* Layer kinds a fit may use (gbs_flow_options.conditional). */
#define GBS_CONDITIONAL_AUTO 0 /* each layer sliced or conditional, whichever
                                  fits held-out points better (default) */
#define GBS_CONDITIONAL_OFF 1  /* sliced layers only */

/* The scale layer (gbs_flow_options.scale). */
#define GBS_SCALE_AUTO 0 /* tried first, kept when the flow with it predicts
                            held-out points better (default) */
#define GBS_SCALE_OFF 1  /* no scale layer */

typedef struct gbs_flow_options {
  size_t size;        /* sizeof(gbs_flow_options) */
  int32_t max_layers; /* cap when a held-out set chooses the number of
                         layers; default 10 */
  int32_t layers;     /* > 0: exactly this many layers, no held-out set */
  int32_t directions; /* directions per layer; default min(d, 128) */
  int32_t knots;      /* interior knots per 1-D spline, 0 (default:
                         sqrt(n) in [50, 200]) or >= 4 */
  int32_t whiten;     /* GBS_WHITEN_*; default Cholesky */
  int32_t rotation;   /* GBS_ROTATION_*; default max-sliced */
  int32_t threads;    /* threads for fitting and for using the flow;
                         0: gbs_set_threads' value.  No effect on results */
  int32_t conditional; /* GBS_CONDITIONAL_*; default auto.  Conditional
                          layers map half of the coordinates given the
                          other half (dependence that no 1-d projection
                          shows); without a held-out set (layers > 0) all
                          layers are sliced */
  double damping;     /* in (0, 1]; default 0.9 */
  double bandwidth;   /* factor on Scott's kernel bandwidth; default 1 */
  double validation_fraction; /* held-out share in (0, 0.5]; default 0.2 */
  uint64_t seed;      /* seed of every random choice of the fit */
  const double *lower; /* NULL, or d lower bounds (-INFINITY for none); all
                          points strictly inside; read during the call */
  const double *upper; /* NULL, or d upper bounds (+INFINITY for none) */
  int32_t scale;      /* GBS_SCALE_*; default auto.  The scale layer maps
                         every coordinate but one to
                         (z_j - m_j - c_j z_k) exp(-(a_j + b_j z_k)): a
                         variance parameter setting the others' scale, as
                         in a funnel.  Not tried without a held-out set
                         (layers > 0) or above 256 dimensions.  Structs of
                         the size before this field are accepted */
} gbs_flow_options;

typedef struct gbs_flow_info {
  size_t size;        /* set by the caller: sizeof(gbs_flow_info) */
  int64_t dim;        /* dimension d */
  int64_t layers;     /* Gaussianizing layers after whitening (0: the
                         whitening Gaussian alone) */
  int64_t n_warnings; /* fallbacks taken during the fit, see
                         gbs_flow_warnings */
  int64_t conditional_layers; /* how many of the layers are conditional */
} gbs_flow_info;

#ifndef GBS_NO_PROTOTYPES
/* Fits a flow q to the n points x (n*d doubles) with optional weights (NULL,
 * or n finite non-negative values, not all zero) and writes a new handle to
 * *out, to be freed with gbs_flow_free().  Errors: GBS_ERR_ARGUMENT for bad
 * shapes or data (NaN, constant column, fewer than 2d distinct points,
 * points outside the bounds...).  Not cancellable. */
int gbs_flow_fit(const double *x, int64_t n, int64_t d, const double *weights,
                 const gbs_flow_options *opt, gbs_flow **out, char **err);

/* Frees a flow.  NULL is a no-op (GBS_OK); a freed flow is GBS_ERR_HANDLE. */
int gbs_flow_free(gbs_flow *flow, char **err);

/* Writes the flow's dimension, layers and warning count into *info
 * (info->size set by the caller). */
int gbs_flow_get_info(const gbs_flow *flow, gbs_flow_info *info, char **err);

/* Writes to *warnings a NULL-terminated array of the fit's warnings (NULL if
 * there are none), to be freed with gbs_free_warnings(), and their number to
 * *n (n may be NULL). */
int gbs_flow_warnings(const gbs_flow *flow, char ***warnings, int64_t *n,
                      char **err);

/* Writes log q(x) at the n points x (n*d doubles, d = the flow's dimension)
 * into logq (n doubles).  Points outside the bounds or with an infinite
 * coordinate get -INFINITY, points with a NaN coordinate NaN.  n == 0 does
 * nothing (x and logq may then be NULL). */
int gbs_flow_log_prob(const gbs_flow *flow, const double *x, int64_t n,
                      double *logq, char **err);

/* Draws n points from q into x (n*d doubles) and, unless logq is NULL, their
 * log q into logq (n doubles).  The draws depend only on the flow, n and
 * seed.  n == 0 does nothing. */
int gbs_flow_sample(const gbs_flow *flow, int64_t n, uint64_t seed, double *x,
                    double *logq, char **err);

/* Maps the n points x to the Gaussianized space z (n*d doubles) and writes
 * log |det dz/dx| per point into logdet (n doubles). */
int gbs_flow_forward(const gbs_flow *flow, const double *x, int64_t n,
                     double *z, double *logdet, char **err);

/* Inverse of gbs_flow_forward: maps the n points z to x and writes
 * log |det dx/dz| per point into logdet. */
int gbs_flow_inverse(const gbs_flow *flow, const double *z, int64_t n,
                     double *x, double *logdet, char **err);

/* Writes the flow to the file at path (UTF-8; created or truncated) in the
 * library's binary format.  GBS_ERR_IO if the file cannot be written. */
int gbs_flow_save(const gbs_flow *flow, const char *path, char **err);

/* Reads a flow written by gbs_flow_save into a new handle *out.  GBS_ERR_IO
 * if the file cannot be read, GBS_ERR_FAILED if it is not a valid flow. */
int gbs_flow_load(const char *path, gbs_flow **out, char **err);

/* Serializes the flow into the caller's buffer buf of cap bytes and writes
 * the serialized length to *len (required).  With buf == NULL only *len is
 * written (GBS_OK): call once to size the buffer, then again.  If cap is
 * smaller than the length, returns GBS_ERR_BUFFER_TOO_SMALL with *len set.
 * The bytes are the same as those gbs_flow_save writes. */
int gbs_flow_to_buffer(const gbs_flow *flow, void *buf, int64_t cap,
                       int64_t *len, char **err);

/* Reads a flow from len bytes at buf (as written by gbs_flow_to_buffer or
 * gbs_flow_save) into a new handle *out.  GBS_ERR_FAILED if invalid. */
int gbs_flow_from_buffer(const void *buf, int64_t len, gbs_flow **out,
                         char **err);
#endif

/* ------------------------------------------------------------------------ */
/* NUTS sampling and the NUTS + evidence pipeline                            */
/* ------------------------------------------------------------------------ */

/* Metric adapted during warmup (gbs_nuts_options.metric). */
#define GBS_METRIC_DIAG 0  /* diagonal (default) */
#define GBS_METRIC_DENSE 1 /* dense */
#define GBS_METRIC_UNIT 2  /* identity, only the step size is adapted */

typedef struct gbs_nuts_options {
  size_t size;          /* sizeof(gbs_nuts_options) */
  int64_t warmup;       /* adaptation iterations per chain; 0: 1000;
                           negative: none (unit metric, step_size used) */
  int32_t max_depth;    /* maximal tree depth, at most 30; default 10 */
  int32_t metric;       /* GBS_METRIC_*; default diagonal */
  int32_t concurrent;   /* non-zero: the callback is thread-safe and chains
                           run in parallel threads (the draws are the same
                           either way); zero: one chain after the other */
  int32_t reserved;     /* zero */
  double target_accept; /* in (0,1); default 0.8 */
  double step_size;     /* initial step size; 0: found by a heuristic */
  uint64_t seed;        /* seed; chain c uses its own stream from (seed, c) */
  const double *init;   /* NULL, or n_chains*d starting points (log p finite
                           there); read during the call */
  const double *lower;  /* NULL, or d lower bounds (-INFINITY for none) of
                           the box from which random starting points are
                           drawn; the density itself must return -INFINITY
                           outside its support */
  const double *upper;  /* NULL, or d upper bounds (+INFINITY for none) */
  gbs_cancel_token *cancel; /* NULL, or a token that can cancel the call */
  /* Fields added in ABI version 3; a struct from an
   * older header (a smaller size) is accepted and these take their
   * defaults. */
  int32_t global_moves; /* GBS_GLOBAL_*: global moves from a flow fitted on
                           the chains (independence Metropolis-Hastings,
                           one density call each) after each NUTS
                           transition; see below */
  int32_t global_moves_per_iter; /* moves per NUTS transition; 0: 1 */
  int64_t global_stages;      /* warm-up stages after NUTS's warm-up, each
                                 ending with a fit of the flow; 0: 2 */
  int64_t global_stage_iters; /* iterations per chain and stage; 0: 100 */
} gbs_nuts_options;

/* gbs_nuts_options.global_moves.  With global moves, after NUTS's warm-up
 * the chains run global_stages more warm-up stages; a flow fitted on each
 * stage's draws (all chains pooled, within the box) is the proposal q of
 * the next stage's moves and, after the last stage, of the kept draws, so
 * the kept draws come from one fixed kernel.  A move draws x' ~ q and
 * accepts it with probability min(1, p(x') q(x) / (p(x) q(x'))): it jumps
 * between modes that NUTS cannot cross and sets the weights of modes the
 * chains found in the wrong proportions.  Without init, the chains start at
 * points drawn uniformly in the central 90 % of the box when it is finite.
 * The moves' counts are in gbs_nuts_chain_stats. */
#define GBS_GLOBAL_DEFAULT 0 /* the library's default: on when chains x
                                global_stage_iters >= 10 d, off above */
#define GBS_GLOBAL_ON 1
#define GBS_GLOBAL_OFF 2

/* Per-chain statistics of a NUTS run. */
typedef struct gbs_nuts_chain_stats {
  size_t size;             /* set by the caller in every element:
                              sizeof(gbs_nuts_chain_stats) */
  double step_size;        /* adapted step size */
  double mean_accept;      /* mean acceptance statistic of the kept draws */
  double mean_tree_depth;  /* over the kept draws */
  int64_t divergences;     /* divergent kept draws (any: results may be
                              biased) */
  int64_t warmup_divergences;
  int64_t max_depth_hits;  /* kept transitions stopped by max_depth */
  int64_t leapfrogs;       /* leapfrog steps over the kept draws */
  int64_t grad_calls;      /* gradient evaluations, warmup included */
  /* Fields added in ABI version 3; an array of structs
   * from an older header (a smaller size) is accepted and filled up to its
   * size. */
  int64_t global_proposed; /* global moves over the kept draws */
  int64_t global_accepted; /* of which accepted: the acceptance rate is
                              global_accepted / global_proposed */
  int64_t global_warmup_proposed; /* the same in the warm-up stages */
  int64_t global_warmup_accepted;
  int64_t global_calls;    /* density calls of the global moves (included
                              in grad_calls) */
} gbs_nuts_chain_stats;

#ifndef GBS_NO_PROTOTYPES
/* Draws n_chains chains of n_draws kept draws each from the density whose
 * log and gradient f evaluates, in d dimensions, with multinomial NUTS and
 * Stan's warmup.
 *
 * draws:  required, n_chains*n_draws*d doubles, same layout as the samples of
 *         gbs_evidence (ready to pass to it).
 * logp:   NULL, or n_chains*n_draws doubles receiving log p at the draws.
 * stats:  NULL, or an array of n_chains structs, each with size set.
 * Errors: GBS_ERR_ARGUMENT, GBS_ERR_CALLBACK, GBS_ERR_CANCELED,
 * GBS_ERR_FAILED (e.g. no starting point of finite density found). */
int gbs_nuts_sample(gbs_log_density_grad_fn f, void *user, int64_t d,
                    int64_t n_chains, int64_t n_draws,
                    const gbs_nuts_options *opt, double *draws, double *logp,
                    gbs_nuts_chain_stats *stats, char **err);

/* The method's recipe when the gradient is available: NUTS draws, then
 * ln Z from them.  The sampler's target_accept defaults to 0.9 here, not
 * 0.8: ln Z inherits any bias of the draws, and divergences at 0.8 bias it
 * measurably on funnel-like targets; a run whose kept draws diverge is made
 * again at 0.99 (result->info says so), and divergences left after that
 * warn beyond 1 % of the kept draws.  Otherwise equivalent to
 * gbs_nuts_sample followed by gbs_evidence
 * with the draws, their log p and the sampler's gradient-call count, where
 * the evidence stage evaluates log p through f (the gradient is computed
 * and discarded), its seed defaults to the sampler's (when ev_opt->seed is
 * 0) and its bounds to the sampler's (when both ev_opt bounds are NULL).
 * If the nuts options set concurrent, so do the evidence options.
 *
 * nuts_opt, ev_opt: NULL for defaults (ev_opt->independent is ignored;
 * ev_opt->ncall is replaced by the sampler's gradient calls; a cancel token
 * in either cancels the whole call).  result, trace, trace_cap: as for
 * gbs_evidence.  draws, logp, stats: optional (NULL) copies of the sampler's
 * output, as for gbs_nuts_sample.  When neither draws nor logp is given and
 * the chains have not mixed (an R-hat beyond what chance gives, or a bulk
 * ESS below 100), more than 1 % of the kept transitions diverged, or the
 * evidence warns about the draws (chains too short for the autocorrelation
 * time), the sampler runs again with twice the warm-up and draws per chain,
 * at most twice (then four times), and ln Z comes from the last run
 * (result->info says why); with either buffer given, the draws stay the
 * n_draws per chain that it holds. */
int gbs_nuts_evidence(gbs_log_density_grad_fn f, void *user, int64_t d,
                      int64_t n_chains, int64_t n_draws,
                      const gbs_nuts_options *nuts_opt,
                      const gbs_evidence_options *ev_opt, gbs_result *result,
                      gbs_trace_point *trace, int64_t trace_cap, double *draws,
                      double *logp, gbs_nuts_chain_stats *stats, char **err);
#endif

/* ------------------------------------------------------------------------ */
/* Affine-invariant ensemble sampling (no gradient) and its pipeline         */
/* ------------------------------------------------------------------------ */

/* Proposal moves (gbs_ensemble_options.move). */
#define GBS_MOVE_STRETCH 0 /* Goodman & Weare's stretch move (default) */
#define GBS_MOVE_DE 1      /* differential evolution */

typedef struct gbs_ensemble_options {
  size_t size;         /* sizeof(gbs_ensemble_options) */
  int64_t walkers;     /* even, >= 2d; default max(32, 2d+2) */
  int64_t steps;       /* steps per walker, burn-in included; default 5000 */
  int64_t burn;        /* steps discarded; 0: chosen from the
                          autocorrelation time (see ensemble/ensemble.go) */
  int64_t thin;        /* keep every thin-th step; 0: max(1, tau/2) */
  int32_t move;        /* GBS_MOVE_*; default stretch */
  int32_t reserved;    /* zero */
  double a;            /* stretch scale, > 1; default 2 */
  uint64_t seed;       /* seed of the random stream */
  const double *init;  /* NULL, or walkers*d starting points (finite log p,
                          not all equal in any coordinate) */
  const double *lower; /* NULL, or d lower bounds of the box the starting
                          points are drawn from (the density itself must
                          return -INFINITY outside its support) */
  const double *upper; /* NULL, or d upper bounds */
  gbs_cancel_token *cancel; /* NULL, or a token that can cancel the call */
} gbs_ensemble_options;

typedef struct gbs_ensemble gbs_ensemble;

typedef struct gbs_ensemble_info {
  size_t size;        /* set by the caller: sizeof(gbs_ensemble_info) */
  int64_t walkers;    /* walkers, the chains of the draws */
  int64_t draws;      /* kept draws per walker */
  int64_t burn, thin; /* used */
  int64_t ncall;      /* log-density evaluations in total */
  double tau_max;     /* largest integrated autocorrelation time over the
                         coordinates, in steps */
  double acceptance;  /* mean acceptance fraction over walkers */
  int64_t n_warnings; /* see gbs_ensemble_warnings */
} gbs_ensemble_info;

#ifndef GBS_NO_PROTOTYPES
/* Runs the affine-invariant ensemble sampler on the density whose log f
 * evaluates, in d dimensions, and writes a new handle holding the kept
 * draws to *out (free with gbs_ensemble_free).  f receives the whole
 * half-ensemble (walkers/2 points) in each call, so a vectorized or
 * parallel density pays off.  The number of kept draws depends on the
 * burn-in and thinning chosen from the autocorrelation time: read it with
 * gbs_ensemble_get_info, then copy the draws with gbs_ensemble_get_draws.
 * Errors: GBS_ERR_ARGUMENT (bad options, e.g. odd walkers or fewer than 2d),
 * GBS_ERR_CALLBACK, GBS_ERR_CANCELED. */
int gbs_ensemble_sample(gbs_log_density_fn f, void *user, int64_t d,
                        const gbs_ensemble_options *opt, gbs_ensemble **out,
                        char **err);

/* Writes the run's sizes and statistics into *info (info->size set). */
int gbs_ensemble_get_info(const gbs_ensemble *run, gbs_ensemble_info *info,
                          char **err);

/* Copies the kept draws into draws (walkers*draws*d doubles, walker w,
 * draw t, coordinate k at draws[(w*n_draws + t)*d + k]: the layout of
 * gbs_evidence's samples) and, unless logp is NULL, their log p into logp
 * (walkers*draws doubles). */
int gbs_ensemble_get_draws(const gbs_ensemble *run, double *draws,
                           double *logp, char **err);

/* Writes the sampler's warnings (e.g. a run shorter than 50 autocorrelation
 * times) as a NULL-terminated array to *warnings (NULL if none; free with
 * gbs_free_warnings) and their number to *n (n may be NULL). */
int gbs_ensemble_warnings(const gbs_ensemble *run, char ***warnings,
                          int64_t *n, char **err);

/* Frees a run.  NULL is a no-op; a freed run is GBS_ERR_HANDLE. */
int gbs_ensemble_free(gbs_ensemble *run, char **err);

/* The method's recipe without a gradient: ensemble sampling, then ln Z
 * with each walker a chain.  The evidence seed defaults to the sampler's;
 * the sampler's box only places the starting walkers, so give the support's
 * bounds in ev_opt.  result, trace, trace_cap as for gbs_evidence (result->ncall
 * counts the evidence stage); *sampler_calls (may be NULL) receives the
 * sampler's log-density evaluations. */
int gbs_ensemble_evidence(gbs_log_density_fn f, void *user, int64_t d,
                          const gbs_ensemble_options *ens_opt,
                          const gbs_evidence_options *ev_opt,
                          gbs_result *result, gbs_trace_point *trace,
                          int64_t trace_cap, int64_t *sampler_calls,
                          char **err);
#endif

/* ------------------------------------------------------------------------ */
/* Batched NUTS: the points of all chains in one callback                    */
/* ------------------------------------------------------------------------ */

/* Batched log density and gradient: at the n points x (n*d doubles,
 * row-major) write log p into logp[i] and the gradients into grad (n*d
 * doubles, point i at grad[i*d .. i*d+d-1]).  As for
 * gbs_log_density_grad_fn, -INFINITY, NaN or a non-finite gradient marks a
 * point the sampler must not enter.  n >= 1.  x, logp and grad are valid
 * only during the call.  Return 0, or non-zero to abort.  The sampler never
 * calls it from two threads at once; the evidence stage of
 * gbs_nuts_evidence_batch may, as documented there. */
typedef int (*gbs_log_density_grad_batch_fn)(const double *x, int64_t n,
                                             int64_t d, double *logp,
                                             double *grad, void *user);

#ifndef GBS_NO_PROTOTYPES
/* gbs_nuts_sample with a batched callback: all chains advance together, one
 * leapfrog step at a time, and each call of f receives the current point of
 * every chain still sampling (a chain that ends a transition starts its next
 * one at once; a chain done with its draws leaves the batch), so f is called
 * about n_draws + warmup times the mean number of leapfrog steps, not
 * n_chains times that.  The chains are the same as gbs_nuts_sample's: with
 * an f that gives each point the values the per-point callback gives, the
 * draws, logp and stats are identical bit for bit for the same options.
 * opt->concurrent is ignored (f is called from one thread at a time).
 * Arguments, outputs and errors as for gbs_nuts_sample. */
int gbs_nuts_sample_batch(gbs_log_density_grad_batch_fn f, void *user,
                          int64_t d, int64_t n_chains, int64_t n_draws,
                          const gbs_nuts_options *opt, double *draws,
                          double *logp, gbs_nuts_chain_stats *stats,
                          char **err);

/* gbs_nuts_evidence with a batched callback: the sampler as in
 * gbs_nuts_sample_batch, and the evidence stage evaluates log p through f
 * in batches of ev_opt->batch_size points (the gradient is computed and
 * discarded), from several threads at once if nuts_opt->concurrent or
 * ev_opt->concurrent is set, as in gbs_nuts_evidence.  Arguments, outputs
 * and errors as for gbs_nuts_evidence; with an f that gives each point the
 * per-point callback's values the result is gbs_nuts_evidence's. */
int gbs_nuts_evidence_batch(gbs_log_density_grad_batch_fn f, void *user,
                            int64_t d, int64_t n_chains, int64_t n_draws,
                            const gbs_nuts_options *nuts_opt,
                            const gbs_evidence_options *ev_opt,
                            gbs_result *result, gbs_trace_point *trace,
                            int64_t trace_cap, double *draws, double *logp,
                            gbs_nuts_chain_stats *stats, char **err);
#endif

/* ------------------------------------------------------------------------ */
/* Reports: typed findings, every diagnostic number, a pipeline's draws      */
/* ------------------------------------------------------------------------ */

/* Checks (gbs_finding.check).  The codes are stable: a code never changes
 * meaning, and new checks take new codes.  gbs_check_get_info gives each one's
 * ID (the name Python and the documentation use), title, meaning and what
 * to do; docs/diagnostics.md explains each with its threshold. */
#define GBS_CHECK_LAYOUT 1              /* chain and draw axes exchanged */
#define GBS_CHECK_ENSEMBLE_WALKERS 2    /* an ensemble's walkers < 50 tau */
#define GBS_CHECK_STUCK_CHAINS 3        /* chains that never move */
#define GBS_CHECK_COPIED_CHAINS 4       /* chains that copy each other */
#define GBS_CHECK_INTERLEAVED_CHAINS 5  /* several chains read as one */
#define GBS_CHECK_RHAT 6                /* chains that have not mixed */
#define GBS_CHECK_BURN_IN 7             /* burn-in left in */
#define GBS_CHECK_ESS 8                 /* too few effective draws */
#define GBS_CHECK_SHORT_CHAINS 9        /* chains too short for their tau */
#define GBS_CHECK_DIVERGENCES 10        /* NUTS's divergent transitions */
#define GBS_CHECK_LOW_CHAINS 11         /* chains stuck at low log p */
#define GBS_CHECK_TREE_DEPTH 12         /* NUTS stopped at the max tree depth */
#define GBS_CHECK_RERUN 13              /* a pipeline ran the sampler again */
#define GBS_CHECK_PARETO_K 14           /* heavy-tailed ratios (IS, HM) */
#define GBS_CHECK_OVERLAP 15            /* proposal and draws barely overlap */
#define GBS_CHECK_CONSISTENCY 16        /* the estimate is not self-consistent */
#define GBS_CHECK_SIGN 17               /* log p falls where draws are dense */
#define GBS_CHECK_PILE_UP 18            /* draws piled against a side */
#define GBS_CHECK_COVERAGE 19           /* mass of p beyond the draws */
#define GBS_CHECK_COVERAGE_KS 20        /* parts of p in wrong proportion */
#define GBS_CHECK_ANNEAL 21             /* the annealed bridge ran */
#define GBS_CHECK_NQ_CAPPED 22          /* n_q capped by memory */
#define GBS_CHECK_PROPOSAL_FIT 23       /* the proposal's fit */
#define GBS_CHECK_STAN_REWRITE 24       /* Stan's ~ statements rewritten */
#define GBS_CHECK_ENSEMBLE_SAMPLER 25   /* the ensemble sampler's warnings */
#define GBS_CHECK_SYMMETRY 26           /* label switching found, corrected */
#define GBS_CHECK_MISSED_MODE 27        /* a mode of p no draw visited */

/* What a finding is about (gbs_finding.kind). */
#define GBS_KIND_DRAWS 1    /* a warning about the draws */
#define GBS_KIND_ESTIMATE 2 /* a warning about the estimate */
#define GBS_KIND_INFO 3     /* information, not a warning */

/* gbs_finding.where when the finding is about no single quantity. */
#define GBS_WHERE_NONE (-2)

/* One finding of a check.  Code branches on check and kind, never on
 * message. */
typedef struct gbs_finding {
  size_t size;         /* set by the caller: sizeof(gbs_finding) */
  int32_t check;       /* GBS_CHECK_* */
  int32_t kind;        /* GBS_KIND_* */
  int64_t where;       /* the coordinate (0..d-1) it is about, -1 for log
                          p, GBS_WHERE_NONE */
  double value;        /* the check's statistic (NaN: none) */
  double limit;        /* the threshold it was compared with (NaN: none) */
  const char *message; /* what is wrong, its likely causes and what to do:
                          UTF-8, owned by the report, valid until it is
                          freed */
} gbs_finding;

/* A check's description (gbs_check_get_info); the strings are static. */
typedef struct gbs_check_info {
  size_t size;         /* set by the caller: sizeof(gbs_check_info) */
  int32_t check;       /* GBS_CHECK_* */
  int32_t kind;        /* GBS_KIND_* of its warnings (some checks also
                          report information) */
  const char *id;      /* stable ID, e.g. "rhat" */
  const char *title;   /* what it found, e.g. "the chains have not mixed" */
  const char *meaning; /* what a finding means for ln Z */
  const char *action;  /* what to do */
} gbs_check_info;

/* The diagnostic numbers that gbs_diagnostics (frozen at ABI version 3)
 * has no room for; new ones are added at the end.  NaN: not computed. */
typedef struct gbs_diagnostics_ext {
  size_t size;               /* set by the caller */
  int64_t n_copied_groups;   /* groups of chains that copy each other */
  int64_t copied_chain;      /* the first chain of the first group, or -1 */
  double step_corr_max;      /* largest correlation of two chains' steps */
  int64_t interleave_period; /* chains a single chain looks interleaved
                                from (0: none) */
  double interleave_rho;     /* its autocorrelation at that lag */
  double sign_corr;          /* rank correlation of log p and log q at the
                                draws (negative: a flipped sign) */
  double outside_share;      /* share of proposal draws where log p = -inf */
  int64_t pile_up_where;     /* coordinate whose draws end most abruptly at
                                a side without a bound (-1: none) */
  double pile_up_ratio;      /* that side's spread ratio */
  double coverage_covered;   /* the bridge function beyond the draws' range
                                over its mean at the draws */
  double coverage_ks;        /* the coverage check's two-sample distance */
  double coverage_ks_limit;  /* its limit */
  double coverage_ks_at;     /* log p where it is largest */
  int64_t anneal_steps;      /* rungs of the annealed bridge (0: not used) */
  int64_t anneal_calls;      /* its log-density calls (in ncall) */
  int64_t census_modes;      /* modes the mode census found unvisited */
  double census_shortfall;   /* ln(1 + sum m/Z) over their masses: what
                                ln Z is low by (0: none; NaN: no census) */
  int64_t census_calls;      /* its log-density calls (in ncall) */
  int64_t symmetry_calls;    /* the symmetry search's log-density calls (in
                                ncall) */
} gbs_diagnostics_ext;

/* What a pipeline's sampler did (gbs_report_sampling); zero n_chains for
 * the report of gbs_evidence. */
typedef struct gbs_sampling {
  size_t size;              /* set by the caller */
  int64_t n_chains;         /* the draws the evidence used: chains, */
  int64_t n_draws;          /* kept draws per chain (more than asked when
                               the pipeline lengthened the run), */
  int64_t d;                /* and dimension */
  double target_accept;     /* NUTS's acceptance target of that run */
  int32_t retried;          /* run again at a higher target */
  int32_t lengthened;       /* run again with longer chains */
  int32_t global_moves;     /* global moves were made */
  int32_t reserved;         /* zero */
  double global_accept_rate; /* over the kept draws (NaN: none) */
  int64_t grad_calls;       /* the sampler's evaluations over every run */
  int64_t logdensity_calls; /* the evidence stage's over every run */
  double sampling_seconds;  /* wall time of the sampling runs */
  double evidence_seconds;  /* wall time of the evidence runs */
} gbs_sampling;

#ifndef GBS_NO_PROTOTYPES
/* Frees a report.  NULL is a no-op (GBS_OK); a freed report is
 * GBS_ERR_HANDLE. */
int gbs_report_free(gbs_report *report, char **err);

/* Frees what the library allocated in *result (warnings, info, report) and
 * sets those fields to NULL.  NULL is a no-op. */
void gbs_result_free(gbs_result *result);

/* Writes the number of findings to *n: warnings about the draws first,
 * then about the estimate, then information. */
int gbs_report_n_findings(const gbs_report *report, int64_t *n, char **err);

/* Writes finding i (0 <= i < n) to *out (out->size set by the caller). */
int gbs_report_finding(const gbs_report *report, int64_t i, gbs_finding *out,
                       char **err);

/* Writes the diagnostic numbers beyond gbs_diagnostics to *out (out->size
 * set by the caller; a smaller size from an older header gets the fields
 * it has). */
int gbs_report_diagnostics_ext(const gbs_report *report,
                               gbs_diagnostics_ext *out, char **err);

/* The one-line text summary of the diagnostics, as
 * gbs_diagnostics_summary, with coordinates named as the call's options
 * named them.  buf, cap, len as for gbs_diagnostics_summary. */
int gbs_report_summary(const gbs_report *report, char *buf, int64_t cap,
                       int64_t *len, char **err);

/* Writes what a pipeline's sampler did to *out (out->size set). */
int gbs_report_sampling(const gbs_report *report, gbs_sampling *out,
                        char **err);

/* Copies a pipeline's draws, the ones the evidence used, into draws
 * (n_chains*n_draws*d doubles, the layout of gbs_evidence's samples; NULL
 * to skip), their log p into logp (n_chains*n_draws doubles; NULL to skip)
 * and each chain's statistics into stats (n_chains structs with size set;
 * NULL to skip), with the sizes gbs_report_sampling gives.
 * GBS_ERR_ARGUMENT for the report of gbs_evidence, which holds no draws. */
int gbs_report_draws(const gbs_report *report, double *draws, double *logp,
                     gbs_nuts_chain_stats *stats, char **err);

/* Writes every check code, in increasing order, to codes (cap entries;
 * NULL with cap 0 to count) and their number to *n (required).  If
 * cap < *n, returns GBS_ERR_BUFFER_TOO_SMALL. */
int gbs_checks(int32_t *codes, int64_t cap, int64_t *n, char **err);

/* Writes the description of check code `check` to *out (out->size set).
 * GBS_ERR_ARGUMENT for an unknown code. */
int gbs_check_get_info(int32_t check, gbs_check_info *out, char **err);
#endif

/* ------------------------------------------------------------------------ */
/* Reference problems                                                        */
/* ------------------------------------------------------------------------ */

/* A reference problem of the library's benchmarks (Go package problems):
 * a target density with a known ln Z, evaluated inside the library.  Its
 * density functions below have the callback types of this header, so a
 * problem runs through every entry point (gbs_nuts_evidence,
 * gbs_evidence, gbs_ensemble_evidence...) with the problem handle as the
 * callback's user pointer, and without a call out of the library per
 * point: the library recognizes its own functions and evaluates the
 * problem directly.  Problems are immutable and safe for concurrent use
 * (set `concurrent` in the options to run chains in parallel). */
typedef struct gbs_problem gbs_problem;

#ifndef GBS_NO_PROTOTYPES
/* Creates the problem named `name` in *out.  Names (case-insensitive):
 * "funnel", "banana", "cauchy", "ring" (the paper's, d = 16, 32, 48, 64),
 * "funnel-<d>", "banana-<d>" (d even), "banana-<d>-identity",
 * "cauchy-<d>", "ring-<d>", "gaussian-<d>" (N(0, I), ln Z = 0),
 * "correlated-gaussian-<d>", "mixture-<d>", "two-modes", "two-modes-<d>".
 * An unknown name is GBS_ERR_ARGUMENT, whose message lists the known
 * forms; so is a dimension out of its family's range, named with it.  Free it with gbs_problem_free(). */
int gbs_problem_new(const char *name, gbs_problem **out, char **err);

/* Frees a problem.  NULL is a no-op (GBS_OK); a freed problem is
 * GBS_ERR_HANDLE.  Calls running with it must have returned. */
int gbs_problem_free(gbs_problem *problem, char **err);

/* Writes the problem's dimension to *d. */
int gbs_problem_dim(const gbs_problem *problem, int64_t *d, char **err);

/* Writes the problem's exact ln Z to *log_z. */
int gbs_problem_log_z(const gbs_problem *problem, double *log_z, char **err);

/* Writes the bounds of the problem's flat prior box to lower and upper (d
 * doubles each, either may be NULL) and 1 to *bounded (required); an
 * unbounded problem (the Gaussians) writes 0, -INFINITY and +INFINITY. */
int gbs_problem_bounds(const gbs_problem *problem, double *lower, double *upper, int32_t *bounded,
                       char **err);

/* The problem's log p and gradient at x, a gbs_log_density_grad_fn whose
 * user pointer is the gbs_problem handle.  -INFINITY outside the prior box
 * (gradient zero).  Returns GBS_OK; GBS_ERR_HANDLE if problem is not a
 * live problem handle, GBS_ERR_ARGUMENT if d is not its dimension or a
 * pointer is NULL (a library call then fails with GBS_ERR_CALLBACK, whose
 * message names the problem's error). */
int gbs_problem_log_density_grad(const double *x, int64_t d, double *logp, double *grad,
                                 void *problem);

/* The problem's log p at the n points x, a gbs_log_density_fn whose user
 * pointer is the gbs_problem handle; status as above. */
int gbs_problem_log_density(const double *x, int64_t n, int64_t d, double *logp, void *problem);
#endif

/* ------------------------------------------------------------------------ */
/* Debugging                                                                 */
/* ------------------------------------------------------------------------ */

#ifndef GBS_NO_PROTOTYPES
/* Returns the number of objects the library has handed to the caller and
 * that are not yet freed: error messages, warning lists, flows, cancel
 * tokens and problems.  For leak tests; thread-safe.  Cannot fail. */
int64_t gbs_debug_live_allocations(void);
#endif

#ifdef __cplusplus
}
#endif

#endif /* GBS_H */
