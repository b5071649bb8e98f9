// Package ctest holds C callbacks for the Go tests of the C ABI (package
// capi, whose test files cannot use cgo). It returns them as C function
// pointers, to be converted to the callback types of gbs.h.
package ctest

/*
#include <math.h>
#include <stdint.h>

// Not static: Go takes their addresses, which the linker must resolve.

static const double half_log_2pi = 0.91893853320467274178;

// The standard normal density in d dimensions: ln Z = 0.
int ctest_normal_logp(const double *x, int64_t n, int64_t d, double *logp, void *user) {
	(void)user;
	for (int64_t i = 0; i < n; i++) {
		double s = 0;
		for (int64_t k = 0; k < d; k++) s += x[i * d + k] * x[i * d + k];
		logp[i] = -0.5 * s - (double)d * half_log_2pi;
	}
	return 0;
}

int ctest_normal_logp_grad(const double *x, int64_t d, double *logp, double *grad, void *user) {
	for (int64_t k = 0; k < d; k++) grad[k] = -x[k];
	return ctest_normal_logp(x, 1, d, logp, user);
}

int ctest_failing_logp(const double *x, int64_t n, int64_t d, double *logp, void *user) {
	(void)x, (void)n, (void)d, (void)logp, (void)user;
	return 7;
}

int ctest_nan_logp(const double *x, int64_t n, int64_t d, double *logp, void *user) {
	ctest_normal_logp(x, n, d, logp, user);
	logp[n - 1] = NAN;
	return 0;
}

static int64_t log_calls;

void ctest_count_log(const char *msg, void *user) {
	(void)msg, (void)user;
	log_calls++;
}

static int64_t get_log_calls(void) { return log_calls; }

#include <stdlib.h>
*/
import "C"

import "unsafe"

// NormalLogP is a gbs_log_density_fn of the standard normal (ln Z = 0).
func NormalLogP() unsafe.Pointer { return unsafe.Pointer(C.ctest_normal_logp) }

// NormalLogPGrad is a gbs_log_density_grad_fn of the standard normal.
func NormalLogPGrad() unsafe.Pointer { return unsafe.Pointer(C.ctest_normal_logp_grad) }

// FailingLogP is a gbs_log_density_fn that returns error code 7.
func FailingLogP() unsafe.Pointer { return unsafe.Pointer(C.ctest_failing_logp) }

// NaNLogP is a gbs_log_density_fn that writes NaN at the last point of
// every batch.
func NaNLogP() unsafe.Pointer { return unsafe.Pointer(C.ctest_nan_logp) }

// CountLog is a gbs_log_fn that counts its calls; LogCalls returns the
// count.
func CountLog() unsafe.Pointer { return unsafe.Pointer(C.ctest_count_log) }

// LogCalls returns the number of calls of CountLog so far.
func LogCalls() int64 { return int64(C.get_log_calls()) }

// Buffer returns n zeroed bytes of C memory, never freed: the memory
// behind the array pointers of the fuzz tests, outside the Go heap, so
// that views longer than the buffer (which the argument checks create but
// must not read) are not taken for Go pointers by the garbage collector.
func Buffer(n int) unsafe.Pointer { return C.calloc(C.size_t(n), 1) }
