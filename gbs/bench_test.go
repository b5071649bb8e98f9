package gbs

import (
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

// BenchmarkIntegratedTime estimates tau on 10^6 draws in 8 chains.
func BenchmarkIntegratedTime(b *testing.B) {
	const n, rho = 1000000, 0.9
	rng := rand.New(rand.NewPCG(1, 1))
	x := make([]float64, n)
	for i := 1; i < n; i++ {
		x[i] = rho*x[i-1] + math.Sqrt(1-rho*rho)*rng.NormFloat64()
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		IntegratedTime(x, 8)
	}
}
