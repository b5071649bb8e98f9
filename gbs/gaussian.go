package gbs

import (
	"fmt"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"
)

// Gaussian is a multivariate normal proposal N(mu, L L^T).
type Gaussian struct {
	d      int
	mu     []float64
	chol   blas64.General // lower-triangular Cholesky factor L, d×d
	logNrm float64        // -d/2 log 2π - log|L|
}

// NewGaussian returns the normal density with mean mu and covariance cov
// (row-major d×d, symmetric positive definite).
func NewGaussian(mu, cov []float64) (*Gaussian, error) {
	d := len(mu)
	if d == 0 {
		return nil, fmt.Errorf("gbs: Gaussian of dimension 0")
	}
	if len(cov) != d*d {
		return nil, fmt.Errorf("gbs: covariance has %d entries, want %d×%d", len(cov), d, d)
	}
	var ch mat.Cholesky
	if ok := ch.Factorize(mat.NewSymDense(d, append([]float64(nil), cov...))); !ok {
		return nil, fmt.Errorf("gbs: covariance is not positive definite%s", degenerateHint(cov, d))
	}
	var l mat.TriDense
	ch.LTo(&l)
	g := &Gaussian{d: d, mu: append([]float64(nil), mu...)}
	g.chol = blas64.General{Rows: d, Cols: d, Stride: d, Data: make([]float64, d*d)}
	logDet := 0.0
	for i := 0; i < d; i++ {
		for j := 0; j <= i; j++ {
			g.chol.Data[i*d+j] = l.At(i, j)
		}
		logDet += math.Log(l.At(i, i))
	}
	g.logNrm = -0.5*float64(d)*math.Log(2*math.Pi) - logDet
	return g, nil
}

// degenerateHint names a coordinate with zero variance, the usual cause of a
// singular sample covariance.
func degenerateHint(cov []float64, d int) string {
	for k := 0; k < d; k++ {
		if !(cov[k*d+k] > 0) {
			return fmt.Sprintf(" (coordinate %d has zero variance)", k)
		}
	}
	return " (coordinates are collinear, or fewer draws than dimensions)"
}

// FitGaussian is a ProposalFitter returning the normal density with the
// (weighted) sample mean and covariance of x.
func FitGaussian(x []float64, d int, weights []float64, _ uint64) (Proposal, []string, error) {
	mu, cov, err := sampleMoments(x, d, weights)
	if err != nil {
		return nil, nil, err
	}
	g, err := NewGaussian(mu, cov)
	return g, nil, err
}

// sampleMoments returns the weighted mean and covariance (row-major) of the
// row-major points x.
func sampleMoments(x []float64, d int, weights []float64) (mu, cov []float64, err error) {
	if d <= 0 || len(x)%d != 0 {
		return nil, nil, fmt.Errorf("gbs: %d values do not form points of dimension %d", len(x), d)
	}
	n := len(x) / d
	if n <= d {
		return nil, nil, fmt.Errorf("gbs: %d points cannot fit a %d-dimensional covariance (need more than d)", n, d)
	}
	w := weights
	if w == nil {
		w = make([]float64, n)
		for i := range w {
			w[i] = 1
		}
	}
	if len(w) != n {
		return nil, nil, fmt.Errorf("gbs: %d weights for %d points", len(w), n)
	}
	var sw, sw2 float64
	for i, v := range w {
		if !(v >= 0) || math.IsInf(v, 1) {
			return nil, nil, fmt.Errorf("gbs: weight %d is %v, want finite and non-negative", i, v)
		}
		sw += v
		sw2 += v * v
	}
	if !(sw > 0) {
		return nil, nil, fmt.Errorf("gbs: all weights are zero")
	}
	mu = make([]float64, d)
	for i := 0; i < n; i++ {
		for k := 0; k < d; k++ {
			mu[k] += w[i] * x[i*d+k]
		}
	}
	for k := range mu {
		mu[k] /= sw
	}
	c := blas64.General{Rows: n, Cols: d, Stride: d, Data: make([]float64, n*d)}
	for i := 0; i < n; i++ {
		sq := math.Sqrt(w[i])
		for k := 0; k < d; k++ {
			c.Data[i*d+k] = sq * (x[i*d+k] - mu[k])
		}
	}
	cov = make([]float64, d*d)
	blas64.Gemm(blas.Trans, blas.NoTrans, 1/(sw-sw2/sw), c, c, 0, blas64.General{Rows: d, Cols: d, Stride: d, Data: cov})
	return mu, cov, nil
}

// Dim returns the dimension.
func (g *Gaussian) Dim() int { return g.d }

// Mean returns the mean vector.
func (g *Gaussian) Mean() []float64 { return append([]float64(nil), g.mu...) }

// LogProb writes log N(x; mu, Σ) at the row-major points x into dst.
func (g *Gaussian) LogProb(dst, x []float64) {
	n, d := len(dst), g.d
	z := blas64.General{Rows: n, Cols: d, Stride: d, Data: make([]float64, n*d)}
	for i := 0; i < n; i++ {
		for k := 0; k < d; k++ {
			z.Data[i*d+k] = x[i*d+k] - g.mu[k]
		}
	}
	// z L^T = x - mu.
	blas64.Trsm(blas.Right, blas.Trans, 1, g.lower(), z)
	for i := 0; i < n; i++ {
		var q float64
		for _, v := range z.Data[i*d : (i+1)*d] {
			q += v * v
		}
		dst[i] = g.logNrm - 0.5*q
	}
}

// Sample draws len(logq) points into dst with their log density.
func (g *Gaussian) Sample(dst, logq []float64, rng *rand.Rand) {
	n, d := len(logq), g.d
	z := blas64.General{Rows: n, Cols: d, Stride: d, Data: dst[:n*d]}
	for i := 0; i < n; i++ {
		var q float64
		for k := 0; k < d; k++ {
			v := rng.NormFloat64()
			z.Data[i*d+k] = v
			q += v * v
		}
		logq[i] = g.logNrm - 0.5*q
	}
	blas64.Trmm(blas.Right, blas.Trans, 1, g.lower(), z)
	for i := 0; i < n; i++ {
		for k := 0; k < d; k++ {
			z.Data[i*d+k] += g.mu[k]
		}
	}
}

func (g *Gaussian) lower() blas64.Triangular {
	return blas64.Triangular{Uplo: blas.Lower, Diag: blas.NonUnit, N: g.d, Stride: g.d, Data: g.chol.Data}
}
