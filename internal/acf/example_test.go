package acf_test

import (
	"fmt"
	"math/rand/v2"

	"github.com/gbs-evidence/gbs/internal/acf"
)

// The integrated autocorrelation time of an AR(1) series with coefficient
// 0.8, whose exact value is (1+0.8)/(1-0.8) = 9.
func Example() {
	rng := rand.New(rand.NewPCG(1, 2))
	const n = 100000
	x := make([]float64, n)
	for i := 1; i < n; i++ {
		x[i] = 0.8*x[i-1] + rng.NormFloat64()
	}
	var mean float64
	for _, v := range x {
		mean += v
	}
	mean /= n
	s := acf.NewSums(n, n/8)
	s.Add(x, mean, 1, 0)
	acov, _ := s.Lags()
	rho := make([]float64, len(acov))
	for t := range rho {
		rho[t] = acov[t] / acov[0]
	}
	tau, ok := acf.SokalTime(rho, 5)
	geyer, _ := acf.GeyerTime(rho, n)
	fmt.Printf("Sokal tau %.1f (window closed: %v), Geyer tau %.1f\n", tau, ok, geyer)
	// Output:
	// Sokal tau 9.2 (window closed: true), Geyer tau 9.0
}
