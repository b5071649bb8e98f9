package flow

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// fitTarget fits a flow on n exact draws of tg.
func fitTarget(t testing.TB, tg target, n int, s *Settings) (*Flow, *rand.Rand) {
	t.Helper()
	rng := rand.New(rand.NewPCG(11, uint64(tg.d)))
	f, err := Fit(tg.sample(rng, n), tg.d, nil, s)
	if err != nil {
		t.Fatal(err)
	}
	return f, rng
}

// TestInverseForward checks Inverse(Forward(x)) = x and the reverse
// composition to 1e-9, for points in the bulk, far in the tails (|z| up
// to 12, beyond every knot) and, with bounds, near the bounds.
func TestInverseForward(t *testing.T) {
	funnel := funnelTarget(6)
	lower := []float64{-4, -30, -30, -30, -30, math.Inf(-1)}
	upper := []float64{4, 30, 30, 30, math.Inf(1), math.Inf(1)}
	for _, c := range []struct {
		tg target
		s  *Settings
	}{
		{funnel, &Settings{Seed: 1}},
		{funnel, &Settings{Seed: 2, Lower: lower, Upper: upper}},
		{annuliTarget(scatteredPairs), &Settings{Seed: 7}}, // conditional layers
	} {
		tg, s := c.tg, c.s
		f, rng := fitTarget(t, tg, 4000, s)
		if f.Layers() == 0 {
			t.Fatal("no layers fitted")
		}
		if tg.name == "annuli" && f.ConditionalLayers() == 0 {
			t.Fatal("annuli: no conditional layer fitted")
		}
		d := f.Dim()
		n := 2000
		// z in the bulk and far out, then x = Inverse(z).
		z := make([]float64, n*d)
		for i := range z {
			scale := 1.0
			if i >= n*d/2 {
				scale = 4 // up to |z| ≈ 12
			}
			z[i] = scale * rng.NormFloat64()
		}
		x := make([]float64, n*d)
		ldInv := make([]float64, n)
		f.Inverse(x, ldInv, z)
		z2 := make([]float64, n*d)
		ldFwd := make([]float64, n)
		f.Forward(z2, ldFwd, x)
		for i := 0; i < n; i++ {
			if s.Lower != nil {
				// Far z lands within rounding of a bound, where x no longer
				// resolves z: check only points that stay well inside.
				far := false
				for j := 0; j < d; j++ {
					v := x[i*d+j]
					if math.Abs(v-lower[j]) < 1e-6 || math.Abs(upper[j]-v) < 1e-6 {
						far = true
					}
				}
				if far {
					continue
				}
			}
			for j := 0; j < d; j++ {
				if e := math.Abs(z2[i*d+j] - z[i*d+j]); e > 1e-9*(1+math.Abs(z[i*d+j])) {
					t.Fatalf("point %d: Forward(Inverse(z))[%d] = %.12g, want %.12g", i, j, z2[i*d+j], z[i*d+j])
				}
			}
			if e := math.Abs(ldFwd[i] + ldInv[i]); e > 1e-9*(1+math.Abs(ldFwd[i])) {
				t.Fatalf("point %d: log-determinants %.12g and %.12g do not cancel", i, ldFwd[i], ldInv[i])
			}
		}
		// x from the target and beyond, then z = Forward(x).
		xs := tg.sample(rng, n)
		for i := n / 2; i < n; i++ {
			xs[i*d+1] *= 1.5 // push the funnel's neck coordinates out
		}
		zs := make([]float64, n*d)
		f.Forward(zs, ldFwd, xs)
		x2 := make([]float64, n*d)
		f.Inverse(x2, ldInv, zs)
		maxZ := 0.0
		for i := range xs {
			maxZ = max(maxZ, math.Abs(zs[i]))
			if e := math.Abs(x2[i] - xs[i]); e > 1e-9*(1+math.Abs(xs[i])) {
				t.Fatalf("Inverse(Forward(x))[%d] = %.12g, want %.12g", i, x2[i], xs[i])
			}
		}
		t.Logf("%s, bounded %v: layers %d (%d conditional), max |z| of pushed-out draws %.1f", tg.name, s.Lower != nil, f.Layers(), f.ConditionalLayers(), maxZ)
	}
}

