package flow

import (
	"math"

	"gonum.org/v1/gonum/mat"
)

// Covariance shrinkage for few points per dimension.
//
// A Gaussian whose covariance is the sample covariance of n points in d
// dimensions misses the true one by about d²/(4n) nats of KL divergence
// (d = 1000, n = 8000 training points: 31 nats; measured 39). The
// sample covariance's eigenvalues are spread out (the large ones too
// large, the small ones too small) and its eigenvectors are noisy. No
// estimator that is equivariant under rotations can repair the
// eigenvectors, but the eigenvalues can be replaced by the best ones for
// the sample eigenvectors: nonlinear shrinkage (Ledoit & Wolf 2020,
// "Analytical nonlinear shrinkage of large-dimensional covariance
// matrices", Ann. Statist. 48). For eigenvector u_i the value that
// minimizes KL(p‖q) is u_iᵀΣu_i, the one that minimizes KL(q‖p) is
// 1/(u_iᵀΣ⁻¹u_i); both have closed-form estimates from the sample
// eigenvalues alone, through a kernel estimate of their density and of its
// Hilbert transform. The bridge's overlap depends on both directions, so
// the shrunk eigenvalue is their geometric mean, which minimizes the
// symmetrized KL divergence for the sample eigenvectors.
//
// Measured on a correlated Gaussian (condition number 100, eigenvalues
// log-uniform, random rotation; d = 1000, 8000 points), KL(p‖q) and
// KL(q‖p) in nats: sample covariance 38.9 and 32.7; the geometric mean of
// the two estimates 31.2 and 30.1 (their oracle values 31.1 and 30.0).
// Linear shrinkage towards a multiple of the identity (Ledoit-Wolf or
// OAS) made both worse there (44.1 and 63.1): a spectrum spread over two
// decades is not near a multiple of the identity.
//
// The shrunk covariance replaces the sample covariance only when it
// gives the held-out points a clearly higher Gaussian log-likelihood
// (paired difference above stopSignificance standard errors, as a layer
// must), and it is tried only when the sample covariance's expected
// excess KL, d²/(4n), is at least shrinkMinKL: below, the eigenvalues
// need no repair and the eigendecomposition's cost (O(d³)) buys nothing.
// In particular the paper's problems (d <= 64, 1600 training points:
// 0.64 nats) keep the sample covariance and their results.
const shrinkMinKL = 1.0

// heldOutPoints are the held-out points (in the coordinates the whitening
// sees) and their weights (nil for equal).
type heldOutPoints struct {
	x []float64 // n×d
	n int
	w []float64
}

// covChoice says how the whitening chooses its covariance: by the
// held-out points val, or, when decided, as shrink says.
type covChoice struct {
	val     heldOutPoints
	decided bool
	shrink  bool
}

// fewPoints reports whether ne points are few for d dimensions: the
// sample covariance's expected excess KL divergence, d²/(4 ne), is at
// least shrinkMinKL.
func fewPoints(d int, ne float64) bool {
	return float64(d)*float64(d)/(4*ne) >= shrinkMinKL
}

// chooseCovariance returns the covariance to whiten with: cov (the scaled
// sample covariance of points of effective size ne) or its nonlinear
// shrinkage, and whether it is the shrunk one. Unless cc has decided,
// shrinkage is tried only for few points and kept only when the held-out
// points prefer it (never without held-out points). mean and scale are the
// centring and scaling that cov's coordinates carry. Where the shrinkage
// cannot be computed (a singular or failed eigendecomposition) cov is
// returned, and the whitening's own factorization names the problem.
func chooseCovariance(cov *mat.SymDense, ne float64, mean, scale []float64, cc covChoice, threads int) (*mat.SymDense, bool) {
	d := cov.SymmetricDim()
	if cc.decided && !cc.shrink {
		return cov, false
	}
	if !cc.decided && (cc.val.n < minValidationForStop || !fewPoints(d, ne)) {
		return cov, false
	}
	var eig mat.EigenSym
	if ne-1 <= float64(d) || !eig.Factorize(cov, true) {
		return cov, false
	}
	lambda := eig.Values(nil) // ascending
	if !(lambda[0] > singularTol*lambda[d-1]) {
		return cov, false
	}
	delta, ok := shrinkEigenvalues(lambda, ne)
	if !ok {
		return cov, false
	}
	var u mat.Dense
	eig.VectorsTo(&u)
	uflat := make([]float64, d*d) // row-major d×d: column k is eigenvector k
	for j := 0; j < d; j++ {
		for k := 0; k < d; k++ {
			uflat[j*d+k] = u.At(j, k)
		}
	}
	if !cc.decided {
		llSample, llShrunk := heldOutGaussian(cc.val, d, mean, scale, uflat, lambda, delta, threads)
		gain, se := weightedMean(llShrunk, llSample, cc.val.w)
		if !(gain > stopSignificance*se && gain > 0) {
			return cov, false
		}
	}
	// Σ̂ = B Bᵀ with B = U diag(√δ).
	b := mat.NewDense(d, d, nil)
	for j := 0; j < d; j++ {
		for k := 0; k < d; k++ {
			b.Set(j, k, uflat[j*d+k]*math.Sqrt(delta[k]))
		}
	}
	shrunk := mat.NewSymDense(d, nil)
	shrunk.SymOuterK(1, b)
	return shrunk, true
}

