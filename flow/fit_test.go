package flow

import (
	"bytes"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// TestThreadsDeterministic checks that a seed gives the same flow, bit
// for bit, whatever the number of threads, and that evaluation does not
// depend on it either.
func TestThreadsDeterministic(t *testing.T) {
	tg := bananaTarget(8, 3)
	rng := rand.New(rand.NewPCG(41, 41))
	x := tg.sample(rng, 6000)
	w := make([]float64, 6000)
	for i := range w {
		w[i] = 0.5 + rng.Float64()
	}
	for _, weights := range [][]float64{nil, w} {
		var ref []byte
		var refLP []float64
		probe := tg.sample(rng, 1000)
		for _, th := range []int{1, 2, 3} {
			f, err := Fit(x, 8, weights, &Settings{Seed: 42, Threads: th})
			if err != nil {
				t.Fatal(err)
			}
			b, err := f.MarshalBinary()
			if err != nil {
				t.Fatal(err)
			}
			lp := make([]float64, 1000)
			f.LogProb(lp, probe)
			if ref == nil {
				ref, refLP = b, lp
				t.Logf("weighted %v: layers %d", weights != nil, f.Layers())
				continue
			}
			if !bytes.Equal(b, ref) {
				t.Errorf("weighted %v: Threads=%d gives a different flow than Threads=1", weights != nil, th)
			}
			if !slices.Equal(lp, refLP) {
				t.Errorf("weighted %v: Threads=%d gives different log q", weights != nil, th)
			}
		}
	}
	// And a different seed gives a different flow.
	f1, _ := Fit(x, 8, nil, &Settings{Seed: 42})
	f2, _ := Fit(x, 8, nil, &Settings{Seed: 43})
	b1, _ := f1.MarshalBinary()
	b2, _ := f2.MarshalBinary()
	if bytes.Equal(b1, b2) {
		t.Error("seeds 42 and 43 gave identical flows")
	}
}

// TestBadInput checks that data Fit cannot use gives a clear error and
// documented fallbacks a warning, never a panic.
func TestBadInput(t *testing.T) {
	rng := rand.New(rand.NewPCG(51, 51))
	good := func(n, d int) []float64 {
		x := make([]float64, n*d)
		for i := range x {
			x[i] = rng.NormFloat64()
		}
		return x
	}
	constant := good(500, 3)
	for i := 0; i < 500; i++ {
		constant[i*3+1] = 7
	}
	nan := good(500, 3)
	nan[100*3+2] = math.NaN()
	inf := good(500, 3)
	inf[7] = math.Inf(1)
	collinear := good(500, 3)
	for i := 0; i < 500; i++ {
		collinear[i*3+2] = 2*collinear[i*3] - collinear[i*3+1]
	}
	outside := good(500, 2)
	outside[2*10] = 5
	errCases := []struct {
		name    string
		x       []float64
		d       int
		w       []float64
		s       *Settings
		message string
	}{
		{"constant column", constant, 3, nil, nil, "column 1 is constant"},
		{"NaN", nan, 3, nil, nil, "point 100 has x[2] = NaN"},
		{"infinite", inf, 3, nil, nil, "point 2 has x[1] = +Inf"},
		{"collinear", collinear, 3, nil, nil, "column 2 is (numerically) a linear combination"},
		{"too few points", good(9, 5), 5, nil, nil, "need at least 2d = 10"},
		{"length not a multiple of d", good(10, 3)[:29], 3, nil, nil, "not a positive multiple"},
		{"empty", nil, 3, nil, nil, "not a positive multiple"},
		{"d = 0", good(10, 1), 0, nil, nil, "dimension d = 0"},
		{"weights length", good(100, 2), 2, make([]float64, 99), nil, "len(weights) = 99"},
		{"negative weight", good(100, 2), 2, append(slices.Repeat([]float64{1}, 99), -1), nil, "weight 99 is -1"},
		{"NaN weight", good(100, 2), 2, append([]float64{math.NaN()}, slices.Repeat([]float64{1}, 99)...), nil, "weight 0 is NaN"},
		{"zero weights", good(100, 2), 2, make([]float64, 100), nil, "weights sum to zero"},
		{"outside bounds", outside, 2, nil, &Settings{Lower: []float64{-4, -4}, Upper: []float64{4, 4}}, "point 10 has x[0] = 5"},
		{"bounds length", good(100, 2), 2, nil, &Settings{Lower: []float64{0}}, "len(Lower) = 1"},
		{"empty bounds", good(100, 2), 2, nil, &Settings{Lower: []float64{0, 1}, Upper: []float64{1, 1}}, "lower must be below upper"},
		{"bad damping", good(100, 2), 2, nil, &Settings{Damping: 1.5}, "Damping = 1.5"},
		{"bad fraction", good(100, 2), 2, nil, &Settings{ValidationFraction: 0.9}, "ValidationFraction = 0.9"},
		{"bad knots", good(100, 2), 2, nil, &Settings{Knots: 2}, "Knots = 2"},
		{"negative layers", good(100, 2), 2, nil, &Settings{Layers: -1}, "Layers = -1"},
	}
	for _, c := range errCases {
		f, err := Fit(c.x, c.d, c.w, c.s)
		if err == nil {
			t.Errorf("%s: no error (flow with %d layers)", c.name, f.Layers())
			continue
		}
		if !strings.Contains(err.Error(), c.message) {
			t.Errorf("%s: error %q does not mention %q", c.name, err, c.message)
		}
	}

	// Duplicated points: merged and the fit still works; a third of the
	// points repeated is what an MCMC chain gives, and needs no warning.
	base := good(2000, 2)
	dup := append(slices.Clone(base), base[:2*1000]...) // 1000 points twice
	f, err := Fit(dup, 2, nil, &Settings{Seed: 1})
	if err != nil {
		t.Fatalf("duplicates: %v", err)
	}
	if w := f.Warnings(); len(w) != 0 {
		t.Errorf("duplicates: warnings %q", w)
	}
	// Massive duplication (a sticky Metropolis chain): 200 distinct points
	// each repeated 20 times still fit.
	sticky := make([]float64, 0, 4000*2)
	for i := 0; i < 200; i++ {
		for r := 0; r < 20; r++ {
			sticky = append(sticky, base[2*i:2*i+2]...)
		}
	}
	if f, err = Fit(sticky, 2, nil, &Settings{Seed: 1}); err != nil {
		t.Fatalf("sticky chain: %v", err)
	}
	// Repeats are normal in MCMC: no warning (a chain that never moves is
	// the evidence diagnostics' business).
	if w := f.Warnings(); len(w) != 0 {
		t.Errorf("sticky chain: warnings %q", w)
	}
	lp := make([]float64, 1)
	f.LogProb(lp, []float64{0, 0})
	if !isFinite(lp[0]) {
		t.Errorf("sticky chain: log q(0) = %g", lp[0])
	}

	// Few points: whitening only, with a warning.
	f, err = Fit(good(40, 4), 4, nil, &Settings{Seed: 1})
	if err != nil {
		t.Fatalf("few points: %v", err)
	}
	if f.Layers() != 0 || len(f.Warnings()) == 0 || !strings.Contains(f.Warnings()[0], "whitening only") {
		t.Errorf("few points: %d layers, warnings %q", f.Layers(), f.Warnings())
	}

	// Zero weights drop points; the rest fit.
	w := make([]float64, 1000)
	for i := range w {
		if i%2 == 0 {
			w[i] = 1
		}
	}
	if _, err := Fit(good(1000, 2), 2, w, &Settings{Seed: 1}); err != nil {
		t.Errorf("half zero weights: %v", err)
	}
}

// TestWeights checks that weights act as multiplicities: doubling every
// weight changes nothing, and weighting a sample towards one component of
// a mixture moves q there.
func TestWeights(t *testing.T) {
	rng := rand.New(rand.NewPCG(61, 61))
	n := 4000
	x := make([]float64, n*2)
	w := make([]float64, n)
	for i := 0; i < n; i++ {
		c := -3.0
		if i%2 == 0 {
			c = 3
		}
		x[2*i], x[2*i+1] = c+rng.NormFloat64(), rng.NormFloat64()
		w[i] = 1
		if c > 0 {
			w[i] = 9 // 90% of the weight on the right component
		}
	}
	f, err := Fit(x, 2, w, &Settings{Seed: 62})
	if err != nil {
		t.Fatal(err)
	}
	w2 := slices.Clone(w)
	for i := range w2 {
		w2[i] *= 2
	}
	g, err := Fit(x, 2, w2, &Settings{Seed: 62})
	if err != nil {
		t.Fatal(err)
	}
	lf, lg := make([]float64, 2), make([]float64, 2)
	probe := []float64{3, 0, -3, 0}
	f.LogProb(lf, probe)
	g.LogProb(lg, probe)
	if math.Abs(lf[0]-lg[0]) > 1e-9 || math.Abs(lf[1]-lg[1]) > 1e-9 {
		t.Errorf("scaling all weights changed log q: %v vs %v", lf, lg)
	}
	// q(3,0)/q(-3,0) should be near 9.
	ratio := math.Exp(lf[0] - lf[1])
	t.Logf("layers %d: q(3,0)/q(-3,0) = %.2f (9 expected)", f.Layers(), ratio)
	if ratio < 6 || ratio > 13 {
		t.Errorf("q(3,0)/q(-3,0) = %.2f, want about 9", ratio)
	}
}

// TestExtremeData checks fits on awkward but valid data: one dimension,
// pure Cauchy draws with enormous outliers, and tiny or huge scales. The
// density must be finite at every training point and Inverse must undo
// Forward there, to rounding relative to the point and to the mean that
// whitening subtracts (an outlier of 10¹² moves the mean far from the
// bulk).
func TestExtremeData(t *testing.T) {
	rng := rand.New(rand.NewPCG(81, 81))
	cauchy := make([]float64, 3000*3)
	for i := range cauchy {
		cauchy[i] = math.Tan(math.Pi * (rng.Float64() - 0.5))
	}
	cauchy[5] = 1e12
	scaled := func(s float64) []float64 {
		x := make([]float64, 2000*2)
		for i := range x {
			x[i] = s * (1 + rng.NormFloat64()*rng.NormFloat64())
		}
		return x
	}
	oneD := make([]float64, 3000)
	for i := range oneD {
		oneD[i] = math.Exp(rng.NormFloat64())
	}
	for _, c := range []struct {
		name string
		x    []float64
		d    int
	}{
		{"one dimension", oneD, 1},
		{"Cauchy with outliers", cauchy, 3},
		{"scale 1e-200", scaled(1e-200), 2},
		{"scale 1e200", scaled(1e200), 2},
	} {
		f, err := Fit(c.x, c.d, nil, &Settings{Seed: 82})
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		n := len(c.x) / c.d
		lp := make([]float64, n)
		f.LogProb(lp, c.x)
		z := make([]float64, len(c.x))
		ld := make([]float64, n)
		f.Forward(z, ld, c.x)
		back := make([]float64, len(c.x))
		f.Inverse(back, ld, z)
		for i := 0; i < n; i++ {
			if !isFinite(lp[i]) {
				t.Fatalf("%s: log q at training point %d = %g", c.name, i, lp[i])
			}
			for j := 0; j < c.d; j++ {
				v := c.x[i*c.d+j]
				if math.Abs(back[i*c.d+j]-v) > 1e-9*(math.Abs(v)+math.Abs(f.wt.mean[j]))+1e-300 {
					t.Fatalf("%s: point %d: Inverse(Forward(x))[%d] = %g, want %g", c.name, i, j, back[i*c.d+j], v)
				}
			}
		}
		t.Logf("%s: layers %d", c.name, f.Layers())
	}
}