// TestLogDetFiniteDifference compares log|det ∂z/∂x| with the determinant
// of a central finite-difference Jacobian.
func TestLogDetFiniteDifference(t *testing.T) {
	for _, s := range []*Settings{{Seed: 3}, {Seed: 4, Lower: []float64{-4, -30, -30, -30, -30}, Upper: []float64{4, 30, 30, 30, math.Inf(1)}}} {
		tg := funnelTarget(5)
		f, rng := fitTarget(t, tg, 3000, s)
		d := f.Dim()
		x := tg.sample(rng, 20)
		z := make([]float64, d)
		ld := make([]float64, 1)
		zp, zm := make([]float64, d), make([]float64, d)
		one := make([]float64, 1)
		for i := 0; i < 20; i++ {
			xi := slices.Clone(x[i*d : (i+1)*d])
			f.Forward(z, ld, xi)
			jac := mat.NewDense(d, d, nil)
			for j := 0; j < d; j++ {
				h := 1e-6 * (1 + math.Abs(xi[j]))
				xp, xm := slices.Clone(xi), slices.Clone(xi)
				xp[j] += h
				xm[j] -= h
				f.Forward(zp, one, xp)
				f.Forward(zm, one, xm)
				for r := 0; r < d; r++ {
					jac.Set(r, j, (zp[r]-zm[r])/(2*h))
				}
			}
			var lu mat.LU
			lu.Factorize(jac)
			fd, _ := lu.LogDet()
			if math.Abs(fd-ld[0]) > 1e-5*(1+math.Abs(fd)) {
				t.Errorf("bounded %v, point %d: log|J| = %.10g, finite differences give %.10g", s.Lower != nil, i, ld[0], fd)
			}
		}
	}
}

// gridIntegral integrates exp(log q) over [x0,x1]×[y0,y1] with the
// trapezoid rule on an n×n grid.
func gridIntegral(f *Flow, x0, x1, y0, y1 float64, n int) float64 {
	hx, hy := (x1-x0)/float64(n-1), (y1-y0)/float64(n-1)
	pts := make([]float64, 2*n)
	lq := make([]float64, n)
	var sum float64
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			pts[2*j] = x0 + float64(i)*hx
			pts[2*j+1] = y0 + float64(j)*hy
		}
		f.LogProb(lq, pts)
		wi := 1.0
		if i == 0 || i == n-1 {
			wi = 0.5
		}
		for j, v := range lq {
			wj := 1.0
			if j == 0 || j == n-1 {
				wj = 0.5
			}
			sum += wi * wj * math.Exp(v)
		}
	}
	return sum * hx * hy
}

// mixture2D is a two-component Gaussian mixture in 2-d with unequal
// weights and correlations.
func mixture2D(rng *rand.Rand, n int) []float64 {
	x := make([]float64, 2*n)
	for i := 0; i < n; i++ {
		a, b := rng.NormFloat64(), rng.NormFloat64()
		if rng.Float64() < 0.3 {
			x[2*i], x[2*i+1] = -2+0.5*a, 1+0.5*a+0.3*b
		} else {
			x[2*i], x[2*i+1] = 1.5+a, -1+0.4*b
		}
	}
	return x
}

