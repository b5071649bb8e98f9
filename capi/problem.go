package main

/*
#include <stdint.h>
#include "gbs.h"
*/
import "C"

import (
	"fmt"
	"math"
	"unsafe"

	"github.com/gbs-evidence/gbs/problems"
)

const problemKind = "gbs_problem"

//export gbsgo_problem_new
func gbsgo_problem_new(name *C.char, out **C.gbs_problem, errOut **C.char) C.int {
	return call("gbs_problem_new", errOut, func() error {
		if out == nil {
			return argError("out is NULL")
		}
		*out = nil
		if name == nil {
			return argError("name is NULL")
		}
		p, err := problems.ByName(C.GoString(name))
		if err != nil {
			return argError("%v", err)
		}
		*out = problemHandle(handles.add(p))
		return nil
	})
}

//export gbsgo_problem_free
func gbsgo_problem_free(problem *C.gbs_problem, errOut **C.char) C.int {
	id := problemID(problem)
	return call("gbs_problem_free", errOut, func() error {
		if id == 0 {
			return nil
		}
		if _, err := lookup[*problems.Problem](id, problemKind); err != nil {
			return err
		}
		return handles.remove(id, problemKind)
	})
}

//export gbsgo_problem_dim
func gbsgo_problem_dim(problem *C.gbs_problem, d *C.int64_t, errOut **C.char) C.int {
	id := problemID(problem)
	return call("gbs_problem_dim", errOut, func() error {
		if d == nil {
			return argError("d is NULL")
		}
		p, err := lookup[*problems.Problem](id, problemKind)
		if err != nil {
			return err
		}
		*d = C.int64_t(p.Dim)
		return nil
	})
}

//export gbsgo_problem_log_z
func gbsgo_problem_log_z(problem *C.gbs_problem, logZ *C.double, errOut **C.char) C.int {
	id := problemID(problem)
	return call("gbs_problem_log_z", errOut, func() error {
		if logZ == nil {
			return argError("log_z is NULL")
		}
		p, err := lookup[*problems.Problem](id, problemKind)
		if err != nil {
			return err
		}
		*logZ = C.double(p.LogZ)
		return nil
	})
}

//export gbsgo_problem_bounds
func gbsgo_problem_bounds(problem *C.gbs_problem, lower, upper *C.double, bounded *C.int32_t, errOut **C.char) C.int {
	id := problemID(problem)
	return call("gbs_problem_bounds", errOut, func() error {
		if bounded == nil {
			return argError("bounded is NULL")
		}
		p, err := lookup[*problems.Problem](id, problemKind)
		if err != nil {
			return err
		}
		lo, hi := p.Lower, p.Upper
		*bounded = 1
		if lo == nil {
			*bounded = 0
			lo, hi = make([]float64, p.Dim), make([]float64, p.Dim)
			for i := range lo {
				lo[i], hi[i] = math.Inf(-1), math.Inf(1)
			}
		}
		if lower != nil {
			copy(unsafe.Slice((*float64)(unsafe.Pointer(lower)), p.Dim), lo)
		}
		if upper != nil {
			copy(unsafe.Slice((*float64)(unsafe.Pointer(upper)), p.Dim), hi)
		}
		return nil
	})
}

// problemOf returns the problem whose handle a density function received
// as its user pointer, checked against the caller's dimension d.
func problemOf(user uintptr, d int) (*problems.Problem, error) {
	p, err := lookup[*problems.Problem](uint64(user), problemKind)
	if err != nil {
		return nil, err
	}
	if d != p.Dim {
		return nil, argError("problem %s has dimension %d, the call d = %d", p.Name, p.Dim, d)
	}
	return p, nil
}

// The density functions are called by C code as callbacks (a program
// passing them to a sampler of its own); the library's own entry points
// do not come here but call the problem directly (nativeGrad,
// nativeBatch). A failure is the status alone: a callback has no message.

//export gbsgo_problem_log_density_grad
func gbsgo_problem_log_density_grad(x *C.double, d C.int64_t, logp, grad *C.double, problem unsafe.Pointer) C.int {
	u := uintptr(problem)
	return call("gbs_problem_log_density_grad", nil, func() error {
		if x == nil || logp == nil || grad == nil {
			return argError("x, logp or grad is NULL")
		}
		p, err := problemOf(u, int(d))
		if err != nil {
			return err
		}
		n := p.Dim
		*logp = C.double(p.LogProbGrad(unsafe.Slice((*float64)(unsafe.Pointer(grad)), n), unsafe.Slice((*float64)(unsafe.Pointer(x)), n)))
		return nil
	})
}

//export gbsgo_problem_log_density
func gbsgo_problem_log_density(x *C.double, n, d C.int64_t, logp *C.double, problem unsafe.Pointer) C.int {
	u := uintptr(problem)
	return call("gbs_problem_log_density", nil, func() error {
		if x == nil || logp == nil {
			return argError("x or logp is NULL")
		}
		if n < 0 {
			return argError("n = %d is negative", int64(n))
		}
		p, err := problemOf(u, int(d))
		if err != nil {
			return err
		}
		if n == 0 {
			return nil
		}
		return p.LogProbBatch(unsafe.Slice((*float64)(unsafe.Pointer(logp)), int(n)), unsafe.Slice((*float64)(unsafe.Pointer(x)), int(n)*p.Dim))
	})
}

// nativeGrad returns the Go form of the library's own problem density
// when f is gbs_problem_log_density_grad, so that a sampler calls the
// problem without leaving Go; ok is false for any other callback. A bad
// handle or dimension gives a density that fails with the reason.
func nativeGrad(f C.gbs_log_density_grad_fn, user uintptr, d int) (func(grad, x []float64) (float64, error), bool) {
	if !isProblemGrad(f) {
		return nil, false
	}
	p, err := problemOf(user, d)
	if err != nil {
		msg := fmt.Sprintf("gbs_problem_log_density_grad: %v", err)
		return func(grad, x []float64) (float64, error) { return 0, &callbackError{msg} }, true
	}
	return func(grad, x []float64) (float64, error) { return p.LogProbGrad(grad, x), nil }, true
}

// nativeBatch is nativeGrad for gbs_problem_log_density.
func nativeBatch(f C.gbs_log_density_fn, user uintptr, d int) (func(dst, x []float64) error, bool) {
	if !isProblemDensity(f) {
		return nil, false
	}
	p, err := problemOf(user, d)
	if err != nil {
		msg := fmt.Sprintf("gbs_problem_log_density: %v", err)
		return func(dst, x []float64) error { return &callbackError{msg} }, true
	}
	return p.LogProbBatch, true
}
