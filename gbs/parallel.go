package gbs

import (
	"runtime"
	"sync"
	"sync/atomic"
)

// parts is the fixed number of pieces that long loops are cut into. It does
// not depend on GOMAXPROCS, so partial sums add up in the same order and
// results are bitwise reproducible on any machine.
const parts = 4

// minParallel is the loop length below which goroutines cost more than
// they save.
const minParallel = 8192

// forParts calls fn on parts contiguous pieces of [0, n), concurrently when
// n is large.
func forParts(n int, fn func(part, lo, hi int)) {
	if n < minParallel {
		for p := 0; p < parts; p++ {
			fn(p, p*n/parts, (p+1)*n/parts)
		}
		return
	}
	var wg sync.WaitGroup
	for p := 0; p < parts; p++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			fn(p, p*n/parts, (p+1)*n/parts)
		}()
	}
	wg.Wait()
}

// forEach calls fn(sc, i) for every i in [0, n) on up to GOMAXPROCS
// goroutines, each with scratch sc = scratch() of its own. Which goroutine
// handles which i varies, so fn(sc, i) must depend only on i.
func forEach[S any](n int, scratch func() S, fn func(sc S, i int)) {
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), n) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sc := scratch()
			for i := int(next.Add(1)) - 1; i < n; i = int(next.Add(1)) - 1 {
				fn(sc, i)
			}
		}()
	}
	wg.Wait()
}