// TestNormalization2D checks that q integrates to one on a grid, for the
// banana and a Gaussian mixture.
func TestNormalization2D(t *testing.T) {
	if testing.Short() {
		t.Skip("slow (flow fits and a fine grid): make test runs it")
	}
	rng := rand.New(rand.NewPCG(5, 5))
	for _, c := range []struct {
		name string
		x    []float64
	}{
		{"banana", bananaTarget(2, 1).sample(rng, 5000)},
		{"mixture", mixture2D(rng, 5000)},
	} {
		f, err := Fit(c.x, 2, nil, &Settings{Seed: 6})
		if err != nil {
			t.Fatal(err)
		}
		// A box holding q's mass to far below 1e-3: the range of many
		// draws of q, widened.
		s := make([]float64, 2*20000)
		f.Sample(s, make([]float64, 20000), rng)
		lo, hi := []float64{math.Inf(1), math.Inf(1)}, []float64{math.Inf(-1), math.Inf(-1)}
		for i := 0; i < 20000; i++ {
			for j := 0; j < 2; j++ {
				lo[j] = min(lo[j], s[2*i+j])
				hi[j] = max(hi[j], s[2*i+j])
			}
		}
		for j := 0; j < 2; j++ {
			w := hi[j] - lo[j]
			lo[j] -= 0.5 * w
			hi[j] += 0.5 * w
		}
		// 1800 points a side resolve the banana's ridge (about 0.07
		// across): the integral is the same at 2400 (1.000237 for
		// problems.BananaN(2, 1)'s rotation), while 1200 came out 1.4e-3
		// short of it.
		got := gridIntegral(f, lo[0], hi[0], lo[1], hi[1], 1800)
		t.Logf("%s: layers %d, ∫q = %.6f", c.name, f.Layers(), got)
		if math.Abs(got-1) > 1e-3 {
			t.Errorf("%s: ∫q = %.6f, want 1 within 1e-3", c.name, got)
		}
	}
}

// TestNormalizationImportance checks E_q[p/q] = 1 in 16-d for a
// normalized Gaussian mixture p, within its Monte Carlo error.
func TestNormalizationImportance(t *testing.T) {
	const d = 16
	rng := rand.New(rand.NewPCG(7, 7))
	// p = 0.4 N(m, I) + 0.6 N(-m, diag(s²)).
	m := make([]float64, d)
	sd := make([]float64, d)
	for j := range m {
		m[j] = 1.5 * rng.NormFloat64() / math.Sqrt(d) * 2
		sd[j] = 0.5 + rng.Float64()
	}
	var logDet2 float64
	for _, v := range sd {
		logDet2 += math.Log(v)
	}
	sample := func(n int) []float64 {
		x := make([]float64, n*d)
		for i := 0; i < n; i++ {
			first := rng.Float64() < 0.4
			for j := 0; j < d; j++ {
				if first {
					x[i*d+j] = m[j] + rng.NormFloat64()
				} else {
					x[i*d+j] = -m[j] + sd[j]*rng.NormFloat64()
				}
			}
		}
		return x
	}
	logp := func(x []float64) float64 {
		var a, b float64
		for j, v := range x {
			a += logPhi(v - m[j])
			b += logPhi((v + m[j]) / sd[j])
		}
		b -= logDet2
		return logAddExp(math.Log(0.4)+a, math.Log(0.6)+b)
	}
	f, err := Fit(sample(10000), d, nil, &Settings{Seed: 8})
	if err != nil {
		t.Fatal(err)
	}
	n := 40000
	x := make([]float64, n*d)
	lq := make([]float64, n)
	f.Sample(x, lq, rng)
	w := make([]float64, n)
	for i := range w {
		w[i] = math.Exp(logp(x[i*d:(i+1)*d]) - lq[i])
	}
	mean, v := meanVar(w)
	se := math.Sqrt(v / float64(n))
	t.Logf("layers %d: E_q[p/q] = %.4f ± %.4f", f.Layers(), mean, se)
	if se > 0.02 {
		t.Errorf("Monte Carlo error %.4f too large for a meaningful test: q is far from p", se)
	}
	if math.Abs(mean-1) > 4*se {
		t.Errorf("E_q[p/q] = %.4f ± %.4f, want 1", mean, se)
	}
}

