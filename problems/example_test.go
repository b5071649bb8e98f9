package problems_test

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/gbs-evidence/gbs/problems"
)

// The paper's four targets with their exact ln Z.
func Example() {
	for _, p := range problems.All() {
		fmt.Printf("%-6s d=%2d  ln Z = %.6f  exact sampler: %t\n", p.Name, p.Dim, p.LogZ, p.Sample != nil)
	}
	// Output:
	// funnel d=16  ln Z = -63.498811  exact sampler: true
	// banana d=32  ln Z = -127.364000  exact sampler: true
	// cauchy d=48  ln Z = -254.626548  exact sampler: true
	// ring   d=64  ln Z = -114.491835  exact sampler: false
}

// The ring's ln Z in any dimension, from the eigenvalues of its transfer
// kernel.
func ExampleRingN() {
	for _, n := range []int{16, 32, 64} {
		fmt.Printf("ring-%d: %.6f\n", n, problems.RingN(n).LogZ)
	}
	// Output:
	// ring-16: -28.622683
	// ring-32: -57.245917
	// ring-64: -114.491835
}

// Exact draws and a batch evaluation of log p, as an evidence estimator
// would use them.
func ExampleProblem_Sample() {
	p := problems.Funnel()
	rng := rand.New(rand.NewPCG(1, 2))
	const n = 4
	x := make([]float64, n*p.Dim)
	p.Sample(x, rng)

	logp := make([]float64, n)
	if err := p.LogProbBatch(logp, x); err != nil {
		fmt.Println(err)
		return
	}
	inside := true
	for i := 0; i < n; i++ {
		inside = inside && p.Inside(x[i*p.Dim:(i+1)*p.Dim]) && !math.IsInf(logp[i], 0)
	}
	fmt.Println("all draws inside the box with finite log p:", inside)
	// Output:
	// all draws inside the box with finite log p: true
}

// A Gaussian with a known normalizing constant: p = exp(c) N(mu, Sigma).
func ExampleGaussian() {
	p := problems.Gaussian([]float64{1, -1}, []float64{2, 0.5, 0.5, 1}, 3.5)
	grad := make([]float64, 2)
	lp := p.LogProbGrad(grad, []float64{1, -1})
	fmt.Printf("%s: ln Z = %.1f, bounded: %t\n", p.Name, p.LogZ, p.Lower != nil)
	fmt.Printf("log p(mu) = 3.5 - ln 2π - ln det(Sigma)/2 = %.4f\n", lp)
	lp = p.LogProbGrad(grad, []float64{2, -1})
	fmt.Printf("log p(mu + e1) = %.4f, grad = -Sigma^-1 e1 = (%.4f, %.4f)\n", lp, grad[0], grad[1])
	// Output:
	// gaussian-2: ln Z = 3.5, bounded: false
	// log p(mu) = 3.5 - ln 2π - ln det(Sigma)/2 = 1.3823
	// log p(mu + e1) = 1.0966, grad = -Sigma^-1 e1 = (-0.5714, 0.2857)
}

func ExampleByName() {
	for _, name := range []string{"banana-2-identity", "cauchy-3", "gamma"} {
		p, err := problems.ByName(name)
		if err != nil {
			fmt.Println("error:", err)
			continue
		}
		fmt.Printf("%s: d=%d ln Z = %.6f\n", p.Name, p.Dim, p.LogZ)
	}
	// Output:
	// banana-2-identity: d=2 ln Z = -7.960274
	// cauchy-3: d=3 ln Z = -15.914159
	// error: problems: unknown problem "gamma"; known: banana, banana-<d>, banana-<d>-identity, cauchy, cauchy-<d>, correlated-gaussian-<d>, funnel, funnel-<d>, gaussian-<d>, mixture-<d>, ring, ring-<d>, two-modes, two-modes-<d>
}
