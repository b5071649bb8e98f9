/* Batched NUTS through the C ABI: gbs_nuts_sample_batch and
 * gbs_nuts_evidence_batch give the draws and ln Z of their per-point
 * counterparts for the same options, with one callback per step of all
 * chains; a failing batch callback aborts with GBS_ERR_CALLBACK. */
#include "common.h"

typedef struct {
  const gaussian_target *g;
  int64_t calls, points, max_n;
  int64_t fail_at; /* the call that returns an error code; 0: none */
} batch_state;

/* Evaluates the per-point callback at each point: the values are bit for
 * bit those of the unbatched path. */
static int gaussian_logp_grad_batch(const double *x, int64_t n, int64_t d,
                                    double *logp, double *grad, void *user) {
  batch_state *s = (batch_state *)user;
  s->calls++;
  s->points += n;
  if (n > s->max_n) s->max_n = n;
  if (s->fail_at && s->calls == s->fail_at) return 42;
  for (int64_t i = 0; i < n; i++) {
    int rc = gaussian_logp_grad(x + i * d, d, logp + i, grad + i * d,
                                (void *)s->g);
    if (rc) return rc;
  }
  return 0;
}

int main(void) {
  const double mu[3] = {1, 2, 3}, sd[3] = {1, 0.5, 2};
  gaussian_target g = {3, -1.25, mu, sd};
  enum { chains = 6, draws = 500, d = 3 };
  gbs_nuts_options nopt = {sizeof nopt};
  nopt.seed = 5;
  nopt.warmup = 300;
  nopt.target_accept = 0.9;
  /* NUTS alone: one phase, so one batch per step of the longest chain
   * (global moves, on by default, add phases between the flow's fits). */
  nopt.global_moves = GBS_GLOBAL_OFF;
  double *x = malloc(sizeof(double) * chains * draws * d);
  double *xb = malloc(sizeof(double) * chains * draws * d);
  double *lp = malloc(sizeof(double) * chains * draws);
  double *lpb = malloc(sizeof(double) * chains * draws);
  gbs_nuts_chain_stats st[chains], stb[chains];
  for (int c = 0; c < chains; c++) st[c].size = stb[c].size = sizeof st[c];

  CHECK_OK(gbs_nuts_sample(gaussian_logp_grad, &g, d, chains, draws, &nopt, x,
                           lp, st, &err));
  batch_state bs = {&g, 0, 0, 0, 0};
  CHECK_OK(gbs_nuts_sample_batch(gaussian_logp_grad_batch, &bs, d, chains,
                                 draws, &nopt, xb, lpb, stb, &err));
  CHECK(memcmp(x, xb, sizeof(double) * chains * draws * d) == 0,
        "batched draws differ from gbs_nuts_sample's");
  CHECK(memcmp(lp, lpb, sizeof(double) * chains * draws) == 0,
        "batched log p differs");
  int64_t grad_calls = 0, most = 0;
  for (int c = 0; c < chains; c++) {
    CHECK(st[c].grad_calls == stb[c].grad_calls &&
              st[c].step_size == stb[c].step_size,
          "chain %d: stats differ", c);
    grad_calls += stb[c].grad_calls;
    if (stb[c].grad_calls > most) most = stb[c].grad_calls;
  }
  CHECK(bs.points == grad_calls, "%lld points evaluated, stats count %lld",
        (long long)bs.points, (long long)grad_calls);
  CHECK(bs.calls == most && bs.max_n == chains,
        "%lld batches of at most %lld points, want %lld of at most %d",
        (long long)bs.calls, (long long)bs.max_n, (long long)most, chains);
  printf("batched NUTS: %lld points in %lld callbacks (%.1f per call)\n",
         (long long)bs.points, (long long)bs.calls,
         (double)bs.points / (double)bs.calls);

  /* the pipeline: the same draws and ln Z */
  gbs_result res = {sizeof res}, resb = {sizeof resb};
  CHECK_OK(gbs_nuts_evidence(gaussian_logp_grad, &g, d, chains, draws, &nopt,
                             NULL, &res, NULL, 0, NULL, NULL, NULL, &err));
  batch_state be = {&g, 0, 0, 0, 0};
  CHECK_OK(gbs_nuts_evidence_batch(gaussian_logp_grad_batch, &be, d, chains,
                                   draws, &nopt, NULL, &resb, NULL, 0, xb,
                                   NULL, NULL, &err));
  CHECK(memcmp(x, xb, sizeof(double) * chains * draws * d) == 0,
        "batched pipeline draws differ");
  CHECK(res.logz == resb.logz && res.logzerr == resb.logzerr,
        "batched pipeline ln Z %.17g +- %g, per point %.17g +- %g",
        resb.logz, resb.logzerr, res.logz, res.logzerr);
  CHECK(fabs(resb.logz - g.c) < 4 * resb.logzerr && resb.logzerr < 0.1,
        "ln Z %g +- %g, exact %g", resb.logz, resb.logzerr, g.c);
  printf("batched pipeline: ln Z %.4f +- %.4f (exact %.4f)\n", resb.logz,
         resb.logzerr, g.c);
  gbs_result_free(&res);
  gbs_result_free(&resb);

  /* a failing callback aborts the call with its code in the message */
  batch_state bf = {&g, 0, 0, 0, 7};
  char *err = NULL;
  int st_ = gbs_nuts_sample_batch(gaussian_logp_grad_batch, &bf, d, chains,
                                  draws, &nopt, xb, NULL, NULL, &err);
  CHECK(st_ == GBS_ERR_CALLBACK && err && strstr(err, "42"),
        "failing callback: status %d, message %s", st_, err ? err : "(none)");
  gbs_free_error(err);
  err = NULL;
  st_ = gbs_nuts_sample_batch(NULL, NULL, d, chains, draws, &nopt, xb, NULL,
                              NULL, &err);
  CHECK(st_ == GBS_ERR_ARGUMENT && err && strstr(err, "NULL"),
        "NULL callback: status %d, message %s", st_, err ? err : "(none)");
  gbs_free_error(err);

  free(x);
  free(xb);
  free(lp);
  free(lpb);
  CHECK(gbs_debug_live_allocations() == 0, "%lld live allocations at exit",
        (long long)gbs_debug_live_allocations());
  return test_summary("test_nuts_batch");
}
