/* End-to-end test of libgbs from C: ln Z of the 16-d funnel and of a
 * Gaussian from exact draws, the NUTS + evidence pipeline, the log
 * callback, and flows (fit, sample, log q, save/load to a file and a
 * buffer).  Linked through the installed pkg-config file. */
#include "common.h"

static void print_result(const char *what, const gbs_result *r, double exact) {
  printf("%-28s ln Z = %.5f +/- %.5f (exact %.6f, %+.2f sigma)  n_p=%lld "
         "n_q=%lld ncall=%lld tau=%.3g warnings=%lld\n",
         what, r->logz, r->logzerr, exact, (r->logz - exact) / r->logzerr,
         (long long)r->n_p, (long long)r->n_q, (long long)r->ncall, r->tau,
         (long long)r->n_warnings);
  for (int64_t i = 0; i < r->n_warnings; i++)
    printf("    warning: %s\n", r->warnings[i]);
}

static void check_within(const gbs_result *r, double exact, double max_err) {
  CHECK(isfinite(r->logz) && isfinite(r->logzerr) && r->logzerr > 0,
        "logz = %g, logzerr = %g", r->logz, r->logzerr);
  CHECK(fabs(r->logz - exact) < 4 * r->logzerr,
        "ln Z = %g +/- %g is more than 4 sigma from %g", r->logz, r->logzerr,
        exact);
  CHECK(r->logzerr < max_err, "error bar %g is above %g", r->logzerr, max_err);
}

