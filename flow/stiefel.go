package flow

import (
	"math"
	"math/bits"
	"math/rand/v2"
	"slices"

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
// The ascent follows the Cayley curve of Wen & Yin (2013),
//
//	A(τ) = (I - τ/2 W)⁻¹ (I + τ/2 W) A,   W = G Aᵀ - A Gᵀ,
//
// which stays on the manifold and starts along the Riemannian gradient.
// The step is set as a rotation angle θ = τ‖W‖_F (an upper bound on the
// largest angle any direction turns): it grows by half after an accepted
// step and shrinks after a rejected one, so the search needs no line search
// and no tuning to the scale of F.

// swSearch holds the fixed data of one direction search.
type swSearch struct {
	x       []float64 // m×d subsample
	m, d, k int
	z       []float64 // m target atoms, increasing
	obj     objective
	wq      []float64 // quantile weights of objWeighted
	spacing int       // m-spacing of the entropy estimate
	idxBits uint      // low bits of a sort key holding the point index
	threads int
}

// objective is the non-Gaussianity measure of a projection.
type objective int

const (
	objSliced   objective = iota // squared 2-Wasserstein distance to N(0, 1)
	objEntropy                   // KL divergence to N(0, 1) by m-spacings
	objSW1                       // 1-Wasserstein distance
	objHuber                     // Huber loss of the quantile differences
	objCvM                       // Cramér-von Mises distance in probability space
	objWeighted                  // quantile distance weighted by inverse order-statistic variance
)

// huberDelta is the residual beyond which objHuber grows linearly.
var huberDelta = 1.0

// swFrame is a frame with its projections, their sort orders and F.
type swFrame struct {
	a    []float64  // d×k
	p    []float64  // m×k
	ord  [][]uint64 // ord[c]: sort keys of projection c, increasing (see packKey)
	keys [][]float64
	f    float64
}

// Settings of the search. Steps are capped (a few tens of accepted steps
// capture most of the gain; later layers correct what one layer leaves).
const (
	swInitialAngle = 0.3
	swMaxAngle     = 1.0
	swMinAngle     = 1e-3
	swRelTol       = 1e-3 // an accepted step gaining less than this fraction of F is "small"
	swSmallSteps   = 3    // stop after this many small accepted steps in a row
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
// after at most maxIter steps of the ascent described above on the m×d
// sample x.
func maxSlicedDirections(x []float64, m, d int, a0 []float64, k, maxIter, threads int, obj objective) []float64 {
	s := &swSearch{x: x, m: m, d: d, k: k, z: gaussianAtoms(m), threads: threads, obj: obj,
		spacing: max(1, int(math.Round(math.Sqrt(float64(m))))), idxBits: uint(bits.Len(uint(m)))}
	if obj == objWeighted {
		s.wq = quantileWeights(m)
	}
	cur := s.newFrame(a0)
	s.evaluate(cur, true)
	if maxIter <= 0 {
		return cur.a
	}
	trial := s.newFrame(slices.Clone(a0))
	var evals, accepted int
	if useBB {
		cur, evals, accepted = s.ascendBB(cur, trial, maxIter)
	} else {
		cur, evals, accepted = s.ascendAdaptive(cur, trial, maxIter)
	}
	if searchTrace != nil {
		searchTrace(evals, accepted, cur.f)
	}
	orthonormalize(cur.a, d, k)
	return cur.a
}

// ascendAdaptive is gradient ascent with an adaptive rotation angle.
func (s *swSearch) ascendAdaptive(cur, trial *swFrame, maxIter int) (*swFrame, int, int) {
	d, k := s.d, s.k
	g := s.gradient(cur)
	theta := swInitialAngle
	small := 0
	evals, accepted := 1, 0
	for it := 0; it < maxIter; it++ {
		w, wn := skewGradient(g, cur.a, d, k)
		if !(wn > 0) || !isFinite(wn) {
			break
		}
		if !cayley(trial.a, cur.a, w, theta/wn, d, k) {
			break
		}
		for c := range cur.ord {
			copy(trial.ord[c], cur.ord[c])
		}
		s.evaluate(trial, false)
		evals++
		if trial.f > cur.f {
			accepted++
			gain := trial.f - cur.f
			cur, trial = trial, cur
			g = s.gradient(cur)
			theta = min(1.5*theta, swMaxAngle)
			if gain < swRelTol*math.Abs(cur.f) {
				if small++; small >= swSmallSteps {
					break
				}
			} else {
				small = 0
			}
			continue
		}
		if theta *= 0.3; theta < swMinAngle {
			break
		}
	}
	return cur, evals, accepted
}

var useBB = true

// searchStep, when set by tests, sees every evaluation.
var searchStep func(eval int, f, angle float64)

// ascendBB is the Cayley-transform ascent of Wen & Yin (2013, Algorithm 2)
// for maximization: Barzilai-Borwein step sizes, alternating the two BB
// formulas, with the non-monotone line search of Zhang & Hager (2004).
func (s *swSearch) ascendBB(cur, trial *swFrame, maxIter int) (*swFrame, int, int) {
	d, k := s.d, s.k
	const (
		rho   = 1e-4 // sufficient increase
		delta = 0.2  // step shrink in the line search
		eta   = 0.85 // weight of the non-monotone reference
	)
	g := s.gradient(cur)
	w, wn := skewGradient(g, cur.a, d, k)
	gr := riemannGrad(w, cur.a, d, k)
	ws := spectralNorm(w, d)
	tau := swInitialAngle / ws
	c, q := cur.f, 1.0
	evals, accepted := 1, 0
	small := 0
	for it := 0; it < maxIter && wn > 0 && isFinite(wn); it++ {
		// Line search along the Cayley curve from cur.
		ok := false
		for try := 0; try < 6; try++ {
			if !cayley(trial.a, cur.a, w, tau, d, k) {
				break
			}
			for cc := range cur.ord {
				copy(trial.ord[cc], cur.ord[cc])
			}
			s.evaluate(trial, false)
			evals++
			if searchStep != nil {
				searchStep(evals, trial.f, tau*ws)
			}
			if trial.f >= c+rho*tau*0.5*wn*wn {
				ok = true
				break
			}
			tau *= delta
		}
		if !ok {
			break
		}
		accepted++
		gain := trial.f - cur.f
		gNew := s.gradient(trial)
		wNew, wnNew := skewGradient(gNew, trial.a, d, k)
		grNew := riemannGrad(wNew, trial.a, d, k)
		wsNew := spectralNorm(wNew, d)
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
		// Keep the step a sensible rotation angle.
		tau = min(max(tau, swMinAngle/wsNew), swMaxAngle/wsNew)
		qNew := eta*q + 1
		c = (eta*q*c + trial.f) / qNew
		q = qNew
		cur, trial = trial, cur
		g, w, wn, gr, ws = gNew, wNew, wnNew, grNew, wsNew
		if gain < swRelTol*math.Abs(cur.f) {
			if small++; small >= swSmallSteps {
				break
			}
		} else {
			small = 0
		}
	}
	_ = g
	return cur, evals, accepted
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

// searchTrace, when set (by tests), receives the number of evaluations,
// of accepted steps and the final objective of every search.
var searchTrace func(evals, accepted int, f float64)

func (s *swSearch) newFrame(a []float64) *swFrame {
	f := &swFrame{a: a, p: make([]float64, s.m*s.k), ord: make([][]uint64, s.k), keys: make([][]float64, s.k)}
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

// packKey maps v to an unsigned integer of the same order and puts the
// point index i in the low idxBits bits: sorting the keys as integers
// sorts the points by value (to 2^-(52-idxBits) relative precision, ties
// by index) with a fast comparison-free-closure sort, and the index comes
// back out of the sorted key.
func packKey(v float64, i int, idxBits uint) uint64 {
	b := math.Float64bits(v)
	if b>>63 == 1 {
		b = ^b
	} else {
		b |= 1 << 63
	}
	mask := uint64(1)<<idxBits - 1
	return b&^mask | uint64(i)
}

// evaluate computes the projections, their orders and F for frame f. The
// previous order in f.ord is the starting point of an insertion sort,
// which is nearly linear after a small step; fresh is true when it is
// not (the first evaluation) and a full sort is used.
func (s *swSearch) evaluate(f *swFrame, fresh bool) {
	m, d, k := s.m, s.d, s.k
	parallelFor(s.threads, numChunks(m), func(c int) {
		lo, hi := chunkBounds(c, m)
		mulRows(f.p[lo*k:hi*k], s.x[lo*d:hi*d], hi-lo, d, f.a, k)
	})
	parts := make([]float64, k)
	mask := uint64(1)<<s.idxBits - 1
	parallelFor(s.threads, k, func(c int) {
		ord := f.ord[c]
		for r, o := range ord {
			i := int(o & mask)
			ord[r] = packKey(f.p[i*k+c], i, s.idxBits)
		}
		if fresh || !insertionSort(ord, 8*m) {
			slices.Sort(ord)
		}
		key := f.keys[c]
		prev := math.Inf(-1)
		for r, o := range ord {
			// max: the packed keys order values only to ~1e-12.
			key[r] = max(f.p[int(o&mask)*k+c], prev)
			prev = key[r]
		}
		parts[c] = s.value(key)
	})
	var sum float64
	for _, v := range parts {
		sum += v
	}
	f.f = sum / float64(k)
}

// value is the non-Gaussianity of one projection from its sorted values.
func (s *swSearch) value(key []float64) float64 {
	m := len(key)
	var sum float64
	switch s.obj {
	case objSliced:
		for r, v := range key {
			e := v - s.z[r]
			sum += e * e
		}
	case objSW1:
		for r, v := range key {
			sum += math.Abs(v - s.z[r])
		}
	case objHuber:
		for r, v := range key {
			e := math.Abs(v - s.z[r])
			if e <= huberDelta {
				sum += 0.5 * e * e
			} else {
				sum += huberDelta * (e - 0.5*huberDelta)
			}
		}
	case objCvM:
		for r, v := range key {
			e := normCDF(v) - (float64(r)+0.5)/float64(m)
			sum += e * e
		}
	case objWeighted:
		for r, v := range key {
			e := v - s.z[r]
			sum += s.wq[r] * e * e
		}
	case objEntropy:
		// KL(P‖N(0,1)) = E[p²]/2 + log√(2π) - H(P), with the entropy
		// H by Vasicek's m-spacing estimate; constants are dropped.
		for r, v := range key {
			sp := key[min(r+s.spacing, m-1)] - key[max(r-s.spacing, 0)]
			sum += 0.5*v*v - math.Log(max(sp, 1e-300))
		}
	}
	return sum / float64(m)
}

// gradient returns the Euclidean gradient of F at frame f (d×k).
func (s *swSearch) gradient(f *swFrame) []float64 {
	m, d, k := s.m, s.d, s.k
	r := make([]float64, m*k)
	scale := 1 / float64(m*k)
	mask := uint64(1)<<s.idxBits - 1
	parallelFor(s.threads, k, func(c int) {
		key := f.keys[c]
		g := make([]float64, m) // dF/dkey[rank]
		switch s.obj {
		case objSliced:
			for rank, v := range key {
				g[rank] = 2 * (v - s.z[rank])
			}
		case objSW1:
			for rank, v := range key {
				e := v - s.z[rank]
				if e > 0 {
					g[rank] = 1
				} else if e < 0 {
					g[rank] = -1
				}
			}
		case objHuber:
			for rank, v := range key {
				g[rank] = min(max(v-s.z[rank], -huberDelta), huberDelta)
			}
		case objWeighted:
			for rank, v := range key {
				g[rank] = 2 * s.wq[rank] * (v - s.z[rank])
			}
		case objCvM:
			for rank, v := range key {
				e := normCDF(v) - (float64(rank)+0.5)/float64(m)
				g[rank] = 2 * e * math.Exp(logPhi(v))
			}
		case objEntropy:
			for rank, v := range key {
				g[rank] += v
				hi, lo := min(rank+s.spacing, m-1), max(rank-s.spacing, 0)
				inv := 1 / max(key[hi]-key[lo], 1e-300)
				g[hi] -= inv
				g[lo] += inv
			}
		}
		for rank, o := range f.ord[c] {
			r[int(o&mask)*k+c] = scale * g[rank]
		}
	})
	nc := numChunks(m)
	parts := make([][]float64, nc)
	parallelFor(s.threads, nc, func(c int) {
		lo, hi := chunkBounds(c, m)
		g := make([]float64, d*k)
		for i := lo; i < hi; i++ {
			ri := r[i*k : i*k+k]
			for l, v := range s.x[i*d : i*d+d] {
				if v != 0 {
					floats.AddScaled(g[l*k:l*k+k], v, ri)
				}
			}
		}
		parts[c] = g
	})
	g := parts[0]
	for _, p := range parts[1:] {
		floats.Add(g, p)
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

// insertionSort sorts keys increasingly and gives up (returning false,
// keys partly sorted) after budget moves.
func insertionSort(keys []uint64, budget int) bool {
	for i := 1; i < len(keys); i++ {
		v := keys[i]
		j := i
		for j > 0 && keys[j-1] > v {
			keys[j] = keys[j-1]
			j--
			if budget--; budget < 0 {
				keys[j] = v
				return false
			}
		}
		keys[j] = v
	}
	return true
}

// quantileWeights returns weights proportional to the inverse variance of
// the order statistics of an N(0, 1) sample, φ(z_r)²/(u_r(1-u_r)),
// scaled to 1 at the median.
func quantileWeights(m int) []float64 {
	w := make([]float64, m)
	for r := range w {
		u := (float64(r) + 0.5) / float64(m)
		z := normQuantile(u)
		w[r] = math.Exp(2*logPhi(z)) / (u * (1 - u)) / (2 / math.Pi)
	}
	return w
}
