package flow

import (
	"math"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"
)

// skew is the skew-symmetric matrix W = G Aᵀ - A Gᵀ (d×d) of the direction
// search, for the gradient G and the frame A (both d×k), with what the
// ascent needs of it: its Frobenius norm, W A, an estimate of its spectral
// norm and the Cayley step.
//
// For 2k > d (k = d, d <= 128 by default) W is formed, as a d×d matrix,
// and the Cayley step solves a d×d system. For 2k <= d that costs O(d³) a
// step while the rest of the search costs O(m d k) for m points: at
// d = 1000 the d×d solve dominated the whole fit. W has rank at most 2k, and with
// U = [G, A] and V = [A, -G] (d×2k), W = U Vᵀ; the Woodbury identity turns
// the step into a 2k×2k solve (Wen & Yin 2013, Lemma 4):
//
//	(I - τ/2 W)⁻¹ (I + τ/2 W) A = A + τ U (I - τ/2 VᵀU)⁻¹ VᵀA,
//
// so a step costs O(d k²) and W is never formed (at 2k = d, d = 256 by
// default, the solve is as large as the full one, but the products run
// as blocked matrix products instead of the full form's element loops).
type skew struct {
	d, k int
	norm float64 // Frobenius norm

	g, a []float64 // d×k, views of the caller's slices

	full []float64 // d×d W; nil in the low-rank form

	// The low-rank form's k×k products AᵀA, GᵀA and GᵀG.
	ata, gta, gtg *mat.Dense
}

// newSkew returns W for the gradient g and frame a (d×k, not copied).
func newSkew(g, a []float64, d, k int) *skew {
	if 2*k > d {
		w, wn := skewGradient(g, a, d, k)
		return &skew{d: d, k: k, full: w, norm: wn, g: g, a: a}
	}
	gm, am := mat.NewDense(d, k, g), mat.NewDense(d, k, a)
	s := &skew{d: d, k: k, g: g, a: a, ata: mat.NewDense(k, k, nil), gta: mat.NewDense(k, k, nil), gtg: mat.NewDense(k, k, nil)}
	s.ata.Mul(am.T(), am)
	s.gta.Mul(gm.T(), am)
	s.gtg.Mul(gm.T(), gm)
	// With A orthonormal, G = A S + P with S = AᵀG and P ⊥ A, and
	// W = A (S - Sᵀ) Aᵀ + P Aᵀ - A Pᵀ, so ‖W‖² = ‖S - Sᵀ‖² + 2‖P‖²: no
	// cancellation when W is small next to G near an optimum.
	var ss float64
	for i := 0; i < k; i++ {
		for j := i + 1; j < k; j++ {
			v := s.gta.At(j, i) - s.gta.At(i, j) // S = (GᵀA)ᵀ
			ss += 2 * v * v
		}
	}
	var p mat.Dense
	p.Mul(am, s.gta.T()) // A S
	p.Sub(gm, &p)
	pn := mat.Norm(&p, 2)
	s.norm = math.Sqrt(ss + 2*pn*pn)
	return s
}

// riemann returns W A (d×k), the Riemannian gradient under the canonical
// metric.
func (s *skew) riemann() []float64 {
	if s.full != nil {
		return riemannGrad(s.full, s.a, s.d, s.k)
	}
	d, k := s.d, s.k
	// W A = G (AᵀA) - A (GᵀA).
	out := make([]float64, d*k)
	om := mat.NewDense(d, k, out)
	om.Mul(mat.NewDense(d, k, s.g), s.ata)
	var t mat.Dense
	t.Mul(mat.NewDense(d, k, s.a), s.gta)
	om.Sub(om, &t)
	return out
}

// spectral estimates the largest singular value of W (a step-size scale).
func (s *skew) spectral() float64 {
	if s.full != nil {
		return spectralNorm(s.full, s.d)
	}
	d, k := s.d, s.k
	v := make([]float64, d)
	u := make([]float64, d)
	tk := make([]float64, k)
	tk2 := make([]float64, k)
	gm, am := mat.NewDense(d, k, s.g), mat.NewDense(d, k, s.a)
	// apply sets dst = W src = G (Aᵀ src) - A (Gᵀ src).
	apply := func(dst, src []float64) {
		sv := mat.NewVecDense(d, src)
		x, y := mat.NewVecDense(k, tk), mat.NewVecDense(k, tk2)
		x.MulVec(am.T(), sv)
		y.MulVec(gm.T(), sv)
		dv := mat.NewVecDense(d, dst)
		dv.MulVec(gm, x)
		var t mat.VecDense
		t.MulVec(am, y)
		dv.SubVec(dv, &t)
	}
	for i := range v {
		v[i] = 1 / math.Sqrt(float64(d)) * (1 + 0.1*float64(i%7))
	}
	var sigma float64
	for it := 0; it < 30; it++ {
		// u = W v; v = Wᵀ u = -W u.
		apply(u, v)
		apply(v, u)
		nv := floats.Norm(v, 2)
		if !(nv > 0) {
			return 0
		}
		prev := sigma
		sigma = math.Sqrt(nv)
		floats.Scale(1/nv, v) // the sign does not matter
		if math.Abs(sigma-prev) < 1e-3*sigma {
			break
		}
	}
	return sigma
}

// cayley sets dst = (I - τ/2 W)⁻¹ (I + τ/2 W) a for the frame a the
// skew was built with; false means a numerical failure.
func (s *skew) cayley(dst []float64, tau float64) bool {
	if s.full != nil {
		return cayley(dst, s.a, s.full, tau, s.d, s.k)
	}
	d, k := s.d, s.k
	h := tau / 2
	// VᵀU = [AᵀG, AᵀA; -GᵀG, -GᵀA] and VᵀA = [AᵀA; -GᵀA].
	lhs := mat.NewDense(2*k, 2*k, nil)
	rhs := mat.NewDense(2*k, k, nil)
	for i := 0; i < k; i++ {
		for j := 0; j < k; j++ {
			lhs.Set(i, j, -h*s.gta.At(j, i))
			lhs.Set(i, k+j, -h*s.ata.At(i, j))
			lhs.Set(k+i, j, h*s.gtg.At(i, j))
			lhs.Set(k+i, k+j, h*s.gta.At(i, j))
			rhs.Set(i, j, s.ata.At(i, j))
			rhs.Set(k+i, j, -s.gta.At(i, j))
		}
		lhs.Set(i, i, lhs.At(i, i)+1)
		lhs.Set(k+i, k+i, lhs.At(k+i, k+i)+1)
	}
	var x mat.Dense
	if err := x.Solve(lhs, rhs); err != nil {
		return false
	}
	// dst = A + τ (G X_top + A X_bot).
	out := mat.NewDense(d, k, dst)
	out.Mul(mat.NewDense(d, k, s.g), x.Slice(0, k, 0, k))
	var t mat.Dense
	t.Mul(mat.NewDense(d, k, s.a), x.Slice(k, 2*k, 0, k))
	out.Add(out, &t)
	out.Scale(tau, out)
	out.Add(out, mat.NewDense(d, k, s.a))
	return isFinite(floats.Sum(dst))
}
