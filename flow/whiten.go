package flow

import (
	"errors"
	"fmt"
	"math"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"
)

// WhitenMode selects the linear map that opens the flow (after the bounds
// layer, if any).
type WhitenMode int

const (
	// WhitenCholesky subtracts the mean and applies L⁻¹, where L is the
	// lower Cholesky factor of the covariance. It is the default: L⁻¹ is
	// triangular, so when the coordinates are (nearly) uncorrelated it
	// leaves each axis (nearly) in place and structure aligned with the
	// axes, such as independent non-Gaussian coordinates, survives for the
	// direction search to find.
	WhitenCholesky WhitenMode = iota
	// WhitenPCA subtracts the mean and rotates onto the principal axes,
	// each scaled to unit variance. Principal axes of a nearly isotropic
	// covariance are arbitrary, which is why it is not the default.
	WhitenPCA
	// WhitenNone starts from the data as they are (after the bounds
	// layer). Use it only for data already centred and scaled near unit
	// variance: the direction search compares projections with N(0, 1).
	WhitenNone
)

func (m WhitenMode) String() string {
	switch m {
	case WhitenCholesky:
		return "cholesky"
	case WhitenPCA:
		return "pca"
	case WhitenNone:
		return "none"
	}
	return fmt.Sprintf("WhitenMode(%d)", int(m))
}

// singularTol is the smallest share of a coordinate's variance that may
// remain once the coordinates before it are regressed out (Cholesky), or
// the smallest ratio of covariance eigenvalues (PCA). Below it the data
// lie on a lower-dimensional subspace and have no density in d dimensions.
const singularTol = 1e-12

// Blocking of the covariance: rows per partial sum, rows of the d×d sum
// per cache block.
const (
	covGroupRows = 16 * chunkRows
	covBlock     = 32
)

// whitening is z = white (x - mean), with its inverse and log-determinant.
type whitening struct {
	mean    []float64 // d
	white   []float64 // d×d, row-major
	unwhite []float64 // d×d, the inverse of white
	whiteT  []float64 // whiteᵀ, for row-major products
	unT     []float64 // unwhiteᵀ
	logDet  float64   // log|det white|
	shrunk  bool      // the covariance is the shrinkage estimate (not serialized)
	// tri: whiteT and unT are upper triangular (Cholesky whitening), so
	// their products skip the zeros (derived by init).
	tri bool
}

// fitWhitening estimates the weighted mean and covariance of the n×d
// points x (weights w summing to anything positive, nil for equal) and
// builds the whitening map. cc says whether the covariance is shrunk: as
// the held-out points prefer (see chooseCovariance), or as decided before.
func fitWhitening(x []float64, n, d int, w []float64, cc covChoice, mode WhitenMode, threads int) (*whitening, error) {
	if mode == WhitenNone {
		wt := &whitening{mean: make([]float64, d), white: identity(d), unwhite: identity(d)}
		wt.init(d)
		return wt, nil
	}
	if mode != WhitenCholesky && mode != WhitenPCA {
		return nil, fmt.Errorf("flow: unknown whitening mode %d", int(mode))
	}
	mean, total := columnMeans(x, n, d, w)
	scale, err := columnScales(x, n, d, mean)
	if err != nil {
		return nil, err
	}
	cov := scaledCovariance(x, n, d, w, mean, scale, total, threads)
	cov, shrunk := chooseCovariance(cov, effectiveSize(w, n), mean, scale, cc, threads)
	var white, unwhite []float64
	if mode == WhitenCholesky {
		white, unwhite, err = choleskyWhitening(cov, scale)
	} else {
		white, unwhite, err = pcaWhitening(cov, scale)
	}
	if err != nil {
		return nil, err
	}
	wt := &whitening{mean: mean, white: white, unwhite: unwhite, shrunk: shrunk}
	wt.init(d)
	return wt, nil
}

// columnMeans returns the weighted mean of each column of the n×d points
// x and the total weight.
func columnMeans(x []float64, n, d int, w []float64) (mean []float64, total float64) {
	mean = make([]float64, d)
	for i := 0; i < n; i++ {
		wi := 1.0
		if w != nil {
			wi = w[i]
		}
		total += wi
		for j, v := range x[i*d : i*d+d] {
			mean[j] += wi * v
		}
	}
	for j := range mean {
		mean[j] /= total
	}
	return mean, total
}

