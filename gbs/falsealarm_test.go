package gbs

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sort"
	"testing"

	"github.com/gbs-evidence/gbs/problems"
)

// TestMeasureFalseAlarms counts the warnings (and notes) of evidence calls
// on clean exact draws of several targets, at seeds no test or benchmark
// uses, laid out as 4 chains of 1000 draws (the chain checks run; exact
// draws are valid chains) and as 4000 independent draws. Every warning
// here is a false alarm. Skipped unless GBS_MEASURE is set; GBS_REPS sets
// the seeds per target and layout (default 10):
//
//	GBS_MEASURE=1 GBS_REPS=25 go test -run TestMeasureFalseAlarms -v ./gbs/
func TestMeasureFalseAlarms(t *testing.T) {
	reps := measureReps(t, 10)
	targets := []*problems.Problem{
		problems.Gaussian([]float64{1, -1, 0.5, 0}, []float64{1, 0.5, 0, 0, 0.5, 2, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0.25}, 0),
		problems.FunnelN(16), problems.BananaN(32, problems.BananaSeed), problems.CauchyN(48),
	}
	const chains, draws = 4, 1000
	counts := map[string]int{}
	runs := 0
	for _, p := range targets {
		for rep := 0; rep < reps; rep++ {
			// Seeds 910000 + 1000·len(name) + rep: never used elsewhere.
			seed := uint64(910000 + 1000*len(p.Name) + rep)
			rng := rand.New(rand.NewPCG(seed, 23))
			x := make([]float64, chains*draws*p.Dim)
			p.Sample(x, rng)
			for _, indep := range []bool{false, true} {
				s := &Samples{Dim: p.Dim, Kind: map[bool]DrawsKind{false: MCMCChains, true: IndependentDraws}[indep]}
				if indep {
					s.Chains = [][]float64{x}
				} else {
					for c := 0; c < chains; c++ {
						s.Chains = append(s.Chains, x[c*draws*p.Dim:(c+1)*draws*p.Dim])
					}
				}
				res, err := Evidence(context.Background(), p.LogProbBatch, s, &Settings{Seed: seed, Lower: p.Lower, Upper: p.Upper})
				if err != nil {
					t.Fatalf("%s seed %d: %v", p.Name, seed, err)
				}
				runs++
				for _, f := range res.Findings {
					k := fmt.Sprintf("%s (%s)", f.Check, f.Kind)
					counts[k]++
					t.Logf("%s seed %d independent %v: ln Z %+.2f σ: %s: %.200s", p.Name, seed, indep, (res.LogZ-p.LogZ)/res.LogZErr, k, f.Message)
				}
			}
		}
	}
	keys := make([]string, 0, len(counts))
	for k := range counts {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	t.Logf("%d evidence calls on clean exact draws (%d targets × %d seeds × 2 layouts)", runs, len(targets), reps)
	for _, k := range keys {
		t.Logf("  %-28s %d", k, counts[k])
	}
}
