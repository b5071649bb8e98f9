/* Bad input through the C ABI: failing and NaN callbacks, NULL pointers,
 * zero and negative sizes, bad options sizes, freed and bogus handles.
 * Every case must return the documented status with a message that says
 * what is wrong, never crash, and leave nothing allocated. */
#include "common.h"

/* expect(status, want, err, substring): checks the status and that the
 * message contains substring, then frees the message. */
#define EXPECT(call, want, substring)                                        \
  do {                                                                       \
    char *err = NULL;                                                        \
    int st_ = (call);                                                        \
    CHECK(st_ == (want), "%s returned %d, want %d (%s)", #call, st_,        \
          (want), err ? err : "no message");                                 \
    if ((want) != GBS_OK) {                                                  \
      CHECK(err != NULL && strstr(err, (substring)) != NULL,                 \
            "%s: message \"%s\" does not contain \"%s\"", #call,             \
            err ? err : "(null)", (substring));                              \
      if (verbose && err) printf("  %-22s -> %d: %.150s\n", substring, st_, err); \
    } else {                                                                 \
      CHECK(err == NULL, "error message set on success");                    \
    }                                                                        \
    gbs_free_error(err);                                                     \
  } while (0)

static int verbose = 1;

static int failing_logp(const double *x, int64_t n, int64_t d, double *logp,
                        void *user) {
  (void)x, (void)d, (void)user;
  for (int64_t i = 0; i < n; i++) logp[i] = 0;
  return 7;
}

static int nan_logp(const double *x, int64_t n, int64_t d, double *logp,
                    void *user) {
  (void)user;
  funnel_logp(x, n, d, logp, NULL);
  logp[n / 2] = NAN;
  return 0;
}

static int failing_grad(const double *x, int64_t d, double *logp, double *grad,
                        void *user) {
  (void)x, (void)d, (void)user, (void)grad;
  *logp = 0;
  return -3;
}

