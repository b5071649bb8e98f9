package gbs_test

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"testing"

	"github.com/gbs-evidence/gbs/gbs"
	"github.com/gbs-evidence/gbs/problems"
)

// The census stays quiet on healthy runs: exact draws of the paper's
// bounded problems, of a unimodal Gaussian in its box and of both modes of
// the two-mode problem find no missed mode.
func TestCensusQuiet(t *testing.T) {
	if testing.Short() {
		t.Skip("evidence of the paper's problems")
	}
	gauss := boxedGaussian()
	for _, p := range []*problems.Problem{gauss, problems.TwoModesN(4), problems.Funnel(), problems.Banana(), problems.Cauchy()} {
		x := make([]float64, 20000*p.Dim)
		p.Sample(x, rand.New(rand.NewPCG(11, 0)))
		s := &gbs.Samples{Dim: p.Dim, Chains: [][]float64{x}, Kind: gbs.IndependentDraws}
		res, err := gbs.Evidence(context.Background(), p.LogProbBatch, s, &gbs.Settings{Seed: 11, Lower: p.Lower, Upper: p.Upper, Log: func(m string) {
			if len(m) > 11 && m[:11] == "mode census" {
				t.Log(m)
			}
		}})
		if err != nil {
			t.Fatalf("%s: %v", p.Name, err)
		}
		d := res.Diagnostics
		t.Logf("%s: ln Z %+.2f σ, census %d calls of %d, shortfall %v, %d modes", p.Name, (res.LogZ-p.LogZ)/res.LogZErr, d.CensusCalls, res.NCall, d.CensusShortfall, len(d.CensusModes))
		if len(res.Found(gbs.CheckMissedMode)) > 0 || d.CensusShortfall != 0 {
			t.Errorf("%s: the census found %+v", p.Name, d.CensusModes)
		}
	}
}

// boxedGaussian is a correlated 6-d Gaussian well inside the box
// (-20, 20)^6.
func boxedGaussian() *problems.Problem {
	p := problems.CorrelatedGaussian(6, 3, 0)
	lo, hi := make([]float64, p.Dim), make([]float64, p.Dim)
	for j := range lo {
		lo[j], hi[j] = -20, 20
	}
	inner := p.LogProb
	p.LogProb = func(x []float64) float64 {
		for _, v := range x {
			if !(v > -20 && v < 20) {
				return math.Inf(-1)
			}
		}
		return inner(x)
	}
	p.Lower, p.Upper = lo, hi
	return p
}

// TestMeasureCensusFalseAlarms counts the mode census's findings (every
// one a false alarm) on exact draws of bounded targets with every mode
// visited, laid out as 4 chains of 1000 draws, at seeds no other test
// uses, with the census's log-density calls. Skipped unless GBS_MEASURE
// is set; GBS_REPS sets the seeds per target (default 16):
//
//	GBS_MEASURE=1 GBS_REPS=16 go test -run TestMeasureCensusFalseAlarms -v ./gbs/
func TestMeasureCensusFalseAlarms(t *testing.T) {
	if os.Getenv("GBS_MEASURE") == "" {
		t.Skip("set GBS_MEASURE=1 to run")
	}
	reps := 16
	if v := os.Getenv("GBS_REPS"); v != "" {
		fmt.Sscan(v, &reps)
	}
	const chains, draws = 4, 1000
	for _, p := range []*problems.Problem{boxedGaussian(), problems.TwoModesN(4), problems.Funnel(), problems.Banana(), problems.Cauchy()} {
		found, calls := 0, 0
		for rep := range reps {
			seed := uint64(973000 + rep)
			rng := rand.New(rand.NewPCG(seed, 5))
			s := &gbs.Samples{Dim: p.Dim}
			for range chains {
				x := make([]float64, draws*p.Dim)
				p.Sample(x, rng)
				s.Chains = append(s.Chains, x)
			}
			res, err := gbs.Evidence(context.Background(), p.LogProbBatch, s, &gbs.Settings{Seed: seed, Lower: p.Lower, Upper: p.Upper})
			if err != nil {
				t.Fatalf("%s: %v", p.Name, err)
			}
			if len(res.Found(gbs.CheckMissedMode)) > 0 {
				found++
				t.Logf("%s seed %d: %v", p.Name, seed, res.Found(gbs.CheckMissedMode))
			}
			calls += res.Diagnostics.CensusCalls
		}
		t.Logf("%s: missed-mode findings in %d of %d runs; census calls %d per run", p.Name, found, reps, calls/reps)
	}
}