// columnScales returns each column's largest deviation from its mean.
// The covariance is computed for the columns scaled by it, so that data
// of any magnitude (1e-200 or 1e200) neither underflow nor overflow when
// squared; the scales are folded back into the whitening matrices.
func columnScales(x []float64, n, d int, mean []float64) ([]float64, error) {
	scale := make([]float64, d)
	for i := 0; i < n; i++ {
		for j, v := range x[i*d : i*d+d] {
			scale[j] = max(scale[j], math.Abs(v-mean[j]))
		}
	}
	for j, sc := range scale {
		if !(sc > 0) || math.IsInf(sc, 0) {
			return nil, fmt.Errorf("flow: column %d has no finite spread around its mean", j)
		}
	}
	return scale, nil
}

// scaledCovariance returns the weighted covariance (divided by the total
// weight) of the columns of x centred by mean and divided by scale.
//
// It is accumulated per fixed group of rows and summed in group order
// (deterministic for any number of threads). Groups are large
// (covGroupRows) because each holds a d×d partial sum: per 256-row chunk,
// as before, 10^5 points in 1000 dimensions held 3 GB of them.
func scaledCovariance(x []float64, n, d int, w, mean, scale []float64, total float64, threads int) *mat.SymDense {
	ng := (n + covGroupRows - 1) / covGroupRows
	parts := make([][]float64, ng)
	parallelFor(threads, ng, func(g int) {
		lo, hi := g*covGroupRows, min((g+1)*covGroupRows, n)
		s := make([]float64, d*d)
		rows := make([]float64, chunkRows*d)
		for c0 := lo; c0 < hi; c0 += chunkRows {
			c1 := min(c0+chunkRows, hi)
			for i := c0; i < c1; i++ {
				r := rows[(i-c0)*d : (i-c0+1)*d]
				for j, v := range x[i*d : i*d+d] {
					r[j] = (v - mean[j]) / scale[j]
				}
			}
			// Blocks of covBlock rows of s stay in cache while every point
			// of the chunk updates them; each entry still sums its points
			// in increasing order.
			for j0 := 0; j0 < d; j0 += covBlock {
				j1 := min(j0+covBlock, d)
				for i := c0; i < c1; i++ {
					r := rows[(i-c0)*d : (i-c0+1)*d]
					wi := 1.0
					if w != nil {
						wi = w[i]
					}
					for j := j0; j < j1; j++ {
						if f := wi * r[j]; f != 0 {
							floats.AddScaled(s[j*d:j*d+j+1], f, r[:j+1])
						}
					}
				}
			}
		}
		parts[g] = s
	})
	cov := mat.NewSymDense(d, nil)
	for j := 0; j < d; j++ {
		for l := 0; l <= j; l++ {
			var v float64
			for _, p := range parts {
				v += p[j*d+l]
			}
			cov.SetSym(j, l, v/total)
		}
	}
	return cov
}

// choleskyWhitening returns white = L⁻¹ S⁻¹ and unwhite = S L for the
// lower Cholesky factor L of the scaled covariance cov and S =
// diag(scale), or an error naming the first (numerically) dependent
// column.
func choleskyWhitening(cov *mat.SymDense, scale []float64) (white, unwhite []float64, err error) {
	d := cov.SymmetricDim()
	var ch mat.Cholesky
	ok := ch.Factorize(cov)
	var lt mat.TriDense
	if ok {
		ch.LTo(&lt)
	}
	for j := 0; j < d; j++ {
		// L_jj² is the variance of coordinate j left after regressing
		// out the coordinates before it.
		if ok && lt.At(j, j)*lt.At(j, j) > singularTol*cov.At(j, j) {
			continue
		}
		if !ok {
			// Rounding can make a singular covariance fail the
			// factorization instead of leaving a tiny pivot: find
			// the column where it breaks down.
			j = firstSingularColumn(cov)
		}
		if j <= 0 {
			return nil, nil, errors.New("flow: covariance is not positive definite")
		}
		return nil, nil, fmt.Errorf("flow: covariance is singular: column %d is (numerically) a linear combination of columns 0..%d, so the points have no density in %d dimensions", j, j-1, d)
	}
	var inv mat.TriDense
	if err := inv.InverseTri(&lt); err != nil {
		return nil, nil, fmt.Errorf("flow: covariance is too ill-conditioned to whiten: %v", err)
	}
	// x - μ = S L z with S = diag(scale): unwhite = S L, white = L⁻¹ S⁻¹.
	unwhite = make([]float64, d*d)
	white = make([]float64, d*d)
	for i := 0; i < d; i++ {
		for j := 0; j <= i; j++ {
			unwhite[i*d+j] = scale[i] * lt.At(i, j)
			white[i*d+j] = inv.At(i, j) / scale[j]
		}
	}
	return white, unwhite, nil
}

