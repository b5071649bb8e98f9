package problems

import (
	"math"
	"math/rand/v2"
	"sort"
	"strings"
	"testing"

	"gonum.org/v1/gonum/integrate/quad"
	"gonum.org/v1/gonum/mat"
)

func testRand(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, 0x7e57)) }

// testProblems covers every family and the degenerate small dimensions.
func testProblems() []*Problem {
	return []*Problem{
		Funnel(), Banana(), Cauchy(), Ring(),
		FunnelN(1), FunnelN(2), FunnelN(3),
		BananaN(2, BananaSeed), BananaN(4, 7), BananaIdentity(2), BananaIdentity(6),
		CauchyN(1), CauchyN(3),
		RingN(1), RingN(2), RingN(3), RingN(5),
		Gaussian([]float64{0.5}, []float64{4}, -1),
		Gaussian([]float64{1, -2}, []float64{2, 0.5, 0.5, 1}, 1.3),
		CorrelatedGaussian(6, 3, -2.5),
		StandardMixture(3),
		GaussianMixture(2, []float64{1, 2, 3}, [][]float64{{0, 0}, {3, 1}, {-2, 2}}, []float64{0.5, 1, 0.3}, 0.7),
		TwoModesN(1), TwoModesN(3),
		HierarchicalNormal(1, 3), HierarchicalNormal(4, 5),
	}
}

// testPoints returns points at which to check a problem: exact draws if it
// has a sampler (the typical set), points near the ring, and points spread
// over the box (or a wide region for unbounded problems), where the
// densities take extreme values.
func testPoints(p *Problem, n int, rng *rand.Rand) [][]float64 {
	var pts [][]float64
	if p.Sample != nil {
		buf := make([]float64, n*p.Dim)
		p.Sample(buf, rng)
		for i := 0; i < n; i++ {
			pts = append(pts, buf[i*p.Dim:(i+1)*p.Dim])
		}
	} else {
		for i := 0; i < n; i++ {
			x := make([]float64, p.Dim)
			for j := range x {
				x[j] = 1 + 0.2*rng.NormFloat64()
				if rng.IntN(2) == 0 {
					x[j] = -x[j]
				}
			}
			pts = append(pts, x)
		}
	}
	for i := 0; i < n; i++ {
		x := make([]float64, p.Dim)
		for j := range x {
			if p.Lower == nil {
				x[j] = 3 * rng.NormFloat64()
				continue
			}
			// Keep a margin so that finite differences stay inside.
			w := p.Upper[j] - p.Lower[j]
			x[j] = p.Lower[j] + w*(1e-3+(1-2e-3)*rng.Float64())
		}
		pts = append(pts, x)
	}
	return pts
}

func TestGradientFiniteDifferences(t *testing.T) {
	t.Parallel()
	rng := testRand(1)
	for _, p := range testProblems() {
		grad := make([]float64, p.Dim)
		xh := make([]float64, p.Dim)
		for _, x := range testPoints(p, 10, rng) {
			lp := p.LogProbGrad(grad, x)
			if want := p.LogProb(x); lp != want {
				t.Errorf("%s: LogProbGrad returns %v, LogProb %v", p.Name, lp, want)
			}
			if math.IsInf(lp, 0) || math.IsNaN(lp) {
				t.Errorf("%s: log p = %v at a test point inside the box", p.Name, lp)
				continue
			}
			scale := 1.0
			for _, g := range grad {
				scale = math.Max(scale, math.Abs(g))
			}
			for j := range x {
				h := 1e-5 * math.Max(1, math.Abs(x[j]))
				copy(xh, x)
				hi, lo := x[j]+h, x[j]-h
				xh[j] = hi
				fp := p.LogProb(xh)
				xh[j] = lo
				fm := p.LogProb(xh)
				fd := (fp - fm) / (hi - lo) // the step actually taken, after rounding
				if math.Abs(fd-grad[j]) > 1e-5*scale {
					t.Errorf("%s: d/dx%d = %v, central difference %v (scale %v) at %v", p.Name, j, grad[j], fd, scale, x)
				}
			}
		}
	}
}

func TestOutsideBox(t *testing.T) {
	t.Parallel()
	rng := testRand(2)
	for _, p := range testProblems() {
		if p.Lower == nil {
			continue
		}
		x := testPoints(p, 1, rng)[0]
		grad := make([]float64, p.Dim)
		for j := 0; j < p.Dim; j++ {
			for _, v := range []float64{p.Lower[j], p.Upper[j], p.Upper[j] + 1, math.Inf(-1)} {
				y := append([]float64(nil), x...)
				y[j] = v
				for i := range grad {
					grad[i] = 7
				}
				if lp := p.LogProb(y); !math.IsInf(lp, -1) {
					t.Errorf("%s: log p = %v with x[%d] = %v on or outside the box", p.Name, lp, j, v)
				}
				if lp := p.LogProbGrad(grad, y); !math.IsInf(lp, -1) {
					t.Errorf("%s: LogProbGrad = %v with x[%d] = %v", p.Name, lp, j, v)
				}
				for i, g := range grad {
					if g != 0 {
						t.Errorf("%s: grad[%d] = %v outside the box, want 0", p.Name, i, g)
					}
				}
				if p.Inside(y) {
					t.Errorf("%s: Inside true with x[%d] = %v", p.Name, j, v)
				}
			}
		}
	}
}

