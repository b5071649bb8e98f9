package problems

import (
	"fmt"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/mat"
)

// Gaussian returns p(x) = exp(c) N(x; mu, Sigma), whose ln Z is c for any
// dimension. cov is Sigma as a flat row-major d×d slice, d = len(mu), or nil
// for the identity. The problem is unbounded (nil Lower and Upper) and
// Sample draws mu + L z with Sigma = L L^T (Cholesky).
//
// Gaussian panics if cov has the wrong length, is not symmetric (to a
// relative 1e-12) or is not positive definite, or if mu or cov is not
// finite.
func Gaussian(mu, cov []float64, c float64) *Problem {
	d := len(mu)
	if d == 0 {
		panic("problems: Gaussian: empty mean")
	}
	if cov == nil {
		cov = make([]float64, d*d)
		for i := 0; i < d; i++ {
			cov[i*d+i] = 1
		}
	}
	if len(cov) != d*d {
		panic(fmt.Sprintf("problems: Gaussian: len(cov) = %d, want %d", len(cov), d*d))
	}
	if math.IsNaN(c) || math.IsInf(c, 0) {
		panic("problems: Gaussian: c is not finite")
	}
	for _, v := range mu {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			panic("problems: Gaussian: mean is not finite")
		}
	}
	sym := mat.NewSymDense(d, nil)
	for i := 0; i < d; i++ {
		for j := i; j < d; j++ {
			a, b := cov[i*d+j], cov[j*d+i]
			if math.IsNaN(a) || math.IsInf(a, 0) || math.IsNaN(b) || math.IsInf(b, 0) {
				panic("problems: Gaussian: covariance is not finite")
			}
			if math.Abs(a-b) > 1e-12*math.Max(math.Abs(a), math.Abs(b)) {
				panic(fmt.Sprintf("problems: Gaussian: covariance is not symmetric at (%d, %d)", i, j))
			}
			sym.SetSym(i, j, a)
		}
	}
	var chol mat.Cholesky
	if !chol.Factorize(sym) {
		panic("problems: Gaussian: covariance is not positive definite")
	}
	var l mat.TriDense
	chol.LTo(&l)
	var prec mat.SymDense
	if err := chol.InverseTo(&prec); err != nil {
		panic(fmt.Sprintf("problems: Gaussian: covariance is too ill-conditioned: %v", err))
	}
	g := &gaussian{
		name: fmt.Sprintf("gaussian-%d", d),
		d:    d,
		mu:   append([]float64(nil), mu...),
		prec: make([]float64, d*d),
		l:    make([]float64, d*d),
	}
	logNorm := c - float64(d)*halfLog2Pi
	for i := 0; i < d; i++ {
		logNorm -= math.Log(l.At(i, i))
		for j := 0; j < d; j++ {
			g.prec[i*d+j] = prec.At(i, j)
			g.l[i*d+j] = l.At(i, j)
		}
	}
	g.logNorm = logNorm
	return &Problem{
		Name:        g.name,
		Dim:         d,
		LogZ:        c,
		LogProb:     g.logProb,
		LogProbGrad: g.logProbGrad,
		Sample:      g.sample,
	}
}

type gaussian struct {
	name    string
	d       int
	mu      []float64
	prec    []float64 // Sigma^-1, row-major
	l       []float64 // Cholesky factor of Sigma, row-major lower triangle
	logNorm float64   // c - (d/2) ln 2π - (1/2) ln det Sigma
}

func (g *gaussian) logProb(x []float64) float64 {
	checkLen(g.name, x, g.d)
	// (x-mu)^T P (x-mu) without a scratch vector, so that concurrent calls
	// share nothing, and in the same order as logProbGrad so that both
	// return the same bits.
	var q float64
	for i := 0; i < g.d; i++ {
		row := g.prec[i*g.d : (i+1)*g.d]
		var s float64
		for j, pij := range row {
			s += pij * (x[j] - g.mu[j])
		}
		q += (x[i] - g.mu[i]) * s
	}
	return g.logNorm - 0.5*q
}

func (g *gaussian) logProbGrad(grad, x []float64) float64 {
	checkGradLen(g.name, grad, x, g.d)
	var q float64
	for i := 0; i < g.d; i++ {
		row := g.prec[i*g.d : (i+1)*g.d]
		var s float64
		for j, pij := range row {
			s += pij * (x[j] - g.mu[j])
		}
		grad[i] = -s
		q += (x[i] - g.mu[i]) * s
	}
	return g.logNorm - 0.5*q
}