static void test_funnel(void) {
  const int64_t n = 4000, d = FUNNEL_D;
  double *x = malloc(sizeof(double) * n * d);
  test_rng rng = rng_new(42);
  funnel_sample(&rng, x, n, d);

  gbs_evidence_options opt;
  memset(&opt, 0, sizeof opt);
  opt.size = sizeof opt;
  opt.independent = 1;
  opt.seed = 7;
  gbs_result res = {sizeof res};
  gbs_trace_point trace[16];
  CHECK_OK(gbs_evidence(funnel_logp, NULL, x, 1, n, d, NULL, &opt, &res, trace,
                        16, &err));
  print_result("funnel (exact draws)", &res, FUNNEL_LOGZ);
  check_within(&res, FUNNEL_LOGZ, 0.5);
  CHECK(res.method == GBS_METHOD_BRIDGE, "method %d", res.method);
  /* cross-fitting (the default): every draw is a p-draw in one pass */
  CHECK(res.n_p == n, "n_p = %lld", (long long)res.n_p);
  CHECK(res.tau == 1, "tau = %g with independent draws", res.tau);
  CHECK(res.n_trace >= 1 && res.n_trace <= 16, "n_trace = %lld",
        (long long)res.n_trace);
  if (res.n_trace >= 1 && res.n_trace <= 16) {
    const gbs_trace_point *last = &trace[res.n_trace - 1];
    CHECK(last->n_q == res.n_q && last->logz == res.logz,
          "last trace point (%lld, %g) is not the result (%lld, %g)",
          (long long)last->n_q, last->logz, (long long)res.n_q, res.logz);
    for (int64_t i = 1; i < res.n_trace; i++)
      CHECK(trace[i].n_q > trace[i - 1].n_q, "trace n_q not increasing");
  }
  CHECK((res.n_warnings == 0) == (res.warnings == NULL), "warnings pointer");
  if (res.warnings) CHECK(res.warnings[res.n_warnings] == NULL, "not NULL-terminated");
  gbs_result_free(&res);

  /* Diagnostics (ABI version 2): clean exact draws pass every check. */
  const gbs_diagnostics *dg = &res.diagnostics;
  CHECK(res.n_warnings == 0, "%lld warnings on exact draws", (long long)res.n_warnings);
  CHECK(isfinite(dg->rhat_max) && dg->rhat_max < 1.01 && dg->rhat_where >= -1 &&
            dg->rhat_where < d, "rhat_max = %g at %lld", dg->rhat_max,
        (long long)dg->rhat_where);
  CHECK(dg->ess_bulk_min > 100 && dg->ess_tail_min > 100, "ESS %g, %g",
        dg->ess_bulk_min, dg->ess_tail_min);
  CHECK(isfinite(dg->pareto_k_q) && isfinite(dg->pareto_k_p) &&
            dg->pareto_k_threshold > 0.6 && dg->pareto_k_threshold <= 0.7, "Pareto k %g %g threshold %g",
        dg->pareto_k_q, dg->pareto_k_p, dg->pareto_k_threshold);
  CHECK(fabs(dg->crossfit_z) < 4 && dg->consistency_z < 4, "z %g %g",
        dg->crossfit_z, dg->consistency_z);
  CHECK(dg->spot_checked == 0 && dg->n_stuck_chains == 0 && dg->stuck_chain == -1,
        "spot %lld stuck %lld", (long long)dg->spot_checked,
        (long long)dg->n_stuck_chains);

  /* ABI version 3: the warnings about the draws come first, info is a
   * separate list (empty here). */
  CHECK(res.n_sampler_warnings == 0 && res.n_info == 0 && res.info == NULL,
        "sampler warnings %lld, info %lld", (long long)res.n_sampler_warnings,
        (long long)res.n_info);

  /* A caller built against ABI version 1, 2 or 3 passes the old, shorter
   * struct: the library fills it and writes nothing past it (no report,
   * which that caller could not free). */
  const size_t old_sizes[3] = {GBS_RESULT_SIZE_V1, GBS_RESULT_SIZE_V2, GBS_RESULT_SIZE_V3};
  for (int v = 0; v < 3; v++) {
    unsigned char buf[sizeof(gbs_result) + 64];
    memset(buf, 0xAB, sizeof buf);
    gbs_result *old = (gbs_result *)buf;
    old->size = old_sizes[v];
    CHECK(old_sizes[v] < sizeof(gbs_result), "V%d size %zu", v + 1, old_sizes[v]);
    CHECK_OK(gbs_evidence(funnel_logp, NULL, x, 1, n, d, NULL, &opt, old, NULL,
                          0, &err));
    CHECK(old->logz == res.logz && old->n_q == res.n_q,
          "old-size result: %.17g, %lld", old->logz, (long long)old->n_q);
    for (size_t i = old_sizes[v]; i < sizeof buf; i++)
      if (buf[i] != 0xAB) {
        CHECK(0, "byte %zu past the ABI %d result was written", i, v + 1);
        break;
      }
    gbs_free_warnings(old->warnings);
    if (v == 2) gbs_free_warnings(old->info);
  }
  /* ABI version 2's struct ends before the coverage fields of
   * diagnostics: filled up to there, nothing written past it. */
  {
    unsigned char buf[sizeof(gbs_result) + 64];
    memset(buf, 0xAB, sizeof buf);
    gbs_result *old = (gbs_result *)buf;
    old->size = GBS_RESULT_SIZE_V2;
    CHECK(GBS_RESULT_SIZE_V1 < GBS_RESULT_SIZE_V2 && GBS_RESULT_SIZE_V2 < sizeof(gbs_result),
          "V2 size %zu", (size_t)GBS_RESULT_SIZE_V2);
    CHECK_OK(gbs_evidence(funnel_logp, NULL, x, 1, n, d, NULL, &opt, old, NULL,
                          0, &err));
    CHECK(old->logz == res.logz && old->diagnostics.crossfit_z == res.diagnostics.crossfit_z,
          "V2-size result: %.17g", old->logz);
    for (size_t i = GBS_RESULT_SIZE_V2; i < sizeof buf; i++)
      if (buf[i] != 0xAB) {
        CHECK(0, "byte %zu past the ABI 2 result was written", i);
        break;
      }
    gbs_free_warnings(old->warnings);
  }
  /* The coverage check (ABI version 3): on by default, silent on exact
   * draws, its calls counted in ncall; off, it spends nothing. */
  CHECK(dg->coverage_calls > 0 && dg->coverage_calls <= res.n_q / 10 + 2 &&
            res.ncall == n + res.n_q + dg->coverage_calls &&
            dg->coverage_frac <= dg->coverage_limit,
        "coverage: %lld calls, n_q %lld, ncall %lld, fraction %g, limit %g",
        (long long)dg->coverage_calls, (long long)res.n_q, (long long)res.ncall,
        dg->coverage_frac, dg->coverage_limit);
  {
    gbs_evidence_options off = opt;
    off.coverage_check = GBS_COVERAGE_CHECK_OFF;
    gbs_result r2 = {sizeof r2};
    CHECK_OK(gbs_evidence(funnel_logp, NULL, x, 1, n, d, NULL, &off, &r2, NULL,
                          0, &err));
    CHECK(r2.diagnostics.coverage_calls == 0 && isnan(r2.diagnostics.coverage_frac) &&
              r2.ncall == n + r2.n_q && r2.logz == res.logz,
          "coverage off: %lld calls, ncall %lld, ln Z %.17g vs %.17g",
          (long long)r2.diagnostics.coverage_calls, (long long)r2.ncall, r2.logz, res.logz);
    gbs_result_free(&r2);
    off.coverage_check = 2;
    char *e2 = NULL;
    CHECK(gbs_evidence(funnel_logp, NULL, x, 1, n, d, NULL, &off, &r2, NULL, 0,
                       &e2) == GBS_ERR_ARGUMENT, "coverage_check = 2 accepted");
    gbs_free_error(e2);
  }
  /* The annealed bridge: auto leaves these draws to the direct bridge
   * (off gives the same bits), on anneals and says so in info, counting its
   * calls; an unknown code is an argument error, and a struct from the
   * header before the field (its size ends at coverage_check) means auto. */
  {
    gbs_evidence_options a = opt;
    a.anneal = GBS_ANNEAL_OFF;
    gbs_result r2 = {sizeof r2};
    CHECK_OK(gbs_evidence(funnel_logp, NULL, x, 1, n, d, NULL, &a, &r2, NULL,
                          0, &err));
    CHECK(r2.logz == res.logz, "anneal off: %.17g vs auto %.17g", r2.logz, res.logz);
    gbs_result_free(&r2);
    a.anneal = GBS_ANNEAL_ON;
    CHECK_OK(gbs_evidence(funnel_logp, NULL, x, 1, n, d, NULL, &a, &r2, NULL,
                          0, &err));
    int annealed = 0;
    for (int64_t i = 0; i < r2.n_info; i++)
      annealed |= strstr(r2.info[i], "annealed bridge used") != NULL;
    CHECK(annealed && r2.ncall > res.ncall && fabs(r2.logz - FUNNEL_LOGZ) < 4 * r2.logzerr,
          "anneal on: info %d, ncall %lld vs %lld, ln Z %g +/- %g", annealed,
          (long long)r2.ncall, (long long)res.ncall, r2.logz, r2.logzerr);
    gbs_result_free(&r2);
    a.anneal = 3;
    char *e2 = NULL;
    CHECK(gbs_evidence(funnel_logp, NULL, x, 1, n, d, NULL, &a, &r2, NULL, 0,
                       &e2) == GBS_ERR_ARGUMENT && e2 && strstr(e2, "anneal"),
          "anneal = 3: %s", e2 ? e2 : "accepted");
    gbs_free_error(e2);
    a.anneal = GBS_ANNEAL_ON; /* past the old size: must be ignored */
    a.size = offsetof(gbs_evidence_options, anneal);
    CHECK_OK(gbs_evidence(funnel_logp, NULL, x, 1, n, d, NULL, &a, &r2, NULL,
                          0, &err));
    CHECK(r2.logz == res.logz, "old-size options: %.17g vs %.17g", r2.logz, res.logz);
    gbs_result_free(&r2);
  }
  CHECK(gbs_abi_version() == GBS_ABI_VERSION && GBS_ABI_VERSION >= 3,
        "ABI version %d", gbs_abi_version());

  /* Same seed, same answer; known log p gives the same answer too, with
   * fewer callback evaluations. */
  gbs_result again = {sizeof again};
  CHECK_OK(gbs_evidence(funnel_logp, NULL, x, 1, n, d, NULL, &opt, &again,
                        NULL, 0, &err));
  CHECK(again.logz == res.logz, "not reproducible: %.17g vs %.17g", again.logz,
        res.logz);
  gbs_result_free(&again);
  double *lp = malloc(sizeof(double) * n);
  /* Through the same out-of-line function the library calls: a copy
   * inlined here may be contracted differently (FMA on aarch64) and differ
   * in the last bits, and then so would ln Z. */
  gbs_log_density_fn volatile same_logp = funnel_logp;
  same_logp(x, n, d, lp, NULL);
  CHECK_OK(gbs_evidence(funnel_logp, NULL, x, 1, n, d, lp, &opt, &again, NULL,
                        0, &err));
  CHECK(again.logz == res.logz, "known log p changed ln Z: %.17g vs %.17g",
        again.logz, res.logz);
  CHECK(again.ncall < res.ncall, "ncall %lld with known log p, %lld without",
        (long long)again.ncall, (long long)res.ncall);
  gbs_result_free(&again);
  CHECK(again.diagnostics.spot_checked == 32 && again.diagnostics.spot_max_diff < 1e-9,
        "spot-check of known log p: %lld draws, max diff %g",
        (long long)again.diagnostics.spot_checked, again.diagnostics.spot_max_diff);

  /* Stored log p shifted by +10: an error naming the mismatch. */
  for (int64_t i = 0; i < n; i++) lp[i] += 10;
  char *msg = NULL;
  int st = gbs_evidence(funnel_logp, NULL, x, 1, n, d, lp, &opt, &again, NULL, 0, &msg);
  CHECK(st == GBS_ERR_FAILED && msg && strstr(msg, "does not match the log density"),
        "shifted log p: status %d, %s", st, msg ? msg : "(no message)");
  gbs_free_error(msg);
  for (int64_t i = 0; i < n; i++) lp[i] -= 10;

  /* One pass, as in the paper: half of the draws are p-draws. */
  opt.cross_fit = GBS_CROSS_FIT_OFF;
  CHECK_OK(gbs_evidence(funnel_logp, NULL, x, 1, n, d, lp, &opt, &again, NULL,
                        0, &err));
  print_result("funnel (no cross-fitting)", &again, FUNNEL_LOGZ);
  check_within(&again, FUNNEL_LOGZ, 0.5);
  CHECK(again.n_p == n / 2, "n_p = %lld without cross-fitting", (long long)again.n_p);
  gbs_result_free(&again);
  opt.cross_fit = GBS_CROSS_FIT_AUTO;

  /* Two chains of n/2 draws (split by chains), concurrent callback. */
  opt.concurrent = 1;
  CHECK_OK(gbs_evidence(funnel_logp, NULL, x, 2, n / 2, d, NULL, &opt, &again,
                        NULL, 0, &err));
  print_result("funnel (2 chains, threads)", &again, FUNNEL_LOGZ);
  check_within(&again, FUNNEL_LOGZ, 0.5);
  gbs_result_free(&again);
  free(lp);
  free(x);
}