func TestNaNPropagates(t *testing.T) {
	t.Parallel()
	rng := testRand(3)
	for _, p := range testProblems() {
		x := testPoints(p, 1, rng)[0]
		x[0] = math.NaN()
		if lp := p.LogProb(x); !math.IsNaN(lp) {
			t.Errorf("%s: log p = %v at a NaN coordinate, want NaN", p.Name, lp)
		}
		if lp := p.LogProbGrad(make([]float64, p.Dim), x); !math.IsNaN(lp) {
			t.Errorf("%s: LogProbGrad = %v at a NaN coordinate, want NaN", p.Name, lp)
		}
	}
}

func TestWrongLengthPanics(t *testing.T) {
	t.Parallel()
	for _, p := range testProblems() {
		for name, f := range map[string]func(){
			"LogProb":     func() { p.LogProb(make([]float64, p.Dim+1)) },
			"LogProbGrad": func() { p.LogProbGrad(make([]float64, p.Dim-1), make([]float64, p.Dim)) },
		} {
			if !panics(f) {
				t.Errorf("%s: %s with a wrong length did not panic", p.Name, name)
			}
		}
		if p.Sample != nil && p.Dim > 1 && !panics(func() { p.Sample(make([]float64, p.Dim+1), testRand(0)) }) {
			t.Errorf("%s: Sample with len(dst) not a multiple of Dim did not panic", p.Name)
		}
	}
}

func panics(f func()) (did bool) {
	defer func() { did = recover() != nil }()
	f()
	return false
}

func TestBatch(t *testing.T) {
	t.Parallel()
	rng := testRand(4)
	for _, p := range testProblems() {
		pts := testPoints(p, 3, rng)
		x := make([]float64, 0, len(pts)*p.Dim)
		for _, pt := range pts {
			x = append(x, pt...)
		}
		dst := make([]float64, len(pts))
		grad := make([]float64, len(x))
		if err := p.LogProbBatch(dst, x); err != nil {
			t.Fatalf("%s: %v", p.Name, err)
		}
		dst2 := make([]float64, len(pts))
		if err := p.LogProbGradBatch(dst2, grad, x); err != nil {
			t.Fatalf("%s: %v", p.Name, err)
		}
		g := make([]float64, p.Dim)
		for i, pt := range pts {
			want := p.LogProbGrad(g, pt)
			if dst[i] != want || dst2[i] != want {
				t.Errorf("%s: batch row %d: %v, %v, want %v", p.Name, i, dst[i], dst2[i], want)
			}
			for j := range g {
				if grad[i*p.Dim+j] != g[j] {
					t.Errorf("%s: batch gradient row %d differs", p.Name, i)
					break
				}
			}
		}
		if err := p.LogProbBatch(dst, x[1:]); err == nil {
			t.Errorf("%s: LogProbBatch accepted a wrong length", p.Name)
		}
		if err := p.LogProbGradBatch(dst, grad[1:], x); err == nil {
			t.Errorf("%s: LogProbGradBatch accepted a wrong gradient length", p.Name)
		}
	}
}

// TestPaperLogZ checks the computed LogZ against the independently
// computed references of docs/problems.md, printed to six decimals.
func TestPaperLogZ(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		p    *Problem
		want float64
	}{
		{Funnel(), -63.498811},
		{Banana(), -127.364000},
		{Cauchy(), -254.626548},
		{Ring(), -114.491835},
		{RingN(16), -28.622683},
		{RingN(32), -57.245917},
	} {
		if math.Abs(c.p.LogZ-c.want) > 1e-6 {
			t.Errorf("%s: LogZ = %.8f, want %.6f", c.p.Name, c.p.LogZ, c.want)
		}
	}
	names := []string{}
	for _, p := range All() {
		names = append(names, p.Name)
	}
	if got := strings.Join(names, " "); got != "funnel banana cauchy ring" {
		t.Errorf("All() = %s", got)
	}
}

// TestRingConvergence checks that the Nyström rule of RingN has converged:
// a much finer rule gives the same LogZ.
func TestRingConvergence(t *testing.T) {
	t.Parallel()
	fine := ringEigenvalues(40, 16)
	for _, n := range []int{1, 2, 3, 16, 33, 64, 128} {
		if got, want := ringLogZ(n), ringLogZFrom(fine, n); math.Abs(got-want) > 1e-9 {
			t.Errorf("ring n=%d: LogZ %.12f with the default rule, %.12f with a finer one", n, got, want)
		}
	}
}

// gl2 integrates exp(f(x, y)) over a rectangle by a composite
// Gauss–Legendre product rule.
func gl2(f func(x, y float64) float64, lo, hi [2]float64, panels, order int) float64 {
	x, wx := compositeGL(lo[0], hi[0], panels, order)
	y, wy := compositeGL(lo[1], hi[1], panels, order)
	var z float64
	for i := range x {
		var zi float64
		for j := range y {
			zi += wy[j] * math.Exp(f(x[i], y[j]))
		}
		z += wx[i] * zi
	}
	return z
}