func (g *gaussian) sample(dst []float64, rng *rand.Rand) {
	n := checkSampleLen(g.name, dst, g.d)
	z := make([]float64, g.d)
	for s := 0; s < n; s++ {
		x := dst[s*g.d : (s+1)*g.d]
		for i := range z {
			z[i] = rng.NormFloat64()
		}
		for i := range x {
			v := g.mu[i]
			row := g.l[i*g.d : (i+1)*g.d]
			for j := 0; j <= i; j++ {
				v += row[j] * z[j]
			}
			x[i] = v
		}
	}
}

// CorrelatedGaussian returns exp(c) N(mu, Sigma) with a random mean and a
// random dense covariance of condition number exactly 100, drawn from seed:
// Sigma = Q^T diag(λ) Q with Q a Haar-random rotation and eigenvalues λ
// log-spaced from 0.1 to 10 (standard deviations 0.32 to 3.2 along the
// principal axes), and mu_i ~ N(0, 1). The generator is
// rand.New(rand.NewPCG(seed, 0xc0aa)): first the rotation (built as in
// BananaRotation), then the d entries of mu. ln Z = c.
func CorrelatedGaussian(d int, seed uint64, c float64) *Problem {
	if d < 1 {
		panic("problems: CorrelatedGaussian: d < 1")
	}
	mu, cov := correlatedParams(d, seed)
	p := Gaussian(mu, cov, c)
	p.Name = fmt.Sprintf("correlated-gaussian-%d", d)
	if seed != CorrelatedSeed {
		p.Name += fmt.Sprintf("-seed%d", seed)
	}
	return p
}

// CorrelatedGaussianParams returns the mean and the row-major covariance
// of CorrelatedGaussian(d, seed, ·), for another implementation to build
// the same density (tests/python/test_problems_go.py).
func CorrelatedGaussianParams(d int, seed uint64) (mu, cov []float64) {
	if d < 1 {
		panic("problems: CorrelatedGaussianParams: d < 1")
	}
	return correlatedParams(d, seed)
}

// correlatedParams returns the mean and the flat covariance of
// CorrelatedGaussian(d, seed, ·).
func correlatedParams(d int, seed uint64) (mu, cov []float64) {
	rng := newRand(seed, streamCorrelated)
	q := randomRotation(d, rng)
	mu = make([]float64, d)
	for i := range mu {
		mu[i] = rng.NormFloat64()
	}
	lambda := make([]float64, d)
	for k := range lambda {
		lambda[k] = 1
		if d > 1 {
			lambda[k] = math.Pow(10, -1+2*float64(k)/float64(d-1))
		}
	}
	cov = make([]float64, d*d)
	for i := 0; i < d; i++ {
		for j := i; j < d; j++ {
			var s float64
			for k := 0; k < d; k++ {
				s += q[k*d+i] * lambda[k] * q[k*d+j]
			}
			cov[i*d+j], cov[j*d+i] = s, s
		}
	}
	return mu, cov
}

// GaussianMixture returns p(x) = exp(c) Σ_k w_k N(x; means[k], sds[k]^2 I)
// in d dimensions, with ln Z = c. The weights need not sum to one (they are
// normalized) but must be positive; each component is isotropic with its
// own standard deviation. Sample picks a component by weight and draws from
// it. The problem is unbounded.
//
// GaussianMixture panics on inconsistent lengths, non-positive weights or
// standard deviations, or non-finite values.
func GaussianMixture(d int, weights []float64, means [][]float64, sds []float64, c float64) *Problem {
	k := len(weights)
	if d < 1 || k == 0 || len(means) != k || len(sds) != k {
		panic(fmt.Sprintf("problems: GaussianMixture: d = %d, %d weights, %d means, %d sds", d, k, len(means), len(sds)))
	}
	if math.IsNaN(c) || math.IsInf(c, 0) {
		panic("problems: GaussianMixture: c is not finite")
	}
	m := &mixture{name: fmt.Sprintf("mixture-%d", d), d: d}
	var wsum float64
	for i, w := range weights {
		if !(w > 0) || math.IsInf(w, 0) {
			panic(fmt.Sprintf("problems: GaussianMixture: weight %d = %g is not positive and finite", i, w))
		}
		wsum += w
	}
	for i := range weights {
		if len(means[i]) != d {
			panic(fmt.Sprintf("problems: GaussianMixture: len(means[%d]) = %d, want %d", i, len(means[i]), d))
		}
		for _, v := range means[i] {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				panic("problems: GaussianMixture: mean is not finite")
			}
		}
		if !(sds[i] > 0) || math.IsInf(sds[i], 0) {
			panic(fmt.Sprintf("problems: GaussianMixture: sds[%d] = %g is not positive and finite", i, sds[i]))
		}
		w := weights[i] / wsum
		m.cum = append(m.cum, w)
		if i > 0 {
			m.cum[i] += m.cum[i-1]
		}
		m.sd = append(m.sd, sds[i])
		m.means = append(m.means, means[i]...)
		m.logW = append(m.logW, math.Log(w)+c-float64(d)*(halfLog2Pi+math.Log(sds[i])))
	}
	m.cum[k-1] = 1
	for _, sd := range m.sd {
		m.prec = append(m.prec, 1/(sd*sd))
	}
	return &Problem{
		Name:        m.name,
		Dim:         d,
		LogZ:        c,
		LogProb:     m.logProb,
		LogProbGrad: m.logProbGrad,
		Sample:      m.sample,
	}
}

