/* The gradient-free path from C: ensemble sampling through a handle, and
 * the ensemble + evidence pipeline on a 10-d Gaussian and the 16-d funnel. */
#include "common.h"

static int failing(const double *x, int64_t n, int64_t d, double *logp, void *user) {
  (void)x, (void)n, (void)d, (void)logp, (void)user;
  return 5;
}

static int batch_seen = 0;
static int gaussian_counting(const double *x, int64_t n, int64_t d, double *logp, void *user) {
  if (n > batch_seen) batch_seen = (int)n;
  return gaussian_logp(x, n, d, logp, user);
}

int main(void) {
  double mu[10], sd[10];
  for (int k = 0; k < 10; k++) mu[k] = 0.3 * k, sd[k] = 0.5 + 0.1 * k;
  gaussian_target g = {10, 1.75, mu, sd};

  /* Sampling through a handle. */
  gbs_ensemble_options opt = {sizeof opt};
  opt.walkers = 40;
  opt.steps = 3000;
  opt.seed = 9;
  double lo[10], hi[10];
  for (int k = 0; k < 10; k++) lo[k] = mu[k] - 2, hi[k] = mu[k] + 2;
  opt.lower = lo, opt.upper = hi;
  gbs_ensemble *run = NULL;
  CHECK_OK(gbs_ensemble_sample(gaussian_counting, &g, 10, &opt, &run, &err));
  CHECK(batch_seen == 20, "callback batches of %d points, want the half-ensemble 20", batch_seen);
  gbs_ensemble_info info = {sizeof info};
  CHECK_OK(gbs_ensemble_get_info(run, &info, &err));
  printf("ensemble: %lld walkers x %lld draws, burn %lld, thin %lld, tau %.1f, acceptance %.2f, %lld calls\n",
         (long long)info.walkers, (long long)info.draws, (long long)info.burn, (long long)info.thin,
         info.tau_max, info.acceptance, (long long)info.ncall);
  int64_t m = info.walkers * info.draws;
  double *x = malloc(sizeof(double) * m * 10), *lp = malloc(sizeof(double) * m);
  CHECK_OK(gbs_ensemble_get_draws(run, x, lp, &err));
  for (int k = 0; k < 10; k += 3) {
    double s = 0, s2 = 0;
    for (int64_t i = 0; i < m; i++) s += x[i * 10 + k], s2 += x[i * 10 + k] * x[i * 10 + k];
    double mean = s / m, var = s2 / m - mean * mean;
    CHECK(fabs(mean - mu[k]) < 0.15 * sd[k] && fabs(var / (sd[k] * sd[k]) - 1) < 0.15,
          "coordinate %d: mean %g (want %g), variance %g (want %g)", k, mean, mu[k], var, sd[k] * sd[k]);
  }
  CHECK(lp[5] == gaussian_logp_point(&g, &x[5 * 10]), "log p of a draw");
  /* Same seed, same draws. */
  gbs_ensemble *again = NULL;
  CHECK_OK(gbs_ensemble_sample(gaussian_logp, &g, 10, &opt, &again, &err));
  double *x2 = malloc(sizeof(double) * m * 10);
  CHECK_OK(gbs_ensemble_get_draws(again, x2, NULL, &err));
  CHECK(memcmp(x, x2, sizeof(double) * m * 10) == 0, "same seed, different draws");
  CHECK_OK(gbs_ensemble_free(again, &err));
  CHECK_OK(gbs_ensemble_free(run, &err));
  char *e = NULL;
  CHECK(gbs_ensemble_get_info(run, &info, &e) == GBS_ERR_HANDLE, "freed run used");
  gbs_free_error(e);

  /* Errors. */
  e = NULL;
  CHECK(gbs_ensemble_sample(failing, NULL, 10, &opt, &run, &e) == GBS_ERR_CALLBACK && e &&
            strstr(e, "error code 5"), "failing callback: %s", e ? e : "(none)");
  gbs_free_error(e);
  gbs_ensemble_options odd = opt;
  odd.walkers = 41;
  e = NULL;
  CHECK(gbs_ensemble_sample(gaussian_logp, &g, 10, &odd, &run, &e) == GBS_ERR_ARGUMENT, "odd walkers");
  printf("odd walkers -> %s\n", e ? e : "(none)");
  gbs_free_error(e);

  /* The pipeline. */
  gbs_result res = {sizeof res};
  int64_t scalls = 0;
  CHECK_OK(gbs_ensemble_evidence(gaussian_logp, &g, 10, &opt, NULL, &res, NULL, 0, &scalls, &err));
  printf("gaussian-10 ensemble pipeline: ln Z = %.4f +/- %.4f (exact %.4f), calls: sampler %lld, evidence %lld\n",
         res.logz, res.logzerr, g.c, (long long)scalls, (long long)res.ncall);
  CHECK(fabs(res.logz - g.c) < 4 * res.logzerr && res.logzerr < 0.1, "gaussian ln Z");
  gbs_result_free(&res);

  double flo[FUNNEL_D], fhi[FUNNEL_D];
  for (int k = 0; k < FUNNEL_D; k++) {
    flo[k] = k == 0 ? -FUNNEL_X1_BOUND : -FUNNEL_BOUND;
    fhi[k] = -flo[k];
  }
  gbs_ensemble_options fo = {sizeof fo};
  fo.steps = 5000;
  fo.seed = 3;
  fo.lower = flo, fo.upper = fhi;
  gbs_result fr = {sizeof fr};
  CHECK_OK(gbs_ensemble_evidence(funnel_logp, NULL, FUNNEL_D, &fo, NULL, &fr, NULL, 0, &scalls, &err));
  printf("funnel ensemble pipeline: ln Z = %.4f +/- %.4f (exact %.4f), calls: sampler %lld, evidence %lld\n",
         fr.logz, fr.logzerr, FUNNEL_LOGZ, (long long)scalls, (long long)fr.ncall);
  CHECK(fabs(fr.logz - FUNNEL_LOGZ) < 4 * fr.logzerr && fr.logzerr < 0.15, "funnel ln Z");
  gbs_result_free(&fr);

  free(x), free(x2), free(lp);
  CHECK(gbs_debug_live_allocations() == 0, "%lld live allocations", (long long)gbs_debug_live_allocations());
  return test_summary("test_ensemble");
}
