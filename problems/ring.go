package problems

import (
	"fmt"
	"math"
	"sort"
	"sync"

	"gonum.org/v1/gonum/mat"
)

const ringBound = 5.0

// Ring returns the paper's ring target in d = 64 dimensions.
func Ring() *Problem { return RingN(64) }

// RingN returns the periodic ring target in n dimensions,
//
//	log L = -Σ_{i=1}^{n} (x_i^2 + x_{i+1}^2 - 2)^2,  x_{n+1} = x_1,
//
// with the flat prior on (-5, 5)^n. This is the form of the paper's
// reference values; its equation 7 has an extra outer square.
//
// The chain is periodic, so Z = 10^-n Tr(K^n) with the kernel
// K(x, y) = exp(-(x^2 + y^2 - 2)^2) on (-5, 5). LogZ discretizes K on
// Gauss–Legendre nodes (Nyström), takes the eigenvalues λ of the symmetric
// W^1/2 K W^1/2 and returns ln Σ λ^n - n ln 10. The eigenvalues are computed
// once per process and reused for every n.
//
// The paper's ring has n >= 3; n = 1 and 2 are accepted (the terms then
// repeat), which the tests use to check the eigenvalue method by direct
// quadrature. Sample is nil: there is no simple exact sampler.
func RingN(n int) *Problem {
	if n < 1 {
		panic("problems: RingN: n < 1")
	}
	r := &ring{name: suffixName("ring", n, 64), d: n, logPrior: -float64(n) * math.Log(2*ringBound)}
	return &Problem{
		Name:        r.name,
		Dim:         n,
		LogZ:        ringLogZ(n),
		Lower:       filled(n, -ringBound),
		Upper:       filled(n, ringBound),
		LogProb:     r.logProb,
		LogProbGrad: r.logProbGrad,
	}
}

type ring struct {
	name     string
	d        int
	logPrior float64
}

func (r *ring) logProb(x []float64) float64 {
	checkLen(r.name, x, r.d)
	if outsideSym(x, ringBound) {
		return math.Inf(-1)
	}
	var s float64
	for i, v := range x {
		w := x[(i+1)%r.d]
		t := v*v + w*w - 2
		s += t * t
	}
	return r.logPrior - s
}

func (r *ring) logProbGrad(grad, x []float64) float64 {
	checkGradLen(r.name, grad, x, r.d)
	zero(grad)
	if outsideSym(x, ringBound) {
		return math.Inf(-1)
	}
	var s float64
	for i, v := range x {
		j := (i + 1) % r.d
		w := x[j]
		t := v*v + w*w - 2
		s += t * t
		// Term i involves x_i and x_{i+1}; for n = 1 both are x_1 and the
		// two contributions add up, as they should.
		grad[i] -= 4 * v * t
		grad[j] -= 4 * w * t
	}
	return r.logPrior - s
}

// Nyström discretization of the ring kernel: ringPanels panels of
// ringOrder Gauss–Legendre nodes on (-5, 5). The kernel is entire and
// vanishes (below e^-49) for |x| > 3, so the eigenvalues converge
// exponentially; the tests check that doubling the rule changes ln Z by less
// than 1e-9 up to n = 64.
const (
	ringPanels = 30
	ringOrder  = 12
)

var ringEig struct {
	once sync.Once
	// lambda holds the eigenvalues, sorted by decreasing |λ|.
	lambda []float64
}

// ringEigenvalues returns the eigenvalues of W^1/2 K W^1/2 for the given
// rule.
func ringEigenvalues(panels, order int) []float64 {
	x, w := compositeGL(-ringBound, ringBound, panels, order)
	m := len(x)
	k := mat.NewSymDense(m, nil)
	for i := 0; i < m; i++ {
		for j := i; j < m; j++ {
			t := x[i]*x[i] + x[j]*x[j] - 2
			k.SetSym(i, j, math.Sqrt(w[i]*w[j])*math.Exp(-t*t))
		}
	}
	var eig mat.EigenSym
	if !eig.Factorize(k, false) {
		panic("problems: ring: eigendecomposition did not converge")
	}
	lambda := eig.Values(nil)
	sort.Slice(lambda, func(i, j int) bool { return math.Abs(lambda[i]) > math.Abs(lambda[j]) })
	return lambda
}

// ringLogZ returns ln Z of the n-dimensional ring.
func ringLogZ(n int) float64 {
	ringEig.once.Do(func() { ringEig.lambda = ringEigenvalues(ringPanels, ringOrder) })
	return ringLogZFrom(ringEig.lambda, n)
}

// ringLogZFrom computes ln(Σ λ^n) - n ln 10 relative to the leading
// eigenvalue, which by Perron–Frobenius (K > 0) is positive, simple and the
// largest in modulus, so the remaining sum is a small correction even when
// some λ are negative and n is odd.
func ringLogZFrom(lambda []float64, n int) float64 {
	l0 := lambda[0]
	if !(l0 > 0) {
		panic(fmt.Sprintf("problems: ring: leading eigenvalue %g is not positive", l0))
	}
	var rest float64
	for _, l := range lambda[1:] {
		rest += math.Pow(l/l0, float64(n))
	}
	return float64(n)*math.Log(l0) + math.Log1p(rest) - float64(n)*math.Log(2*ringBound)
}
