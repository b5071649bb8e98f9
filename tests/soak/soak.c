/* Soak test (make soak, not part of make test): 10^4 evidence calls and
 * 10^3 flow fit/free cycles in one process, with the resident set size
 * (VmRSS of /proc/self/status) recorded over every 10 % of each phase.  The
 * process passes if the peak RSS grows by less than 5 % from the second
 * tenth (after warm-up: the Go heap and the runtime's caches reach their working
 * size in the first calls) to the end, and every object the library
 * handed out has been freed.  Problems are small so that it runs in a few
 * minutes. */
#include "../c/common.h"

static long rss_kb(void) {
  FILE *f = fopen("/proc/self/status", "r");
  char line[256];
  long kb = -1;
  if (!f) return -1;
  while (fgets(line, sizeof line, f))
    if (sscanf(line, "VmRSS: %ld kB", &kb) == 1) break;
  fclose(f);
  return kb;
}

/* phase runs iters iterations of step and records the peak RSS of each
 * tenth of them (the Go heap grows and shrinks between collections, so
 * single readings jitter by more than a leak would add; a leak raises the
 * peaks).  It checks that the peak of the last tenth is less than 5 %
 * above the peak of the second (the first is warm-up). */
static int phase(const char *name, int iters, int (*step)(int i, void *ctx), void *ctx) {
  long peak[10] = {0};
  int failed = 0;
  double t0 = now_seconds();
  long start = rss_kb();
  for (int i = 0; i < iters; i++) {
    if (step(i, ctx) != 0) failed++;
    long r = rss_kb();
    int w = (int)((long)i * 10 / iters);
    if (r > peak[w]) peak[w] = r;
  }
  double growth = 100.0 * (double)(peak[9] - peak[1]) / (double)peak[1];
  printf("%s: %d iterations in %.1f s, %d failed; VmRSS %ld kB at start, peak kB per tenth:", name,
         iters, now_seconds() - t0, failed, start);
  for (int k = 0; k < 10; k++) printf(" %ld", peak[k]);
  printf("; growth after warm-up %+.2f %%\n", growth);
  fflush(stdout);
  CHECK(failed == 0, "%s: %d iterations failed", name, failed);
  CHECK(growth < 5, "%s: peak RSS grew by %.2f %% after warm-up", name, growth);
  return failed == 0 && growth < 5;
}

typedef struct {
  gaussian_target *g;
  const double *x;
  int64_t n, d;
} problem;

static int evidence_step(int i, void *ctx) {
  problem *p = ctx;
  gbs_evidence_options opt = {sizeof opt};
  opt.independent = 1;
  opt.seed = (uint64_t)i;
  gbs_result res = {sizeof res};
  gbs_trace_point tr[4];
  char *err = NULL;
  int st = gbs_evidence(gaussian_logp, p->g, p->x, 1, p->n, p->d, NULL, &opt, &res, tr, 4, &err);
  if (st != GBS_OK) fprintf(stderr, "evidence %d: %s\n", i, err);
  gbs_free_error(err);
  gbs_result_free(&res);
  return st;
}

static int flow_step(int i, void *ctx) {
  problem *p = ctx;
  gbs_flow_options fo = {sizeof fo};
  fo.seed = (uint64_t)i;
  gbs_flow *flow = NULL;
  char *err = NULL;
  int st = gbs_flow_fit(p->x, p->n, p->d, NULL, &fo, &flow, &err);
  if (st != GBS_OK) fprintf(stderr, "flow %d: %s\n", i, err);
  gbs_free_error(err);
  gbs_flow_free(flow, NULL);
  return st;
}

int main(int argc, char **argv) {
  int evidence_iters = argc > 1 ? atoi(argv[1]) : 10000;
  int flow_iters = argc > 2 ? atoi(argv[2]) : 1000;
  const double mu[4] = {0, 1, -1, 2}, sd[4] = {1, 2, 0.5, 1};
  gaussian_target g = {2, 0.5, mu, sd}, g4 = {4, 0.5, mu, sd};
  double xe[2 * 200], xf[4 * 2000];
  test_rng rng = rng_new(7);
  gaussian_sample(&g, &rng, xe, 200);
  gaussian_sample(&g4, &rng, xf, 2000);
  problem pe = {&g, xe, 200, 2}, pf = {&g4, xf, 2000, 4};
  phase("C evidence (200 draws, d = 2)", evidence_iters, evidence_step, &pe);
  phase("C flow fit/free (2000 points, d = 4)", flow_iters, flow_step, &pf);
  CHECK(gbs_debug_live_allocations() == 0, "%lld objects still live",
        (long long)gbs_debug_live_allocations());
  return test_summary("soak");
}
