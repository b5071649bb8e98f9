package flow

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// SampleLatent returns Sample's draws and log q, and latent points from
// which the draws' log q follows: log q = Σ log φ(z) + log|det ∂z/∂x|,
// also for draws that rounded onto a bound of the box and were moved
// inside (the funnel's box, from a flow fitted on few draws, has some).
func TestSampleLatent(t *testing.T) {
	tg := funnelTarget(16)
	rng := rand.New(rand.NewPCG(4, 4))
	f, err := Fit(tg.sample(rng, 4000), tg.d, nil, &Settings{Lower: tg.lower, Upper: tg.upper, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	const n = 4000
	d := tg.d
	x, lq := make([]float64, n*d), make([]float64, n)
	f.Sample(x, lq, rand.New(rand.NewPCG(5, 5)))
	x2, lq2, z := make([]float64, n*d), make([]float64, n), make([]float64, n*d)
	f.SampleLatent(x2, lq2, z, rand.New(rand.NewPCG(5, 5)))
	if !slices.Equal(x, x2) || !slices.Equal(lq, lq2) {
		t.Fatal("SampleLatent's draws or log q differ from Sample's")
	}
	zf, ld := make([]float64, n*d), make([]float64, n)
	f.Forward(zf, ld, x)
	onEdge := 0
	for i := 0; i < n; i++ {
		var base float64
		for j, v := range z[i*d : (i+1)*d] {
			base += logPhi(v)
			if tg.upper[j]-math.Abs(x[i*d+j]) < 1e-6*tg.upper[j] {
				onEdge++
			}
		}
		if want := base + ld[i]; !(math.Abs(lq[i]-want) <= 1e-8*(1+math.Abs(lq[i]))) {
			t.Fatalf("draw %d: log q %v, from its latent point %v", i, lq[i], want)
		}
	}
	t.Logf("%d coordinates within 1e-6 of the box's edge", onEdge)
}
