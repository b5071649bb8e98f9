package flow

import (
	"math"
	"math/rand/v2"
	"testing"
)

// The low-rank form of W must agree with the formed d×d matrix: norm,
// W A, spectral norm and the Cayley step (a d×d solve against a 2k×2k
// Woodbury solve: agreement to a few hundred ulps of the entries, which
// are O(1)).
func TestSkewLowRankMatchesFull(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	d, k := 40, 7
	a := randomFrame(d, k, rng)
	g := make([]float64, d*k)
	for i := range g {
		g[i] = rng.NormFloat64()
	}
	lr := newSkew(g, a, d, k)
	if lr.full != nil {
		t.Fatal("2k < d: want the low-rank form")
	}
	w, wn := skewGradient(g, a, d, k)
	full := &skew{d: d, k: k, full: w, norm: wn, g: g, a: a}

	if math.Abs(lr.norm-full.norm) > 1e-12*full.norm {
		t.Errorf("norm: low rank %v, full %v", lr.norm, full.norm)
	}
	r1, r2 := lr.riemann(), full.riemann()
	for i := range r1 {
		if math.Abs(r1[i]-r2[i]) > 1e-12*full.norm {
			t.Fatalf("W A [%d]: low rank %v, full %v", i, r1[i], r2[i])
		}
	}
	// Power iteration stops at a relative change of 1e-3; both follow the
	// same iterates up to rounding.
	if s1, s2 := lr.spectral(), full.spectral(); math.Abs(s1-s2) > 1e-9*s2 {
		t.Errorf("spectral norm: low rank %v, full %v", s1, s2)
	}
	for _, tau := range []float64{0.01, 0.3 / full.norm, 1} {
		c1, c2 := make([]float64, d*k), make([]float64, d*k)
		if !lr.cayley(c1, tau) || !full.cayley(c2, tau) {
			t.Fatalf("tau %v: cayley failed", tau)
		}
		for i := range c1 {
			if math.Abs(c1[i]-c2[i]) > 1e-10 {
				t.Fatalf("tau %v: cayley [%d]: low rank %v, full %v", tau, i, c1[i], c2[i])
			}
		}
		// The step stays on the manifold: AᵀA = I.
		for p := 0; p < k; p++ {
			for q := 0; q < k; q++ {
				var s float64
				for i := 0; i < d; i++ {
					s += c1[i*k+p] * c1[i*k+q]
				}
				want := 0.0
				if p == q {
					want = 1
				}
				if math.Abs(s-want) > 1e-10 {
					t.Fatalf("tau %v: (AᵀA)[%d][%d] = %v", tau, p, q, s)
				}
			}
		}
	}
}
