package flow

import (
	"math"
	"math/rand/v2"
	"slices"

	"gonum.org/v1/gonum/blas/blas32"
	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"
)

// Directions of maximal non-Gaussianity: maximize the sliced Wasserstein
// distance between the projections of the data and N(0, 1),
//
//	F(A) = 1/(m k) Σ_c Σ_r (p_(r)c - z_r)²,   p = x A,  AᵀA = I,
//
// over the Stiefel manifold of orthonormal d×k frames A. z_r is the mean
// of N(0, 1) over its r-th quantile interval of probability 1/m, which
// makes F the exact squared 2-Wasserstein distance between the empirical
// distribution of each projection and N(0, 1), averaged over directions.
// The Euclidean gradient is G = 2/(m k) xᵀR with R_ic = p_ic - z_rank(i,c).
//
// The ascent is Algorithm 2 of Wen & Yin (2013) turned to maximization:
// steps along the Cayley curve
//
//	A(τ) = (I - τ/2 W)⁻¹ (I + τ/2 W) A,   W = G Aᵀ - A Gᵀ,
//
// which stays on the manifold and starts along the Riemannian gradient
// W A, with Barzilai-Borwein step sizes (alternating the two formulas) and
// the non-monotone line search of Zhang & Hager (2004). It needs a few
// tens of evaluations from a random frame and a handful from a good one,
// where a fixed or merely adaptive step needed several times more. Steps
// are bounded as rotation angles, τ‖W‖₂ in [swMinAngle, swMaxAngle].
//
// Each evaluation projects and sorts m points on k directions; that is
// the whole cost of the search. The projections are computed in single
// precision (they only rank points and measure distances at the scale of
// the sampling noise, and single-precision products run at twice the
// speed) and sorted by a radix sort on packed keys.

// swSearch holds the fixed data of one direction search.
type swSearch struct {
	xt      []float32 // d×m: the sample transposed, in single precision
	m, d, k int
	z       []float64 // m target atoms, increasing
	threads int

	// Per-direction scratch, reused across evaluations.
	sortBuf [][]uint64
	rBuf    [][]float32
}

// swFrame is a frame with its projections, their sort orders and F.
type swFrame struct {
	a    []float64   // d×k
	pt   []float32   // k×m: projection c of point i at pt[c*m+i]
	ord  [][]uint64  // ord[c]: sort keys of projection c, increasing (see rankKey)
	keys [][]float64 // keys[c]: projection c, sorted
	f    float64
}

// Settings of the ascent.
const (
	swInitialAngle = 0.3  // rotation angle of the first step
	swMaxAngle     = 1.0  // bound on the rotation angle of a step
	swMinAngle     = 1e-3 // lower bound (a BB step may collapse)
	swRelTol       = 1e-3 // an accepted step gaining less than this fraction of F is small
	swSmallSteps   = 3    // stop after this many small steps in a row
	swRho          = 1e-4 // sufficient increase of the line search
	swShrink       = 0.2  // step reduction of the line search
	swEta          = 0.85 // weight of the non-monotone reference value
	swTries        = 6    // line-search trials before giving up
)

// gaussianAtoms returns the means of N(0, 1) over its m quantile
// intervals of equal probability.
func gaussianAtoms(m int) []float64 {
	z := make([]float64, m)
	pdf := func(q float64) float64 {
		if math.IsInf(q, 0) {
			return 0
		}
		return math.Exp(logPhi(q))
	}
	prev := 0.0 // φ(Φ⁻¹(0)) = 0
	for r := 0; r < m; r++ {
		var next float64
		if r < m-1 {
			next = pdf(normQuantile(float64(r+1) / float64(m)))
		}
		z[r] = float64(m) * (prev - next)
		prev = next
	}
	// Symmetrize against rounding so that a symmetric sample is exactly
	// Gaussian-centred.
	for r := 0; r < m/2; r++ {
		v := 0.5 * (z[m-1-r] - z[r])
		z[r], z[m-1-r] = -v, v
	}
	if m%2 == 1 {
		z[m/2] = 0
	}
	return z
}

