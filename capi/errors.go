package main

/*
#include <stdlib.h>
#include "gbs.h"
*/
import "C"

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"sync"
	"unsafe"

	"github.com/gbs-evidence/gbs/internal/memlimit"
)

// apiError is an error detected at the C boundary, with its status code.
type apiError struct {
	code C.int
	msg  string
}

func (e *apiError) Error() string { return e.msg }

func newError(code C.int, format string, args ...any) error {
	return &apiError{code: code, msg: fmt.Sprintf(format, args...)}
}

// argError reports an invalid argument (GBS_ERR_ARGUMENT).
func argError(format string, args ...any) error {
	return newError(C.GBS_ERR_ARGUMENT, format, args...)
}

// callbackError reports a user callback that failed or returned a value
// its contract forbids (GBS_ERR_CALLBACK).
type callbackError struct{ msg string }

func (e *callbackError) Error() string { return e.msg }

func callbackFailed(rc C.int) error {
	return &callbackError{fmt.Sprintf("log-density callback returned error code %d", int(rc))}
}

// statusOf maps an error to its status code.
func statusOf(err error) C.int {
	var ae *apiError
	var ce *callbackError
	var me *memlimit.Error
	switch {
	case errors.As(err, &ae):
		return ae.code
	case errors.As(err, &me):
		return C.GBS_ERR_ARGUMENT
	case errors.As(err, &ce):
		return C.GBS_ERR_CALLBACK
	case errors.Is(err, context.Canceled):
		return C.GBS_ERR_CANCELED
	}
	return C.GBS_ERR_FAILED
}

// messageOf is the text reported for err by the function fn.
func messageOf(fn string, err error) string {
	if statusOf(err) == C.GBS_ERR_CANCELED {
		return fn + ": canceled through the call's gbs_cancel_token"
	}
	return fn + ": " + err.Error()
}

// call runs the body of the exported function fn and returns its status:
// it clears *errOut, recovers any panic (GBS_ERR_INTERNAL) and turns a
// non-nil error into a status and a message in *errOut. Memory faults on
// bad caller pointers become panics too, so they are recovered as well
// when they happen in this goroutine.
func call(fn string, errOut **C.char, body func() error) (status C.int) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if r := recover(); r != nil {
			status = C.GBS_ERR_INTERNAL
			setError(errOut, fmt.Sprintf("%s: internal error (please report): %v\n%s", fn, r, debug.Stack()))
		}
	}()
	if errOut != nil {
		*errOut = nil
	}
	err := body()
	if err == nil {
		return C.GBS_OK
	}
	setError(errOut, messageOf(fn, err))
	return statusOf(err)
}

// setError stores a newly allocated copy of msg in *errOut, if errOut is
// not NULL.
func setError(errOut **C.char, msg string) {
	if errOut == nil {
		return
	}
	*errOut = newCString(msg)
}

// outstanding records the C memory handed to the caller that the caller
// must free (error messages and warning lists), so that the free functions
// ignore pointers they do not know instead of crashing, and so that
// gbs_debug_live_allocations can count them. The keys are the addresses
// xor keyMask, so that a leak checker scanning memory (valgrind) does not
// take the map for a reference and still reports a block the caller never
// freed.
var outstanding = struct {
	sync.Mutex
	strings  map[uintptr]struct{}
	warnings map[uintptr]struct{}
}{strings: map[uintptr]struct{}{}, warnings: map[uintptr]struct{}{}}

const keyMask = 0x5a5a_5a5a_5a5a_5a5a

func keyOf(p unsafe.Pointer) uintptr { return uintptr(p) ^ keyMask }

// newCString returns a malloc'd copy of s, registered for gbs_free_error.
func newCString(s string) *C.char {
	p := C.CString(s)
	outstanding.Lock()
	outstanding.strings[keyOf(unsafe.Pointer(p))] = struct{}{}
	outstanding.Unlock()
	return p
}

// newWarnings returns a malloc'd NULL-terminated array of malloc'd copies
// of ws, registered for gbs_free_warnings, or NULL if ws is empty.
func newWarnings(ws []string) **C.char {
	if len(ws) == 0 {
		return nil
	}
	arr := (**C.char)(C.calloc(C.size_t(len(ws)+1), C.size_t(unsafe.Sizeof((*C.char)(nil)))))
	if arr == nil {
		panic("out of memory allocating warnings")
	}
	elems := unsafe.Slice(arr, len(ws)+1)
	for i, w := range ws {
		elems[i] = C.CString(w)
	}
	outstanding.Lock()
	outstanding.warnings[keyOf(unsafe.Pointer(arr))] = struct{}{}
	outstanding.Unlock()
	return arr
}

//export gbsgo_free_error
func gbsgo_free_error(msg *C.char) {
	_ = call("gbs_free_error", nil, func() error {
		if msg == nil {
			return nil
		}
		key := keyOf(unsafe.Pointer(msg))
		outstanding.Lock()
		_, ok := outstanding.strings[key]
		delete(outstanding.strings, key)
		outstanding.Unlock()
		if ok {
			C.free(unsafe.Pointer(msg))
		}
		return nil
	})
}

//export gbsgo_free_warnings
func gbsgo_free_warnings(ws **C.char) {
	_ = call("gbs_free_warnings", nil, func() error {
		if ws == nil {
			return nil
		}
		key := keyOf(unsafe.Pointer(ws))
		outstanding.Lock()
		_, ok := outstanding.warnings[key]
		delete(outstanding.warnings, key)
		outstanding.Unlock()
		if !ok {
			return nil
		}
		for p := ws; *p != nil; p = (**C.char)(unsafe.Add(unsafe.Pointer(p), unsafe.Sizeof(*p))) {
			C.free(unsafe.Pointer(*p))
		}
		C.free(unsafe.Pointer(ws))
		return nil
	})
}

//export gbsgo_debug_live_allocations
func gbsgo_debug_live_allocations() C.int64_t {
	var n int
	_ = call("gbs_debug_live_allocations", nil, func() error {
		outstanding.Lock()
		n = len(outstanding.strings) + len(outstanding.warnings)
		outstanding.Unlock()
		n += handles.live()
		return nil
	})
	return C.int64_t(n)
}
