package flow

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestKDEMoments checks the segment-moment evaluation of the kernel
// distribution function against direct summation, on heavy-tailed data
// where cancellation would show.
func TestKDEMoments(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 4))
	n := 5000
	v := make([]float64, n)
	w := make([]float64, n)
	for i := range v {
		v[i] = math.Tan(math.Pi * (rng.Float64() - 0.5)) // Cauchy
		w[i] = 1 / float64(n)
	}
	slices.Sort(v)
	cw := make([]float64, n+1)
	cu := make([]float64, n+1)
	for i := range v {
		cw[i+1] = cw[i] + w[i]
	}
	for i := n - 1; i >= 0; i-- {
		cu[i] = cu[i+1] + w[i]
	}
	knots := []float64{v[3], v[50], v[500], v[2000], v[2500], v[2501] + 1e-3, v[4000], v[4990]}
	km := newKDEMoments(v, w)
	for _, a := range []float64{0.05, 0.3, 2} {
		l1, u1 := make([]float64, len(knots)), make([]float64, len(knots))
		l2, u2 := make([]float64, len(knots)), make([]float64, len(knots))
		kdeCDF(l1, u1, v, w, cw, cu, nil, knots, a)
		kdeCDF(l2, u2, v, w, cw, cu, km, knots, a)
		for j := range knots {
			if math.Abs(l1[j]-l2[j]) > 1e-12*l1[j] || math.Abs(u1[j]-u2[j]) > 1e-12*u1[j] {
				t.Errorf("a %g knot %d: lower %.17g vs %.17g, upper %.17g vs %.17g", a, j, l1[j], l2[j], u1[j], u2[j])
			}
			if math.Abs(l1[j]+u1[j]-1) > 1e-12 {
				t.Errorf("a %g knot %d: masses sum to %.17g", a, j, l1[j]+u1[j])
			}
		}
	}
}
