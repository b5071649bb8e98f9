package gbs

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gbs-evidence/gbs/flow"
	"github.com/gbs-evidence/gbs/problems"
)

// The coverage pool takes the widened flow's log density at the bridge's
// draws from their latent points; it is the one mapping the draws again
// gives (wideLogProb), to rounding, on a bounded flow with a scale layer
// and sliced layers (the funnel's).
func TestCoverageWideFromLatent(t *testing.T) {
	p := problems.Funnel()
	rng := rand.New(rand.NewPCG(4, 4))
	x := make([]float64, 4000*p.Dim)
	for i := 0; i < 4000; i++ {
		p.Sample(x[i*p.Dim:(i+1)*p.Dim], rng)
	}
	f, err := flow.Fit(x, p.Dim, nil, &flow.Settings{Lower: p.Lower, Upper: p.Upper, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	const n = 2000
	d := p.Dim
	y, z, lq := make([]float64, n*d), make([]float64, n*d), make([]float64, n)
	f.SampleLatent(y, lq, z, rand.New(rand.NewPCG(5, 5)))
	cp := &coveragePool{d: d, f: f, lo: make([]float64, d+1), hi: make([]float64, d+1)}
	for k := range cp.lo {
		cp.lo[k], cp.hi[k] = math.Inf(-1), math.Inf(1)
	}
	cp.observe(y, lq, make([]float64, n), z)
	want := make([]float64, n)
	cp.wideLogProb(want, y)
	for i, v := range want {
		if got := cp.logqWide[i]; !(math.Abs(got-v) <= 1e-8*(1+math.Abs(v))) {
			t.Fatalf("draw %d: widened log density %v from the latent point, %v from the draw", i, got, v)
		}
	}
}