// StandardMixture returns the "mixture-<d>" problem of ByName: two isotropic
// components with weights 0.3 and 0.7, means -1 and +1 in every coordinate,
// standard deviations 0.5 and 1, and ln Z = 0. Its modes are 2√d apart, so
// for larger d it is a test of multimodality.
func StandardMixture(d int) *Problem {
	if d < 1 {
		panic("problems: StandardMixture: d < 1")
	}
	return GaussianMixture(d, []float64{0.3, 0.7}, [][]float64{filled(d, -1), filled(d, 1)}, []float64{0.5, 1}, 0)
}

type mixture struct {
	name  string
	d     int
	cum   []float64 // cumulative normalized weights
	sd    []float64
	prec  []float64 // 1/sd^2
	means []float64 // row-major, one row per component
	logW  []float64 // log w_k + c - d (ln √(2π) + ln sd_k)
}

func (m *mixture) logProb(x []float64) float64 {
	checkLen(m.name, x, m.d)
	// Streaming log-sum-exp: no scratch slice, safe for concurrent calls.
	best, s := math.Inf(-1), 0.0
	for k := range m.prec {
		mu := m.means[k*m.d : (k+1)*m.d]
		var ss float64
		for i, v := range x {
			t := v - mu[i]
			ss += t * t
		}
		l := m.logW[k] - 0.5*ss*m.prec[k]
		switch {
		case l <= best:
			s += math.Exp(l - best)
		default:
			s = s*math.Exp(best-l) + 1
			best = l
		}
	}
	if math.IsNaN(best) || math.IsInf(best, -1) {
		return best
	}
	return best + math.Log(s)
}

func (m *mixture) logProbGrad(grad, x []float64) float64 {
	checkGradLen(m.name, grad, x, m.d)
	zero(grad)
	// grad = Σ_k r_k (mu_k - x)/sd_k^2 with responsibilities r_k, kept
	// relative to the running maximum like the log-sum-exp itself.
	best, s := math.Inf(-1), 0.0
	for k, prec := range m.prec {
		mu := m.means[k*m.d : (k+1)*m.d]
		var ss float64
		for i, v := range x {
			t := v - mu[i]
			ss += t * t
		}
		l := m.logW[k] - 0.5*ss*prec
		var a float64
		if l <= best {
			a = math.Exp(l - best)
		} else {
			r := math.Exp(best - l)
			s *= r
			for i := range grad {
				grad[i] *= r
			}
			a = 1
			best = l
		}
		s += a
		for i, v := range x {
			grad[i] += a * (mu[i] - v) * prec
		}
	}
	if math.IsNaN(best) || math.IsInf(best, -1) {
		zero(grad)
		return best
	}
	for i := range grad {
		grad[i] /= s
	}
	return best + math.Log(s)
}

func (m *mixture) sample(dst []float64, rng *rand.Rand) {
	n := checkSampleLen(m.name, dst, m.d)
	for s := 0; s < n; s++ {
		x := dst[s*m.d : (s+1)*m.d]
		u := rng.Float64()
		k := 0
		for k < len(m.cum)-1 && u >= m.cum[k] {
			k++
		}
		mu := m.means[k*m.d : (k+1)*m.d]
		for i := range x {
			x[i] = mu[i] + m.sd[k]*rng.NormFloat64()
		}
	}
}
