// Command capi is the C ABI of gbs. Built with
//
//	go build -buildmode=c-shared -o libgbs.so ./capi
//
// it becomes libgbs.so, whose interface is the hand-written header
// include/gbs.h: every //export gbs_* function here implements one
// function declared there, with the same parameter types (the header's
// const qualifiers aside; `make check-abi` compares the two).
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