func problem2(p *Problem) func(x, y float64) float64 {
	pt := make([]float64, 2)
	return func(x, y float64) float64 {
		pt[0], pt[1] = x, y
		return p.LogProb(pt)
	}
}

// TestRingLogZQuadrature checks the eigenvalue method against direct
// quadrature of LogProb for n = 1, 2, 3.
func TestRingLogZQuadrature(t *testing.T) {
	t.Parallel()
	x, w := compositeGL(-ringBound, ringBound, 24, 10)
	p1 := RingN(1)
	var z1 float64
	for i := range x {
		z1 += w[i] * math.Exp(p1.LogProb([]float64{x[i]}))
	}
	p2 := RingN(2)
	z2 := gl2(problem2(p2), [2]float64{-5, -5}, [2]float64{5, 5}, 24, 10)
	p3 := RingN(3)
	var z3 float64
	pt := make([]float64, 3)
	for i := range x {
		for j := range x {
			for k := range x {
				pt[0], pt[1], pt[2] = x[i], x[j], x[k]
				z3 += w[i] * w[j] * w[k] * math.Exp(p3.LogProb(pt))
			}
		}
	}
	for _, c := range []struct {
		p *Problem
		z float64
	}{{p1, z1}, {p2, z2}, {p3, z3}} {
		if math.Abs(math.Log(c.z)-c.p.LogZ) > 1e-9 {
			t.Errorf("%s: LogZ = %.12f, quadrature %.12f", c.p.Name, c.p.LogZ, math.Log(c.z))
		}
	}
}

// TestBananaLogZQuadrature integrates the 2-d bananas directly over the
// box. The quadrature must resolve the box's cut (1e-5 to 2.4e-5 in ln Z),
// so the tolerance is well below it.
func TestBananaLogZQuadrature(t *testing.T) {
	if testing.Short() {
		t.Skip("slow (a fine quadrature): make test runs it")
	}
	t.Parallel()
	unbounded := math.Log(math.Pi*math.Sqrt(bananaCurv)) - 2*math.Log(30)
	for _, p := range []*Problem{BananaIdentity(2), BananaN(2, BananaSeed)} {
		z := gl2(problem2(p), [2]float64{-15, -15}, [2]float64{15, 15}, 600, 8)
		if math.Abs(math.Log(z)-p.LogZ) > 1e-7 {
			t.Errorf("%s: LogZ = %.10f, 2-d quadrature %.10f", p.Name, p.LogZ, math.Log(z))
		}
		if cut := unbounded - p.LogZ; cut < 5e-6 || cut > 5e-5 {
			t.Errorf("%s: the box cuts %g from ln Z, expected about 1e-5", p.Name, cut)
		}
	}
	// Separable in pairs for the identity.
	if got, want := BananaIdentity(6).LogZ, 3*BananaIdentity(2).LogZ; math.Abs(got-want) > 1e-12 {
		t.Errorf("banana-6-identity: LogZ = %v, want 3 × the 2-d value %v", got, want)
	}
	// The untruncated closed form for d > 2.
	if got, want := Banana().LogZ, 16*math.Log(0.1*math.Pi)-32*math.Log(30); math.Abs(got-want) > 1e-12 {
		t.Errorf("banana: LogZ = %v, want %v", got, want)
	}
}

// TestBananaBoxMass estimates, from unbounded exact draws, the mass that
// the box cuts off. For d = 2 it must match the quadrature; for the paper's
// d = 32 rotation it must be negligible, which is what justifies the
// untruncated LogZ.
func TestBananaBoxMass(t *testing.T) {
	t.Parallel()
	rng := testRand(5)
	unbounded := func(d int) float64 {
		return float64(d/2)*math.Log(math.Pi*math.Sqrt(bananaCurv)) - float64(d)*math.Log(30)
	}
	for _, c := range []struct {
		p *Problem
		a []float64
		n int
	}{
		{BananaIdentity(2), nil, 2000000},
		{BananaN(2, BananaSeed), BananaRotation(2, BananaSeed), 2000000},
		{Banana(), BananaRotation(32, BananaSeed), 200000},
	} {
		b := &banana{d: c.p.Dim, a: c.a}
		x := make([]float64, b.d)
		y := make([]float64, b.d)
		out := 0
		for i := 0; i < c.n; i++ {
			b.drawUnbounded(x, y, rng)
			if outsideSym(x, bananaBound) {
				out++
			}
		}
		want := -math.Expm1(c.p.LogZ - unbounded(c.p.Dim)) // fraction cut by the box
		exp := want * float64(c.n)
		if math.Abs(float64(out)-exp) > 5*math.Sqrt(exp)+2 {
			t.Errorf("%s: %d of %d unbounded draws leave the box, LogZ implies %.1f", c.p.Name, out, c.n, exp)
		}
	}
}

