package gbs_test

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/gbs-evidence/gbs/gbs"
)

// A 3-d Gaussian with ln Z = 2: draws in, ln Z with its error out.
func ExampleEvidence() {
	const d, n = 3, 4000
	logp := func(dst, x []float64) error {
		for i := range dst {
			var q float64
			for _, v := range x[i*d : (i+1)*d] {
				q += v * v
			}
			dst[i] = 2 - 0.5*q - 1.5*math.Log(2*math.Pi)
		}
		return nil
	}
	rng := rand.New(rand.NewPCG(1, 2))
	x := make([]float64, n*d)
	for i := range x {
		x[i] = rng.NormFloat64()
	}
	samples := &gbs.Samples{Dim: d, Chains: [][]float64{x}, Kind: gbs.IndependentDraws}
	res, err := gbs.Evidence(context.Background(), logp, samples, &gbs.Settings{Seed: 1})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("ln Z = %.2f, within 4 sigma: %v\n", res.LogZ, math.Abs(res.LogZ-2) < 4*res.LogZErr)
	// Output: ln Z = 2.00, within 4 sigma: true
}