// randomFrame returns a Haar-distributed orthonormal d×k frame.
func randomFrame(d, k int, rng *rand.Rand) []float64 {
	a := make([]float64, d*k)
	for i := range a {
		a[i] = rng.NormFloat64()
	}
	orthonormalize(a, d, k)
	return a
}

// orthonormalize replaces the columns of the d×k matrix a by an
// orthonormal basis of their span, column by column (modified
// Gram-Schmidt, applied twice: "twice is enough" for orthogonality to
// rounding). Each column moves as little as possible, so a frame that is
// already nearly orthonormal keeps its directions.
func orthonormalize(a []float64, d, k int) {
	col := make([]float64, d)
	for c := 0; c < k; c++ {
		for i := 0; i < d; i++ {
			col[i] = a[i*k+c]
		}
		project(col, a, d, k, c)
		nrm := floats.Norm(col, 2)
		if !(nrm > 1e-12) {
			// A (numerically) dependent column: replace it by the first
			// coordinate axis that leaves the span, then orthonormalize.
			for e := 0; e < d; e++ {
				clear(col)
				col[e] = 1
				project(col, a, d, k, c)
				if nrm = floats.Norm(col, 2); nrm > 0.5 {
					break
				}
			}
		}
		for i := 0; i < d; i++ {
			a[i*k+c] = col[i] / nrm
		}
	}
}

// project removes from col its components along the first c columns of
// the d×k matrix a (assumed orthonormal), twice.
func project(col, a []float64, d, k, c int) {
	for pass := 0; pass < 2; pass++ {
		for b := 0; b < c; b++ {
			var dot float64
			for i := 0; i < d; i++ {
				dot += col[i] * a[i*k+b]
			}
			for i := 0; i < d; i++ {
				col[i] -= dot * a[i*k+b]
			}
		}
	}
}

// maxSlicedDirections returns the frame reached from a0 (orthonormal d×k)
// after at most maxIter steps of the ascent on the m×d sample x.
func maxSlicedDirections(x []float64, m, d int, a0 []float64, k, maxIter, threads int) []float64 {
	xt := make([]float32, d*m)
	for i := 0; i < m; i++ {
		for l, v := range x[i*d : (i+1)*d] {
			xt[l*m+i] = float32(v)
		}
	}
	s := &swSearch{xt: xt, m: m, d: d, k: k, z: gaussianAtoms(m), threads: threads,
		sortBuf: make([][]uint64, k), rBuf: make([][]float32, k)}
	for c := 0; c < k; c++ {
		s.sortBuf[c] = make([]uint64, m)
		s.rBuf[c] = make([]float32, m)
	}
	cur := s.newFrame(slices.Clone(a0))
	s.evaluate(cur)
	trial := s.newFrame(slices.Clone(a0))

	w := newSkew(s.gradient(cur), cur.a, d, k)
	wn := w.norm
	gr := w.riemann()
	ws := w.spectral()
	tau := swInitialAngle / ws
	ref, q := cur.f, 1.0 // non-monotone reference value and its weight
	small := 0
	for it := 0; it < maxIter && wn > 0 && isFinite(wn); it++ {
		// Line search along the Cayley curve from cur.
		ok := false
		for try := 0; try < swTries; try++ {
			if !w.cayley(trial.a, tau) {
				break
			}
			for c := range cur.ord {
				copy(trial.ord[c], cur.ord[c])
			}
			s.evaluate(trial)
			if trial.f >= ref+swRho*tau*0.5*wn*wn {
				ok = true
				break
			}
			tau *= swShrink
		}
		if !ok {
			break
		}
		gain := trial.f - cur.f
		wNew := newSkew(s.gradient(trial), trial.a, d, k)
		wnNew := wNew.norm
		grNew := wNew.riemann()
		wsNew := wNew.spectral()
		// Barzilai-Borwein step from s = ΔA and y = Δ(W A).
		var ss, sy, yy float64
		for i := range trial.a {
			sv := trial.a[i] - cur.a[i]
			yv := grNew[i] - gr[i]
			ss += sv * sv
			sy += sv * yv
			yy += yv * yv
		}
		sy = math.Abs(sy)
		switch {
		case sy == 0 || yy == 0:
			tau = swInitialAngle / wsNew
		case it%2 == 0:
			tau = ss / sy
		default:
			tau = sy / yy
		}
		tau = min(max(tau, swMinAngle/wsNew), swMaxAngle/wsNew)
		qNew := swEta*q + 1
		ref = (swEta*q*ref + trial.f) / qNew
		q = qNew
		cur, trial = trial, cur
		w, wn, gr = wNew, wnNew, grNew
		if gain < swRelTol*math.Abs(cur.f) {
			if small++; small >= swSmallSteps {
				break
			}
		} else {
			small = 0
		}
	}
	orthonormalize(cur.a, d, k)
	return cur.a
}

