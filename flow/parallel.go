package flow

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"sync"
	"sync/atomic"
)

// chunkRows is the number of rows in one unit of parallel work. It is a
// constant, not a function of the number of threads, so that every
// floating-point reduction is carried out in the same order whatever the
// degree of parallelism: results are bitwise identical for any Threads.
const chunkRows = 256

// numChunks returns the number of chunkRows-row chunks covering n rows.
func numChunks(n int) int { return (n + chunkRows - 1) / chunkRows }

// chunkBounds returns the row range [lo, hi) of chunk c of n rows.
func chunkBounds(c, n int) (lo, hi int) {
	lo = c * chunkRows
	return lo, min(lo+chunkRows, n)
}

// resolveThreads maps the Threads setting to a worker count.
func resolveThreads(t int) int {
	if t <= 0 {
		return runtime.GOMAXPROCS(0)
	}
	return t
}

// parallelFor calls fn(task) for every task in [0, n) on at most threads
// goroutines. Tasks must write to disjoint memory; their order of
// execution is unspecified.
func parallelFor(threads, n int, fn func(task int)) {
	if threads > n {
		threads = n
	}
	if threads <= 1 {
		for i := 0; i < n; i++ {
			fn(i)
		}
		return
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	wg.Add(threads)
	for w := 0; w < threads; w++ {
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= n {
					return
				}
				fn(i)
			}
		}()
	}
	wg.Wait()
}

// unlocked runs fn on a goroutine of its own and waits for it. A caller
// locked to its OS thread (every call from C is: cgo runs it on the C
// thread) would otherwise pay a thread hand-off at each of the fit's
// thousands of parallel joins, a fifth of the fit's time on 2 cores. A
// panic in fn is re-raised in the caller, so that a recover there (the C
// ABI's) still sees it.
func unlocked(fn func() error) error {
	done := make(chan struct{})
	var err error
	var panicked any
	go func() {
		defer close(done)
		defer func() {
			if p := recover(); p != nil {
				panicked = fmt.Sprintf("%v\n%s", p, debug.Stack())
			}
		}()
		err = fn()
	}()
	<-done
	if panicked != nil {
		panic(panicked)
	}
	return err
}
