package gbs

import (
	"math"
	"math/rand/v2"
)

// gaussTarget is p(x) = e^c N(x; mu, diag(sd^2)) rotated by nothing: simple
// closed-form targets whose ln Z is c.
type gaussTarget struct {
	mu, sd []float64
	c      float64
}

func newGaussTarget(d int, c float64, rng *rand.Rand) *gaussTarget {
	g := &gaussTarget{mu: make([]float64, d), sd: make([]float64, d), c: c}
	for k := 0; k < d; k++ {
		g.mu[k] = rng.NormFloat64()
		g.sd[k] = 0.5 + rng.Float64()
	}
	return g
}

func (g *gaussTarget) logp(dst, x []float64) error {
	d := len(g.mu)
	for i := range dst {
		s := g.c
		for k := 0; k < d; k++ {
			z := (x[i*d+k] - g.mu[k]) / g.sd[k]
			s -= 0.5*z*z + math.Log(g.sd[k]) + 0.5*math.Log(2*math.Pi)
		}
		dst[i] = s
	}
	return nil
}

func (g *gaussTarget) draws(n int, rng *rand.Rand) []float64 {
	d := len(g.mu)
	x := make([]float64, n*d)
	for i := 0; i < n; i++ {
		for k := 0; k < d; k++ {
			x[i*d+k] = g.mu[k] + g.sd[k]*rng.NormFloat64()
		}
	}
	return x
}

func iidSamples(x []float64, d int) *Samples {
	return &Samples{Dim: d, Chains: [][]float64{x}, Kind: IndependentDraws}
}