// spectralNorm estimates the largest singular value of the d×d matrix w
// by power iteration on wᵀw (enough for a step-size scale).
func spectralNorm(w []float64, d int) float64 {
	v := make([]float64, d)
	u := make([]float64, d)
	for i := range v {
		v[i] = 1 / math.Sqrt(float64(d)) * (1 + 0.1*float64(i%7))
	}
	var sigma float64
	for it := 0; it < 30; it++ {
		// u = w v; v = wᵀ u
		for i := 0; i < d; i++ {
			u[i] = floats.Dot(w[i*d:i*d+d], v)
		}
		clear(v)
		for i := 0; i < d; i++ {
			floats.AddScaled(v, u[i], w[i*d:i*d+d])
		}
		nv := floats.Norm(v, 2)
		if !(nv > 0) {
			return 0
		}
		prev := sigma
		sigma = math.Sqrt(nv)
		floats.Scale(1/nv, v)
		if math.Abs(sigma-prev) < 1e-3*sigma {
			break
		}
	}
	return sigma
}

// riemannGrad returns W A (d×k), the Riemannian gradient under the
// canonical metric.
func riemannGrad(w, a []float64, d, k int) []float64 {
	out := make([]float64, d*k)
	for i := 0; i < d; i++ {
		for j := 0; j < d; j++ {
			if v := w[i*d+j]; v != 0 {
				floats.AddScaled(out[i*k:i*k+k], v, a[j*k:j*k+k])
			}
		}
	}
	return out
}

func (s *swSearch) newFrame(a []float64) *swFrame {
	f := &swFrame{a: a, pt: make([]float32, s.k*s.m), ord: make([][]uint64, s.k), keys: make([][]float64, s.k)}
	for c := range f.ord {
		o := make([]uint64, s.m)
		for i := range o {
			o[i] = uint64(i)
		}
		f.ord[c] = o
		f.keys[c] = make([]float64, s.m)
	}
	return f
}

// evaluate computes the projections of frame f, their sort orders and F.
// The previous order in f.ord only seeds the stable sort.
func (s *swSearch) evaluate(f *swFrame) {
	m, d, k := s.m, s.d, s.k
	parts := make([]float64, k)
	const mask = 1<<32 - 1
	parallelFor(s.threads, k, func(c int) {
		// Projection c is Σ_l a_lc xᵀ_l: d long single-precision axpys.
		pc := f.pt[c*m : (c+1)*m]
		clear(pc)
		for l := 0; l < d; l++ {
			if v := float32(f.a[l*k+c]); v != 0 {
				blas32.Axpy(v, blas32.Vector{N: m, Inc: 1, Data: s.xt[l*m : (l+1)*m]}, blas32.Vector{N: m, Inc: 1, Data: pc})
			}
		}
		ord := f.ord[c]
		for r, o := range ord {
			i := int(o & mask)
			ord[r] = rankKey(pc[i], i)
		}
		sortKeys(ord, s.sortBuf[c])
		key := f.keys[c]
		prev := math.Inf(-1)
		var sum float64
		for r, o := range ord {
			// max: the keys order values only to ~1e-4.
			v := max(float64(pc[int(o&mask)]), prev)
			key[r], prev = v, v
			e := v - s.z[r]
			sum += e * e
		}
		parts[c] = sum
	})
	var sum float64
	for _, v := range parts {
		sum += v
	}
	f.f = sum / float64(m*k)
}