static void test_gaussian(void) {
  const double mu[4] = {1, -2, 0.5, 3}, sd[4] = {0.5, 2, 1, 0.1};
  gaussian_target g = {4, 2.5, mu, sd};
  const int64_t n = 2000;
  double *x = malloc(sizeof(double) * n * g.d);
  test_rng rng = rng_new(3);
  gaussian_sample(&g, &rng, x, n);
  static const int methods[] = {GBS_METHOD_BRIDGE, GBS_METHOD_IS,
                                GBS_METHOD_HM, GBS_METHOD_WARP3};
  static const char *names[] = {"gaussian bridge", "gaussian is",
                                "gaussian hm", "gaussian warp3"};
  for (int m = 0; m < 4; m++) {
    gbs_evidence_options opt = {sizeof opt};
    opt.method = methods[m];
    opt.independent = 1;
    opt.seed = 11;
    gbs_result res = {sizeof res};
    CHECK_OK(gbs_evidence(gaussian_logp, &g, x, 1, n, g.d, NULL, &opt, &res,
                          NULL, 0, &err));
    print_result(names[m], &res, g.c);
    check_within(&res, g.c, 0.2);
    CHECK(res.method == methods[m], "method %d, want %d", res.method,
          methods[m]);
    gbs_result_free(&res);
  }
  free(x);
}

