/* Shared helpers of the C and C++ tests of libgbs: a seeded random number
 * generator, the 16-d funnel and a Gaussian target (log densities and
 * exact samplers), and check macros.  Header-only (static functions). */
#ifndef GBS_TEST_COMMON_H
#define GBS_TEST_COMMON_H

#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L /* clock_gettime, nanosleep */
#endif

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <gbs.h>

#ifdef __cplusplus
extern "C" {
#endif

static int test_failures = 0;

/* CHECK(cond, fmt, ...) reports a failure and continues. */
#define CHECK(cond, ...)                                                     \
  do {                                                                       \
    if (!(cond)) {                                                           \
      test_failures++;                                                       \
      fprintf(stderr, "FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond);        \
      fprintf(stderr, __VA_ARGS__);                                          \
      fprintf(stderr, "\n");                                                 \
    }                                                                        \
  } while (0)

/* CHECK_OK(call) checks that a gbs call returns GBS_OK, printing and freeing
 * the error message otherwise.  The call's last argument must be &err. */
#define CHECK_OK(call)                                                       \
  do {                                                                       \
    char *err = NULL;                                                        \
    int st_ = (call);                                                        \
    if (st_ != GBS_OK) {                                                     \
      test_failures++;                                                       \
      fprintf(stderr, "FAIL %s:%d: %s returned %d: %s\n", __FILE__,          \
              __LINE__, #call, st_, err ? err : "(no message)");             \
    }                                                                        \
    gbs_free_error(err);                                                     \
  } while (0)

static inline int test_summary(const char *name) {
  if (test_failures) {
    fprintf(stderr, "%s: %d check(s) FAILED\n", name, test_failures);
    return 1;
  }
  printf("%s: all checks passed\n", name);
  return 0;
}

static inline double now_seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* --- random numbers: splitmix64, uniforms, Box-Muller normals ---------- */

typedef struct {
  uint64_t s;
  int has_spare;
  double spare;
} test_rng;

static inline test_rng rng_new(uint64_t seed) {
  test_rng r;
  r.s = seed;
  r.has_spare = 0;
  r.spare = 0;
  return r;
}

static inline uint64_t rng_next(test_rng *r) {
  uint64_t z = (r->s += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

/* uniform in (0, 1) */
static inline double rng_uniform(test_rng *r) {
  return ((double)(rng_next(r) >> 11) + 0.5) * (1.0 / 9007199254740992.0);
}

static inline double rng_normal(test_rng *r) {
  if (r->has_spare) {
    r->has_spare = 0;
    return r->spare;
  }
  double u = rng_uniform(r), v = rng_uniform(r);
  double rad = sqrt(-2.0 * log(u));
  r->spare = rad * sin(6.283185307179586477 * v);
  r->has_spare = 1;
  return rad * cos(6.283185307179586477 * v);
}

/* --- the funnel of docs/problems.md ----------------------------------- */

#define FUNNEL_D 16
#define FUNNEL_LOGZ (-63.498811)
#define FUNNEL_X1_BOUND 4.0
#define FUNNEL_BOUND 30.0

/* log N(x1; 0, 1) + sum_{i>=2} log N(x_i; 0, sd = exp(x1)) + log prior, with
 * the flat prior x1 in (-4, 4), x_i in (-30, 30); -inf outside. */
static inline double funnel_logp_point(const double *x, int64_t d) {
  const double half_log_2pi = 0.91893853320467274178;
  if (!(fabs(x[0]) < FUNNEL_X1_BOUND)) return -INFINITY;
  double lp = -0.5 * x[0] * x[0] - half_log_2pi;
  double inv_var = exp(-2.0 * x[0]);
  for (int64_t i = 1; i < d; i++) {
    if (!(fabs(x[i]) < FUNNEL_BOUND)) return -INFINITY;
    lp += -0.5 * x[i] * x[i] * inv_var - x[0] - half_log_2pi;
  }
  return lp - log(2.0 * FUNNEL_X1_BOUND) - (double)(d - 1) * log(2.0 * FUNNEL_BOUND);
}

/* gbs_log_density_fn for the funnel; user is unused. */
static inline int funnel_logp(const double *x, int64_t n, int64_t d, double *logp,
                       void *user) {
  (void)user;
  for (int64_t i = 0; i < n; i++) logp[i] = funnel_logp_point(x + i * d, d);
  return 0;
}

/* Exact draws: x1 ~ N(0,1), x_i ~ N(0, exp(x1)); the whole vector is drawn
 * again when any coordinate leaves the box. */
static inline void funnel_sample(test_rng *r, double *x, int64_t n, int64_t d) {
  for (int64_t k = 0; k < n; k++) {
    double *p = x + k * d;
    for (;;) {
      int ok = 1;
      p[0] = rng_normal(r);
      if (!(fabs(p[0]) < FUNNEL_X1_BOUND)) ok = 0;
      double sd = exp(p[0]);
      for (int64_t i = 1; i < d; i++) {
        p[i] = sd * rng_normal(r);
        if (!(fabs(p[i]) < FUNNEL_BOUND)) ok = 0;
      }
      if (ok) break;
    }
  }
}

/* --- a Gaussian target: p(x) = exp(c) N(x; mu, diag(sd^2)), ln Z = c ------ */

typedef struct {
  int64_t d;
  double c;
  const double *mu, *sd;
} gaussian_target;

static inline double gaussian_logp_point(const gaussian_target *g, const double *x) {
  const double half_log_2pi = 0.91893853320467274178;
  double lp = g->c;
  for (int64_t i = 0; i < g->d; i++) {
    double z = (x[i] - g->mu[i]) / g->sd[i];
    lp += -0.5 * z * z - log(g->sd[i]) - half_log_2pi;
  }
  return lp;
}

/* gbs_log_density_fn; user points to a gaussian_target. */
static inline int gaussian_logp(const double *x, int64_t n, int64_t d, double *logp,
                         void *user) {
  const gaussian_target *g = (const gaussian_target *)user;
  if (d != g->d) return 99;
  for (int64_t i = 0; i < n; i++) logp[i] = gaussian_logp_point(g, x + i * d);
  return 0;
}

/* gbs_log_density_grad_fn; user points to a gaussian_target. */
static inline int gaussian_logp_grad(const double *x, int64_t d, double *logp,
                              double *grad, void *user) {
  const gaussian_target *g = (const gaussian_target *)user;
  if (d != g->d) return 99;
  *logp = gaussian_logp_point(g, x);
  for (int64_t i = 0; i < d; i++)
    grad[i] = -(x[i] - g->mu[i]) / (g->sd[i] * g->sd[i]);
  return 0;
}

static inline void gaussian_sample(const gaussian_target *g, test_rng *r, double *x,
                            int64_t n) {
  for (int64_t k = 0; k < n; k++)
    for (int64_t i = 0; i < g->d; i++)
      x[k * g->d + i] = g->mu[i] + g->sd[i] * rng_normal(r);
}

#ifdef __cplusplus
}
#endif

#endif