int main(void) {
  const int64_t n = 400, d = 4;
  const double mu[4] = {0, 0, 0, 0}, sd[4] = {1, 1, 1, 1};
  gaussian_target g = {d, 0, mu, sd};
  double *x = malloc(sizeof(double) * n * d);
  test_rng rng = rng_new(1);
  gaussian_sample(&g, &rng, x, n);
  gbs_result res = {sizeof res};
  gbs_evidence_options opt = {sizeof opt};
  opt.independent = 1;

  printf("callbacks:\n");
  EXPECT(gbs_evidence(failing_logp, NULL, x, 1, n, d, NULL, &opt, &res, NULL, 0, &err),
         GBS_ERR_CALLBACK, "log-density callback returned error code 7");
  CHECK(res.warnings == NULL && res.logz == 0 && res.size == sizeof res,
        "result not zeroed on failure");
  EXPECT(gbs_evidence(nan_logp, NULL, x, 1, n, d, NULL, &opt, &res, NULL, 0, &err),
         GBS_ERR_CALLBACK, "NaN");
  opt.concurrent = 1;
  opt.batch_size = 16;
  EXPECT(gbs_evidence(failing_logp, NULL, x, 1, n, d, NULL, &opt, &res, NULL, 0, &err),
         GBS_ERR_CALLBACK, "error code 7");
  opt.concurrent = 0;
  opt.batch_size = 0;
  {
    double out[4 * 10];
    EXPECT(gbs_nuts_sample(failing_grad, NULL, d, 2, 10, NULL, out, NULL, NULL, &err),
           GBS_ERR_CALLBACK, "log-density callback returned error code -3");
  }
  /* the error out-parameter may be NULL */
  CHECK(gbs_evidence(failing_logp, NULL, x, 1, n, d, NULL, &opt, &res, NULL, 0,
                     NULL) == GBS_ERR_CALLBACK,
        "status with err == NULL");

  printf("NULL pointers:\n");
  EXPECT(gbs_evidence(NULL, NULL, x, 1, n, d, NULL, &opt, &res, NULL, 0, &err),
         GBS_ERR_ARGUMENT, "logp (the log-density callback) is NULL");
  EXPECT(gbs_evidence(gaussian_logp, &g, NULL, 1, n, d, NULL, &opt, &res, NULL, 0, &err),
         GBS_ERR_ARGUMENT, "samples is NULL");
  EXPECT(gbs_evidence(gaussian_logp, &g, x, 1, n, d, NULL, &opt, NULL, NULL, 0, &err),
         GBS_ERR_ARGUMENT, "gbs_result is NULL");
  EXPECT(gbs_evidence(gaussian_logp, &g, x, 1, n, d, NULL, &opt, &res, NULL, 5, &err),
         GBS_ERR_ARGUMENT, "trace is NULL");
  EXPECT(gbs_nuts_sample(gaussian_logp_grad, &g, d, 2, 10, NULL, NULL, NULL, NULL, &err),
         GBS_ERR_ARGUMENT, "draws is NULL");
  EXPECT(gbs_cancel_token_new(NULL, &err), GBS_ERR_ARGUMENT, "out is NULL");

  printf("sizes:\n");
  EXPECT(gbs_evidence(gaussian_logp, &g, x, 1, 0, d, NULL, &opt, &res, NULL, 0, &err),
         GBS_ERR_ARGUMENT, "n_draws = 0");
  EXPECT(gbs_evidence(gaussian_logp, &g, x, 1, n, 0, NULL, &opt, &res, NULL, 0, &err),
         GBS_ERR_ARGUMENT, "d = 0");
  EXPECT(gbs_evidence(gaussian_logp, &g, x, 0, n, d, NULL, &opt, &res, NULL, 0, &err),
         GBS_ERR_ARGUMENT, "n_chains = 0");
  EXPECT(gbs_evidence(gaussian_logp, &g, x, -2, n, d, NULL, &opt, &res, NULL, 0, &err),
         GBS_ERR_ARGUMENT, "n_chains = -2");
  EXPECT(gbs_evidence(gaussian_logp, &g, x, 1, -5, d, NULL, &opt, &res, NULL, 0, &err),
         GBS_ERR_ARGUMENT, "n_draws = -5");
  EXPECT(gbs_evidence(gaussian_logp, &g, x, 1, INT64_MAX / 2, 1 << 20, NULL, &opt, &res, NULL, 0, &err),
         GBS_ERR_ARGUMENT, "too large");
  EXPECT(gbs_evidence(gaussian_logp, &g, x, 1, n, d, NULL, &opt, &res, NULL, -1, &err),
         GBS_ERR_ARGUMENT, "trace_cap = -1");
  EXPECT(gbs_set_threads(-1, NULL, &err), GBS_ERR_ARGUMENT, "n = -1 is negative");
  EXPECT(gbs_nuts_sample(gaussian_logp_grad, &g, 0, 2, 10, NULL, x, NULL, NULL, &err),
         GBS_ERR_ARGUMENT, "d = 0");
  /* too few draws for the estimator: the library refuses, with a reason */
  EXPECT(gbs_evidence(gaussian_logp, &g, x, 1, 3, d, NULL, &opt, &res, NULL, 0, &err),
         GBS_ERR_FAILED, "gbs_evidence: ");

  printf("bad values:\n");
  {
    double saved = x[13];
    x[13] = NAN;
    EXPECT(gbs_evidence(gaussian_logp, &g, x, 1, n, d, NULL, &opt, &res, NULL, 0, &err),
           GBS_ERR_FAILED, "NaN");
    x[13] = saved;
    double *lp = calloc((size_t)n, sizeof(double));
    lp[3] = INFINITY;
    EXPECT(gbs_evidence(gaussian_logp, &g, x, 1, n, d, lp, &opt, &res, NULL, 0, &err),
           GBS_ERR_FAILED, "+Inf");
    free(lp);
  }

  printf("options:\n");
  {
    gbs_evidence_options o = {sizeof o};
    /* Below even the older header's size (which ends at coverage_check). */
    o.size = offsetof(gbs_evidence_options, anneal) - 8;
    EXPECT(gbs_evidence(gaussian_logp, &g, x, 1, n, d, NULL, &o, &res, NULL, 0, &err),
           GBS_ERR_ARGUMENT, "smaller than sizeof(gbs_evidence_options)");
    o.size = 0;
    EXPECT(gbs_evidence(gaussian_logp, &g, x, 1, n, d, NULL, &o, &res, NULL, 0, &err),
           GBS_ERR_ARGUMENT, "gbs_evidence_options.size is 0");
    o.size = (size_t)1 << 40;
    EXPECT(gbs_evidence(gaussian_logp, &g, x, 1, n, d, NULL, &o, &res, NULL, 0, &err),
           GBS_ERR_ARGUMENT, "is not a struct size");
    o.size = sizeof o;
    o.method = 42;
    EXPECT(gbs_evidence(gaussian_logp, &g, x, 1, n, d, NULL, &o, &res, NULL, 0, &err),
           GBS_ERR_ARGUMENT, "method = 42");
    o.method = 0;
    o.n_q = -1;
    EXPECT(gbs_evidence(gaussian_logp, &g, x, 1, n, d, NULL, &o, &res, NULL, 0, &err),
           GBS_ERR_ARGUMENT, "n_q = -1");
    o.n_q = 0;
    o.cross_fit = 7;
    EXPECT(gbs_evidence(gaussian_logp, &g, x, 1, n, d, NULL, &o, &res, NULL, 0, &err),
           GBS_ERR_ARGUMENT, "cross_fit = 7");
    o.cross_fit = GBS_CROSS_FIT_AUTO;
    o.f_err = 2;
    EXPECT(gbs_evidence(gaussian_logp, &g, x, 1, n, d, NULL, &o, &res, NULL, 0, &err),
           GBS_ERR_FAILED, "FErr");
    o.f_err = 0;

    /* a struct from a "newer header": known fields then extra bytes */
    struct {
      gbs_evidence_options base;
      double extra;
    } newer;
    memset(&newer, 0, sizeof newer);
    newer.base.size = sizeof newer;
    newer.base.independent = 1;
    EXPECT(gbs_evidence(gaussian_logp, &g, x, 1, n, d, NULL, &newer.base, &res, NULL, 0, &err),
           GBS_OK, "");
    gbs_result_free(&res);
    newer.extra = 1;
    EXPECT(gbs_evidence(gaussian_logp, &g, x, 1, n, d, NULL, &newer.base, &res, NULL, 0, &err),
           GBS_ERR_ARGUMENT, "this library does not have");

    gbs_result small = {sizeof small - 16};
    EXPECT(gbs_evidence(gaussian_logp, &g, x, 1, n, d, NULL, NULL, &small, NULL, 0, &err),
           GBS_ERR_ARGUMENT, "gbs_result.size");
    gbs_nuts_chain_stats st[2] = {{sizeof st[0]}, {0}};
    double out[4 * 10];
    EXPECT(gbs_nuts_sample(gaussian_logp_grad, &g, d, 2, 10, NULL, out, NULL, st, &err),
           GBS_ERR_ARGUMENT, "gbs_nuts_chain_stats[1].size = 0");
    gbs_nuts_options no = {sizeof no};
    no.metric = 9;
    EXPECT(gbs_nuts_sample(gaussian_logp_grad, &g, d, 2, 10, &no, out, NULL, NULL, &err),
           GBS_ERR_ARGUMENT, "metric = 9");
  }

  printf("handles:\n");
  {
    gbs_cancel_token *tok = NULL;
    CHECK_OK(gbs_cancel_token_new(&tok, &err));
    CHECK_OK(gbs_cancel_token_free(tok, &err));
    EXPECT(gbs_cancel(tok, &err), GBS_ERR_HANDLE, "already freed");
    EXPECT(gbs_cancel_token_free(tok, &err), GBS_ERR_HANDLE, "already freed");
    gbs_evidence_options o = {sizeof o};
    o.cancel = tok;
    EXPECT(gbs_evidence(gaussian_logp, &g, x, 1, n, d, NULL, &o, &res, NULL, 0, &err),
           GBS_ERR_HANDLE, "already freed");
    int local;
    EXPECT(gbs_cancel((gbs_cancel_token *)&local, &err), GBS_ERR_HANDLE,
           "is not a gbs_cancel_token handle");
    EXPECT(gbs_cancel(NULL, &err), GBS_ERR_HANDLE, "handle is NULL");
    CHECK_OK(gbs_cancel_token_free(NULL, &err));
  }

  printf("free functions:\n");
  {
    char *e1 = NULL;
    gbs_evidence(NULL, NULL, x, 1, n, d, NULL, NULL, &res, NULL, 0, &e1);
    CHECK(e1 != NULL, "no message");
    gbs_free_error(e1);
    gbs_free_error(e1); /* second free: ignored */
    char local[8] = "abc";
    gbs_free_error(local); /* not from the library: ignored */
    gbs_free_warnings((char **)local);
    gbs_free_error(NULL);
    gbs_free_warnings(NULL);
  }

  free(x);
  CHECK(gbs_debug_live_allocations() == 0, "%lld live allocations at exit",
        (long long)gbs_debug_live_allocations());
  return test_summary("test_errors");
}
