/* Cost of the C callback path: one gbs_evidence call (warp-III, a Gaussian
 * proposal, so that log-density calls dominate) on a 16-d Gaussian with
 * batch sizes 1, 100 and 10^4; prints the time per log-density point.
 * Run with `make bench-c`. */
#include "common.h"

/* A diagonal Gaussian with its normalization precomputed, the same
 * arithmetic as BenchmarkEvidenceWarp3 in gbs/bench_test.go. */
typedef struct {
  int64_t d;
  const double *sd;
  double lognorm;
} bench_target;

static int bench_logp(const double *x, int64_t n, int64_t d, double *logp, void *user) {
  const bench_target *g = (const bench_target *)user;
  for (int64_t i = 0; i < n; i++) {
    double s = g->lognorm;
    for (int64_t k = 0; k < d; k++) {
      double z = x[i * d + k] / g->sd[k];
      s -= 0.5 * z * z;
    }
    logp[i] = s;
  }
  return 0;
}

int main(void) {
  const int64_t n = 20000, d = 16, nq = 200000;
  double mu[16] = {0}, sd[16];
  for (int k = 0; k < d; k++) sd[k] = 1 + 0.1 * k;
  gaussian_target g = {d, 0.0, mu, sd};
  bench_target bt = {d, sd, 0};
  for (int k = 0; k < d; k++) bt.lognorm -= log(sd[k]) + 0.91893853320467274178;
  double *x = malloc(sizeof(double) * n * d);
  test_rng rng = rng_new(1);
  gaussian_sample(&g, &rng, x, n);
  const int64_t batches[] = {1, 100, 10000};
  for (int b = 0; b < 3; b++) {
    double best = 1e300;
    int64_t calls = 0;
    for (int rep = 0; rep < 3; rep++) {
      gbs_evidence_options opt = {sizeof opt};
      opt.method = GBS_METHOD_WARP3;
      opt.independent = 1;
      opt.n_q = nq;
      opt.batch_size = batches[b];
      gbs_result res = {sizeof res};
      double t0 = now_seconds();
      CHECK_OK(gbs_evidence(bench_logp, &bt, x, 1, n, d, NULL, &opt, &res, NULL, 0, &err));
      double t = now_seconds() - t0;
      if (t < best) best = t;
      calls = res.ncall;
      gbs_result_free(&res);
    }
    printf("batch %6lld: %lld log-density points, %.3f s, %.1f ns per point\n", (long long)batches[b],
           (long long)calls, best, 1e9 * best / (double)calls);
  }
  free(x);
  return test_summary("bench_callback");
}