// pcaWhitening returns the map onto the principal axes of the scaled
// covariance cov, largest variance first, each scaled to unit variance.
func pcaWhitening(cov *mat.SymDense, scale []float64) (white, unwhite []float64, err error) {
	d := cov.SymmetricDim()
	var eig mat.EigenSym
	if !eig.Factorize(cov, true) {
		return nil, nil, fmt.Errorf("flow: eigendecomposition of the covariance failed")
	}
	vals := eig.Values(nil) // ascending
	if !(vals[0] > singularTol*vals[d-1]) {
		return nil, nil, fmt.Errorf("flow: covariance is singular (smallest/largest eigenvalue %.3g/%.3g): the points have no density in %d dimensions", vals[0], vals[d-1], d)
	}
	var vec mat.Dense
	eig.VectorsTo(&vec)
	white = make([]float64, d*d)
	unwhite = make([]float64, d*d)
	for c := 0; c < d; c++ {
		// Largest variance first; z_c = v_cᵀ S⁻¹(x-μ)/sqrt(λ_c).
		e := d - 1 - c
		sq := math.Sqrt(vals[e])
		for j := 0; j < d; j++ {
			white[c*d+j] = vec.At(j, e) / sq / scale[j]
			unwhite[j*d+c] = scale[j] * vec.At(j, e) * sq
		}
	}
	return white, unwhite, nil
}

// firstSingularColumn returns the first column j whose Cholesky pivot,
// the variance of coordinate j left after regressing out the coordinates
// before it, is at most singularTol of its variance (-1 if none): an
// unblocked Cholesky that stops there instead of failing.
func firstSingularColumn(cov *mat.SymDense) int {
	d := cov.SymmetricDim()
	l := make([]float64, d*d)
	for j := 0; j < d; j++ {
		v := cov.At(j, j)
		for k := 0; k < j; k++ {
			v -= l[j*d+k] * l[j*d+k]
		}
		if !(v > singularTol*cov.At(j, j)) {
			return j
		}
		l[j*d+j] = math.Sqrt(v)
		for i := j + 1; i < d; i++ {
			u := cov.At(i, j)
			for k := 0; k < j; k++ {
				u -= l[i*d+k] * l[j*d+k]
			}
			l[i*d+j] = u / l[j*d+j]
		}
	}
	return -1
}

// init derives the transposes and the log-determinant.
func (wt *whitening) init(d int) {
	wt.whiteT = transpose(wt.white, d, d)
	wt.unT = transpose(wt.unwhite, d, d)
	wt.tri = upperTriangular(wt.whiteT, d) && upperTriangular(wt.unT, d)
	m := mat.NewDense(d, d, append([]float64(nil), wt.white...))
	var lu mat.LU
	lu.Factorize(m)
	wt.logDet, _ = lu.LogDet()
}

// forward whitens r rows of x (r×d) into z; x is centred in place.
func (wt *whitening) forward(z, x []float64, r, d int) {
	for i := 0; i < r; i++ {
		row := x[i*d : (i+1)*d]
		for j, m := range wt.mean {
			row[j] -= m
		}
	}
	wt.mul(z, x[:r*d], r, d, wt.whiteT)
}

// mul sets dst (r×d) = x (r×d) · a for a = whiteT or unT.
func (wt *whitening) mul(dst, x []float64, r, d int, a []float64) {
	if wt.tri {
		mulRowsUpper(dst, x, r, d, a)
		return
	}
	mulRows(dst, x, r, d, a, d)
}

// inverse maps r whitened rows z back to x.
func (wt *whitening) inverse(x, z []float64, r, d int) {
	wt.mul(x, z, r, d, wt.unT)
	for i := 0; i < r; i++ {
		for j := 0; j < d; j++ {
			x[i*d+j] += wt.mean[j]
		}
	}
}

func identity(d int) []float64 {
	a := make([]float64, d*d)
	for i := 0; i < d; i++ {
		a[i*d+i] = 1
	}
	return a
}
