package gbs_test

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gbs-evidence/gbs/gbs"
	"github.com/gbs-evidence/gbs/problems"
)

// GBS with exact draws of the paper's problems: 10^4 draws fit the flow,
// 10^4 enter the bridge, n_q follows the adaptive rule.
func TestGBSExactDraws(t *testing.T) {
	if testing.Short() {
		t.Skip("slow (the paper's four problems at full size): make test runs it")
	}
	for _, tc := range []struct {
		p        *problems.Problem
		maxSigma float64
	}{
		{problems.Funnel(), 0.03},
		{problems.Banana(), 0.05},
		{problems.Cauchy(), 0.08},
	} {
		p := tc.p
		x := make([]float64, 20000*p.Dim)
		p.Sample(x, rand.New(rand.NewPCG(42, 0)))
		s := &gbs.Samples{Dim: p.Dim, Chains: [][]float64{x}, Kind: gbs.IndependentDraws}
		res, err := gbs.Evidence(context.Background(), p.LogProbBatch, s, &gbs.Settings{Seed: 42, Lower: p.Lower, Upper: p.Upper})
		if err != nil {
			t.Fatalf("%s: %v", p.Name, err)
		}
		dz := res.LogZ - p.LogZ
		t.Logf("%s: ln Z = %.4f ± %.4f, exact %.4f (%+.2f σ), n_q = %d", p.Name, res.LogZ, res.LogZErr, p.LogZ, dz/res.LogZErr, res.NQ)
		if !(math.Abs(dz) < 4*res.LogZErr) {
			t.Errorf("%s: ln Z = %.4f ± %.4f, exact %.4f", p.Name, res.LogZ, res.LogZErr, p.LogZ)
		}
		if !(res.LogZErr <= tc.maxSigma) {
			t.Errorf("%s: σ = %.4f, want at most %.2f", p.Name, res.LogZErr, tc.maxSigma)
		}
	}
}
