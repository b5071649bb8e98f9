// Command capi is the C ABI of gbs. Built with
//
//	go build -buildmode=c-shared -o libgbs.so ./capi
//
// it becomes libgbs.so, whose interface is the hand-written header
// include/gbs.h. Every function declared there is defined in C, in
// forkguard.c: it checks that the process is the one that loaded the
// library (a forked child gets GBS_ERR_FORKED instead of a hang, since a Go
// runtime does not survive fork) and then calls the //export gbsgo_*
// function here of the same name and parameter types (the header's const
// qualifiers aside; tests/c/check_abi.sh compares the two).
//
// The package holds no numerics, only translation between C and Go: it
// checks the C arguments, copies C options into Go settings, calls the C
// callbacks through static trampolines (trampolines.go), maps handles to
// Go objects (handles.go) and Go errors to status codes and C strings
// (errors.go). Every exported function runs its body through call, which
// recovers panics, so no Go panic crosses the boundary.
package main

// #cgo CFLAGS: -I${SRCDIR}/../include -DGBS_NO_PROTOTYPES
import "C"

// main is required by -buildmode=c-shared and never runs.
func main() {}
