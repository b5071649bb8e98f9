package nuts

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
)

// Metric selects the form of the Euclidean metric (the inverse mass matrix)
// that Hamiltonian Monte Carlo uses for the kinetic energy. Adapting it to the
// posterior covariance makes the target look closer to isotropic to the
// integrator, which lets a larger step size stay stable.
type Metric int

const (
	// DiagMetric adapts a diagonal inverse metric to the windowed marginal
	// variances. It is the default: cheap (O(d) per leapfrog step) and good
	// enough whenever correlations are moderate.
	DiagMetric Metric = iota
	// DenseMetric adapts a full inverse metric to the windowed covariance.
	// It handles strong linear correlations at O(d²) per leapfrog step and
	// needs enough warmup draws to estimate d(d+1)/2 entries.
	DenseMetric
	// UnitMetric keeps the identity metric and adapts only the step size.
	UnitMetric
)

var metricNames = [...]string{DiagMetric: "diag", DenseMetric: "dense", UnitMetric: "unit"}

func (m Metric) String() string {
	if m < 0 || int(m) >= len(metricNames) {
		return fmt.Sprintf("Metric(%d)", int(m))
	}
	return metricNames[m]
}

// metric holds the inverse metric M⁻¹ in the form the integrator needs.
// Only the fields belonging to kind are used.
type metric struct {
	kind Metric
	d    int

	// diag is M⁻¹ for UnitMetric (all ones) and DiagMetric; sqrtInv holds
	// 1/sqrt(diag) so drawing momenta p ~ N(0, M) costs one multiply.
	diag    []float64
	sqrtInv []float64

	// dense is M⁻¹ row-major d×d and chol its lower Cholesky factor L
	// (M⁻¹ = L Lᵀ), both for DenseMetric.
	dense []float64
	chol  []float64
}

func newMetric(kind Metric, d int) *metric {
	m := &metric{kind: kind, d: d}
	switch kind {
	case DenseMetric:
		m.dense = make([]float64, d*d)
		m.chol = make([]float64, d*d)
		for i := 0; i < d; i++ {
			m.dense[i*d+i] = 1
			m.chol[i*d+i] = 1
		}
	default:
		m.diag = make([]float64, d)
		m.sqrtInv = make([]float64, d)
		for i := range m.diag {
			m.diag[i] = 1
			m.sqrtInv[i] = 1
		}
	}
	return m
}

// diagonal returns M⁻¹ if it is diagonal (DiagMetric, UnitMetric) and nil
// otherwise, for the integrator's fused loops.
func (m *metric) diagonal() []float64 {
	if m.kind == DenseMetric {
		return nil
	}
	return m.diag
}

// velocity writes dst = M⁻¹ p, the time derivative of the position (and
// Stan's p♯, used by the generalized no-U-turn criterion).
func (m *metric) velocity(dst, p []float64) {
	if m.kind != DenseMetric {
		for i, v := range m.diag {
			dst[i] = v * p[i]
		}
		return
	}
	d := m.d
	for i := 0; i < d; i++ {
		row := m.dense[i*d : i*d+d]
		var s float64
		for j, v := range row {
			s += v * p[j]
		}
		dst[i] = s
	}
}

// sampleMomentum draws p ~ N(0, M).
func (m *metric) sampleMomentum(p []float64, rng *rand.Rand) {
	if m.kind != DenseMetric {
		for i, s := range m.sqrtInv {
			p[i] = s * rng.NormFloat64()
		}
		return
	}
	// With M⁻¹ = L Lᵀ, M = L⁻ᵀ L⁻¹, so p = L⁻ᵀ z has covariance M.
	// Solve Lᵀ p = z by back substitution.
	d := m.d
	for i := range p {
		p[i] = rng.NormFloat64()
	}
	for i := d - 1; i >= 0; i-- {
		s := p[i]
		for k := i + 1; k < d; k++ {
			s -= m.chol[k*d+i] * p[k]
		}
		p[i] = s / m.chol[i*d+i]
	}
}

