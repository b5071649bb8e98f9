package nuts

import (
	"context"
	"errors"
	"fmt"
	"iter"
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
// need an evaluation are evaluated in one call of f. The chains run as
// coroutines on the calling goroutine, taking turns between calls of f. A chain whose
// trajectory has ended starts its next transition while the others still
// build theirs, so every call holds one point of each chain that has not
// finished; a chain that has drawn all its draws leaves the batch.
//
// Each chain still runs its own sampler with its own random stream, and
// the batch only changes where the density is evaluated: if f gives each
// point the value and gradient the per-point function gives, the draws are
// those of Sample with the same settings, bit for bit. Settings.Threads is
// ignored: the chains' own work runs on one goroutine, which is cheap next
// to a density worth batching (for a density cheap enough that the
// sampler's own work matters, use Sample with Threads).
// Result.Batches counts the calls of f.
func SampleBatch(ctx context.Context, f BatchLogDensityGrad, d int, s *Settings) (*Result, error) {
	if f == nil {
		return nil, errors.New("nuts: nil batch log density")
	}
	return sample(ctx, nil, f, d, s)
}

// batchRun drives the chains of SampleBatch. Each chain runs as a
// coroutine (iter.Pull) that yields whenever its sampler needs the density
// at a point; one round resumes every chain still sampling until its next
// request, evaluates all requests in one call of f and hands each chain
// its values on the next round. The chains take turns on the caller's
// goroutine: a switch costs far less than waking a goroutine, the user's
// function is always called from the same goroutine, and a panic reaches
// the caller of SampleBatch.
type batchRun struct {
	f     BatchLogDensityGrad
	d     int
	x, g  [][]float64 // chain c's point and gradient
	lp    []float64
	err   []error // the batch's error, handed to each chain of the batch
	calls int64

	// Batch buffers, rows in chain order.
	bx, bg, blp []float64
}

func newBatchRun(f BatchLogDensityGrad, d, chains int) *batchRun {
	b := &batchRun{
		f: f, d: d,
		x: make([][]float64, chains), g: make([][]float64, chains),
		lp: make([]float64, chains), err: make([]error, chains),
		bx: make([]float64, chains*d), bg: make([]float64, chains*d), blp: make([]float64, chains),
	}
	for c := range chains {
		b.x[c], b.g[c] = make([]float64, d), make([]float64, d)
	}
	return b
}

// run runs work for chains 0..n-1 and returns each chain's error. work
// receives the chain's density, which yields to the driver. The first
// failure cancels the others through done.
func (b *batchRun) run(ctx context.Context, n int, work func(done <-chan struct{}, c int, f density) error) []error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	errs := make([]error, n)
	next := make([]func() (struct{}, bool), n)
	for c := range n {
		chain := func(yield func(struct{}) bool) {
			f := func(grad, x []float64) (float64, error) {
				copy(b.x[c], x)
				if !yield(struct{}{}) {
					return 0, errCanceled
				}
				copy(grad, b.g[c])
				return b.lp[c], b.err[c]
			}
			if ctx.Err() != nil {
				errs[c] = errCanceled
				return
			}
			if err := work(ctx.Done(), c, f); err != nil {
				errs[c] = err
				cancel()
			}
		}
		var stop func()
		next[c], stop = iter.Pull(iter.Seq[struct{}](chain))
		defer stop()
	}
	active := make([]int, n)
	for c := range active {
		active[c] = c
	}
	for len(active) > 0 {
		// Resume each chain with its values; keep those that ask again.
		waiting := active[:0]
		for _, c := range active {
			if _, ok := next[c](); ok {
				waiting = append(waiting, c)
			}
		}
		active = waiting
		if len(active) > 0 {
			b.evaluate(active)
		}
	}
	return errs
}

// evaluate calls f on the points of the given chains, in chain order, and
// stores each chain's values and the call's error.
func (b *batchRun) evaluate(chains []int) {
	n, d := len(chains), b.d
	for i, c := range chains {
		copy(b.bx[i*d:(i+1)*d], b.x[c])
	}
	b.calls++
	err := b.f(b.blp[:n], b.bg[:n*d], b.bx[:n*d])
	if err != nil {
		err = fmt.Errorf("batch of %d chains: %w", n, err)
	}
	for i, c := range chains {
		b.lp[c] = b.blp[i]
		copy(b.g[c], b.bg[i*d:(i+1)*d])
		b.err[c] = err
	}
}