// sortKeys sorts rank keys with buf as scratch: a comparison sort for
// short slices, the radix sort on the top bits otherwise.
func sortKeys(keys, buf []uint64) {
	if len(keys) < 256 {
		slices.Sort(keys)
		return
	}
	radixSortRanks(keys, buf)
}

// gradient returns the Euclidean gradient of F at frame f (d×k).
func (s *swSearch) gradient(f *swFrame) []float64 {
	m, d, k := s.m, s.d, s.k
	scale := 2 / float64(m*k)
	const mask = 1<<32 - 1
	gt := make([]float32, k*d) // the gradient transposed, k×d
	parallelFor(s.threads, k, func(c int) {
		// Row c of Gᵀ is Σ_i r_i x_i with r_i the scaled residual of
		// point i: d long single-precision dot products.
		r := s.rBuf[c]
		key := f.keys[c]
		for rank, o := range f.ord[c] {
			r[int(o&mask)] = float32(scale * (key[rank] - s.z[rank]))
		}
		rv := blas32.Vector{N: m, Inc: 1, Data: r}
		for l := 0; l < d; l++ {
			gt[c*d+l] = blas32.Dot(rv, blas32.Vector{N: m, Inc: 1, Data: s.xt[l*m : (l+1)*m]})
		}
	})
	g := make([]float64, d*k)
	for c := 0; c < k; c++ {
		for l := 0; l < d; l++ {
			g[l*k+c] = float64(gt[c*d+l])
		}
	}
	return g
}

// skewGradient returns W = G Aᵀ - A Gᵀ (d×d) and its Frobenius norm.
func skewGradient(g, a []float64, d, k int) ([]float64, float64) {
	w := make([]float64, d*d)
	for i := 0; i < d; i++ {
		for j := i + 1; j < d; j++ {
			v := floats.Dot(g[i*k:i*k+k], a[j*k:j*k+k]) - floats.Dot(a[i*k:i*k+k], g[j*k:j*k+k])
			w[i*d+j] = v
			w[j*d+i] = -v
		}
	}
	return w, floats.Norm(w, 2)
}

// cayley sets dst = (I - τ/2 W)⁻¹ (I + τ/2 W) a. I - τ/2 W is never
// singular for skew W (its eigenvalues are 1 - iτλ/2), so false means
// only a numerical failure.
func cayley(dst, a, w []float64, tau float64, d, k int) bool {
	lhs := mat.NewDense(d, d, nil)
	rhs := mat.NewDense(d, k, nil)
	h := tau / 2
	for i := 0; i < d; i++ {
		for j := 0; j < d; j++ {
			lhs.Set(i, j, -h*w[i*d+j])
		}
		lhs.Set(i, i, 1)
		for c := 0; c < k; c++ {
			var v float64
			for j := 0; j < d; j++ {
				v += w[i*d+j] * a[j*k+c]
			}
			rhs.Set(i, c, a[i*k+c]+h*v)
		}
	}
	var sol mat.Dense
	if err := sol.Solve(lhs, rhs); err != nil {
		return false
	}
	for i := 0; i < d; i++ {
		for c := 0; c < k; c++ {
			dst[i*k+c] = sol.At(i, c)
		}
	}
	return isFinite(floats.Sum(dst))
}
