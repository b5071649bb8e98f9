package flow

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// testSplines returns fitted splines for a few awkward marginals.
func testSplines(t *testing.T) []spline {
	rng := rand.New(rand.NewPCG(71, 71))
	gens := []func() float64{
		rng.NormFloat64,
		func() float64 { return math.Tan(math.Pi * (rng.Float64() - 0.5)) }, // Cauchy
		func() float64 { return math.Exp(2 * rng.NormFloat64()) },           // log-normal
		func() float64 { // bimodal
			if rng.IntN(2) == 0 {
				return -3 + 0.2*rng.NormFloat64()
			}
			return 3 + rng.NormFloat64()
		},
		func() float64 { return math.Round(4 * rng.NormFloat64()) }, // heavily tied
	}
	var out []spline
	for _, g := range gens {
		v := make([]float64, 5000)
		for i := range v {
			v[i] = g()
		}
		md := newMarginalData(v, nil)
		if md == nil {
			t.Fatal("no spread")
		}
		for _, bw := range []float64{1, 0.3} {
			for _, damp := range []float64{1, 0.5} {
				out = append(out, md.fit(marginalOptions{knots: 70, damping: damp, bandwidth: bw, tailPoints: 5}))
			}
		}
	}
	return out
}

// TestSplineProperties checks monotonicity, the inverse, the derivative
// against finite differences and continuity at knots and tails.
func TestSplineProperties(t *testing.T) {
	for si, sp := range testSplines(t) {
		n := len(sp.x)
		lo, hi := sp.x[0], sp.x[n-1]
		w := hi - lo
		var probes []float64
		for i := 0; i <= 4000; i++ {
			probes = append(probes, lo-2*w+5*w*float64(i)/4000)
		}
		probes = append(probes, sp.x...)
		for _, k := range sp.x {
			probes = append(probes, math.Nextafter(k, math.Inf(-1)), math.Nextafter(k, math.Inf(1)))
		}
		probes = append(probes, lo-1e6*w, hi+1e6*w)
		slices.Sort(probes)
		prev := math.Inf(-1)
		for _, v := range probes {
			y, dy := sp.eval(v)
			// Monotone up to rounding (an ulp or two where bins meet).
			if !(y >= prev-1e-15*(1+math.Abs(y))) || !(dy > 0) || !isFinite(y) {
				t.Fatalf("spline %d: not increasing or bad derivative at %g: y %g (prev %g), dy %g", si, v, y, prev, dy)
			}
			prev = y
			x, dyi := sp.inverse(y)
			if math.Abs(x-v) > 1e-10*(1+math.Abs(v)) {
				t.Fatalf("spline %d: inverse(eval(%.17g)) = %.17g", si, v, x)
			}
			if math.Abs(dyi-dy) > 1e-8*dy {
				t.Fatalf("spline %d at %g: derivative %g, from the inverse %g", si, v, dy, dyi)
			}
			h := 1e-6 * (1 + math.Abs(v))
			if i, _ := slices.BinarySearch(sp.x, v-h); i < n && sp.x[i] <= v+h {
				continue // a knot within the stencil: ψ is only C¹ there
			}
			yp, _ := sp.eval(v + h)
			ym, _ := sp.eval(v - h)
			if fd := (yp - ym) / (2 * h); math.Abs(fd-dy) > 1e-4*(dy+1e-3) {
				t.Fatalf("spline %d at %g: derivative %g, finite differences %g", si, v, dy, fd)
			}
		}
		// The knots are interpolated exactly.
		for i := range sp.x {
			if y, _ := sp.eval(sp.x[i]); y != sp.y[i] {
				if math.Abs(y-sp.y[i]) > 1e-12*(1+math.Abs(y)) {
					t.Fatalf("spline %d: knot %d maps to %g, want %g", si, i, y, sp.y[i])
				}
			}
		}
	}
}

// TestBinIndex checks the table lookup against a plain search, for knots
// of very uneven spacing.
func TestBinIndex(t *testing.T) {
	rng := rand.New(rand.NewPCG(72, 72))
	for trial := 0; trial < 20; trial++ {
		k := make([]float64, 2+rng.IntN(200))
		for i := range k {
			k[i] = math.Tan(math.Pi * (rng.Float64() - 0.5))
		}
		slices.Sort(k)
		k = slices.Compact(k)
		if len(k) < 2 {
			continue
		}
		bi := newBinIndex(k)
		for i := 0; i < 2000; i++ {
			v := k[0] + (k[len(k)-1]-k[0])*rng.Float64()
			if i%10 == 0 {
				v = k[rng.IntN(len(k)-1)]
			}
			got := bi.find(v)
			want, _ := slices.BinarySearch(k, v)
			if want == len(k) || k[want] > v {
				want--
			}
			if got != want {
				t.Fatalf("find(%g) = %d, want %d", v, got, want)
			}
		}
	}
}

// TestTailSlope checks the maximum-likelihood tail slope on data whose
// tail is exactly Gaussian in the target space: it recovers the slope.
func TestTailSlope(t *testing.T) {
	rng := rand.New(rand.NewPCG(73, 73))
	// Tail points z > 2 of N(0,1) mapped to x = z/s beyond x0 = 2/s.
	s := 0.7
	var v []float64
	for len(v) < 20000 {
		if z := rng.NormFloat64(); z > 2 {
			v = append(v, z/s)
		}
	}
	slices.Sort(v)
	w := slices.Repeat([]float64{1.0 / float64(len(v))}, len(v))
	got := tailSlope(v, w, 2/s, 2, 1, 10)
	if math.Abs(got-s) > 0.02 {
		t.Errorf("tail slope %.4f, want %.4f", got, s)
	}
	// Clamped at the outermost secant, so that tails never get lighter
	// than the last bin suggests.
	if got := tailSlope(v, w, 2/s, 2, 1, 0.5); got != 0.5 {
		t.Errorf("tail slope %.4f, want the clamp 0.5", got)
	}
}