func TestCauchyLogZQuadrature(t *testing.T) {
	t.Parallel()
	p := CauchyN(1)
	x, w := compositeGL(-cauchyBound, cauchyBound, 400, 20)
	var z float64
	for i := range x {
		z += w[i] * math.Exp(p.LogProb([]float64{x[i]}))
	}
	if math.Abs(math.Log(z)-p.LogZ) > 1e-10 {
		t.Errorf("cauchy-1: LogZ = %.12f, quadrature %.12f", p.LogZ, math.Log(z))
	}
	if got := Cauchy().LogZ; math.Abs(got-48*p.LogZ) > 1e-10 {
		t.Errorf("cauchy: LogZ = %v, want 48 × %v", got, p.LogZ)
	}
}

// TestFunnelLogZQuadrature integrates the 2-d funnel directly, with the
// inner grid scaled to the width exp(x1) of the neck, and the 16-d formula
// with a different Gauss–Legendre rule.
func TestFunnelLogZQuadrature(t *testing.T) {
	t.Parallel()
	p := FunnelN(2)
	x1, w1 := compositeGL(-funnelX1Bound, funnelX1Bound, 40, 16)
	var z float64
	pt := make([]float64, 2)
	for i, t1 := range x1 {
		b := math.Min(funnelBound, 14*math.Exp(t1)) // exp(-98) beyond
		x2, w2 := compositeGL(-b, b, 16, 16)
		var zi float64
		for j := range x2 {
			pt[0], pt[1] = t1, x2[j]
			zi += w2[j] * math.Exp(p.LogProb(pt))
		}
		z += w1[i] * zi
	}
	if math.Abs(math.Log(z)-p.LogZ) > 1e-10 {
		t.Errorf("funnel-2: LogZ = %.12f, quadrature %.12f", p.LogZ, math.Log(z))
	}

	f := func(t float64) float64 {
		return math.Exp(-0.5*t*t-halfLog2Pi) * math.Pow(math.Erf(30*math.Exp(-t)/math.Sqrt2), 15)
	}
	z16 := quad.Fixed(f, -4, 4, 1000, quad.Legendre{}, 0)
	want := math.Log(z16) - math.Log(8) - 15*math.Log(60)
	if got := Funnel().LogZ; math.Abs(got-want) > 1e-10 {
		t.Errorf("funnel: LogZ = %.12f, 1000-node rule %.12f", got, want)
	}
}

// TestGaussianLogZQuadrature checks the normalization of LogProb of the
// Gaussian families, whose LogZ is c by construction.
func TestGaussianLogZQuadrature(t *testing.T) {
	if testing.Short() {
		t.Skip("slow (a fine quadrature): make test runs it")
	}
	t.Parallel()
	for _, p := range []*Problem{
		Gaussian([]float64{1, -2}, []float64{2, 0.5, 0.5, 1}, 1.3),
		CorrelatedGaussian(2, 11, -0.4),
		GaussianMixture(2, []float64{1, 2, 3}, [][]float64{{0, 0}, {3, 1}, {-2, 2}}, []float64{0.5, 1, 0.3}, 0.7),
		StandardMixture(2),
	} {
		z := gl2(problem2(p), [2]float64{-20, -20}, [2]float64{20, 20}, 80, 20)
		if math.Abs(math.Log(z)-p.LogZ) > 1e-10 {
			t.Errorf("%s: LogZ = %.12f, quadrature %.12f", p.Name, p.LogZ, math.Log(z))
		}
	}
}

// TestGaussianAgainstLU compares the Gaussian log density (built on a
// Cholesky factor) with one built on an LU inverse and determinant, which
// also makes exp(LogProb - c) the normalized density, so that p/q = exp(c)
// exactly for q = p normalized.
func TestGaussianAgainstLU(t *testing.T) {
	t.Parallel()
	const d = 5
	mu, cov := correlatedParams(d, 9)
	const c = 2.25
	p := CorrelatedGaussian(d, 9, c)
	s := mat.NewDense(d, d, cov)
	var inv mat.Dense
	if err := inv.Inverse(s); err != nil {
		t.Fatal(err)
	}
	logDet, sign := mat.LogDet(s)
	if sign <= 0 {
		t.Fatal("covariance determinant not positive")
	}
	rng := testRand(6)
	for _, x := range testPoints(p, 20, rng) {
		delta := mat.NewVecDense(d, nil)
		delta.SubVec(mat.NewVecDense(d, append([]float64(nil), x...)), mat.NewVecDense(d, mu))
		want := -float64(d)*halfLog2Pi - 0.5*logDet - 0.5*mat.Inner(delta, &inv, delta)
		if got := p.LogProb(x) - c; math.Abs(got-want) > 1e-10*math.Max(1, math.Abs(want)) {
			t.Errorf("log N = %v, LU %v", got, want)
		}
	}
}

