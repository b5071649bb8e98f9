/* Flows through handles: fit on exact funnel draws, log q, sampling, the
 * forward/inverse round trip, save/load through a file and a buffer (log q
 * identical afterwards), and misuse of handles and arguments. */
#include "common.h"

int main(void) {
  const int64_t n = 10000, d = FUNNEL_D;
  double *x = malloc(sizeof(double) * n * d);
  double *y = malloc(sizeof(double) * n * d);
  double *z = malloc(sizeof(double) * n * d);
  double *lq = malloc(sizeof(double) * n), *lq2 = malloc(sizeof(double) * n);
  double *ld = malloc(sizeof(double) * n), *ld2 = malloc(sizeof(double) * n);
  test_rng rng = rng_new(21);
  funnel_sample(&rng, x, n, d);
  double lo[FUNNEL_D], hi[FUNNEL_D];
  for (int k = 0; k < d; k++) {
    lo[k] = k == 0 ? -FUNNEL_X1_BOUND : -FUNNEL_BOUND;
    hi[k] = -lo[k];
  }

  gbs_flow_options opt = {sizeof opt};
  opt.seed = 3;
  opt.lower = lo;
  opt.upper = hi;
  gbs_flow *flow = NULL;
  CHECK_OK(gbs_flow_fit(x, n, d, NULL, &opt, &flow, &err));
  gbs_flow_info info = {sizeof info};
  CHECK_OK(gbs_flow_get_info(flow, &info, &err));
  CHECK(info.dim == d && info.layers >= 1, "dim %lld, layers %lld", (long long)info.dim,
        (long long)info.layers);
  CHECK(info.conditional_layers >= 0 && info.conditional_layers <= info.layers, "%lld conditional of %lld layers",
        (long long)info.conditional_layers, (long long)info.layers);
  printf("flow: %lld layers, %lld conditional\n", (long long)info.layers, (long long)info.conditional_layers);

  /* Sliced layers only on request. */
  gbs_flow_options sliced = opt;
  sliced.conditional = GBS_CONDITIONAL_OFF;
  gbs_flow *sflow = NULL;
  CHECK_OK(gbs_flow_fit(x, 2000, d, NULL, &sliced, &sflow, &err));
  gbs_flow_info sinfo = {sizeof sinfo};
  CHECK_OK(gbs_flow_get_info(sflow, &sinfo, &err));
  CHECK(sinfo.layers >= 1 && sinfo.conditional_layers == 0, "GBS_CONDITIONAL_OFF: %lld conditional of %lld layers",
        (long long)sinfo.conditional_layers, (long long)sinfo.layers);
  CHECK_OK(gbs_flow_free(sflow, &err));

  /* No scale layer on request; a struct of the size before the scale
   * field (an older header) is accepted and means the default. */
  gbs_flow_options plain = opt;
  plain.scale = GBS_SCALE_OFF;
  CHECK_OK(gbs_flow_fit(x, 2000, d, NULL, &plain, &sflow, &err));
  CHECK_OK(gbs_flow_free(sflow, &err));
  gbs_flow_options old = opt;
  old.size = offsetof(gbs_flow_options, scale);
  CHECK_OK(gbs_flow_fit(x, 2000, d, NULL, &old, &sflow, &err));
  CHECK_OK(gbs_flow_free(sflow, &err));

  /* Draws lie inside the box and their log q matches gbs_flow_log_prob. */
  CHECK_OK(gbs_flow_sample(flow, n, 7, y, lq, &err));
  CHECK_OK(gbs_flow_log_prob(flow, y, n, lq2, &err));
  int outside = 0, mismatch = 0;
  for (int64_t i = 0; i < n; i++) {
    for (int k = 0; k < d; k++) outside += !(y[i * d + k] > lo[k] && y[i * d + k] < hi[k]);
    mismatch += fabs(lq[i] - lq2[i]) > 1e-8 * (1 + fabs(lq[i]));
  }
  CHECK(outside == 0, "%d coordinates of q's draws outside the box", outside);
  CHECK(mismatch == 0, "%d draws whose sampled log q differs from log_prob", mismatch);

  /* q is normalized and close to p: importance sampling with its draws
   * lands near ln Z. */
  double m = -INFINITY, s = 0;
  for (int64_t i = 0; i < n; i++) m = fmax(m, funnel_logp_point(&y[i * d], d) - lq[i]);
  for (int64_t i = 0; i < n; i++) s += exp(funnel_logp_point(&y[i * d], d) - lq[i] - m);
  double lz = m + log(s / n);
  CHECK(fabs(lz - FUNNEL_LOGZ) < 0.3, "importance sampling with q: ln Z = %g", lz);
  printf("importance sampling with the flow: ln Z = %.4f (exact %.4f)\n", lz, FUNNEL_LOGZ);

  /* forward then inverse returns the points. */
  CHECK_OK(gbs_flow_forward(flow, x, 100, z, ld, &err));
  CHECK_OK(gbs_flow_inverse(flow, z, 100, y, ld2, &err));
  double maxdiff = 0;
  for (int64_t i = 0; i < 100 * d; i++) maxdiff = fmax(maxdiff, fabs(y[i] - x[i]));
  CHECK(maxdiff < 1e-8, "round trip error %g", maxdiff);
  for (int64_t i = 0; i < 100; i++) CHECK(fabs(ld[i] + ld2[i]) < 1e-8, "log det %g + %g", ld[i], ld2[i]);

  /* Save and load: identical log q. */
  const char *path = "test_flow.gbsflow";
  CHECK_OK(gbs_flow_save(flow, path, &err));
  gbs_flow *loaded = NULL;
  CHECK_OK(gbs_flow_load(path, &loaded, &err));
  remove(path);
  CHECK_OK(gbs_flow_log_prob(flow, x, n, lq, &err));
  CHECK_OK(gbs_flow_log_prob(loaded, x, n, lq2, &err));
  CHECK(memcmp(lq, lq2, sizeof(double) * n) == 0, "log q differs after save/load");
  int64_t len = 0;
  CHECK_OK(gbs_flow_to_buffer(flow, NULL, 0, &len, &err));
  char *buf = malloc((size_t)len);
  char *e = NULL;
  CHECK(gbs_flow_to_buffer(flow, buf, len - 1, &len, &e) == GBS_ERR_BUFFER_TOO_SMALL, "small buffer accepted");
  gbs_free_error(e);
  CHECK_OK(gbs_flow_to_buffer(flow, buf, len, &len, &err));
  gbs_flow *copy = NULL;
  CHECK_OK(gbs_flow_from_buffer(buf, len, &copy, &err));
  CHECK_OK(gbs_flow_log_prob(copy, x, n, lq2, &err));
  CHECK(memcmp(lq, lq2, sizeof(double) * n) == 0, "log q differs after a buffer round trip");
  buf[len / 2] ^= 0x5a;
  buf[0] ^= 0x5a;
  gbs_flow *bad = NULL;
  e = NULL;
  CHECK(gbs_flow_from_buffer(buf, len, &bad, &e) == GBS_ERR_FAILED && bad == NULL, "corrupt flow accepted");
  printf("corrupt buffer -> %s\n", e ? e : "(none)");
  gbs_free_error(e);
  free(buf);

  /* Misuse: errors, no crash. */
  e = NULL;
  CHECK(gbs_flow_load("/nonexistent/dir/flow", &bad, &e) == GBS_ERR_IO, "missing file");
  gbs_free_error(e);
  CHECK_OK(gbs_flow_free(loaded, &err));
  CHECK_OK(gbs_flow_free(copy, &err));
  CHECK_OK(gbs_flow_free(flow, &err));
  e = NULL;
  CHECK(gbs_flow_log_prob(flow, x, 1, lq, &e) == GBS_ERR_HANDLE, "freed flow used");
  printf("freed handle -> %s\n", e ? e : "(none)");
  gbs_free_error(e);
  e = NULL;
  CHECK(gbs_flow_fit(x, 1, d, NULL, NULL, &bad, &e) == GBS_ERR_ARGUMENT, "1 point accepted");
  printf("one point -> %s\n", e ? e : "(none)");
  gbs_free_error(e);
  e = NULL;
  CHECK(gbs_flow_fit(NULL, n, d, NULL, NULL, &bad, &e) == GBS_ERR_ARGUMENT, "NULL x accepted");
  gbs_free_error(e);
  e = NULL;
  CHECK(gbs_flow_fit(x, -3, d, NULL, NULL, &bad, &e) == GBS_ERR_ARGUMENT, "negative n accepted");
  gbs_free_error(e);
  gbs_flow_options badopt = {sizeof badopt};
  badopt.conditional = 7;
  e = NULL;
  CHECK(gbs_flow_fit(x, n, d, NULL, &badopt, &bad, &e) == GBS_ERR_ARGUMENT, "conditional = 7 accepted");
  printf("conditional = 7 -> %s\n", e ? e : "(none)");
  gbs_free_error(e);
  badopt.conditional = GBS_CONDITIONAL_AUTO;
  badopt.scale = 2;
  e = NULL;
  CHECK(gbs_flow_fit(x, n, d, NULL, &badopt, &bad, &e) == GBS_ERR_ARGUMENT, "scale = 2 accepted");
  printf("scale = 2 -> %s\n", e ? e : "(none)");
  gbs_free_error(e);
  for (int64_t i = 0; i < n; i++) x[i * d + 3] = 1.0; /* a constant column */
  e = NULL;
  CHECK(gbs_flow_fit(x, n, d, NULL, NULL, &bad, &e) == GBS_ERR_ARGUMENT, "constant column accepted");
  printf("constant column -> %s\n", e ? e : "(none)");
  gbs_free_error(e);
  CHECK(gbs_debug_live_allocations() == 0, "%lld live allocations", (long long)gbs_debug_live_allocations());

  free(x), free(y), free(z), free(lq), free(lq2), free(ld), free(ld2);
  return test_summary("test_flow");
}
