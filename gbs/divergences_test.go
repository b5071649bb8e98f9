package gbs

import (
	"strings"
	"testing"

	"github.com/gbs-evidence/gbs/nuts"
)

// Divergences up to PipelineMaxDivergentFraction of the kept draws are
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
		w, info := samplingWarnings(result(tc.perChain), 0.99)
		if got := len(w) > 0; got != tc.warn {
			t.Errorf("%d divergences per chain: warnings %q", tc.perChain, w)
		}
		if got := len(info) > 0; got != tc.info {
			t.Errorf("%d divergences per chain: info %q", tc.perChain, info)
		}
		if why := drawsProblem(result(tc.perChain), 1); (why != "") != tc.warn {
			t.Errorf("%d divergences per chain: a longer run %q", tc.perChain, why)
		}
		for _, s := range append(w, info...) {
			if !strings.Contains(s, "of the 16000 kept draws") {
				t.Errorf("message %q does not give the kept draws", s)
			}
		}
	}
}