// TestImportanceSampling estimates Z by plain importance sampling: with a
// wider Gaussian q for the unbounded problems and with the uniform prior
// for low-dimensional bounded ones. The estimate must agree with LogZ
// within its Monte Carlo error.
func TestImportanceSampling(t *testing.T) {
	t.Parallel()
	rng := testRand(7)
	muC, covC := correlatedParams(6, 3)
	wide := make([]float64, len(covC))
	for i, v := range covC {
		wide[i] = 1.5 * 1.5 * v
	}
	for _, c := range []struct {
		p *Problem
		q *Problem // normalized proposal; nil means the uniform prior
		n int
	}{
		{Gaussian([]float64{1, -2}, []float64{2, 0.5, 0.5, 1}, 1.3), Gaussian([]float64{1.2, -2}, []float64{4, 0, 0, 3}, 0), 100000},
		{CorrelatedGaussian(6, 3, -2.5), Gaussian(muC, wide, 0), 100000},
		{StandardMixture(3), Gaussian(filled(3, 0.4), []float64{4, 0, 0, 0, 4, 0, 0, 0, 4}, 0), 100000},
		{FunnelN(2), nil, 400000},
		{BananaIdentity(2), nil, 1000000},
		{CauchyN(2), nil, 400000},
		{RingN(3), nil, 400000},
	} {
		d := c.p.Dim
		x := make([]float64, d)
		var sum, sum2 float64
		for i := 0; i < c.n; i++ {
			var lq float64
			if c.q == nil {
				for j := range x {
					w := c.p.Upper[j] - c.p.Lower[j]
					x[j] = c.p.Lower[j] + w*rng.Float64()
					lq -= math.Log(w)
				}
			} else {
				c.q.Sample(x, rng)
				lq = c.q.LogProb(x)
			}
			// Weights relative to exp(LogZ) keep the sums near 1.
			w := math.Exp(c.p.LogProb(x) - lq - c.p.LogZ)
			sum += w
			sum2 += w * w
		}
		n := float64(c.n)
		mean := sum / n
		se := math.Sqrt((sum2/n - mean*mean) / n)
		if math.Abs(mean-1) > 5*se {
			t.Errorf("%s: IS gives Z/exp(LogZ) = %.5f ± %.5f", c.p.Name, mean, se)
		}
		if se > 0.05 {
			t.Errorf("%s: IS error %.3f too large for the check to mean anything", c.p.Name, se)
		}
	}
}

// moments returns the sample mean and covariance of n row-major points in
// d dimensions, with the Monte Carlo standard errors of each entry,
// estimated from the same points.
func moments(x []float64, d int) (mean, cov, seMean, seCov []float64) {
	n := len(x) / d
	mean = make([]float64, d)
	for i := 0; i < n; i++ {
		for j := 0; j < d; j++ {
			mean[j] += x[i*d+j]
		}
	}
	for j := range mean {
		mean[j] /= float64(n)
	}
	cov = make([]float64, d*d)
	m2 := make([]float64, d*d)
	for i := 0; i < n; i++ {
		for j := 0; j < d; j++ {
			for k := 0; k < d; k++ {
				v := (x[i*d+j] - mean[j]) * (x[i*d+k] - mean[k])
				cov[j*d+k] += v
				m2[j*d+k] += v * v
			}
		}
	}
	seMean = make([]float64, d)
	seCov = make([]float64, d*d)
	for j := range cov {
		cov[j] /= float64(n)
		seCov[j] = math.Sqrt((m2[j]/float64(n) - cov[j]*cov[j]) / float64(n))
	}
	for j := 0; j < d; j++ {
		seMean[j] = math.Sqrt(cov[j*d+j] / float64(n))
	}
	return mean, cov, seMean, seCov
}

func checkMoments(t *testing.T, name string, x []float64, d int, wantMean, wantCov []float64) {
	t.Helper()
	mean, cov, seMean, seCov := moments(x, d)
	for j := range wantMean {
		if math.Abs(mean[j]-wantMean[j]) > 5*seMean[j] {
			t.Errorf("%s: mean[%d] = %.4f ± %.4f, want %.4f", name, j, mean[j], seMean[j], wantMean[j])
		}
	}
	for j := range wantCov {
		if math.Abs(cov[j]-wantCov[j]) > 5*seCov[j]+1e-12 {
			t.Errorf("%s: cov[%d,%d] = %.4f ± %.4f, want %.4f", name, j/d, j%d, cov[j], seCov[j], wantCov[j])
		}
	}
}

func TestSamplesInBox(t *testing.T) {
	t.Parallel()
	rng := testRand(8)
	for _, p := range testProblems() {
		if p.Sample == nil {
			if !strings.HasPrefix(p.Name, "ring") {
				t.Errorf("%s: no exact sampler", p.Name)
			}
			continue
		}
		const n = 2000
		x := make([]float64, n*p.Dim)
		p.Sample(x, rng)
		for i := 0; i < n; i++ {
			pt := x[i*p.Dim : (i+1)*p.Dim]
			if !p.Inside(pt) {
				t.Fatalf("%s: draw %d outside the box: %v", p.Name, i, pt)
			}
			if lp := p.LogProb(pt); math.IsInf(lp, 0) || math.IsNaN(lp) {
				t.Fatalf("%s: log p = %v at draw %d", p.Name, lp, i)
			}
		}
	}
}

