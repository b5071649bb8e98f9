/* Global moves through the C ABI (gbs_nuts_options.global_moves): from
 * chains started in the wrong proportions on two separated modes, NUTS
 * alone keeps them and the global moves set the weights; the moves' counts
 * are in gbs_nuts_chain_stats; options and stats structs of the header
 * before the global fields were added (a smaller size) are still
 * accepted. */
#include <stddef.h>

#include "common.h"

enum { D = 3 };

/* 0.2 N(-4·1, I) + 0.8 N(+4·1, I): no NUTS trajectory crosses between. */
static int two_modes(const double *x, int64_t d, double *logp, double *grad,
                     void *user) {
  (void)user;
  double sm = 0, sp = 0;
  for (int64_t j = 0; j < d; j++) {
    sm += (x[j] + 4) * (x[j] + 4);
    sp += (x[j] - 4) * (x[j] - 4);
  }
  double a = log(0.2) - 0.5 * sm, b = log(0.8) - 0.5 * sp;
  double m = a > b ? a : b;
  double lp = m + log(exp(a - m) + exp(b - m));
  double r = exp(a - lp);
  for (int64_t j = 0; j < d; j++)
    grad[j] = -r * (x[j] + 4) - (1 - r) * (x[j] - 4);
  *logp = lp;
  return 0;
}

static double minor_fraction(const double *x, int64_t n) {
  int64_t k = 0;
  for (int64_t i = 0; i < n; i++) {
    double s = 0;
    for (int j = 0; j < D; j++) s += x[i * D + j];
    if (s < 0) k++;
  }
  return (double)k / (double)n;
}

int main(void) {
  enum { chains = 8, draws = 400 };
  double init[chains * D], lower[D], upper[D];
  for (int c = 0; c < chains; c++)
    for (int j = 0; j < D; j++) init[c * D + j] = c == chains - 1 ? 4 : -4;
  for (int j = 0; j < D; j++) lower[j] = -10, upper[j] = 10;
  gbs_nuts_options opt = {sizeof opt};
  opt.seed = 7;
  opt.warmup = 200;
  opt.init = init;
  opt.lower = lower;
  opt.upper = upper;
  double *x = malloc(sizeof(double) * chains * draws * D);
  gbs_nuts_chain_stats st[chains];
  for (int c = 0; c < chains; c++) st[c].size = sizeof st[c];

  opt.global_moves = GBS_GLOBAL_OFF;
  CHECK_OK(gbs_nuts_sample(two_modes, NULL, D, chains, draws, &opt, x, NULL,
                           st, &err));
  double f = minor_fraction(x, chains * draws);
  CHECK(fabs(f - 7.0 / 8) < 0.01, "NUTS alone: minor fraction %.3f, want 7/8",
        f);
  CHECK(st[0].global_proposed == 0, "NUTS alone: %lld global moves",
        (long long)st[0].global_proposed);

  opt.global_moves = GBS_GLOBAL_ON;
  opt.global_stage_iters = 60;
  CHECK_OK(gbs_nuts_sample(two_modes, NULL, D, chains, draws, &opt, x, NULL,
                           st, &err));
  f = minor_fraction(x, chains * draws);
  /* Standard error about 0.01 at this size; measured in the Go and Python
   * tests within 0.02. */
  CHECK(fabs(f - 0.2) < 0.04, "global moves: minor fraction %.3f, want 0.2",
        f);
  int64_t prop = 0, acc = 0;
  for (int c = 0; c < chains; c++) {
    CHECK(st[c].global_proposed == draws && st[c].global_warmup_proposed == 60,
          "chain %d: %lld kept and %lld warm-up moves, want %d and 60", c,
          (long long)st[c].global_proposed,
          (long long)st[c].global_warmup_proposed, draws);
    CHECK(st[c].global_calls > 0 && st[c].global_calls < st[c].grad_calls,
          "chain %d: %lld global calls of %lld", c,
          (long long)st[c].global_calls, (long long)st[c].grad_calls);
    prop += st[c].global_proposed;
    acc += st[c].global_accepted;
  }
  double rate = (double)acc / (double)prop;
  CHECK(rate > 0.3 && rate <= 1, "global acceptance %.3f", rate);

  /* The structs of the header before the global fields: accepted, with
   * the default for the fields past their size (global moves on: 8 chains
   * of 100 stage iterations in D dimensions), and nothing written past
   * the stats' size. */
  size_t old_opt = offsetof(gbs_nuts_options, global_moves);
  size_t old_st = offsetof(gbs_nuts_chain_stats, global_proposed);
  gbs_nuts_options o2 = opt;
  o2.size = old_opt;
  unsigned char buf[chains * sizeof(gbs_nuts_chain_stats)];
  memset(buf, 0xab, sizeof buf);
  for (int c = 0; c < chains; c++)
    memcpy(buf + c * old_st, &old_st, sizeof old_st);
  CHECK_OK(gbs_nuts_sample(two_modes, NULL, D, chains, draws, &o2, x, NULL,
                           (gbs_nuts_chain_stats *)buf, &err));
  f = minor_fraction(x, chains * draws);
  CHECK(fabs(f - 0.2) < 0.05,
        "old options struct: minor fraction %.3f, want 0.2 (global moves on "
        "by default)",
        f);
  CHECK(buf[chains * old_st] == 0xab,
        "old stats structs: a byte past the array was written");
  CHECK(((gbs_nuts_chain_stats *)buf)->grad_calls > 0,
        "old stats structs: grad_calls not written");

  /* A bad mode is an argument error naming the field. */
  opt.global_moves = 9;
  char *err = NULL;
  int rc = gbs_nuts_sample(two_modes, NULL, D, chains, draws, &opt, x, NULL,
                           NULL, &err);
  CHECK(rc == GBS_ERR_ARGUMENT && err && strstr(err, "global_moves"),
        "global_moves = 9: status %d, %s", rc, err ? err : "(no message)");
  gbs_free_error(err);
  free(x);
  return test_summary("test_global_moves");
}
