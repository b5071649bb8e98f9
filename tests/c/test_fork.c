/* A process forked after libgbs was loaded gets GBS_ERR_FORKED from every
 * function instead of hanging (the Go runtime does not survive fork), the
 * message says why, and the parent is unaffected.  alarm() in the child
 * turns a hang into a failure (SIGALRM) instead of a stuck test; how fast
 * the refusals come is not checked (a loaded machine may take seconds),
 * only that they come. */
#define _POSIX_C_SOURCE 200809L
#include "common.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

/* The standard normal; never called in the child (the call is refused first). */
static int normal_logp(const double *x, int64_t n, int64_t d, double *logp, void *user) {
  (void)user;
  for (int64_t i = 0; i < n; i++) {
    double s = 0;
    for (int64_t k = 0; k < d; k++) s += x[i * d + k] * x[i * d + k];
    logp[i] = -0.5 * s - (double)d * 0.91893853320467274178;
  }
  return 0;
}

/* Checks in the child: its exit status is the number of failed checks
 * (capped), 0 if all pass. */
static int child(gbs_flow *flow, const double *x, int64_t n, int64_t d, pid_t parent) {
  alarm(60); /* a hang ends the child with SIGALRM */
  char want[128];
  snprintf(want, sizeof want, "libgbs was loaded in process %ld; this is a forked child %ld",
           (long)parent, (long)getpid());

  char *err = NULL;
  gbs_flow_info info = {sizeof info};
  int st = gbs_flow_get_info(flow, &info, &err);
  CHECK(st == GBS_ERR_FORKED, "gbs_flow_get_info returned %d", st);
  CHECK(err != NULL && strstr(err, want) != NULL, "message: %s", err ? err : "(none)");
  CHECK(err != NULL && strncmp(err, "gbs_flow_get_info: ", 19) == 0, "no function name: %s",
        err ? err : "(none)");
  CHECK(gbs_debug_live_allocations() == 1, "%lld live", (long long)gbs_debug_live_allocations());
  gbs_free_error(err);
  CHECK(gbs_debug_live_allocations() == 0, "%lld live after free",
        (long long)gbs_debug_live_allocations());

  gbs_result res = {sizeof res};
  st = gbs_evidence(normal_logp, NULL, x, 1, n, d, NULL, NULL, &res, NULL, 0, &err);
  CHECK(st == GBS_ERR_FORKED, "gbs_evidence returned %d", st);
  gbs_free_error(err);
  gbs_cancel_token *tok = NULL;
  st = gbs_cancel_token_new(&tok, NULL); /* err may be NULL */
  CHECK(st == GBS_ERR_FORKED && tok == NULL, "gbs_cancel_token_new returned %d", st);
  double lq[4];
  st = gbs_flow_log_prob(flow, x, 4, lq, &err);
  CHECK(st == GBS_ERR_FORKED, "gbs_flow_log_prob returned %d", st);
  gbs_free_error(err);
  st = gbs_flow_free(flow, &err);
  CHECK(st == GBS_ERR_FORKED, "gbs_flow_free returned %d", st);
  gbs_free_error(err);
  /* Not from the fork check: ignored, not freed (nor a crash). */
  char local[8] = "abc";
  gbs_free_error(local);
  gbs_free_warnings((char **)local);
  CHECK(gbs_abi_version() == GBS_ABI_VERSION, "abi %d", gbs_abi_version());
  CHECK(gbs_version() != NULL && gbs_version()[0] != '\0', "no version");
  CHECK(gbs_debug_live_allocations() == 0, "%lld live at exit",
        (long long)gbs_debug_live_allocations());

  alarm(0);
  return test_failures > 100 ? 100 : test_failures;
}

int main(void) {
  const int64_t d = 2, n = 2000;
  test_rng r = rng_new(7);
  double *x = malloc(sizeof(double) * (size_t)(n * d));
  for (int64_t i = 0; i < n * d; i++) x[i] = rng_normal(&r);

  /* The parent uses the library first, so that its runtime has threads. */
  gbs_flow *flow = NULL;
  CHECK_OK(gbs_flow_fit(x, n, d, NULL, NULL, &flow, &err));

  fflush(stdout);
  fflush(stderr);
  pid_t parent = getpid();
  pid_t pid = fork();
  if (pid == 0) _exit(child(flow, x, n, d, parent));
  CHECK(pid > 0, "fork failed");
  int status = 0;
  CHECK(waitpid(pid, &status, 0) == pid, "waitpid");
  if (WIFSIGNALED(status)) {
    CHECK(0, "the child was killed by signal %d%s", WTERMSIG(status),
          WTERMSIG(status) == SIGALRM ? " (SIGALRM: it hung)" : "");
  } else {
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "%d check(s) failed in the child",
          WEXITSTATUS(status));
  }
  if (test_failures == 0) printf("forked child: GBS_ERR_FORKED from every call, no hang\n");

  /* The parent is unaffected. */
  gbs_flow_info info = {sizeof info};
  CHECK_OK(gbs_flow_get_info(flow, &info, &err));
  CHECK(info.dim == d, "dim %lld", (long long)info.dim);
  CHECK_OK(gbs_flow_free(flow, &err));
  free(x);
  CHECK(gbs_debug_live_allocations() == 0, "%lld live allocations at exit",
        (long long)gbs_debug_live_allocations());
  return test_summary("test_fork");
}
