package flow

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestScaleLayerFunnel: on exact draws of the 16-d funnel the default fit
// keeps a scale layer first, on x1 with log-scale slopes near 1 (x_j has sd
// exp(x1)), and q comes far closer to p than without it (held-out KL
// 0.04 against 1.75 nats); with the neck cut from the draws (x1 < -1.5,
// about 7 % of the mass) too, since the layer follows the draws' trend
// into the neck.
func TestScaleLayerFunnel(t *testing.T) {
	if testing.Short() {
		t.Skip("slow (flow fits on 16-d funnel draws): make test runs it")
	}
	tg := funnelTarget(16)
	for _, cut := range []bool{false, true} {
		rng := rand.New(rand.NewPCG(7, 1))
		var x []float64
		for len(x) < 8000*tg.d {
			v := tg.sample(rng, 1)
			if !cut || v[0] >= -1.5 {
				x = append(x, v...)
			}
		}
		kl := map[bool]float64{}
		for _, noScale := range []bool{false, true} {
			set := &Settings{Lower: tg.lower, Upper: tg.upper, Seed: 1}
			if noScale {
				set.Scale = Off
			}
			f, err := Fit(x, tg.d, nil, set)
			if err != nil {
				t.Fatal(err)
			}
			kl[noScale] = heldOutKL(f, tg, rand.New(rand.NewPCG(9, 9)), 20000)
			if noScale {
				continue
			}
			if len(f.layers) == 0 || f.layers[0].scale == nil {
				t.Fatalf("neck cut %v: no scale layer (%d layers)", cut, len(f.layers))
			}
			sl := f.layers[0].scale
			if sl.k != 0 {
				t.Errorf("neck cut %v: scale coordinate %d, want 0", cut, sl.k)
			}
			for j := 1; j < tg.d; j++ {
				// The whitened x1 has sd about 1 (0.8 with the neck cut).
				if sl.b[j] < 0.7 || sl.b[j] > 1.1 {
					t.Errorf("neck cut %v: slope of x[%d]'s log-scale %.3f, want about 1", cut, j, sl.b[j])
				}
			}
		}
		t.Logf("neck cut %v: held-out KL %.3f nats with the scale layer, %.3f without", cut, kl[false], kl[true])
		// With the neck cut, what is left is mostly q's x1 beyond the
		// cut, which no layer can know about (the draws end there).
		if !(kl[false] < kl[true]/2.5 && (cut || kl[false] < 0.1)) {
			t.Errorf("neck cut %v: KL %.3f with the scale layer, %.3f without", cut, kl[false], kl[true])
		}
	}
}

// TestScaleLayerNotKept: where no coordinate sets the others' scales (a
// correlated Gaussian), no scale layer is kept.
func TestScaleLayerNotKept(t *testing.T) {
	const d = 6
	rng := rand.New(rand.NewPCG(3, 3))
	x := make([]float64, 8000*d)
	for i := 0; i < 8000; i++ {
		var c float64
		for j := 0; j < d; j++ {
			c = 0.8*c + rng.NormFloat64()
			x[i*d+j] = c
		}
	}
	f, err := Fit(x, d, nil, &Settings{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	for i, l := range f.layers {
		if l.scale != nil {
			t.Errorf("layer %d is a scale layer on a Gaussian", i)
		}
	}
}

// TestScaleLayerApply: forward and inverse undo each other and add
// opposite log-Jacobians, also at a z_k far enough for the log-scale to
// reach its bound.
func TestScaleLayerApply(t *testing.T) {
	const d = 3
	c := scaleLayer{k: 1, m: []float64{0.1, 0, 0}, c: []float64{-0.05, 0, 0.2},
		a: []float64{0.2, 0, -0.1}, b: []float64{1, 0, -0.5}}
	if c.logScale(0, 1e9) != maxLogScale || c.logScale(2, 1e9) != -maxLogScale {
		t.Errorf("log-scales at z_k = 1e9: %g, %g, want ±%d", c.logScale(0, 1e9), c.logScale(2, 1e9), maxLogScale)
	}
	for _, row := range [][]float64{{0.5, 0.1, -1}, {2, -5, 1}, {-1, 7, 0.3}, {1, 1e9, 1}} {
		z := append([]float64(nil), row...)
		ld := []float64{0}
		c.apply(z, ld, 1, d, false)
		want := -c.logScale(0, row[1]) - c.logScale(2, row[1])
		if math.Abs(ld[0]-want) > 1e-12 {
			t.Errorf("row %v: log|J| %g, want %g", row, ld[0], want)
		}
		c.apply(z, ld, 1, d, true)
		for j := range row {
			// The centre is subtracted and added back: round-off is
			// relative to it too.
			size := math.Max(1, math.Max(math.Abs(row[j]), math.Abs(c.m[j]+c.c[j]*row[1])))
			if math.Abs(z[j]-row[j]) > 1e-12*size {
				t.Errorf("row %v: inverse(forward) = %v", row, z)
			}
		}
		if math.Abs(ld[0]) > 1e-12 {
			t.Errorf("row %v: log-Jacobians do not cancel: %g", row, ld[0])
		}
	}
}
