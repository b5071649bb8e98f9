package nuts

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
)

// BatchLogDensityGrad evaluates log p and its gradient at n points at
// once: x holds the points row-major (n×d), and the function writes log p
// of point i into lp[i] and its gradient into grad[i*d:(i+1)*d]. As for
// LogDensityGrad, -Inf or NaN marks a point outside the support, and a
// non-nil error aborts sampling. The slices must not be retained after the
// call returns. SampleBatch never calls it concurrently.
type BatchLogDensityGrad func(lp, grad, x []float64) error

// SampleBatch is Sample with a batched density: all chains advance
// together, one leapfrog step at a time, and the points of all chains that
// need an evaluation are evaluated in one call of f. A chain whose
// trajectory has ended starts its next transition while the others still
// build theirs, so every call holds one point of each chain that has not
// finished; a chain that has drawn all its draws leaves the batch.
//
// Each chain still runs its own sampler with its own random stream, and
// the batch only changes where the density is evaluated: if f gives each
// point the value and gradient the per-point function gives, the draws are
// those of Sample with the same settings, bit for bit. Settings.Threads is
// ignored: the chains wait for the batch rather than for a thread.
// Result.Batches counts the calls of f.
func SampleBatch(ctx context.Context, f BatchLogDensityGrad, d int, s *Settings) (*Result, error) {
	if f == nil {
		return nil, errors.New("nuts: nil batch log density")
	}
	return sample(ctx, nil, f, d, s)
}

// batcher gathers one evaluation request from each chain still sampling
// and evaluates them in one call of f: the barrier at which the chains
// meet. The last chain to arrive (or to leave) makes the call, and the
// chains it serves wait on their own channel for the result.
type batcher struct {
	f     BatchLogDensityGrad
	d     int
	x, g  [][]float64 // chain c's point and gradient
	lp    []float64
	ready []chan error

	// Batch buffers, rows in chain order.
	bx, bg, blp []float64

	mu      sync.Mutex
	active  int   // chains that have not left
	waiting []int // chains with a request in this round
	calls   int64
}

func newBatcher(f BatchLogDensityGrad, d, chains int) *batcher {
	b := &batcher{
		f: f, d: d, active: chains,
		x: make([][]float64, chains), g: make([][]float64, chains),
		lp: make([]float64, chains), ready: make([]chan error, chains),
		bx: make([]float64, chains*d), bg: make([]float64, chains*d), blp: make([]float64, chains),
	}
	for c := range chains {
		b.x[c], b.g[c] = make([]float64, d), make([]float64, d)
		b.ready[c] = make(chan error, 1)
	}
	return b
}

// density returns chain c's per-point density, which waits for the batch.
func (b *batcher) density(c int) density {
	return func(grad, x []float64) (float64, error) {
		copy(b.x[c], x)
		b.mu.Lock()
		b.waiting = append(b.waiting, c)
		batch := b.takeLocked()
		b.mu.Unlock()
		if batch != nil {
			b.evaluate(batch)
		}
		err := <-b.ready[c]
		copy(grad, b.g[c])
		return b.lp[c], err
	}
}

// leave removes a chain that will request no more points; if the others
// are all waiting, it evaluates their batch.
func (b *batcher) leave() {
	b.mu.Lock()
	b.active--
	batch := b.takeLocked()
	b.mu.Unlock()
	if batch != nil {
		b.evaluate(batch)
	}
}

// takeLocked returns the round's chains once every active chain is
// waiting, and starts a new round; nil otherwise.
func (b *batcher) takeLocked() []int {
	if len(b.waiting) == 0 || len(b.waiting) < b.active {
		return nil
	}
	batch := b.waiting
	b.waiting = nil
	b.calls++
	return batch
}

// evaluate calls f on the chains' points in chain order, so the batch a
// user's function sees does not depend on the scheduling, and hands each
// chain its result.
func (b *batcher) evaluate(batch []int) {
	slices.Sort(batch)
	n, d := len(batch), b.d
	for i, c := range batch {
		copy(b.bx[i*d:(i+1)*d], b.x[c])
	}
	err := b.f(b.blp[:n], b.bg[:n*d], b.bx[:n*d])
	if err != nil {
		err = fmt.Errorf("batch of %d chains: %w", n, err)
	}
	for i, c := range batch {
		b.lp[c] = b.blp[i]
		copy(b.g[c], b.bg[i*d:(i+1)*d])
		b.ready[c] <- err
	}
}

// forEachChainBatched runs every chain in its own goroutine, as the batch
// needs them all at once, and makes each leave the batch when it stops,
// whatever the reason. The first failure cancels the others through done.
func forEachChainBatched(ctx context.Context, b *batcher, n int, work func(done <-chan struct{}, c int) error) []error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	errs := make([]error, n)
	var wg sync.WaitGroup
	for c := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer b.leave()
			if ctx.Err() != nil {
				errs[c] = errCanceled
				return
			}
			if err := work(ctx.Done(), c); err != nil {
				errs[c] = err
				cancel()
			}
		}()
	}
	wg.Wait()
	return errs
}
