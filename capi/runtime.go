package main

/*
#include "gbs.h"
*/
import "C"

import (
	"fmt"
	"os"
	"runtime"
	"sync"
	"unsafe"
)

// gbs_abi_version and gbs_version are answered in C (forkguard.c), without
// entering Go, so that they work in a forked child too.

// headerVersion is the version of the header's GBS_VERSION_* macros,
// "MAJOR.MINOR.PATCH", the string gbs_version returns.
func headerVersion() string {
	return fmt.Sprintf("%d.%d.%d", C.GBS_VERSION_MAJOR, C.GBS_VERSION_MINOR, C.GBS_VERSION_PATCH)
}

//export gbsgo_set_threads
func gbsgo_set_threads(n C.int32_t, previous *C.int32_t, errOut **C.char) C.int {
	return call("gbs_set_threads", errOut, func() error {
		if n < 0 {
			return argError("n = %d is negative (0 queries, > 0 sets)", int32(n))
		}
		prev := runtime.GOMAXPROCS(int(n))
		if previous != nil {
			*previous = C.int32_t(prev)
		}
		return nil
	})
}

// logSink is the destination of progress messages set by
// gbs_set_log_callback; a nil fn means stderr. mu also serializes the
// messages, so the callback is never called twice at once.
var logSink struct {
	mu   sync.Mutex
	fn   C.gbs_log_fn
	user uintptr
}

//export gbsgo_set_log_callback
func gbsgo_set_log_callback(fn C.gbs_log_fn, user unsafe.Pointer, errOut **C.char) C.int {
	u := uintptr(user)
	return call("gbs_set_log_callback", errOut, func() error {
		logSink.mu.Lock()
		logSink.fn, logSink.user = fn, u
		logSink.mu.Unlock()
		return nil
	})
}

// logMessage sends one message to the log sink.
func logMessage(msg string) {
	logSink.mu.Lock()
	defer logSink.mu.Unlock()
	if logSink.fn == nil {
		os.Stderr.WriteString(msg + "\n")
		return
	}
	callLog(logSink.fn, logSink.user, msg)
}

// logger returns the Go Log function for a call with the given verbose
// option: nil (discard) unless verbose is set.
func logger(verbose C.int32_t) func(string) {
	if verbose == 0 {
		return nil
	}
	return logMessage
}