// TestFunnelSampler compares the x1 marginal of the draws with the exact
// one, N(x1; 0, 1) erf(30 e^-x1/√2)^(d-1) on (-4, 4), which a sampler that
// redrew only the offending coordinate would not reproduce in its tail.
func TestFunnelSampler(t *testing.T) {
	t.Parallel()
	rng := testRand(9)
	for _, d := range []int{16, 200} {
		p := FunnelN(d)
		const n = 40000
		x := make([]float64, n*d)
		p.Sample(x, rng)
		tq, wq := compositeGL(-4, 4, 64, 20)
		var m0, m1, m2 float64
		for i, ti := range tq {
			f := wq[i] * math.Exp(-0.5*ti*ti+float64(d-1)*math.Log(math.Erf(30*math.Exp(-ti)/math.Sqrt2)))
			m0 += f
			m1 += f * ti
			m2 += f * ti * ti
		}
		mean, vr := m1/m0, m2/m0-(m1/m0)*(m1/m0)
		x1 := make([]float64, n)
		var z, zz float64
		for i := range x1 {
			x1[i] = x[i*d]
			for _, v := range x[i*d+1 : (i+1)*d] {
				u := v * math.Exp(-x1[i])
				z += u
				zz += u * u
			}
		}
		checkMoments(t, p.Name+" x1", x1, 1, []float64{mean}, []float64{vr})
		nz := float64(n * (d - 1))
		if zm, zv := z/nz, zz/nz; math.Abs(zm) > 5*math.Sqrt(1/nz) || math.Abs(zv-1) > 0.02 {
			t.Errorf("%s: x_i exp(-x1) has mean %.4f and variance %.4f, want about 0 and 1", p.Name, zm, zv)
		}
	}
}

// TestBananaSampler maps the draws back to y = A x and checks the pair
// distribution: y_odd ~ N(1, 1/2), y_even - y_odd^2 ~ N(0, 0.005).
func TestBananaSampler(t *testing.T) {
	t.Parallel()
	rng := testRand(10)
	for _, c := range []struct {
		p *Problem
		a []float64
	}{
		{Banana(), BananaRotation(32, BananaSeed)},
		{BananaN(2, 5), BananaRotation(2, 5)},
		{BananaIdentity(4), nil},
	} {
		d := c.p.Dim
		const n = 20000
		x := make([]float64, n*d)
		c.p.Sample(x, rng)
		pairs := make([]float64, 0, n*d)
		for i := 0; i < n; i++ {
			xi := x[i*d : (i+1)*d]
			y := append([]float64(nil), xi...)
			if c.a != nil {
				for r := 0; r < d; r++ {
					var s float64
					for j, v := range xi {
						s += c.a[r*d+j] * v
					}
					y[r] = s
				}
			}
			for k := 0; k < d/2; k++ {
				pairs = append(pairs, y[2*k], y[2*k+1]-y[2*k]*y[2*k])
			}
		}
		checkMoments(t, c.p.Name, pairs, 2, []float64{1, 0}, []float64{0.5, 0, 0, bananaCurv / 2})
	}
}

// TestCauchySampler runs a Kolmogorov–Smirnov test of the pooled
// coordinates against the CDF of the mixture truncated to (-100, 100).
func TestCauchySampler(t *testing.T) {
	t.Parallel()
	rng := testRand(11)
	p := CauchyN(4)
	const n = 50000
	x := make([]float64, n*p.Dim)
	p.Sample(x, rng)
	sort.Float64s(x)
	cdf := func(v float64) float64 {
		var s float64
		for _, m := range []float64{cauchyLoc, -cauchyLoc} {
			s += math.Atan(v-m) - math.Atan(-cauchyBound-m)
		}
		return s / (2 * (math.Atan(cauchyBound-cauchyLoc) + math.Atan(cauchyBound+cauchyLoc)))
	}
	var dmax float64
	for i, v := range x {
		f := cdf(v)
		dmax = math.Max(dmax, math.Max(math.Abs(f-float64(i)/float64(len(x))), math.Abs(f-float64(i+1)/float64(len(x)))))
	}
	// 1.95/√N is the 0.1% critical value.
	if k := dmax * math.Sqrt(float64(len(x))); k > 1.95 {
		t.Errorf("cauchy: KS statistic √N D = %.3f > 1.95", k)
	}
	if x[0] <= -cauchyBound || x[len(x)-1] >= cauchyBound {
		t.Errorf("cauchy: draws reach %v, %v", x[0], x[len(x)-1])
	}
}

func TestGaussianSamplers(t *testing.T) {
	t.Parallel()
	rng := testRand(12)
	const n = 50000
	muC, covC := correlatedParams(4, 21)
	mixMean := filled(3, 0.4)
	mixCov := make([]float64, 9)
	for j := range mixCov {
		mixCov[j] = 0.3*1 + 0.7*1 - 0.16
		if j%4 == 0 {
			mixCov[j] += 0.3*0.25 + 0.7*1
		}
	}
	for _, c := range []struct {
		p        *Problem
		mu, cov  []float64
		wantName string
	}{
		{Gaussian([]float64{1, -2}, []float64{2, 0.5, 0.5, 1}, 1.3), []float64{1, -2}, []float64{2, 0.5, 0.5, 1}, "gaussian-2"},
		{CorrelatedGaussian(4, 21, 0), muC, covC, "correlated-gaussian-4-seed21"},
		{StandardMixture(3), mixMean, mixCov, "mixture-3"},
	} {
		if c.p.Name != c.wantName {
			t.Errorf("name %q, want %q", c.p.Name, c.wantName)
		}
		x := make([]float64, n*c.p.Dim)
		c.p.Sample(x, rng)
		checkMoments(t, c.p.Name, x, c.p.Dim, c.mu, c.cov)
	}
}

