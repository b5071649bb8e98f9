/* Sizes that cannot fit in memory: every size a caller chooses that drives
 * an allocation inside libgbs (n_q, chains x draws, walkers x steps, flow
 * layers and knots, flow sample counts) is checked before anything is
 * allocated, and refused with GBS_ERR_ARGUMENT and a message that names the
 * size and the memory it would need.  The process must live on: Go cannot
 * recover from running out of memory, so an unchecked size would abort it.
 * 10^12 values of 8 bytes are 8 TB, beyond any machine this runs on. */
#include "common.h"

#define EXPECT_LIMIT(call, substring)                                        \
  do {                                                                       \
    char *err = NULL;                                                        \
    int st_ = (call);                                                        \
    CHECK(st_ == GBS_ERR_ARGUMENT, "%s returned %d, want GBS_ERR_ARGUMENT (%s)", \
          #call, st_, err ? err : "no message");                             \
    CHECK(err != NULL && strstr(err, (substring)) != NULL &&                 \
              strstr(err, " need ") != NULL,                                 \
          "%s: message \"%s\" does not name \"%s\" and what it needs", #call, \
          err ? err : "(null)", (substring));                                \
    if (err) printf("  %.160s\n", err);                                      \
    gbs_free_error(err);                                                     \
  } while (0)

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
  opt.seed = 3;

  /* n_q: the memory it needs, and a product that overflows 64 bits. */
  opt.n_q = 1000000000000LL;
  EXPECT_LIMIT(gbs_evidence(gaussian_logp, &g, x, 1, n, d, NULL, &opt, &res, NULL, 0, &err),
               "n_q = 1000000000000 proposal draws of dimension 4");
  opt.n_q = (int64_t)1 << 62;
  EXPECT_LIMIT(gbs_evidence(gaussian_logp, &g, x, 1, n, d, NULL, &opt, &res, NULL, 0, &err),
               "n_q = 4611686018427387904");
  opt.method = GBS_METHOD_IS;
  EXPECT_LIMIT(gbs_evidence(gaussian_logp, &g, x, 1, n, d, NULL, &opt, &res, NULL, 0, &err),
               "n_q = 4611686018427387904");
  opt.method = GBS_METHOD_BRIDGE;
  opt.n_q = 0;

  /* NUTS: chains x draws; the caller's buffer is never written. */
  EXPECT_LIMIT(gbs_nuts_sample(gaussian_logp_grad, &g, d, 4, 1000000000000LL, NULL, x, NULL, NULL, &err),
               "Chains × Draws = 4 × 1000000000000");
  EXPECT_LIMIT(gbs_nuts_evidence(gaussian_logp_grad, &g, d, 4, 1000000000000LL, NULL, NULL, &res, NULL, 0,
                                 NULL, NULL, NULL, &err),
               "Chains × Draws = 4 × 1000000000000");

  /* Ensemble: walkers x steps. */
  gbs_ensemble_options eo = {sizeof eo};
  eo.steps = 1000000000000LL;
  gbs_ensemble *run = NULL;
  EXPECT_LIMIT(gbs_ensemble_sample(gaussian_logp, &g, d, &eo, &run, &err), "Walkers × Steps = 32 × 1000000000000");
  CHECK(run == NULL, "a run was returned");
  EXPECT_LIMIT(gbs_ensemble_evidence(gaussian_logp, &g, d, &eo, &opt, &res, NULL, 0, NULL, &err),
               "Walkers × Steps = 32 × 1000000000000");

  /* Flow settings: fixed layers, knots. */
  gbs_flow_options fo = {sizeof fo};
  gbs_flow *flow = NULL;
  fo.layers = 2000000000;
  EXPECT_LIMIT(gbs_flow_fit(x, n, d, NULL, &fo, &flow, &err), "Layers = 2000000000 layers");
  fo.layers = 0;
  fo.max_layers = 2000000000;
  EXPECT_LIMIT(gbs_flow_fit(x, n, d, NULL, &fo, &flow, &err), "MaxLayers = 2000000000 layers");
  fo.max_layers = 0;
  fo.knots = 2000000000;
  EXPECT_LIMIT(gbs_flow_fit(x, n, d, NULL, &fo, &flow, &err), "Knots = 2000000000 knots");
  CHECK(flow == NULL, "a flow was returned");

  /* Flow samples: log q is the library's buffer when logq is NULL; x is
   * the caller's and is not written before the check. */
  CHECK_OK(gbs_flow_fit(x, n, d, NULL, NULL, &flow, &err));
  EXPECT_LIMIT(gbs_flow_sample(flow, 1000000000000LL, 1, x, NULL, &err), "n = 1000000000000 log q values");
  CHECK_OK(gbs_flow_free(flow, &err));

  /* The library is still usable. */
  CHECK_OK(gbs_evidence(gaussian_logp, &g, x, 1, n, d, NULL, &opt, &res, NULL, 0, &err));
  CHECK(fabs(res.logz) < 4 * res.logzerr + 1e-9, "ln Z = %g +- %g after the refusals, want 0", res.logz,
        res.logzerr);
  gbs_result_free(&res);
  CHECK(gbs_debug_live_allocations() == 0, "%lld objects left", (long long)gbs_debug_live_allocations());
  free(x);
  return test_summary("test_limits");
}