static int log_messages = 0;
static void count_log(const char *msg, void *user) {
  (void)msg;
  (*(int *)user)++;
}

static void test_log_callback(void) {
  const double mu[2] = {0, 0}, sd[2] = {1, 1};
  gaussian_target g = {2, 0, mu, sd};
  double x[2 * 500];
  test_rng rng = rng_new(5);
  gaussian_sample(&g, &rng, x, 500);
  CHECK_OK(gbs_set_log_callback(count_log, &log_messages, &err));
  gbs_evidence_options opt = {sizeof opt};
  opt.independent = 1;
  gbs_result res = {sizeof res};
  CHECK_OK(gbs_evidence(gaussian_logp, &g, x, 1, 500, 2, NULL, &opt, &res,
                        NULL, 0, &err));
  CHECK(log_messages == 0, "%d messages without verbose", log_messages);
  gbs_result_free(&res);
  opt.verbose = 1;
  CHECK_OK(gbs_evidence(gaussian_logp, &g, x, 1, 500, 2, NULL, &opt, &res,
                        NULL, 0, &err));
  gbs_result_free(&res);
  CHECK(log_messages > 0, "no message reached the log callback");
  CHECK_OK(gbs_set_log_callback(NULL, NULL, &err));
  printf("log callback: %d messages\n", log_messages);
}

