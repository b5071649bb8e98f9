// Package memlimit checks a planned allocation against the memory the
// process may still use, so that a size given by a user (a number of
// proposal draws, chains × draws, layers × knots) is refused with an error
// that names it instead of ending the process: Go cannot recover from its
// own out-of-memory, and makeslice panics on lengths that overflow.
//
// The memory available is MemAvailable of /proc/meminfo, lowered to what
// the process's memory cgroup (v2 memory.max or v1 memory.limit_in_bytes)
// still allows. Where neither can be read (not Linux), only the overflow
// of the size products is checked.
package memlimit
