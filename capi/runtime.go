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

// versionString is gbs_version's static C string, made from the header's
// GBS_VERSION_* macros (the one version number); it is never freed.
var versionString = C.CString(fmt.Sprintf("%d.%d.%d", C.GBS_VERSION_MAJOR, C.GBS_VERSION_MINOR, C.GBS_VERSION_PATCH))

//export gbs_abi_version
func gbs_abi_version() C.int { return C.GBS_ABI_VERSION }

//export gbs_version
func gbs_version() *C.char { return versionString }

//export gbs_set_threads
func gbs_set_threads(n C.int32_t, previous *C.int32_t, errOut **C.char) C.int {
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

//export gbs_set_log_callback
func gbs_set_log_callback(fn C.gbs_log_fn, user unsafe.Pointer, errOut **C.char) C.int {
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