static void test_nuts_pipeline(void) {
  const double mu[3] = {1, 2, 3}, sd[3] = {1, 0.5, 2};
  gaussian_target g = {3, -1.25, mu, sd};
  const int64_t chains = 4, draws = 1000, d = 3;
  gbs_nuts_options nopt = {sizeof nopt};
  nopt.seed = 1;
  nopt.warmup = 500;
  nopt.concurrent = 1;
  nopt.target_accept = 0.9; /* set: the pipeline's default (0.95) differs */
  double *x = malloc(sizeof(double) * chains * draws * d);
  double *lp = malloc(sizeof(double) * chains * draws);
  gbs_nuts_chain_stats stats[4];
  for (int c = 0; c < 4; c++) stats[c].size = sizeof stats[c];
  CHECK_OK(gbs_nuts_sample(gaussian_logp_grad, &g, d, chains, draws, &nopt, x,
                           lp, stats, &err));
  double mean = 0;
  for (int64_t i = 0; i < chains * draws; i++) mean += x[i * d + 1];
  mean /= (double)(chains * draws);
  CHECK(fabs(mean - 2) < 0.1, "NUTS mean of x2 = %g, want 2", mean);
  CHECK(lp[17] == gaussian_logp_point(&g, x + 17 * d), "log p of a draw");
  for (int c = 0; c < 4; c++)
    CHECK(stats[c].step_size > 0 && stats[c].grad_calls > 0 &&
              stats[c].mean_accept > 0.5,
          "chain %d stats: step %g, grad calls %lld, accept %g", c,
          stats[c].step_size, (long long)stats[c].grad_calls,
          stats[c].mean_accept);

  /* the pipeline gives the same draws, then ln Z */
  double *x2 = malloc(sizeof(double) * chains * draws * d);
  gbs_result res = {sizeof res};
  CHECK_OK(gbs_nuts_evidence(gaussian_logp_grad, &g, d, chains, draws, &nopt,
                             NULL, &res, NULL, 0, x2, NULL, NULL, &err));
  CHECK(memcmp(x, x2, sizeof(double) * chains * draws * d) == 0,
        "pipeline draws differ from gbs_nuts_sample's");
  print_result("gaussian NUTS pipeline", &res, g.c);
  check_within(&res, g.c, 0.2);
  /* The report (ABI version 4) holds the run's draws and what the sampler
   * did. */
  gbs_sampling smp = {sizeof smp};
  CHECK_OK(gbs_report_sampling(res.report, &smp, &err));
  CHECK(smp.n_chains == chains && smp.n_draws == draws && smp.d == d && smp.grad_calls > 0,
        "sampling: %lld x %lld x %lld, %lld gradient calls", (long long)smp.n_chains,
        (long long)smp.n_draws, (long long)smp.d, (long long)smp.grad_calls);
  double *x3 = malloc(sizeof(double) * chains * draws * d);
  gbs_nuts_chain_stats st3[4];
  for (int c = 0; c < 4; c++) st3[c].size = sizeof st3[c];
  CHECK_OK(gbs_report_draws(res.report, x3, NULL, st3, &err));
  CHECK(memcmp(x, x3, sizeof(double) * chains * draws * d) == 0 &&
            st3[2].grad_calls == stats[2].grad_calls,
        "the report's draws differ from gbs_nuts_sample's");
  free(x3);
  gbs_result_free(&res);
  CHECK(res.report == NULL && res.warnings == NULL && res.info == NULL,
        "gbs_result_free left pointers set");
  free(x);
  free(x2);
  free(lp);
}

