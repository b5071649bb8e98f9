package gbs

import "sync"

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
