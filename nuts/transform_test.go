package nuts

import (
	"math"
	"math/rand/v2"
	"testing"
)

// The box transform in all four kinds of coordinate (two bounds, lower
// only, upper only, none): x(u) inverts u(x), log|dx/du| and the gradient
// of the wrapped density agree with finite differences, and extreme u stay
// strictly inside the box with a finite Jacobian.
func TestBoxMapDerivatives(t *testing.T) {
	inf := math.Inf(1)
	lower := []float64{-15, 2, -inf, -inf, -4}
	upper := []float64{15, inf, 3, inf, 4}
	const d = 5
	b := newBoxMap(lower, upper, d)
	// A smooth density in x with a gradient that is nonzero everywhere.
	f := func(grad, x []float64) (float64, error) {
		var lp float64
		for j, v := range x {
			c := 0.3 * float64(j+1)
			lp -= 0.5*(v-c)*(v-c)/4 + 0.1*math.Sin(v)
			grad[j] = -(v-c)/4 - 0.1*math.Cos(v)
		}
		return lp, nil
	}
	g, raw := b.wrap(f, d)
	rng := rand.New(rand.NewPCG(3, 4))
	u := make([]float64, d)
	x := make([]float64, d)
	back := make([]float64, d)
	grad := make([]float64, d)
	scratch := make([]float64, d)
	for trial := 0; trial < 50; trial++ {
		for j := range u {
			u[j] = 2 * rng.NormFloat64()
		}
		logJ := b.toX(x, u, nil, nil)
		if err := b.toU(back, x); err != nil {
			t.Fatal(err)
		}
		for j := range u {
			if math.Abs(back[j]-u[j]) > 1e-9*math.Max(1, math.Abs(u[j])) {
				t.Errorf("u(x(u))[%d] = %v, want %v", j, back[j], u[j])
			}
		}
		// log|dx/du| by central differences, coordinate by coordinate.
		var numJ float64
		for j := range u {
			h := 1e-5
			up := append([]float64(nil), u...)
			dn := append([]float64(nil), u...)
			up[j] += h
			dn[j] -= h
			xu := make([]float64, d)
			xd := make([]float64, d)
			b.toX(xu, up, nil, nil)
			b.toX(xd, dn, nil, nil)
			numJ += math.Log(math.Abs(xu[j]-xd[j]) / (2 * h))
		}
		if math.Abs(numJ-logJ) > 1e-6*math.Max(1, math.Abs(logJ)) {
			t.Errorf("log|dx/du| = %v, finite differences give %v", logJ, numJ)
		}
		lp, err := g(grad, u)
		if err != nil {
			t.Fatal(err)
		}
		lpx, _ := f(scratch, x)
		if *raw != lpx || math.Abs(lp-(lpx+logJ)) > 1e-12*math.Max(1, math.Abs(lp)) {
			t.Errorf("wrapped log density %v (raw %v), want %v + %v", lp, *raw, lpx, logJ)
		}
		for j := range u {
			h := 1e-6 * math.Max(1, math.Abs(u[j]))
			up := append([]float64(nil), u...)
			dn := append([]float64(nil), u...)
			up[j] += h
			dn[j] -= h
			lu, _ := g(scratch, up)
			ld, _ := g(scratch, dn)
			num := (lu - ld) / (2 * h)
			// Truncation error plus the rounding of lp itself.
			tol := 1e-6*math.Max(1, math.Abs(grad[j])) + 1e-15*math.Abs(lp)/h
			if math.Abs(num-grad[j]) > tol {
				t.Errorf("trial %d: gradient[%d] = %v, finite differences give %v (u = %v)", trial, j, grad[j], num, u[j])
			}
		}
	}
	// Far out in u, two-sided coordinates stay strictly inside the box
	// (never on a bound, where the density may be -Inf) and keep a finite
	// Jacobian.
	two := newBoxMap([]float64{-15, -4}, []float64{15, 4}, 2)
	for _, v := range []float64{-800, -40, 40, 800} {
		uu := []float64{v, v}
		lj := two.toX(x[:2], uu, nil, nil)
		for j, xv := range x[:2] {
			if !(xv > two.lo[j] && xv < two.hi[j]) {
				t.Errorf("u = %v: x[%d] = %v not strictly inside (%v, %v)", v, j, xv, two.lo[j], two.hi[j])
			}
		}
		if math.IsInf(lj, 0) || math.IsNaN(lj) {
			t.Errorf("u = %v: log|dx/du| = %v", v, lj)
		}
	}
}

// The Jacobian of many two-sided coordinates, accumulated as a product of
// the factors 1+e^-|u| with a log every few hundred coordinates, matches
// the sum of the per-coordinate logs.
func TestBoxMapManyCoordinates(t *testing.T) {
	const d = 3000
	lo, hi := make([]float64, d), make([]float64, d)
	u := make([]float64, d)
	rng := rand.New(rand.NewPCG(5, 6))
	var want float64
	for j := range lo {
		lo[j], hi[j] = -1, 2
		u[j] = 0.01 * rng.NormFloat64() // factors near 2: the product overflows quickly
		s := 1 / (1 + math.Exp(-u[j]))
		want += math.Log(3 * s * (1 - s))
	}
	b := newBoxMap(lo, hi, d)
	x := make([]float64, d)
	got := b.toX(x, u, nil, nil)
	if math.Abs(got-want) > 1e-9*math.Abs(want) {
		t.Errorf("log|dx/du| = %v, want %v", got, want)
	}
}