/* Draws of one density passed with the log density of another: the
 * report's findings carry the consistency check's code, and every code
 * has its description. */
static void test_findings(void) {
  const double mu[2] = {0, 0}, sd[2] = {1, 1}, shifted[2] = {3, 3};
  gaussian_target g = {2, 0, mu, sd}, draws_of = {2, 0, shifted, sd};
  const int64_t n = 4000, d = 2;
  double *x = malloc(sizeof(double) * n * d);
  test_rng rng = rng_new(11);
  gaussian_sample(&draws_of, &rng, x, n);
  gbs_evidence_options opt = {sizeof opt};
  opt.independent = 1;
  opt.seed = 3;
  const char *names[2] = {"alpha", "beta"};
  opt.names = names;
  gbs_result res = {sizeof res};
  CHECK_OK(gbs_evidence(gaussian_logp, &g, x, 4, n / 4, d, NULL, &opt, &res, NULL, 0, &err));
  int64_t nf = 0;
  CHECK_OK(gbs_report_n_findings(res.report, &nf, &err));
  int consistency = 0;
  for (int64_t i = 0; i < nf; i++) {
    gbs_finding f = {sizeof f};
    CHECK_OK(gbs_report_finding(res.report, i, &f, &err));
    gbs_check_info info = {sizeof info};
    CHECK_OK(gbs_check_get_info(f.check, &info, &err));
    printf("  finding %lld: %s (%s, kind %d): %.60s...\n", (long long)i, info.id, info.title,
           f.kind, f.message);
    if (f.check == GBS_CHECK_CONSISTENCY)
      consistency = f.kind == GBS_KIND_ESTIMATE && f.value > f.limit;
  }
  CHECK(consistency, "no consistency warning among %lld findings", (long long)nf);
  CHECK(res.n_warnings > 0 && res.n_warnings <= nf, "%lld warnings, %lld findings",
        (long long)res.n_warnings, (long long)nf);
  int64_t ncodes = 0;
  CHECK_OK(gbs_checks(NULL, 0, &ncodes, &err));
  CHECK(ncodes >= GBS_CHECK_STAN_REWRITE, "%lld check codes", (long long)ncodes);
  gbs_result_free(&res);
  free(x);
}

/* What bindings read instead of copying the library: the plan of log-density
 * calls (equal to ncall when n_q is set), draws from the fitted proposal, and
 * the diagnostics' summary text. */