// TestHeldOutBeatsGaussian compares the held-out mean log-likelihood of
// the flow with that of a fitted Gaussian on fresh exact draws of the
// reference targets (10⁴ training points). Measured gains (seed below):
// funnel 9.6, banana 31.6, cauchy 30.6 nats; the test asks for 7, 25, 25.
func TestHeldOutBeatsGaussian(t *testing.T) {
	if testing.Short() {
		t.Skip("fits three targets at full size")
	}
	for _, c := range []struct {
		tg     target
		margin float64
	}{
		{funnelTarget(16), 7},
		{bananaTarget(32, 1), 25},
		{cauchyTarget(48), 25},
	} {
		rng := rand.New(rand.NewPCG(21, 22))
		train := c.tg.sample(rng, 10000)
		test := c.tg.sample(rng, 10000)
		f, err := Fit(train, c.tg.d, nil, &Settings{Seed: 23})
		if err != nil {
			t.Fatal(err)
		}
		g := gaussianLogLik(train, test, c.tg.d)
		q := flowLogLik(f, test)
		t.Logf("%s: layers %d, held-out mean log q %.3f, Gaussian %.3f, gain %.2f nats", c.tg.name, f.Layers(), q, g, q-g)
		if q-g < c.margin {
			t.Errorf("%s: flow gains %.2f nats over a Gaussian, want at least %g", c.tg.name, q-g, c.margin)
		}
	}
}

// TestSampleConsistent checks that Sample's log q agrees with LogProb and
// that the draws depend on the generator alone.
func TestSampleConsistent(t *testing.T) {
	f, _ := fitTarget(t, bananaTarget(4, 2), 3000, &Settings{Seed: 9})
	n := 3000
	x := make([]float64, n*4)
	lq := make([]float64, n)
	f.Sample(x, lq, rand.New(rand.NewPCG(1, 2)))
	lp := make([]float64, n)
	f.LogProb(lp, x)
	for i := range lq {
		if math.Abs(lq[i]-lp[i]) > 1e-9*(1+math.Abs(lp[i])) {
			t.Fatalf("draw %d: Sample's log q %.12g, LogProb %.12g", i, lq[i], lp[i])
		}
	}
	x2 := make([]float64, n*4)
	f.Sample(x2, make([]float64, n), rand.New(rand.NewPCG(1, 2)))
	if !slices.Equal(x, x2) {
		t.Fatal("same rng seed gave different draws")
	}
}

// TestBridgeAccuracy runs Gaussianized bridge sampling with exact draws
// (10⁴ to fit the flow, 10⁴ of p and 10⁴ of q in the bridge) on the
// reference targets, without and with their prior boxes as bounds, and
// checks the estimated error of ln Z against the quality bar of the
// project (0.03 funnel, 0.05 banana, 0.08 Cauchy) and the actual error
// against four estimated errors. Measured with the seed below: 0.019,
// 0.035, 0.014 (unbounded); over repeated seeds the mean estimated errors
// are 0.019, 0.037 and 0.014, bounded or not, and the actual errors match.
func TestBridgeAccuracy(t *testing.T) {
	if testing.Short() {
		t.Skip("fits three targets at full size, twice")
	}
	for _, bounded := range []bool{false, true} {
		for _, c := range []struct {
			tg    target
			logZ  float64 // of the test density: normalized (see targets_test.go)
			sigma float64
		}{
			{funnelTarget(16), 0, 0.03},
			{bananaTarget(32, 1), 0, 0.05},
			{cauchyTarget(48), 0, 0.08},
		} {
			rng := rand.New(rand.NewPCG(91, 92))
			s := &Settings{Seed: 93}
			if bounded {
				s.Lower, s.Upper = c.tg.lower, c.tg.upper
			}
			f, err := Fit(c.tg.sample(rng, 10000), c.tg.d, nil, s)
			if err != nil {
				t.Fatal(err)
			}
			lz, sig := gbsRun(c.tg, f, 10000, rng)
			t.Logf("%s (bounded %v): ln Z error %+.4f, estimated error %.4f", c.tg.name, bounded, lz-c.logZ, sig)
			if sig > c.sigma {
				t.Errorf("%s (bounded %v): estimated error of ln Z %.4f, want at most %g", c.tg.name, bounded, sig, c.sigma)
			}
			if math.Abs(lz-c.logZ) > 4*sig {
				t.Errorf("%s (bounded %v): ln Z off by %.4f, more than four estimated errors (%.4f)", c.tg.name, bounded, lz-c.logZ, sig)
			}
		}
	}
}
