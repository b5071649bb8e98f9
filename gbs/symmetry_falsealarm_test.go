package gbs_test

import (
	"context"
	"math/rand/v2"
	"testing"

	"github.com/gbs-evidence/gbs/gbs"
	"github.com/gbs-evidence/gbs/problems"
)

// No symmetry on problems without label switching, exchangeable
// coordinates included (the funnel's x_1..x_{d-1}, the Cauchy's and the
// standard normal's every coordinate, the ring's): the estimate is the
// one Symmetry Off gives, to the bit, and the search costs at most
// symmetryMaxCandidates + 1 log-density calls (none where the draws
// already look alike under every relabeling).
func TestSymmetryNoFalseFinding(t *testing.T) {
	if testing.Short() {
		t.Skip("evidence on the paper's problems")
	}
	names := []string{"funnel", "banana", "cauchy", "ring", "gaussian-100", "correlated-gaussian-20", "mixture-4", "two-modes"}
	found := 0
	for i, name := range names {
		p, err := problems.ByName(name)
		if err != nil {
			t.Fatal(err)
		}
		if p.Sample == nil {
			continue
		}
		const n = 4000
		x := make([]float64, n*p.Dim)
		p.Sample(x, rand.New(rand.NewPCG(uint64(500+i), 0)))
		s := &gbs.Samples{Dim: p.Dim, Kind: gbs.IndependentDraws}
		for c := range 4 {
			s.Chains = append(s.Chains, x[c*n/4*p.Dim:(c+1)*n/4*p.Dim])
		}
		run := func(sw gbs.Switch) *gbs.Result {
			r, err := gbs.Evidence(context.Background(), p.LogProbBatch, s, &gbs.Settings{Seed: 5, Lower: p.Lower, Upper: p.Upper, Symmetry: sw})
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			return r
		}
		auto, off := run(gbs.Auto), run(gbs.Off)
		extra := auto.NCall - off.NCall
		t.Logf("%s (d = %d): ln Z %.6f, %d extra log-density calls", name, p.Dim, auto.LogZ, extra)
		if len(auto.Found(gbs.CheckSymmetry)) != 0 {
			found++
			t.Errorf("%s: a symmetry found: %v", name, auto.Found(gbs.CheckSymmetry))
		}
		if auto.LogZ != off.LogZ || auto.LogZErr != off.LogZErr {
			t.Errorf("%s: ln Z %v ± %v with the search, %v ± %v without", name, auto.LogZ, auto.LogZErr, off.LogZ, off.LogZErr)
		}
		if extra > 64+1 {
			t.Errorf("%s: the search cost %d log-density calls", name, extra)
		}
	}
	t.Logf("symmetry findings: %d of %d", found, len(names))
}