static void test_binding_helpers(void) {
  const int64_t n = 2000, d = FUNNEL_D;
  double *x = malloc(sizeof(double) * n * d);
  test_rng rng = rng_new(43);
  funnel_sample(&rng, x, n, d);
  gbs_evidence_options opt;
  memset(&opt, 0, sizeof opt);
  opt.size = sizeof opt;
  opt.independent = 1;
  opt.seed = 11;
  opt.n_q = 1000;
  for (int method = GBS_METHOD_BRIDGE; method <= GBS_METHOD_WARP3; method++) {
    opt.method = method;
    int64_t planned = -1, extra = -1;
    CHECK_OK(gbs_evidence_plan(4, n / 4, d, 0, &opt, &planned, &extra, &err));
    gbs_result res = {sizeof res};
    CHECK_OK(gbs_evidence(funnel_logp, NULL, x, 4, n / 4, d, NULL, &opt, &res,
                          NULL, 0, &err));
    CHECK(planned == res.ncall && extra == 0,
          "method %d: planned %lld (+%lld), ncall %lld", method,
          (long long)planned, (long long)extra, (long long)res.ncall);
    gbs_result_free(&res);
  }
  opt.method = GBS_METHOD_BRIDGE;

  int64_t planned = 0;
  char *msg = NULL;
  CHECK(gbs_evidence_plan(0, n, d, 0, &opt, &planned, NULL, &msg) ==
            GBS_ERR_ARGUMENT && msg && strstr(msg, "n_chains"),
        "n_chains = 0: %s", msg ? msg : "(no message)");
  gbs_free_error(msg);

  /* Proposal draws: reproducible for a seed, another seed other draws, and
   * q's log density at them finite. */
  const int64_t m = 500;
  double *q1 = malloc(sizeof(double) * m * d), *q2 = malloc(sizeof(double) * m * d);
  double *lq = malloc(sizeof(double) * m);
  CHECK_OK(gbs_evidence_proposal_sample(x, 4, n / 4, d, &opt, m, 3, q1, lq, &err));
  CHECK_OK(gbs_evidence_proposal_sample(x, 4, n / 4, d, &opt, m, 3, q2, NULL, &err));
  CHECK(memcmp(q1, q2, sizeof(double) * m * d) == 0, "same seed, other draws");
  CHECK_OK(gbs_evidence_proposal_sample(x, 4, n / 4, d, &opt, m, 4, q2, NULL, &err));
  CHECK(memcmp(q1, q2, sizeof(double) * m * d) != 0, "other seed, same draws");
  int finite = 1;
  for (int64_t i = 0; i < m; i++) finite &= isfinite(lq[i]);
  CHECK(finite, "log q not finite at a proposal draw");
  msg = NULL;
  CHECK(gbs_evidence_proposal_sample(x, 4, n / 4, d, &opt, m, 3, NULL, NULL, &msg) ==
            GBS_ERR_ARGUMENT,
        "x NULL accepted");
  gbs_free_error(msg);

  /* The summary text, sized in two calls. */
  gbs_result res = {sizeof res};
  CHECK_OK(gbs_evidence(funnel_logp, NULL, x, 4, n / 4, d, NULL, &opt, &res,
                        NULL, 0, &err));
  int64_t len = -1;
  CHECK_OK(gbs_diagnostics_summary(&res.diagnostics, NULL, 0, &len, &err));
  char *text = malloc(len + 1);
  msg = NULL;
  CHECK(gbs_diagnostics_summary(&res.diagnostics, text, len, &len, &msg) ==
            GBS_ERR_BUFFER_TOO_SMALL,
        "no room for the NUL accepted");
  gbs_free_error(msg);
  CHECK_OK(gbs_diagnostics_summary(&res.diagnostics, text, len + 1, &len, &err));
  CHECK(strlen(text) == (size_t)len && strstr(text, "R-hat") && strstr(text, "Pareto k-hat"),
        "summary \"%s\"", text);
  printf("  diagnostics: %s\n", text);
  free(text);
  gbs_result_free(&res);
  free(lq);
  free(q2);
  free(q1);
  free(x);
}

int main(void) {
  CHECK(gbs_abi_version() == GBS_ABI_VERSION, "library ABI %d, header %d",
        gbs_abi_version(), GBS_ABI_VERSION);
  printf("libgbs %s, ABI %d\n", gbs_version(), gbs_abi_version());
  double t0 = now_seconds();
  test_funnel();
  test_binding_helpers();
  test_gaussian();
  test_log_callback();
  test_nuts_pipeline();
  test_findings();
  CHECK(gbs_debug_live_allocations() == 0, "%lld live allocations at exit",
        (long long)gbs_debug_live_allocations());
  printf("test_evidence: %.1f s\n", now_seconds() - t0);
  return test_summary("test_evidence");
}
