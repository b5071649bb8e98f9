/* Cancellation from another thread: a call whose callback is slow is
 * cancelled after about 200 ms and must return GBS_ERR_CANCELED promptly.
 * The latency from gbs_cancel to the return is printed; it is asserted
 * only generously (< 5 s), as a correctness property, not a speed claim. */
#include "common.h"

#include <pthread.h>

static void sleep_ms(double ms) {
  struct timespec ts;
  ts.tv_sec = (time_t)(ms / 1000);
  ts.tv_nsec = (long)((ms - 1000.0 * (double)ts.tv_sec) * 1e6);
  nanosleep(&ts, NULL);
}

/* 20 ms per batch, whatever its size */
static int slow_logp(const double *x, int64_t n, int64_t d, double *logp,
                     void *user) {
  sleep_ms(20);
  return gaussian_logp(x, n, d, logp, user);
}

/* 2 ms per gradient */
static int slow_grad(const double *x, int64_t d, double *logp, double *grad,
                     void *user) {
  sleep_ms(2);
  return gaussian_logp_grad(x, d, logp, grad, user);
}

typedef struct {
  gbs_cancel_token *token;
  double delay_ms;
  double canceled_at;
} canceller;

static void *cancel_later(void *arg) {
  canceller *c = (canceller *)arg;
  sleep_ms(c->delay_ms);
  c->canceled_at = now_seconds();
  CHECK_OK(gbs_cancel(c->token, &err));
  return NULL;
}

static const double mu[3] = {0, 1, 2}, sd[3] = {1, 1, 1};
static gaussian_target g = {3, 0, mu, sd};

/* runs what(token) while another thread cancels token after 200 ms */
static void run_cancelled(const char *name,
                          int (*what)(gbs_cancel_token *, char **)) {
  canceller c = {NULL, 200, 0};
  CHECK_OK(gbs_cancel_token_new(&c.token, &err));
  pthread_t th;
  double t0 = now_seconds();
  pthread_create(&th, NULL, cancel_later, &c);
  char *err = NULL;
  int st = what(c.token, &err);
  double t1 = now_seconds();
  pthread_join(th, NULL);
  double latency = t1 - c.canceled_at;
  printf("%-20s status %d after %.3f s, cancellation latency %.1f ms (%s)\n",
         name, st, t1 - t0, 1e3 * latency, err ? err : "");
  CHECK(st == GBS_ERR_CANCELED, "%s: status %d, want GBS_ERR_CANCELED", name,
        st);
  CHECK(err && strstr(err, "canceled"), "%s: message \"%s\"", name,
        err ? err : "(null)");
  /* GBS_ERR_CANCELED says the call stopped before its end (uncancelled
   * it takes seconds of sleeps); its latency is printed, not bounded: a
   * loaded machine may take seconds to schedule the threads. */
  gbs_free_error(err);
  int32_t canceled = 0;
  CHECK_OK(gbs_cancel_token_canceled(c.token, &canceled, &err));
  CHECK(canceled == 1, "token not marked cancelled");
  CHECK_OK(gbs_cancel_token_free(c.token, &err));
}

static double *samples;
static const int64_t n_samples = 4000;

static int evidence_call(gbs_cancel_token *tok, char **err) {
  gbs_evidence_options opt = {sizeof opt};
  opt.cancel = tok;
  opt.batch_size = 8; /* 4000 / 2 / 8 * 20 ms = 5 s uncancelled */
  gbs_result res = {sizeof res};
  int st = gbs_evidence(slow_logp, &g, samples, 1, n_samples, 3, NULL, &opt,
                        &res, NULL, 0, err);
  gbs_result_free(&res);
  return st;
}

static int concurrent_evidence_call(gbs_cancel_token *tok, char **err) {
  gbs_evidence_options opt = {sizeof opt};
  opt.cancel = tok;
  opt.batch_size = 8;
  opt.concurrent = 1;
  gbs_result res = {sizeof res};
  int st = gbs_evidence(slow_logp, &g, samples, 2, n_samples / 2, 3, NULL,
                        &opt, &res, NULL, 0, err);
  gbs_result_free(&res);
  return st;
}

static int nuts_call(gbs_cancel_token *tok, char **err) {
  gbs_nuts_options opt = {sizeof opt};
  opt.cancel = tok;
  opt.concurrent = 1;
  double *out = malloc(sizeof(double) * 2 * 1000 * 3);
  int st = gbs_nuts_sample(slow_grad, &g, 3, 2, 1000, &opt, out, NULL, NULL,
                           err);
  free(out);
  return st;
}

static int pipeline_call(gbs_cancel_token *tok, char **err) {
  gbs_evidence_options eopt = {sizeof eopt};
  eopt.cancel = tok;
  gbs_result res = {sizeof res};
  int st = gbs_nuts_evidence(slow_grad, &g, 3, 2, 1000, NULL, &eopt, &res,
                             NULL, 0, NULL, NULL, NULL, err);
  gbs_result_free(&res);
  return st;
}

int main(void) {
  samples = malloc(sizeof(double) * n_samples * 3);
  test_rng rng = rng_new(9);
  gaussian_sample(&g, &rng, samples, n_samples);

  run_cancelled("evidence", evidence_call);
  run_cancelled("evidence concurrent", concurrent_evidence_call);
  run_cancelled("nuts", nuts_call);
  run_cancelled("nuts + evidence", pipeline_call);

  /* a token cancelled before the call: the call returns at once */
  gbs_cancel_token *tok = NULL;
  CHECK_OK(gbs_cancel_token_new(&tok, &err));
  CHECK_OK(gbs_cancel(tok, &err));
  CHECK_OK(gbs_cancel(tok, &err)); /* twice is fine */
  double t0 = now_seconds();
  char *err = NULL;
  int st = evidence_call(tok, &err);
  printf("%-20s status %d after %.1f ms\n", "pre-cancelled", st,
         1e3 * (now_seconds() - t0));
  CHECK(st == GBS_ERR_CANCELED, "pre-cancelled: status %d (%s)", st,
        err ? err : "");
  gbs_free_error(err);
  CHECK_OK(gbs_cancel_token_free(tok, &err));

  free(samples);
  CHECK(gbs_debug_live_allocations() == 0, "%lld live allocations at exit",
        (long long)gbs_debug_live_allocations());
  return test_summary("test_cancel");
}