// shrinkEigenvalues returns the nonlinear shrinkage of the sample
// covariance eigenvalues lambda (ascending, covariance divided by the
// weight, of ne effective points), ok false when the formula does not
// apply (d >= ne - 1) or gives a non-positive value.
//
// With n = ne - 1, c = d/n, the eigenvalues λ of the unbiased covariance,
// the Epanechnikov kernel density estimate f of their distribution and
// its Hilbert transform H, both with bandwidth n^(-1/3) λ_j (Ledoit &
// Wolf 2020, section 4), the estimates are
//
//	u_iᵀΣu_i        ≈ λ_i / ((πcλ_i f_i)² + (1 - c - πcλ_i H_i)²)
//	1/(u_iᵀΣ⁻¹u_i)  ≈ λ_i / (1 - c - 2πcλ_i H_i)
//
// and their geometric mean is returned (see the comment above
// shrinkMinKL).
func shrinkEigenvalues(lambda []float64, ne float64) ([]float64, bool) {
	d := len(lambda)
	n := ne - 1
	if n <= float64(d) {
		return nil, false
	}
	c := float64(d) / n
	lam := make([]float64, d)
	for i, v := range lambda {
		lam[i] = v * ne / n
	}
	h := math.Pow(n, -1.0/3)
	sqrt5 := math.Sqrt(5)
	delta := make([]float64, d)
	for i, li := range lam {
		var f, hf float64
		for _, lj := range lam {
			hj := h * lj
			x := (li - lj) / hj
			if k := 1 - x*x/5; k > 0 {
				f += k / hj
			}
			t := -3 / (10 * math.Pi) * x
			if math.Abs(x) != sqrt5 {
				t += 3 / (4 * sqrt5 * math.Pi) * (1 - x*x/5) * math.Log(math.Abs((sqrt5-x)/(sqrt5+x)))
			}
			hf += t / hj
		}
		f *= 3 / (4 * sqrt5) / float64(d)
		hf /= float64(d)
		a := math.Pi * c * li * f
		b := 1 - c - math.Pi*c*li*hf
		frob := li / (a*a + b*b)
		stein := li / (1 - c - 2*math.Pi*c*li*hf)
		v := math.Sqrt(frob * stein)
		if !(v > 0) || math.IsInf(v, 0) || !(stein > 0) {
			return nil, false
		}
		delta[i] = v
	}
	return delta, true
}

// heldOutGaussian returns each held-out point's Gaussian log-likelihood
// (up to the same constant) under the sample covariance U diag(lambda) Uᵀ
// and under the shrunk one U diag(delta) Uᵀ, in the scaled coordinates
// (x - mean)/scale; the Jacobian of the scaling is common to both and
// left out.
func heldOutGaussian(val heldOutPoints, d int, mean, scale, u, lambda, delta []float64, threads int) (llSample, llShrunk []float64) {
	llSample = make([]float64, val.n)
	llShrunk = make([]float64, val.n)
	var ldl, ldd float64
	for k := range lambda {
		ldl += math.Log(lambda[k])
		ldd += math.Log(delta[k])
	}
	parallelFor(threads, numChunks(val.n), func(c int) {
		lo, hi := chunkBounds(c, val.n)
		r := hi - lo
		xs := make([]float64, r*d)
		for i := lo; i < hi; i++ {
			for j, v := range val.x[i*d : (i+1)*d] {
				xs[(i-lo)*d+j] = (v - mean[j]) / scale[j]
			}
		}
		y := make([]float64, r*d)
		mulRows(y, xs, r, d, u, d)
		for i := 0; i < r; i++ {
			var ql, qd float64
			for k, yk := range y[i*d : (i+1)*d] {
				ql += yk * yk / lambda[k]
				qd += yk * yk / delta[k]
			}
			llSample[lo+i] = -0.5 * (ql + ldl)
			llShrunk[lo+i] = -0.5 * (qd + ldd)
		}
	})
	return llSample, llShrunk
}