// setDiag installs a new diagonal inverse metric.
func (m *metric) setDiag(v []float64) {
	copy(m.diag, v)
	for i, x := range v {
		m.sqrtInv[i] = 1 / math.Sqrt(x)
	}
}

// setDense installs a new dense inverse metric, factorizing it.
func (m *metric) setDense(c []float64) error {
	l := make([]float64, len(c))
	if !cholesky(l, c, m.d) {
		return errors.New("adapted covariance is not positive definite")
	}
	copy(m.dense, c)
	copy(m.chol, l)
	return nil
}

// invDiag returns a copy of the diagonal of M⁻¹.
func (m *metric) invDiag() []float64 {
	out := make([]float64, m.d)
	if m.kind != DenseMetric {
		copy(out, m.diag)
		return out
	}
	for i := range out {
		out[i] = m.dense[i*m.d+i]
	}
	return out
}

// cholesky writes the lower Cholesky factor of the symmetric row-major d×d
// matrix a into l and reports whether a is numerically positive definite.
// d is at most a few hundred here, so the plain O(d³/6) loop is adequate and
// keeps the package free of any allocation-heavy matrix types.
func cholesky(l, a []float64, d int) bool {
	for i := range l {
		l[i] = 0
	}
	for j := 0; j < d; j++ {
		s := a[j*d+j]
		for k := 0; k < j; k++ {
			s -= l[j*d+k] * l[j*d+k]
		}
		if !(s > 0) || math.IsInf(s, 0) {
			return false
		}
		ljj := math.Sqrt(s)
		l[j*d+j] = ljj
		for i := j + 1; i < d; i++ {
			s := a[i*d+j]
			for k := 0; k < j; k++ {
				s -= l[i*d+k] * l[j*d+k]
			}
			l[i*d+j] = s / ljj
		}
	}
	return true
}

// welford accumulates the running mean and (co)variance of the positions
// visited inside one adaptation window, in one pass and without the
// cancellation of the naive sum-of-squares formula.
type welford struct {
	d     int
	dense bool
	n     int
	mean  []float64
	m2    []float64 // d (diagonal) or d×d (dense) sums of centered products
	delta []float64
}

func newWelford(d int, dense bool) *welford {
	w := &welford{d: d, dense: dense, mean: make([]float64, d), delta: make([]float64, d)}
	if dense {
		w.m2 = make([]float64, d*d)
	} else {
		w.m2 = make([]float64, d)
	}
	return w
}

func (w *welford) restart() {
	w.n = 0
	for i := range w.mean {
		w.mean[i] = 0
	}
	for i := range w.m2 {
		w.m2[i] = 0
	}
}

func (w *welford) add(x []float64) {
	w.n++
	inv := 1 / float64(w.n)
	for i, v := range x {
		w.delta[i] = v - w.mean[i]
		w.mean[i] += w.delta[i] * inv
	}
	if !w.dense {
		for i, v := range x {
			w.m2[i] += w.delta[i] * (v - w.mean[i])
		}
		return
	}
	d := w.d
	for i := 0; i < d; i++ {
		di := x[i] - w.mean[i]
		row := w.m2[i*d : i*d+d]
		for j := range row {
			row[j] += di * w.delta[j]
		}
	}
}

// regularized writes Stan's regularized estimate of the covariance,
// n/(n+5) Σ̂ + 1e-3·5/(n+5) I, into dst (diagonal or dense). Shrinking
// toward a small multiple of the identity keeps the metric well conditioned
// when the window is short.
func (w *welford) regularized(dst []float64) {
	n := float64(w.n)
	scale := n / (n + 5) / (n - 1)
	shrink := 1e-3 * 5 / (n + 5)
	if !w.dense {
		for i, v := range w.m2 {
			dst[i] = scale*v + shrink
		}
		return
	}
	d := w.d
	for i := 0; i < d; i++ {
		for j := 0; j < d; j++ {
			// Symmetrize: the one-pass update accumulates in a way
			// that is symmetric only up to rounding.
			v := 0.5 * (w.m2[i*d+j] + w.m2[j*d+i])
			dst[i*d+j] = scale * v
		}
		dst[i*d+i] += shrink
	}
}