func TestCorrelatedCovariance(t *testing.T) {
	t.Parallel()
	for _, d := range []int{1, 2, 10} {
		_, cov := correlatedParams(d, 4)
		var eig mat.EigenSym
		if !eig.Factorize(mat.NewSymDense(d, cov), false) {
			t.Fatal("eigendecomposition failed")
		}
		v := eig.Values(nil)
		lo, hi := v[0], v[d-1]
		wantLo, wantHi := 0.1, 10.0
		if d == 1 {
			wantLo, wantHi = 1, 1
		}
		if math.Abs(lo-wantLo) > 1e-12 || math.Abs(hi-wantHi) > 1e-10 {
			t.Errorf("d=%d: eigenvalues from %v to %v, want %v to %v", d, lo, hi, wantLo, wantHi)
		}
	}
}

func TestRandomRotation(t *testing.T) {
	t.Parallel()
	for seed := uint64(0); seed < 12; seed++ {
		for _, d := range []int{1, 2, 5, 32} {
			a := randomRotation(d, newRand(seed, streamBanana))
			for i := 0; i < d; i++ {
				for j := 0; j < d; j++ {
					var s float64
					for k := 0; k < d; k++ {
						s += a[i*d+k] * a[j*d+k]
					}
					want := 0.0
					if i == j {
						want = 1
					}
					if math.Abs(s-want) > 1e-13 {
						t.Fatalf("seed %d d %d: (A A^T)[%d,%d] = %v", seed, d, i, j, s)
					}
				}
			}
			if det := mat.Det(mat.NewDense(d, d, a)); math.Abs(det-1) > 1e-12 {
				t.Errorf("seed %d d %d: det A = %v", seed, d, det)
			}
		}
	}
}

func TestDeterministic(t *testing.T) {
	t.Parallel()
	build := func() []*Problem {
		return []*Problem{Funnel(), Banana(), Cauchy(), BananaN(6, 3), CorrelatedGaussian(5, 8, 1), StandardMixture(2)}
	}
	a, b := build(), build()
	pt := testRand(13)
	for i := range a {
		if a[i].LogZ != b[i].LogZ {
			t.Errorf("%s: LogZ differs between constructions", a[i].Name)
		}
		xa := make([]float64, 50*a[i].Dim)
		xb := make([]float64, 50*a[i].Dim)
		a[i].Sample(xa, testRand(99))
		b[i].Sample(xb, testRand(99))
		for j := range xa {
			if xa[j] != xb[j] {
				t.Fatalf("%s: draws differ for the same seed", a[i].Name)
			}
		}
		for _, x := range testPoints(a[i], 3, pt) {
			if a[i].LogProb(x) != b[i].LogProb(x) {
				t.Errorf("%s: LogProb differs between constructions", a[i].Name)
			}
		}
	}
	// Other seeds give other rotations and covariances.
	x := make([]float64, 6)
	Banana().Sample(make([]float64, 32), testRand(1))
	BananaN(6, 3).Sample(x, testRand(1))
	if BananaN(6, 3).LogProb(x) == BananaN(6, 4).LogProb(x) {
		t.Error("banana: seeds 3 and 4 give the same density")
	}
	y := make([]float64, 5)
	if CorrelatedGaussian(5, 8, 1).LogProb(y) == CorrelatedGaussian(5, 9, 1).LogProb(y) {
		t.Error("correlated gaussian: seeds 8 and 9 give the same density")
	}
}

func TestByName(t *testing.T) {
	t.Parallel()
	for _, name := range []string{
		"funnel", "banana", "cauchy", "ring", "funnel-3", "banana-4", "banana-4-identity",
		"cauchy-2", "ring-16", "gaussian-3", "correlated-gaussian-3", "mixture-2",
		"two-modes", "two-modes-3",
	} {
		p, err := ByName(name)
		if err != nil {
			t.Errorf("ByName(%q): %v", name, err)
			continue
		}
		if p.Name != name {
			t.Errorf("ByName(%q).Name = %q", name, p.Name)
		}
		q, err := ByName(strings.ToUpper(name))
		if err != nil || q.LogZ != p.LogZ || q.Dim != p.Dim {
			t.Errorf("ByName(%q) differs from ByName(%q)", strings.ToUpper(name), name)
		}
	}
	for name, dim := range map[string]int{"funnel-16": 16, "ring-64": 64, "banana-32": 32, "cauchy-48": 48} {
		p, err := ByName(name)
		if err != nil || p.Dim != dim {
			t.Errorf("ByName(%q) = %v, %v", name, p, err)
		}
	}
	if p, _ := ByName("gaussian-4"); p.LogZ != 0 || p.Lower != nil {
		t.Errorf("gaussian-4: LogZ %v, Lower %v", p.LogZ, p.Lower)
	}
	for _, name := range []string{"", "foo", "funnel-0", "banana-3", "ring-x", "ring-", "gaussian--2", "cauchy-1e3", "ring-1000000"} {
		p, err := ByName(name)
		if err == nil {
			t.Errorf("ByName(%q) = %s, want an error", name, p.Name)
			continue
		}
		if !strings.Contains(err.Error(), "problems:") {
			t.Errorf("ByName(%q): unhelpful error %q", name, err)
		}
	}
}

