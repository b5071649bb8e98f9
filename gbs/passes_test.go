package gbs

import (
	"context"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
)

// The cross-fitting passes run at once with the library's own proposal
// and one after the other with a caller's: the result, the log-density
// calls and the log messages are the same either way, and a density that
// is not declared Concurrent is never called by both passes at once.
func TestPassesConcurrentAsSequential(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 21))
	g := newGaussTarget(6, 0.5, rng)
	s := &Samples{Dim: 6, Chains: [][]float64{g.draws(6000, rng), g.draws(6000, rng)}}
	run := func(own bool) (*Result, []string, int) {
		var mu sync.Mutex
		var log []string
		inside, most := 0, 0
		logp := func(dst, x []float64) error {
			mu.Lock()
			inside++
			most = max(most, inside)
			mu.Unlock()
			err := g.logp(dst, x)
			mu.Lock()
			inside--
			mu.Unlock()
			return err
		}
		set := &Settings{Seed: 9, BatchSize: 500, Log: func(m string) { log = append(log, m) }}
		if !own {
			set.Proposal = FlowProposal(nil) // the same fit, as a caller's fitter
		}
		res, err := Evidence(context.Background(), logp, s, set)
		if err != nil {
			t.Fatal(err)
		}
		return res, log, most
	}
	a, logA, mostA := run(true)
	b, logB, _ := run(false)
	if a.LogZ != b.LogZ || a.LogZErr != b.LogZErr || a.NQ != b.NQ || a.NCall != b.NCall {
		t.Errorf("passes at once: %v ± %v (n_q %d, %d calls); one after the other: %v ± %v (n_q %d, %d calls)",
			a.LogZ, a.LogZErr, a.NQ, a.NCall, b.LogZ, b.LogZErr, b.NQ, b.NCall)
	}
	if !slices.Equal(logA, logB) {
		t.Errorf("log messages differ:\n%q\n%q", logA, logB)
	}
	if mostA != 1 {
		t.Errorf("the density was called %d times at once without Concurrent", mostA)
	}
}
