package gbs

import (
	"context"
	"math"
	"math/rand/v2"
	"runtime"
	"testing"
)

func TestEvidenceGaussian(t *testing.T) {
	for _, tc := range []struct {
		d, n int
	}{{1, 2000}, {2, 2000}, {16, 4000}, {100, 20000}} {
		rng := rand.New(rand.NewPCG(uint64(tc.d), 7))
		g := newGaussTarget(tc.d, 3.5, rng)
		s := iidSamples(g.draws(tc.n, rng), tc.d)
		for _, m := range []Method{Bridge, IS, HM, Warp3} {
			res, err := Evidence(context.Background(), g.logp, s, &Settings{Method: m, Proposal: FitGaussian, Seed: 1})
			if err != nil {
				t.Fatalf("d=%d %v: %v", tc.d, m, err)
			}
			dz := res.LogZ - g.c
			if !(math.Abs(dz) < 4*res.LogZErr) {
				t.Errorf("d=%d %v: ln Z = %.5f ± %.5f, want %g", tc.d, m, res.LogZ, res.LogZErr, g.c)
			}
			// Every method's error bar is bounded: a Gaussian q fitted
			// on these draws gives 0.0004 to 0.004 (bridge, IS,
			// warp-III) and up to 0.008 (reciprocal IS at d = 100).
			if !(res.LogZErr > 0 && res.LogZErr < 0.02) {
				t.Errorf("d=%d %v: error %.4f, want in (0, 0.02)", tc.d, m, res.LogZErr)
			}
		}
	}
}

// The error bar must be calibrated: |ΔlnZ| < σ in about 68 % of runs.
func TestBridgeCoverage(t *testing.T) {
	if testing.Short() {
		t.Skip("200 runs")
	}
	const runs, d, n = 200, 4, 1000
	rng := rand.New(rand.NewPCG(11, 0))
	g := newGaussTarget(d, -2, rng)
	within := 0
	for seed := 0; seed < runs; seed++ {
		r := rand.New(rand.NewPCG(uint64(seed), 99))
		res, err := Evidence(context.Background(), g.logp, iidSamples(g.draws(n, r), d), &Settings{Proposal: FitGaussian, Seed: uint64(seed)})
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(res.LogZ-g.c) < res.LogZErr {
			within++
		}
	}
	frac := float64(within) / runs
	if frac < 0.55 || frac > 0.80 {
		t.Errorf("1σ coverage %.3f over %d seeds, want in [0.55, 0.80]", frac, runs)
	}
	t.Logf("1σ coverage %.3f", frac)
}

func TestEvidenceExtremeLogZ(t *testing.T) {
	for _, c := range []float64{-5000, 5000} {
		rng := rand.New(rand.NewPCG(3, 3))
		g := newGaussTarget(3, c, rng)
		res, err := Evidence(context.Background(), g.logp, iidSamples(g.draws(2000, rng), 3), &Settings{Proposal: FitGaussian})
		if err != nil {
			t.Fatal(err)
		}
		if math.IsNaN(res.LogZErr) || !(math.Abs(res.LogZ-c) < 4*res.LogZErr) {
			t.Errorf("c = %g: ln Z = %v ± %v", c, res.LogZ, res.LogZErr)
		}
	}
}

// The same seed gives the same ln Z, bit for bit, whatever GOMAXPROCS is.
func TestEvidenceReproducible(t *testing.T) {
	rng := rand.New(rand.NewPCG(12, 12))
	g := newGaussTarget(4, 0, rng)
	s := &Samples{Dim: 4, Chains: [][]float64{g.draws(20000, rng), g.draws(20000, rng)}}
	run := func(procs int) *Result {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
		res, err := Evidence(context.Background(), g.logp, s, &Settings{Seed: 5, Concurrent: true, BatchSize: 1000})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	a, b := run(1), run(2)
	if a.LogZ != b.LogZ || a.LogZErr != b.LogZErr || a.NQ != b.NQ {
		t.Errorf("GOMAXPROCS 1: %v ± %v (n_q %d); 2: %v ± %v (n_q %d)", a.LogZ, a.LogZErr, a.NQ, b.LogZ, b.LogZErr, b.NQ)
	}
}
