/* Leak check: many small evidence, error and flow calls.  Every object the
 * library hands out (error messages, warning lists, handles) must be freed
 * by the documented free functions: gbs_debug_live_allocations() returns to
 * zero.  Run under valgrind by run_tests.sh, whose filter reports definite
 * leaks whose allocation stack passes through a gbs_ function. */
#include "common.h"

static int failing_logp(const double *x, int64_t n, int64_t d, double *logp,
                        void *user) {
  (void)x, (void)n, (void)d, (void)logp, (void)user;
  return 1;
}

int main(int argc, char **argv) {
  int iters = argc > 1 ? atoi(argv[1]) : 1000;
  const int64_t n = 100, d = 2;
  const double mu[2] = {0, 1}, sd[2] = {1, 2};
  gaussian_target g = {d, 0.5, mu, sd};
  double x[2 * 100], lq[100], y[2 * 100];
  test_rng rng = rng_new(4);
  gaussian_sample(&g, &rng, x, n);
  double t0 = now_seconds();
  int failed = 0;
  for (int i = 0; i < iters; i++) {
    gbs_evidence_options opt = {sizeof opt};
    opt.independent = 1;
    opt.seed = (uint64_t)i;
    opt.n_q = 50;
    gbs_result res = {sizeof res};
    gbs_trace_point tr[4];
    char *err = NULL;
    if (gbs_evidence(gaussian_logp, &g, x, 1, n, d, NULL, &opt, &res, tr, 4,
                     &err) != GBS_OK)
      failed++;
    gbs_free_error(err);
    gbs_result_free(&res);

    /* the error path: a message to free */
    gbs_evidence(failing_logp, NULL, x, 1, n, d, NULL, &opt, &res, NULL, 0,
                 &err);
    gbs_free_error(err);

    /* a cancel token */
    gbs_cancel_token *tok = NULL;
    gbs_cancel_token_new(&tok, NULL);
    gbs_cancel(tok, NULL);
    gbs_cancel_token_free(tok, NULL);

#ifdef GBS_TEST_FLOW
    gbs_flow_options fo = {sizeof fo};
    fo.layers = 1;
    fo.seed = (uint64_t)i;
    gbs_flow *flow = NULL;
    if (gbs_flow_fit(x, n, d, NULL, &fo, &flow, &err) != GBS_OK) failed++;
    gbs_free_error(err);
    gbs_flow_log_prob(flow, x, n, lq, NULL);
    gbs_flow_sample(flow, n, (uint64_t)i, y, lq, NULL);
    char **w = NULL;
    gbs_flow_warnings(flow, &w, NULL, NULL);
    gbs_free_warnings(w);
    int64_t len = 0;
    gbs_flow_to_buffer(flow, NULL, 0, &len, NULL);
    void *buf = malloc((size_t)len);
    gbs_flow_to_buffer(flow, buf, len, &len, NULL);
    gbs_flow *copy = NULL;
    if (gbs_flow_from_buffer(buf, len, &copy, NULL) != GBS_OK) failed++;
    free(buf);
    gbs_flow_free(copy, NULL);
    gbs_flow_free(flow, NULL);
    gbs_flow_free(flow, &err); /* freed twice: an error message to free */
    gbs_free_error(err);
#endif
  }
  (void)lq, (void)y;
  CHECK(failed == 0, "%d calls failed", failed);
  int64_t live = gbs_debug_live_allocations();
  CHECK(live == 0, "%lld objects from libgbs still live", (long long)live);
  printf("test_leaks: %d iterations in %.1f s, %lld live allocations\n", iters,
         now_seconds() - t0, (long long)live);
  return test_summary("test_leaks");
}
