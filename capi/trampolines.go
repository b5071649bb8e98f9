package main

/*
#include <stdint.h>
#include <stdlib.h>
#include "gbs.h"

// Go cannot call a C function pointer: these static trampolines do. The
// user pointer travels through Go as an integer, so that no Go variable of
// pointer type ever holds a foreign value.

static int gbs_call_log_density(gbs_log_density_fn f, double *x, int64_t n,
                                int64_t d, double *logp, uintptr_t user) {
	return f(x, n, d, logp, (void *)user);
}

typedef struct {
	int rc;
	double logp;
} gbs_grad_return;

static gbs_grad_return gbs_call_log_density_grad(gbs_log_density_grad_fn f,
                                                 double *x, int64_t d,
                                                 double *grad, uintptr_t user) {
	gbs_grad_return r = {0, 0.0};
	r.rc = f(x, d, &r.logp, grad, (void *)user);
	return r;
}

static int gbs_call_log_density_grad_batch(gbs_log_density_grad_batch_fn f,
                                           double *x, int64_t n, int64_t d,
                                           double *logp, double *grad,
                                           uintptr_t user) {
	return f(x, n, d, logp, grad, (void *)user);
}

static void gbs_call_log(gbs_log_fn f, char *msg, uintptr_t user) {
	f(msg, (void *)user);
}

// The library's own problem densities (forkguard.c), recognized by address
// so that they are called from Go directly.
extern int gbs_problem_log_density_grad(const double *x, int64_t d, double *logp, double *grad, void *problem);
extern int gbs_problem_log_density(const double *x, int64_t n, int64_t d, double *logp, void *problem);

static int gbs_is_problem_grad(gbs_log_density_grad_fn f) { return f == gbs_problem_log_density_grad; }
static int gbs_is_problem_density(gbs_log_density_fn f) { return f == gbs_problem_log_density; }
*/
import "C"

import (
	"fmt"
	"math"
	"unsafe"
)

// The Go slices handed to the C callbacks hold only float64s, so passing
// them for the duration of the call is allowed by the cgo pointer rules;
// the header tells the callback not to keep them.

func cdoubles(x []float64) *C.double { return (*C.double)(unsafe.Pointer(&x[0])) }

// batchDensity adapts a C batch log density to the Go form. It rejects NaN
// and +Inf values as the callback's error.
func batchDensity(f C.gbs_log_density_fn, user uintptr, d int) func(dst, x []float64) error {
	if g, ok := nativeBatch(f, user, d); ok {
		return g
	}
	return func(dst, x []float64) error {
		n := len(dst)
		if n == 0 {
			return nil
		}
		rc := C.gbs_call_log_density(f, cdoubles(x), C.int64_t(n), C.int64_t(d), cdoubles(dst), C.uintptr_t(user))
		if rc != 0 {
			return callbackFailed(rc)
		}
		for i, v := range dst {
			if math.IsNaN(v) || math.IsInf(v, 1) {
				return &callbackError{fmt.Sprintf("log-density callback returned log p = %v at point %d of a batch of %d, x = %v", v, i, n, x[i*d:(i+1)*d])}
			}
		}
		return nil
	}
}

// gradDensity adapts a C log-density-and-gradient callback to the Go form.
func gradDensity(f C.gbs_log_density_grad_fn, user uintptr, d int) func(grad, x []float64) (float64, error) {
	if g, ok := nativeGrad(f, user, d); ok {
		return g
	}
	return func(grad, x []float64) (float64, error) {
		r := C.gbs_call_log_density_grad(f, cdoubles(x), C.int64_t(len(x)), cdoubles(grad), C.uintptr_t(user))
		if r.rc != 0 {
			return 0, callbackFailed(r.rc)
		}
		return float64(r.logp), nil
	}
}

// gradBatchDensity adapts a C batched log-density-and-gradient callback
// to the Go form.
func gradBatchDensity(f C.gbs_log_density_grad_batch_fn, user uintptr, d int) func(lp, grad, x []float64) error {
	return func(lp, grad, x []float64) error {
		n := len(lp)
		if n == 0 {
			return nil
		}
		rc := C.gbs_call_log_density_grad_batch(f, cdoubles(x), C.int64_t(n), C.int64_t(d), cdoubles(lp), cdoubles(grad), C.uintptr_t(user))
		if rc != 0 {
			return callbackFailed(rc)
		}
		return nil
	}
}

func isProblemGrad(f C.gbs_log_density_grad_fn) bool { return C.gbs_is_problem_grad(f) != 0 }
func isProblemDensity(f C.gbs_log_density_fn) bool   { return C.gbs_is_problem_density(f) != 0 }

// callLog passes msg to the C log callback f.
func callLog(f C.gbs_log_fn, user uintptr, msg string) {
	cs := C.CString(msg)
	defer C.free(unsafe.Pointer(cs))
	C.gbs_call_log(f, cs, C.uintptr_t(user))
}
