package gbs_test

import (
	"context"
	"math"
	"testing"

	"github.com/gbs-evidence/gbs/gbs"
	"github.com/gbs-evidence/gbs/nuts"
	"github.com/gbs-evidence/gbs/problems"
)

// The whole recipe on the paper's four problems, with a CI-sized budget
// (the paper's 8 chains × 2500 iterations run in the benchmark): NUTS
// draws, then GBS, within 4σ of the exact ln Z, with σ below a bound
// measured at this budget with some margin.
func TestPipelinePaperProblems(t *testing.T) {
	if testing.Short() {
		t.Skip("about a minute")
	}
	for _, tc := range []struct {
		name     string
		maxSigma float64
	}{
		{"funnel", 0.15},
		{"banana", 0.25},
		{"cauchy", 0.4},
		{"ring", 2.5},
	} {
		p, err := problems.ByName(tc.name)
		if err != nil {
			t.Fatal(err)
		}
		f := func(g, x []float64) (float64, error) { return p.LogProbGrad(g, x), nil }
		set := &gbs.PipelineSettings{Sampler: nuts.Settings{Chains: 4, Warmup: 300, Draws: 1000, Lower: p.Lower, Upper: p.Upper, Seed: 11}}
		r, err := gbs.Pipeline(context.Background(), f, p.Dim, set)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		ev := r.Evidence
		t.Logf("%s: ln Z = %.4f ± %.4f, exact %.4f (%+.2f σ); gradient calls %d, log-density calls %d, divergences %d",
			tc.name, ev.LogZ, ev.LogZErr, p.LogZ, (ev.LogZ-p.LogZ)/ev.LogZErr, r.GradCalls, r.LogDensityCalls, r.Sampling.Divergences())
		if !(math.Abs(ev.LogZ-p.LogZ) < 4*ev.LogZErr) || !(ev.LogZErr < tc.maxSigma) {
			t.Errorf("%s: ln Z = %.4f ± %.4f, exact %.4f, σ bound %g", tc.name, ev.LogZ, ev.LogZErr, p.LogZ, tc.maxSigma)
		}
		if r.GradCalls != r.Sampling.GradCalls || r.LogDensityCalls != ev.NCall || ev.NCall < int64(ev.NQ) {
			t.Errorf("%s: call counts %d, %d inconsistent with the stages", tc.name, r.GradCalls, r.LogDensityCalls)
		}
	}
}
