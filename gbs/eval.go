package gbs

import (
	"context"
	"fmt"
	"math"
	"runtime"
	"sync"
)

// evaluator calls the user's log density in batches, checks what it
// returns, counts the calls and honours cancellation between batches.
type evaluator struct {
	ctx        context.Context
	f          LogDensityFunc
	d          int
	batch      int
	concurrent bool
	calls      int64
}

// eval writes log p at the row-major points x into dst.
func (e *evaluator) eval(dst, x []float64) error {
	n := len(dst)
	nb := (n + e.batch - 1) / e.batch
	one := func(b int) error {
		if err := e.ctx.Err(); err != nil {
			return err
		}
		lo, hi := b*e.batch, min((b+1)*e.batch, n)
		if err := e.f(dst[lo:hi], x[lo*e.d:hi*e.d]); err != nil {
			return fmt.Errorf("gbs: log-density function failed: %w", err)
		}
		for i, v := range dst[lo:hi] {
			if math.IsNaN(v) || math.IsInf(v, 1) {
				return fmt.Errorf("gbs: log-density function returned %v at point %v", v, x[(lo+i)*e.d:(lo+i+1)*e.d])
			}
		}
		return nil
	}
	e.calls += int64(n)
	if !e.concurrent || nb == 1 {
		for b := 0; b < nb; b++ {
			if err := one(b); err != nil {
				return err
			}
		}
		return nil
	}
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		first error
		next  int
	)
	for w := 0; w < min(runtime.GOMAXPROCS(0), nb); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				mu.Lock()
				b := next
				next++
				stop := first != nil
				mu.Unlock()
				if stop || b >= nb {
					return
				}
				if err := one(b); err != nil {
					mu.Lock()
					if first == nil {
						first = err
					}
					mu.Unlock()
					return
				}
			}
		}()
	}
	wg.Wait()
	return first
}
