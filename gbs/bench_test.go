package gbs

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"
)

// BenchmarkSolveBridge solves the bridge equation and its error for
// n_p = n_q = 10^5 draws from one chain (tau estimated).
func BenchmarkSolveBridge(b *testing.B) {
	const n = 100000
	rng := rand.New(rand.NewPCG(1, 1))
	a := make([]float64, n)
	w := make([]float64, n)
	for i := range a {
		a[i] = -3 + 0.5*rng.NormFloat64()
		w[i] = 3 + 0.5*rng.NormFloat64()
	}
	in := &bridgeInput{logQoverP: a, logPoverQ: w, nchains: 1}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := solveBridge(in); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkEvidenceWarp3 is the Go side of tests/c/bench_callback.c (batch
// 10^4): warp-III on a 16-d Gaussian, 2·10^4 draws, n_q = 2·10^5. The
// difference to the C program is the cost of the C ABI.
func BenchmarkEvidenceWarp3(b *testing.B) {
	const n, d, nq = 20000, 16, 200000
	sd := make([]float64, d)
	for k := range sd {
		sd[k] = 1 + 0.1*float64(k)
	}
	lognorm := 0.0
	for _, v := range sd {
		lognorm -= math.Log(v) + 0.5*math.Log(2*math.Pi)
	}
	logp := func(dst, x []float64) error {
		for i := range dst {
			s := lognorm
			for k := 0; k < d; k++ {
				z := x[i*d+k] / sd[k]
				s -= 0.5 * z * z
			}
			dst[i] = s
		}
		return nil
	}
	rng := rand.New(rand.NewPCG(1, 1))
	x := make([]float64, n*d)
	for i := range x {
		x[i] = sd[i%d] * rng.NormFloat64()
	}
	s := &Samples{Dim: d, Chains: [][]float64{x}, Kind: IndependentDraws}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := Evidence(context.Background(), logp, s, &Settings{Method: Warp3, NQ: nq, BatchSize: 10000}); err != nil {
			b.Fatal(err)
		}
	}
}
