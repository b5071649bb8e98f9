/* The library's reference problems as native densities: gbs_problem_new
 * over the Go package problems, its density functions as callbacks of the
 * header's types, run through gbs_nuts_evidence on a small funnel (the
 * library calls its own function directly) and through a C callback that
 * calls the same function (the path a program's own sampler takes): the
 * same draws and ln Z, within 4 sigma of the exact value. */
#include "common.h"

typedef struct {
  gbs_problem *p;
  int64_t calls;
} relay_state;

/* A C callback that calls the problem's density: the library cannot
 * recognize it, so every point leaves the library and comes back. */
static int relay(const double *x, int64_t d, double *logp, double *grad, void *user) {
  relay_state *s = (relay_state *)user;
  s->calls++;
  return gbs_problem_log_density_grad(x, d, logp, grad, s->p);
}

int main(void) {
  enum { d = 4, chains = 4, draws = 1000 };
  gbs_problem *p = NULL;
  CHECK_OK(gbs_problem_new("Funnel-4", &p, &err));
  int64_t dim = 0;
  double logz = 0, lo[d], hi[d];
  int32_t bounded = -1;
  CHECK_OK(gbs_problem_dim(p, &dim, &err));
  CHECK_OK(gbs_problem_log_z(p, &logz, &err));
  CHECK_OK(gbs_problem_bounds(p, lo, hi, &bounded, &err));
  CHECK(dim == d && bounded == 1 && lo[0] == -4 && hi[1] == 30, "dim %lld, bounded %d, box [%g, %g] x [%g, %g]",
        (long long)dim, bounded, lo[0], hi[0], lo[1], hi[1]);

  /* One point by hand: the funnel of docs/problems.md (common.h). */
  double x[d] = {0.3, -0.5, 1.0, 0.2}, lp = 0, grad[d], lpb = 0;
  CHECK(gbs_problem_log_density_grad(x, d, &lp, grad, p) == GBS_OK, "log density with gradient");
  CHECK(gbs_problem_log_density(x, 1, d, &lpb, p) == GBS_OK, "batch log density");
  double want = funnel_logp_point(x, d);
  CHECK(fabs(lp - want) <= 1e-12 * fabs(want) && lp == lpb, "log p %.17g (batch %.17g), want %.17g", lp, lpb, want);
  /* d(log p)/dx2 = -x2 / exp(2 x1) */
  CHECK(fabs(grad[1] - 0.5 / exp(0.6)) <= 1e-12, "gradient %.17g, want %.17g", grad[1], 0.5 / exp(0.6));
  CHECK(gbs_problem_log_density_grad(x, d + 1, &lp, grad, p) == GBS_ERR_ARGUMENT, "a wrong d is an argument error");

  gbs_nuts_options nopt = {sizeof nopt};
  nopt.seed = 11;
  nopt.warmup = 500;
  nopt.lower = lo;
  nopt.upper = hi;
  nopt.concurrent = 1;
  gbs_evidence_options eopt = {sizeof eopt};
  eopt.lower = lo;
  eopt.upper = hi;
  gbs_result res = {sizeof res}, rel = {sizeof rel};
  double *dr = malloc(sizeof(double) * chains * draws * d), *drr = malloc(sizeof(double) * chains * draws * d);
  CHECK_OK(gbs_nuts_evidence(gbs_problem_log_density_grad, p, d, chains, draws, &nopt, &eopt, &res, NULL, 0, dr,
                             NULL, NULL, &err));
  double z = (res.logz - logz) / res.logzerr;
  printf("native funnel-4: ln Z = %.4f +- %.4f, exact %.4f (z = %.2f)\n", res.logz, res.logzerr, logz, z);
  CHECK(fabs(z) < 4 && res.logzerr < 0.05, "ln Z %.4f +- %.4f, exact %.4f", res.logz, res.logzerr, logz);

  relay_state rs = {p, 0};
  nopt.concurrent = 0;
  CHECK_OK(gbs_nuts_evidence(relay, &rs, d, chains, draws, &nopt, &eopt, &rel, NULL, 0, drr, NULL, NULL, &err));
  CHECK(rs.calls > chains * draws, "the relay was called %lld times", (long long)rs.calls);
  CHECK(memcmp(dr, drr, sizeof(double) * chains * draws * d) == 0, "the relayed draws differ from the native ones");
  CHECK(rel.logz == res.logz, "relayed ln Z %.17g, native %.17g", rel.logz, res.logz);
  gbs_result_free(&res);
  gbs_result_free(&rel);

  /* A wrong dimension fails the call with the problem's reason. */
  gbs_result bad = {sizeof bad};
  char *err = NULL;
  nopt.lower = nopt.upper = NULL;
  int st = gbs_nuts_evidence(gbs_problem_log_density_grad, p, d + 1, chains, 100, &nopt, NULL, &bad, NULL, 0, NULL,
                             NULL, NULL, &err);
  CHECK(st == GBS_ERR_CALLBACK && err && strstr(err, "dimension 4"), "status %d: %s", st, err ? err : "(none)");
  gbs_free_error(err);
  gbs_result_free(&bad);

  /* Unknown names and freed handles. */
  gbs_problem *q = NULL;
  err = NULL;
  st = gbs_problem_new("funnel-zero", &q, &err);
  CHECK(st == GBS_ERR_ARGUMENT && q == NULL && err && strstr(err, "funnel-<d>"), "status %d: %s", st,
        err ? err : "(none)");
  gbs_free_error(err);
  CHECK_OK(gbs_problem_free(p, &err));
  CHECK(gbs_problem_log_density_grad(x, d, &lp, grad, p) == GBS_ERR_HANDLE, "a freed problem is GBS_ERR_HANDLE");
  CHECK(gbs_problem_free(p, NULL) == GBS_ERR_HANDLE, "freeing twice");
  CHECK_OK(gbs_problem_free(NULL, &err));
  free(dr);
  free(drr);
  return test_summary("test_problem");
}
