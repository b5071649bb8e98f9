package pipeline

import (
	"testing"

	"github.com/gbs-evidence/gbs/gbs"
	"github.com/gbs-evidence/gbs/nuts"
)

// Divergences up to MaxDivergentFraction of the kept draws are
// information, beyond it a warning that gives the count and the fraction,
// and beyond it the pipeline runs longer (drawsProblem).
func TestDivergenceFraction(t *testing.T) {
	const chains, draws = 8, 2000
	result := func(perChain int) *nuts.Result {
		r := &nuts.Result{Dim: 1, LogP: make([][]float64, chains), Chains: make([]nuts.ChainStats, chains)}
		for c := range r.LogP {
			r.LogP[c] = make([]float64, draws)
			r.Chains[c].Divergences = perChain
		}
		return r
	}
	for _, tc := range []struct {
		perChain   int
		warn, info bool
	}{
		{0, false, false},
		{1, false, true},  // 8 of 16000: 0.05 %
		{20, false, true}, // 160: exactly 1 %
		{21, true, false}, // 168: above 1 %
	} {
		w, info := samplerFindings(result(tc.perChain), 0.99)
		if got := len(w) > 0; got != tc.warn {
			t.Errorf("%d divergences per chain: warnings %+v", tc.perChain, w)
		}
		if got := len(info) > 0; got != tc.info {
			t.Errorf("%d divergences per chain: info %+v", tc.perChain, info)
		}
		if why := drawsProblem(result(tc.perChain), 1, nil); (why != "") != tc.warn {
			t.Errorf("%d divergences per chain: a longer run %q", tc.perChain, why)
		}
		for _, f := range append(w, info...) {
			if f.Check != gbs.CheckDivergences || f.Value != float64(8*tc.perChain)/16000 || f.Limit != MaxDivergentFraction {
				t.Errorf("%d divergences per chain: finding %+v", tc.perChain, f)
			}
		}
	}
}
