package flow

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestBaseSpaceGradient checks the base-space gradient against central
// differences of log π(z) = log p(T(z)) + log|det ∂x/∂z| on flows with
// every kind of step: bounds (both sides), whitening, sliced layers and
// conditional layers, for a log p with a known gradient.
func TestBaseSpaceGradient(t *testing.T) {
	cases := []struct {
		name string
		f    *Flow
	}{}
	fa, _, _ := annuliFlow(t, &Settings{Seed: 7})
	cases = append(cases, struct {
		name string
		f    *Flow
	}{"annuli (conditional layers)", fa})
	fn := funnelTarget(4)
	ff, _ := fitTarget(t, fn, 3000, &Settings{Seed: 3, Lower: fn.lower, Upper: fn.upper})
	cases = append(cases, struct {
		name string
		f    *Flow
	}{"funnel in its box", ff})
	bn := bananaTarget(6, 2)
	fb, _ := fitTarget(t, bn, 3000, &Settings{Seed: 4, Lower: bn.lower})
	cases = append(cases, struct {
		name string
		f    *Flow
	}{"banana, lower bounds only", fb})

	for _, c := range cases {
		f, d := c.f, c.f.Dim()
		t.Logf("%s: d = %d, %d layers (%d conditional), bounds %v", c.name, d, f.Layers(), f.ConditionalLayers(), f.bounds != nil)
		bs := f.NewBaseSpace()
		// log p(x) = -Σ (x_j - 0.3 j)² / (2 (1 + 0.1 j)): smooth, known gradient.
		logp := func(gx, x []float64) float64 {
			var v float64
			for j, xj := range x {
				s2 := 1 + 0.1*float64(j)
				r := xj - 0.3*float64(j)
				v -= r * r / (2 * s2)
				if gx != nil {
					gx[j] = -r / s2
				}
			}
			return v
		}
		x := make([]float64, d)
		pi := func(z []float64) float64 {
			ld := bs.Point(x, z)
			return logp(nil, x) + ld
		}
		rng := rand.New(rand.NewPCG(1, 2))
		z := make([]float64, d)
		gz := make([]float64, d)
		gx := make([]float64, d)
		zp := make([]float64, d)
		worst := 0.0
		for trial := 0; trial < 20; trial++ {
			for j := range z {
				z[j] = 1.3 * rng.NormFloat64()
			}
			ldInv := bs.Point(x, z)
			logp(gx, x)
			ld := bs.Gradient(gz, x, gx)
			if math.Abs(ld+ldInv) > 1e-8*(1+math.Abs(ld)) {
				t.Errorf("%s: Gradient's log-determinant %v, Point's %v: want negatives", c.name, ld, ldInv)
			}
			for j := range z {
				const h = 1e-5
				copy(zp, z)
				zp[j] = z[j] + h
				up := pi(zp)
				zp[j] = z[j] - h
				dn := pi(zp)
				fd := (up - dn) / (2 * h)
				err := math.Abs(fd-gz[j]) / (1 + math.Abs(fd))
				worst = max(worst, err)
				if err > 1e-4 {
					t.Errorf("%s, trial %d, z_%d: gradient %.8g, central difference %.8g", c.name, trial, j, gz[j], fd)
				}
			}
		}
		t.Logf("%s: largest relative error %.2g", c.name, worst)
	}
}

// TestBaseSpaceOutside checks that a point outside the box gives NaN.
func TestBaseSpaceOutside(t *testing.T) {
	fn := funnelTarget(4)
	f, _ := fitTarget(t, fn, 2000, &Settings{Seed: 3, Lower: fn.lower, Upper: fn.upper})
	bs := f.NewBaseSpace()
	x := []float64{0, 0, 0, 0}
	x[0] = fn.upper[0] + 1
	g := make([]float64, 4)
	if ld := bs.Gradient(g, x, []float64{1, 1, 1, 1}); !math.IsNaN(ld) || !math.IsNaN(g[0]) {
		t.Errorf("outside the box: log-determinant %v, gradient %v; want NaN", ld, g)
	}
}
