package gbs

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
)

// The cross-fitting passes run at once with the library's own proposal
// and one after the other with a caller's: the result, the log-density
// calls and the log messages are the same either way, and a density that
// is not declared Concurrent sees the same calls in the same order.
func TestPassesConcurrentAsSequential(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 21))
	g := newGaussTarget(6, 0.5, rng)
	s := &Samples{Dim: 6, Chains: [][]float64{g.draws(6000, rng), g.draws(6000, rng)}}
	run := func(own bool) (*Result, []string, []float64) {
		var mu sync.Mutex
		var log []string
		var calls []float64 // the first coordinate of each call's first point
		logp := func(dst, x []float64) error {
			mu.Lock()
			calls = append(calls, x[0])
			mu.Unlock()
			return g.logp(dst, x)
		}
		set := &Settings{Seed: 9, BatchSize: 500, Log: func(m string) { log = append(log, m) }}
		if !own {
			set.Proposal = FlowProposal(nil) // the same fit, as a caller's fitter
		}
		res, err := Evidence(context.Background(), logp, s, set)
		if err != nil {
			t.Fatal(err)
		}
		return res, log, calls
	}
	a, logA, callsA := run(true)
	b, logB, callsB := run(false)
	if a.LogZ != b.LogZ || a.LogZErr != b.LogZErr || a.NQ != b.NQ || a.NCall != b.NCall {
		t.Errorf("passes at once: %v ± %v (n_q %d, %d calls); one after the other: %v ± %v (n_q %d, %d calls)",
			a.LogZ, a.LogZErr, a.NQ, a.NCall, b.LogZ, b.LogZErr, b.NQ, b.NCall)
	}
	if !slices.Equal(logA, logB) {
		t.Errorf("log messages differ:\n%q\n%q", logA, logB)
	}
	if !slices.Equal(callsA, callsB) {
		t.Errorf("the density's calls differ: %d calls with the passes at once, %d one after the other", len(callsA), len(callsB))
	}
}

// A density that fails reports the failure of the first pass's call,
// whichever pass runs first, as with the passes one after the other.
func TestPassesFirstFailure(t *testing.T) {
	rng := rand.New(rand.NewPCG(22, 22))
	g := newGaussTarget(4, 0, rng)
	s := &Samples{Dim: 4, Chains: [][]float64{g.draws(3000, rng), g.draws(3000, rng)}}
	for _, own := range []bool{true, false} {
		var first []float64
		logp := func(dst, x []float64) error {
			if first == nil {
				first = append([]float64(nil), x[:4]...)
			}
			return fmt.Errorf("failed at %v", x[:4])
		}
		set := &Settings{Seed: 3}
		if !own {
			set.Proposal = FlowProposal(nil)
		}
		_, err := Evidence(context.Background(), logp, s, set)
		if err == nil || !strings.Contains(err.Error(), fmt.Sprint(first)) {
			t.Errorf("own proposal %v: error %v, first call at %v", own, err, first)
		}
	}
}
