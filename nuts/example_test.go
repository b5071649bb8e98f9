package nuts_test

import (
	"context"
	"fmt"
	"log"
	"math"
	"math/rand/v2"

	"github.com/gbs-evidence/gbs/nuts"
)

// Sample a correlated 2-d Gaussian and report the posterior means.
func ExampleSample() {
	// log p of N((1, -2), [[1, 0.9], [0.9, 1]]) up to a constant, with
	// its gradient.
	const rho = 0.9
	logp := func(grad, x []float64) (float64, error) {
		a, b := x[0]-1, x[1]+2
		s := 1 / (1 - rho*rho)
		grad[0] = -s * (a - rho*b)
		grad[1] = -s * (b - rho*a)
		return -0.5 * s * (a*a - 2*rho*a*b + b*b), nil
	}
	res, err := nuts.Sample(context.Background(), logp, 2, &nuts.Settings{Seed: 1})
	if err != nil {
		log.Fatal(err)
	}
	var mean [2]float64
	var n int
	for c := range res.Draws {
		for i := range res.LogP[c] {
			x := res.Draw(c, i)
			mean[0] += x[0]
			mean[1] += x[1]
			n++
		}
	}
	ess, _ := nuts.ESS(res.Trace(0))
	fmt.Printf("%d draws, mean (%.1f, %.1f), ESS above 400: %v, divergences: %d\n",
		n, mean[0]/float64(n), mean[1]/float64(n), ess > 400, res.Divergences())
	// Output:
	// 4000 draws, mean (1.0, -2.0), ESS above 400: true, divergences: 0
}

// Sample a standard Gaussian in 10 dimensions with the points of all chains
// evaluated in one call; the draws are those of Sample with the same
// settings.
func ExampleSampleBatch() {
	const d = 10
	logp := func(lp, grad, x []float64) error {
		// One call per step of all chains: x holds len(lp) points.
		for i := range lp {
			xi, gi := x[i*d:(i+1)*d], grad[i*d:(i+1)*d]
			lp[i] = 0
			for j, v := range xi {
				lp[i] -= 0.5 * v * v
				gi[j] = -v
			}
		}
		return nil
	}
	set := &nuts.Settings{Chains: 8, Seed: 1}
	res, err := nuts.SampleBatch(context.Background(), logp, d, set)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%d chains, %.1f points per call\n", len(res.Draws), float64(res.GradCalls)/float64(res.Batches))
	// Output:
	// 8 chains, 7.7 points per call
}

// Bracket ln Z of a 1-d Gaussian likelihood under a N(0, 2²) prior
// between annealed importance sampling (low) and its reverse (high).
func ExampleAIS() {
	const s0, s, m = 2.0, 0.5, 1.0
	logPrior := func(grad, x []float64) (float64, error) {
		grad[0] = -x[0] / (s0 * s0)
		return -0.5*x[0]*x[0]/(s0*s0) - math.Log(s0*math.Sqrt(2*math.Pi)), nil
	}
	logLike := func(grad, x []float64) (float64, error) {
		r := (x[0] - m) / s
		grad[0] = -r / s
		return -0.5 * r * r, nil
	}
	samplePrior := func(dst []float64, rng *rand.Rand) { dst[0] = s0 * rng.NormFloat64() }
	v := s0*s0 + s*s
	exact := 0.5*math.Log(s*s/v) - 0.5*m*m/v

	set := &nuts.AISSettings{Steps: 200, Chains: 64, Seed: 1}
	lo, err := nuts.AIS(context.Background(), logPrior, logLike, samplePrior, 1, set)
	if err != nil {
		log.Fatal(err)
	}
	// Exact posterior draws start the reverse runs.
	rng := rand.New(rand.NewPCG(1, 2))
	pv := 1 / (1/(s0*s0) + 1/(s*s))
	post := make([][]float64, 64)
	for i := range post {
		post[i] = []float64{pv*m/(s*s) + math.Sqrt(pv)*rng.NormFloat64()}
	}
	hi, err := nuts.RAIS(context.Background(), logPrior, logLike, post, 1, set)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("exact %.2f, AIS within 0.15: %v, RAIS within 0.15: %v\n",
		exact, math.Abs(lo.LogZ-exact) < 0.15, math.Abs(hi.LogZ-exact) < 0.15)
	// Output:
	// exact -1.53, AIS within 0.15: true, RAIS within 0.15: true
}
