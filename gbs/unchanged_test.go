package gbs_test

import (
	"context"
	"math/rand/v2"
	"os"
	"testing"

	"github.com/gbs-evidence/gbs/gbs"
	"github.com/gbs-evidence/gbs/internal/numtest"
	"github.com/gbs-evidence/gbs/problems"
)

// unchangedCase is one evidence call on a paper problem whose ln Z, for a
// fixed seed, was recorded before the diagnostics existed: the checks read
// the draws and draw their own random numbers (spot-check) from a stream of
// their own, so they must not move the estimate.
type unchangedCase struct {
	name   string
	p      *problems.Problem
	chains int  // draws split into this many chains, with their log p given
	iid    bool // independent draws
	want   float64
}

// The recorded values. When the estimator itself changes (not a check),
// record them again with GBS_PRINT_UNCHANGED=1.
var unchangedCases = []unchangedCase{
	{"funnel", problems.Funnel(), 1, true, -63.508501789195492},
	{"banana", problems.Banana(), 1, true, -127.49462117685493},
	{"cauchy", problems.Cauchy(), 1, true, -254.65737098004644},
	{"funnel-8chains-logp", problems.Funnel(), 8, false, -63.508779273525548},
}

func TestEstimateUnchangedByDiagnostics(t *testing.T) {
	if testing.Short() {
		t.Skip("evidence on the paper's problems")
	}
	for _, tc := range unchangedCases {
		p := tc.p
		const n = 4000
		x := make([]float64, n*p.Dim)
		p.Sample(x, rand.New(rand.NewPCG(7, 0)))
		s := &gbs.Samples{Dim: p.Dim, Kind: map[bool]gbs.DrawsKind{false: gbs.MCMCChains, true: gbs.IndependentDraws}[tc.iid]}
		m := n / tc.chains
		for c := 0; c < tc.chains; c++ {
			s.Chains = append(s.Chains, x[c*m*p.Dim:(c+1)*m*p.Dim])
			if tc.chains > 1 {
				lp := make([]float64, m)
				p.LogProbBatch(lp, s.Chains[c])
				s.LogP = append(s.LogP, lp)
			}
		}
		res, err := gbs.Evidence(context.Background(), p.LogProbBatch, s, &gbs.Settings{Seed: 11, Lower: p.Lower, Upper: p.Upper})
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if os.Getenv("GBS_PRINT_UNCHANGED") != "" {
			t.Logf("%s: %.17g", tc.name, res.LogZ)
			continue
		}
		numtest.CheckUnchanged(t, tc.name, res.LogZ, res.LogZErr, tc.want)
		// Exact draws of the reference problems: no false alarm.
		if w := res.Warnings(); len(w) != 0 {
			t.Errorf("%s: warnings on exact draws: %q", tc.name, w)
		}
	}
}
