package gbs

import (
	"math"
	"math/rand/v2"
	"os"
	"strconv"
	"testing"
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

// measureReps skips a measurement test unless GBS_MEASURE is set and
// returns its repetitions: GBS_REPS when given (at least 1), else def.
func measureReps(t *testing.T, def int) int {
	t.Helper()
	if os.Getenv("GBS_MEASURE") == "" {
		t.Skip("set GBS_MEASURE=1 to run")
	}
	if n, err := strconv.Atoi(os.Getenv("GBS_REPS")); err == nil && n >= 1 {
		return n
	}
	return def
}

// checkSymmetryEstimate fails the test unless r, an estimate from draws
// of one labeling, lies within 3 error bars of exact with an error bar
// at most maxErr, carries exactly one symmetry finding and no warning.
func checkSymmetryEstimate(t *testing.T, name string, r *Result, exact, maxErr float64) {
	t.Helper()
	if z := (r.LogZ - exact) / r.LogZErr; math.Abs(z) > 3 {
		t.Errorf("%s: ln Z %.2f σ from the exact value", name, z)
	}
	if r.LogZErr > maxErr {
		t.Errorf("%s: error bar %.3g above %.3g", name, r.LogZErr, maxErr)
	}
	if len(r.Found(CheckSymmetry)) != 1 {
		t.Errorf("%s: no symmetry finding", name)
	}
	if w := r.Warnings(); len(w) != 0 {
		t.Errorf("%s: warnings %q", name, w)
	}
}
