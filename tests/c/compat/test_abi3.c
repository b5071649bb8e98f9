/* A program written against the header of ABI version 3 (gbs_abi3.h, the
 * header as it was released: never edited), run against this library:
 * every struct it passes is its own, smaller size, and the library must
 * fill what that size holds, write nothing past it, and allocate nothing
 * the program cannot free (no report).  Built by `make test-c`. */
#define _POSIX_C_SOURCE 200809L /* before any system header: clock_gettime */
#include "gbs_abi3.h"

/* common.h's #include <gbs.h> is then empty: both headers guard with GBS_H. */
#include "../common.h"

#include <string.h>

int main(void) {
  CHECK(gbs_abi_version() >= GBS_ABI_VERSION, "library ABI %d, program built for %d",
        gbs_abi_version(), GBS_ABI_VERSION);
  const int64_t n = 4000, d = 16;
  double *x = malloc(sizeof(double) * n * d);
  test_rng rng = rng_new(7);
  funnel_sample(&rng, x, n, d);

  /* Evidence with the old options and result structs, each inside a
   * buffer whose bytes past the struct must stay untouched. */
  unsigned char ob[sizeof(gbs_evidence_options) + 64], rb[sizeof(gbs_result) + 64];
  memset(ob, 0, sizeof ob);
  memset(rb, 0xAB, sizeof rb);
  gbs_evidence_options *opt = (gbs_evidence_options *)ob;
  opt->size = sizeof *opt;
  opt->independent = GBS_DRAWS_INDEPENDENT;
  opt->seed = 5;
  gbs_result *res = (gbs_result *)rb;
  memset(res, 0, sizeof *res);
  res->size = sizeof *res;
  CHECK_OK(gbs_evidence(funnel_logp, NULL, x, 1, n, d, NULL, opt, res, NULL, 0, &err));
  CHECK(fabs(res->logz - FUNNEL_LOGZ) < 4 * res->logzerr && res->logzerr < 0.05,
        "ln Z = %.5f +/- %.5f, exact %.5f", res->logz, res->logzerr, FUNNEL_LOGZ);
  CHECK(isfinite(res->diagnostics.rhat_max) && res->diagnostics.coverage_calls > 0,
        "diagnostics not filled: R-hat %g, coverage calls %lld", res->diagnostics.rhat_max,
        (long long)res->diagnostics.coverage_calls);
  for (size_t i = sizeof *res; i < sizeof rb; i++)
    if (rb[i] != 0xAB) {
      CHECK(0, "byte %zu past the ABI 3 result was written", i);
      break;
    }
  gbs_free_warnings(res->warnings);
  gbs_free_warnings(res->info);

  /* The NUTS pipeline and a flow, with their old structs. */
  const double mu[3] = {1, 2, 3}, sd[3] = {1, 0.5, 2};
  gaussian_target g = {3, -1.25, mu, sd};
  gbs_nuts_options nopt = {sizeof nopt};
  nopt.seed = 1;
  nopt.warmup = 300;
  gbs_nuts_chain_stats stats[4];
  for (int c = 0; c < 4; c++) stats[c].size = sizeof stats[c];
  gbs_result pr = {sizeof pr};
  CHECK_OK(gbs_nuts_evidence(gaussian_logp_grad, &g, 3, 4, 500, &nopt, NULL, &pr, NULL, 0, NULL,
                             NULL, stats, &err));
  CHECK(fabs(pr.logz - g.c) < 4 * pr.logzerr, "pipeline ln Z = %.4f +/- %.4f, exact %.4f",
        pr.logz, pr.logzerr, g.c);
  gbs_free_warnings(pr.warnings);
  gbs_free_warnings(pr.info);
  gbs_flow_options fopt = {sizeof fopt};
  gbs_flow *fl = NULL;
  CHECK_OK(gbs_flow_fit(x, n, d, NULL, &fopt, &fl, &err));
  CHECK_OK(gbs_flow_free(fl, &err));

  CHECK(gbs_debug_live_allocations() == 0, "%lld live allocations: the library allocated "
        "something an ABI 3 program cannot free", (long long)gbs_debug_live_allocations());
  free(x);
  return test_summary("test_abi3 (a program built against the ABI 3 header)");
}