func TestConstructorsPanic(t *testing.T) {
	t.Parallel()
	for name, f := range map[string]func(){
		"FunnelN(0)":          func() { FunnelN(0) },
		"BananaN(3)":          func() { BananaN(3, 1) },
		"BananaIdentity(0)":   func() { BananaIdentity(0) },
		"CauchyN(0)":          func() { CauchyN(0) },
		"RingN(0)":            func() { RingN(0) },
		"Gaussian(empty)":     func() { Gaussian(nil, nil, 0) },
		"Gaussian(len)":       func() { Gaussian([]float64{0, 0}, []float64{1, 0, 1}, 0) },
		"Gaussian(asym)":      func() { Gaussian([]float64{0, 0}, []float64{1, 0.5, 0.4, 1}, 0) },
		"Gaussian(not PD)":    func() { Gaussian([]float64{0, 0}, []float64{1, 2, 2, 1}, 0) },
		"Gaussian(NaN)":       func() { Gaussian([]float64{math.NaN()}, nil, 0) },
		"Gaussian(c)":         func() { Gaussian([]float64{0}, nil, math.Inf(1)) },
		"Mixture(weights)":    func() { GaussianMixture(1, []float64{1, -1}, [][]float64{{0}, {1}}, []float64{1, 1}, 0) },
		"Mixture(sds)":        func() { GaussianMixture(1, []float64{1}, [][]float64{{0}}, []float64{0}, 0) },
		"Mixture(mean len)":   func() { GaussianMixture(2, []float64{1}, [][]float64{{0}}, []float64{1}, 0) },
		"Mixture(components)": func() { GaussianMixture(1, []float64{1, 1}, [][]float64{{0}}, []float64{1}, 0) },
		"CorrelatedGaussian":  func() { CorrelatedGaussian(0, 1, 0) },
		"StandardMixture":     func() { StandardMixture(0) },
	} {
		if !panics(f) {
			t.Errorf("%s did not panic", name)
		}
	}
}

// TestMixtureFarFromModes checks that the streaming log-sum-exp of the
// mixture does not underflow far out, where every component is below the
// smallest float64.
func TestMixtureFarFromModes(t *testing.T) {
	t.Parallel()
	p := GaussianMixture(1, []float64{1, 1}, [][]float64{{-1}, {1}}, []float64{0.1, 0.2}, 0)
	x := []float64{100}
	grad := []float64{0}
	lp := p.LogProbGrad(grad, x)
	// The wide component dominates: log(1/2) - ln(√(2π) 0.2) - 99²/(2·0.04).
	want := math.Log(0.5) - halfLog2Pi - math.Log(0.2) - 99*99/(2*0.04)
	if math.Abs(lp-want) > 1e-9*math.Abs(want) || math.Abs(grad[0]+99/0.04) > 1e-9 {
		t.Errorf("log p = %v (want %v), grad %v (want %v)", lp, want, grad[0], -99/0.04)
	}
}

func TestConcurrentUse(t *testing.T) {
	t.Parallel()
	// Run with -race: the density functions must share no scratch state.
	ps := testProblems()
	done := make(chan bool)
	for g := 0; g < 4; g++ {
		go func(seed uint64) {
			rng := testRand(seed)
			for _, p := range ps {
				grad := make([]float64, p.Dim)
				for _, x := range testPoints(p, 3, rng) {
					if p.LogProb(x) != p.LogProbGrad(grad, x) {
						t.Errorf("%s: inconsistent under concurrency", p.Name)
					}
				}
			}
			done <- true
		}(uint64(100 + g))
	}
	for g := 0; g < 4; g++ {
		<-done
	}
}

// The two-mode target's ln Z against a 2-d quadrature over the box, and
// its exact sampler's mode weights against 0.2.
func TestTwoModes(t *testing.T) {
	t.Parallel()
	p := TwoModesN(2)
	z := gl2(problem2(p), [2]float64{-10, -10}, [2]float64{10, 10}, 80, 20)
	if math.Abs(math.Log(z)-p.LogZ) > 1e-10 {
		t.Errorf("%s: LogZ = %.12f, quadrature %.12f", p.Name, p.LogZ, math.Log(z))
	}
	q := TwoModes()
	if q.Dim != 8 || q.Name != "two-modes" {
		t.Errorf("TwoModes: %s of dimension %d", q.Name, q.Dim)
	}
	const n = 20000
	buf := make([]float64, n*q.Dim)
	q.Sample(buf, testRand(21))
	var k int
	for i := 0; i < n; i++ {
		if TwoModesMinor(buf[i*q.Dim : (i+1)*q.Dim]) {
			k++
		}
	}
	// Binomial standard error sqrt(0.16/n) = 0.0028.
	if f := float64(k) / n; math.Abs(f-TwoModesMinorWeight) > 0.012 {
		t.Errorf("two-modes: minor-mode fraction of exact draws %.4f, want %v", f, TwoModesMinorWeight)
	}
}
