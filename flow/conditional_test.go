package flow

import (
	"bytes"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// annuliTarget: d/2 independent 2-d annuli, (x_a, x_b) = r (cos θ, sin θ)
// with r ~ N(√2, 0.15²) and θ uniform, on coordinate pairs scattered
// over the vector (pairs[i] = {a, b}). Each coordinate is bimodal and
// uncorrelated with every other; its partner decides its shape, which is
// what conditional layers capture and sliced layers cannot.
func annuliTarget(pairs [][2]int) target {
	const r0, sr = math.Sqrt2, 0.15
	d := 2 * len(pairs)
	return target{
		name: "annuli",
		d:    d,
		sample: func(rng *rand.Rand, n int) []float64 {
			x := make([]float64, n*d)
			for i := 0; i < n; i++ {
				for _, p := range pairs {
					r := r0 + sr*rng.NormFloat64()
					th := 2 * math.Pi * rng.Float64()
					x[i*d+p[0]], x[i*d+p[1]] = r*math.Cos(th), r*math.Sin(th)
				}
			}
			return x
		},
		// Normalized up to the mass of r < 0, which is Φ(-9.4).
		logProb: func(x []float64) float64 {
			var lp float64
			for _, p := range pairs {
				r := math.Hypot(x[p[0]], x[p[1]])
				lp += logPhi((r-r0)/sr) - math.Log(sr) - math.Log(2*math.Pi*r)
			}
			return lp
		},
	}
}

var scatteredPairs = [][2]int{{0, 5}, {1, 3}, {2, 7}, {4, 6}}

// heldOutKL is KL(p‖q) estimated on n fresh exact draws.
func heldOutKL(f *Flow, tg target, rng *rand.Rand, n int) float64 {
	x := tg.sample(rng, n)
	lq := make([]float64, n)
	f.LogProb(lq, x)
	var kl float64
	for i := 0; i < n; i++ {
		kl += (tg.logProb(x[i*tg.d:(i+1)*tg.d]) - lq[i]) / float64(n)
	}
	return kl
}

// TestCouplingSplit checks that the split puts the two coordinates of
// every annulus on opposite sides, although no linear correlation links
// them.
func TestCouplingSplit(t *testing.T) {
	tg := annuliTarget(scatteredPairs)
	x := tg.sample(rand.New(rand.NewPCG(1, 2)), 4000)
	side, _ := couplingSplit(x, 4000, tg.d, nil)
	if side[0] {
		t.Error("coordinate 0 is not on side false")
	}
	for _, p := range scatteredPairs {
		if side[p[0]] == side[p[1]] {
			t.Errorf("split %v puts the pair %v on one side", side, p)
		}
	}
}

// TestConditionalLayers checks that the fit chooses conditional layers
// where they help, that they make q much closer to p than sliced layers
// alone, and that they change nothing where sliced layers do better
// (the banana, whose pairs are rotated).
func TestConditionalLayers(t *testing.T) {
	tg := annuliTarget(scatteredPairs)
	rng := rand.New(rand.NewPCG(3, 4))
	x := tg.sample(rng, 6000)
	with, err := Fit(x, tg.d, nil, &Settings{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	without, err := Fit(x, tg.d, nil, &Settings{Seed: 1, Conditional: Off})
	if err != nil {
		t.Fatal(err)
	}
	klWith := heldOutKL(with, tg, rng, 6000)
	klWithout := heldOutKL(without, tg, rng, 6000)
	t.Logf("annuli: %d layers (%d conditional), KL %.3f; sliced only: %d layers, KL %.3f",
		with.Layers(), with.ConditionalLayers(), klWith, without.Layers(), klWithout)
	if with.ConditionalLayers() < 2 {
		t.Errorf("%d conditional layers, want at least 2 (one per side)", with.ConditionalLayers())
	}
	if !(klWith < 0.3 && klWith < klWithout/2) {
		t.Errorf("KL with conditional layers %.3f, sliced only %.3f: want below 0.3 and half", klWith, klWithout)
	}

	banana := bananaTarget(8, 3)
	xb := banana.sample(rng, 6000)
	fb, err := Fit(xb, 8, nil, &Settings{Seed: 2})
	if err != nil {
		t.Fatal(err)
	}
	gb, err := Fit(xb, 8, nil, &Settings{Seed: 2, Conditional: Off})
	if err != nil {
		t.Fatal(err)
	}
	kb, kg := heldOutKL(fb, banana, rng, 6000), heldOutKL(gb, banana, rng, 6000)
	t.Logf("banana: %d layers (%d conditional), KL %.3f; sliced only KL %.3f", fb.Layers(), fb.ConditionalLayers(), kb, kg)
	if kb > kg+0.1 {
		t.Errorf("banana: KL %.3f with conditional layers allowed, %.3f without", kb, kg)
	}
}

// annuliFlow fits the default flow on the scattered annuli, which has
// conditional layers (TestConditionalLayers).
func annuliFlow(t *testing.T, s *Settings) (*Flow, target, *rand.Rand) {
	t.Helper()
	tg := annuliTarget(scatteredPairs)
	rng := rand.New(rand.NewPCG(5, 6))
	f, err := Fit(tg.sample(rng, 5000), tg.d, nil, s)
	if err != nil {
		t.Fatal(err)
	}
	if f.ConditionalLayers() == 0 {
		t.Fatal("no conditional layer fitted")
	}
	return f, tg, rng
}

// TestConditionalInverse checks that the log-determinants of a flow with
// conditional layers match finite differences and that Sample's log q is
// LogProb at its draws (TestInverseForward checks the round trips).
func TestConditionalInverse(t *testing.T) {
	f, tg, rng := annuliFlow(t, &Settings{Seed: 7})
	d, n := tg.d, 3000
	// log|det ∂z/∂x| against central finite differences (the Jacobian
	// is triangular within a layer, so its determinant is the product of
	// the diagonal derivatives; differences check the whole map).
	xs := tg.sample(rng, 10)
	one := make([]float64, 1)
	zp, zm := make([]float64, d), make([]float64, d)
	for i := 0; i < 10; i++ {
		xi := xs[i*d : (i+1)*d]
		f.Forward(zp, one, xi)
		ld := one[0]
		jac := make([]float64, d*d)
		for j := 0; j < d; j++ {
			h := 1e-6
			xp, xm := slices.Clone(xi), slices.Clone(xi)
			xp[j] += h
			xm[j] -= h
			f.Forward(zp, one, xp)
			f.Forward(zm, one, xm)
			for r := 0; r < d; r++ {
				jac[r*d+j] = (zp[r] - zm[r]) / (2 * h)
			}
		}
		if fd := logAbsDet(jac, d); math.Abs(fd-ld) > 1e-5*(1+math.Abs(fd)) {
			t.Errorf("point %d: log|J| = %.10g, finite differences give %.10g", i, ld, fd)
		}
	}

	s := make([]float64, n*d)
	lq := make([]float64, n)
	f.Sample(s, lq, rng)
	lp := make([]float64, n)
	f.LogProb(lp, s)
	for i := range lq {
		if math.Abs(lq[i]-lp[i]) > 1e-9*(1+math.Abs(lp[i])) {
			t.Fatalf("draw %d: Sample's log q %.12g, LogProb %.12g", i, lq[i], lp[i])
		}
	}
}

// logAbsDet is log|det a| of the d×d row-major a, by Gaussian
// elimination with partial pivoting.
func logAbsDet(a []float64, d int) float64 {
	a = slices.Clone(a)
	var ld float64
	for c := 0; c < d; c++ {
		p := c
		for r := c + 1; r < d; r++ {
			if math.Abs(a[r*d+c]) > math.Abs(a[p*d+c]) {
				p = r
			}
		}
		for k := 0; k < d; k++ {
			a[c*d+k], a[p*d+k] = a[p*d+k], a[c*d+k]
		}
		ld += math.Log(math.Abs(a[c*d+c]))
		for r := c + 1; r < d; r++ {
			m := a[r*d+c] / a[c*d+c]
			for k := c; k < d; k++ {
				a[r*d+k] -= m * a[c*d+k]
			}
		}
	}
	return ld
}

// TestConditionalNormalization checks that q integrates to one on a grid
// for a single annulus, where every layer after the first is
// conditional.
func TestConditionalNormalization(t *testing.T) {
	tg := annuliTarget([][2]int{{0, 1}})
	rng := rand.New(rand.NewPCG(8, 9))
	f, err := Fit(tg.sample(rng, 6000), 2, nil, &Settings{Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	got := gridIntegral(f, -6, 6, -6, 6, 1500)
	t.Logf("annulus: %d layers (%d conditional), ∫q = %.6f, KL %.3f", f.Layers(), f.ConditionalLayers(), got, heldOutKL(f, tg, rng, 5000))
	if f.ConditionalLayers() == 0 {
		t.Error("no conditional layer")
	}
	if math.Abs(got-1) > 1e-3 {
		t.Errorf("∫q = %.6f, want 1 within 1e-3", got)
	}
}

// TestConditionalMarshal checks the bitwise round trip of a flow with
// conditional layers, determinism across thread counts, that a flow
// written in format version 1 still reads, and that invalid conditional
// layers are rejected.
func TestConditionalMarshal(t *testing.T) {
	f, tg, rng := annuliFlow(t, &Settings{Seed: 9, Threads: 1})
	data, err := f.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	for _, th := range []int{2, 3} {
		g, _, _ := annuliFlow(t, &Settings{Seed: 9, Threads: th})
		if b, _ := g.MarshalBinary(); !bytes.Equal(b, data) {
			t.Errorf("Threads=%d gives a different flow than Threads=1", th)
		}
	}
	var g Flow
	if err := g.UnmarshalBinary(data); err != nil {
		t.Fatal(err)
	}
	n := 1000
	x := tg.sample(rng, n)
	a, b := make([]float64, n), make([]float64, n)
	f.LogProb(a, x)
	g.LogProb(b, x)
	if !slices.Equal(a, b) {
		t.Error("LogProb differs after a round trip")
	}
	sa, sb := make([]float64, n*tg.d), make([]float64, n*tg.d)
	f.Sample(sa, a, rand.New(rand.NewPCG(1, 1)))
	g.Sample(sb, b, rand.New(rand.NewPCG(1, 1)))
	if !slices.Equal(sa, sb) || !slices.Equal(a, b) {
		t.Error("Sample differs after a round trip")
	}

	// Version 1: the same layout without kind bytes, sliced layers only.
	sl, _ := fitTarget(t, funnelTarget(4), 2000, &Settings{Seed: 1, Conditional: Off, Scale: Off})
	var w writer
	w.b = append(w.b, formatMagic...)
	w.u32(1)
	w.u32(4)
	w.u8(0)
	w.f64s(sl.wt.mean)
	w.f64s(sl.wt.white)
	w.f64s(sl.wt.unwhite)
	w.u32(uint32(len(sl.layers)))
	for i := range sl.layers {
		w.slicedLayer(&sl.layers[i])
	}
	w.u32(0)
	var v1 Flow
	if err := v1.UnmarshalBinary(append(w.b, crcBytes(w.b)...)); err != nil {
		t.Fatalf("version 1: %v", err)
	}
	probe := funnelTarget(4).sample(rng, 100)
	p1, p2 := make([]float64, 100), make([]float64, 100)
	sl.LogProb(p1, probe)
	v1.LogProb(p2, probe)
	if !slices.Equal(p1, p2) {
		t.Error("version 1 flow evaluates differently")
	}

	// Corrupt conditional layers with valid checksums.
	base := func(c *condLayer) []byte {
		var w writer
		w.b = append(w.b, formatMagic...)
		w.u32(formatVersion)
		w.u32(2)
		w.u8(0)
		w.f64s([]float64{0, 0, 1, 0, 0, 1, 1, 0, 0, 1})
		w.u32(1)
		w.u8(1)
		w.condLayer(c)
		w.u32(0)
		return append(w.b, crcBytes(w.b)...)
	}
	id := identitySpline()
	good := &condLayer{cond: []int{0}, targ: []int{1}, beta: []float64{0, 1, 0}, centres: [][]float64{{-1, 1}}, psi: [][]spline{{id, id}}}
	var ok Flow
	if err := ok.UnmarshalBinary(base(good)); err != nil {
		t.Fatalf("valid conditional layer rejected: %v", err)
	}
	for name, c := range map[string]*condLayer{
		"overlapping sides":  {cond: []int{0}, targ: []int{0}, beta: []float64{0, 1, 0}, centres: [][]float64{{0}}, psi: [][]spline{{id}}},
		"coordinate too big": {cond: []int{0}, targ: []int{2}, beta: []float64{0, 1, 0}, centres: [][]float64{{0}}, psi: [][]spline{{id}}},
		"centres decreasing": {cond: []int{0}, targ: []int{1}, beta: []float64{0, 1, 0}, centres: [][]float64{{1, -1}}, psi: [][]spline{{id, id}}},
		"weight not finite":  {cond: []int{0}, targ: []int{1}, beta: []float64{0, math.NaN(), 0}, centres: [][]float64{{0}}, psi: [][]spline{{id}}},
	} {
		var g Flow
		if err := g.UnmarshalBinary(base(c)); err == nil {
			t.Errorf("%s: accepted", name)
		} else {
			t.Logf("%s: %v", name, err)
		}
	}
}

// TestConditionalScreen checks that with more training points than
// condSubset, where the candidate is first fitted on a subset
// (condScreen), the conditional layers that help are still taken.
func TestConditionalScreen(t *testing.T) {
	if testing.Short() {
		t.Skip("fits 20000 points")
	}
	tg := annuliTarget(scatteredPairs)
	rng := rand.New(rand.NewPCG(11, 12))
	f, err := Fit(tg.sample(rng, 20000), tg.d, nil, &Settings{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	kl := heldOutKL(f, tg, rng, 6000)
	t.Logf("annuli, 20000 draws: %d layers (%d conditional), KL %.3f", f.Layers(), f.ConditionalLayers(), kl)
	if f.ConditionalLayers() < 2 || !(kl < 0.25) {
		t.Errorf("%d conditional layers and KL %.3f: want at least 2 and below 0.25", f.ConditionalLayers(), kl)
	}
}
