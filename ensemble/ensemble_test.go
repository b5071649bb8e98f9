package ensemble

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/gbs-evidence/gbs/problems"
)

// checkGaussian samples a random correlated 10-d Gaussian with move m and
// compares the mean and covariance of the draws with the exact ones. The
// tolerance is 5 Monte Carlo standard errors with the effective sample
// size from the estimated τ.
func checkGaussian(t *testing.T, m Move, steps int, seed uint64) {
	const d = 10
	g := randomGaussian(rand.New(rand.NewPCG(1, 2)), d, 100)
	s := &Settings{Walkers: 40, Steps: steps, Move: m, InitCenter: make([]float64, d), Seed: seed}
	r, err := Sample(context.Background(), g.logDensity, d, s)
	if err != nil {
		t.Fatal(err)
	}
	tauMax := slices.Max(r.Tau)
	t.Logf("%v: tau = %.3g, burn %d, thin %d, mean acceptance %.3f, warnings %q",
		m, r.Tau, r.Burn, r.Thin, mean(r.AcceptanceFraction), r.Warnings)
	if lo := int(math.Ceil(2 * tauMax)); r.Burn < lo || r.Burn > steps/2 {
		t.Errorf("burn = %d, want between ceil(2 tau_max) = %d and Steps/2", r.Burn, lo)
	}
	if want := max(1, int(tauMax/2)); r.Thin != want {
		t.Errorf("thin = %d, want floor(tau_max/2) = %d", r.Thin, want)
	}

	mu, cov := moments(r)
	essMin := math.Inf(1)
	for i := range d {
		e := ess(r, steps, i)
		essMin = min(essMin, e)
		se := math.Sqrt(g.cov[i*d+i] / e)
		if diff := math.Abs(mu[i] - g.mu[i]); diff > 5*se {
			t.Errorf("mean[%d] = %.4f, want %.4f ± %.2g (ESS %.0f)", i, mu[i], g.mu[i], 5*se, e)
		}
	}
	var worst float64
	for i := range d {
		for j := range d {
			want := g.cov[i*d+j]
			// Var of a sample covariance of a Gaussian pair:
			// (Σii Σjj + Σij²)/n.
			se := math.Sqrt((g.cov[i*d+i]*g.cov[j*d+j] + want*want) / essMin)
			z := math.Abs(cov[i*d+j]-want) / se
			worst = max(worst, z)
			if z > 5 {
				t.Errorf("cov[%d,%d] = %.4f, want %.4f ± %.2g", i, j, cov[i*d+j], want, 5*se)
			}
		}
	}
	t.Logf("min ESS %.0f, worst covariance error %.2f standard errors", essMin, worst)
}

func mean(x []float64) float64 {
	var s float64
	for _, v := range x {
		s += v
	}
	return s / float64(len(x))
}

func TestStretchGaussian10d(t *testing.T) { checkGaussian(t, Stretch, 20000, 3) }

func TestDEGaussian10d(t *testing.T) { checkGaussian(t, DifferentialEvolution, 10000, 3) }

// bananaLogDensity is the 2-d banana of problems (A = I): log p = -((y1² -
// y2)²/0.01 + (y1 - 1)²) on (-15, 15)², whose exact law is y1 ~ N(1, 1/2),
// y2 | y1 ~ N(y1², 0.005) (the box holds all but 2.4e-5 of it).
var bananaLogDensity = problems.BananaIdentity(2).LogProbBatch

// bananaCDF returns the exact marginal CDFs of y1 and y2 at t; the second
// integrates P(y2 ≤ t | y1) over the law of y1 by the trapezoidal rule.
func bananaCDF(coord int, t float64) float64 {
	s1 := math.Sqrt(0.5)
	if coord == 0 {
		return normalCDF((t - 1) / s1)
	}
	const n = 20000
	lo, hi := 1-10*s1, 1+10*s1
	h := (hi - lo) / n
	var sum float64
	for k := 0; k <= n; k++ {
		y1 := lo + float64(k)*h
		w := math.Exp(-(y1-1)*(y1-1)) / math.Sqrt(math.Pi)
		v := w * normalCDF((t-y1*y1)/math.Sqrt(0.005))
		if k == 0 || k == n {
			v /= 2
		}
		sum += v
	}
	return sum * h
}

// TestBanana compares the marginal quantiles of the draws with the exact
// ones through the exact CDF: if x̂_q is the sample q-quantile, F(x̂_q) − q
// has standard error √(q(1−q)/ESS), which needs no density estimate.
func TestBanana(t *testing.T) { checkBanana(t, 7) }

func checkBanana(t *testing.T, seed uint64) {
	// The curved ridge makes τ ≈ 400 for the stretch move: 40000 steps
	// are 100 τ.
	const steps = 40000
	s := &Settings{Walkers: 32, Steps: steps, InitCenter: []float64{1, 1}, Seed: seed}
	r, err := Sample(context.Background(), bananaLogDensity, 2, s)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Warnings) > 0 {
		t.Errorf("warnings: %q", r.Warnings)
	}
	t.Logf("tau = %.3g, burn %d, thin %d, acceptance %.3f, warnings %q", r.Tau, r.Burn, r.Thin, mean(r.AcceptanceFraction), r.Warnings)
	e := min(ess(r, steps, 0), ess(r, steps, 1))
	for coord := range 2 {
		x := column(r, coord)
		slices.Sort(x)
		for _, q := range []float64{0.02, 0.1, 0.25, 0.5, 0.75, 0.9, 0.98} {
			xq := x[int(q*float64(len(x)))]
			p := bananaCDF(coord, xq)
			se := math.Sqrt(q * (1 - q) / e)
			if math.Abs(p-q) > 5*se {
				t.Errorf("y%d: sample %.2f-quantile %.4f has exact CDF %.4f, want %.2f ± %.3f", coord+1, q, xq, p, q, 5*se)
			}
		}
	}
	// The mean of y2 is E[y1²] = 1.5, its variance 0.005 + Var(y1²) = 1.005.
	y2 := column(r, 1)
	if m, se := mean(y2), math.Sqrt(1.005/ess(r, steps, 1)); math.Abs(m-1.5) > 5*se {
		t.Errorf("mean y2 = %.4f, want 1.5 ± %.3f", m, 5*se)
	}
}

func TestBananaCDF(t *testing.T) {
	// Check the quadrature against exact draws.
	rng := rand.New(rand.NewPCG(11, 12))
	const n = 200000
	y2 := make([]float64, n)
	for i := range y2 {
		y1 := 1 + math.Sqrt(0.5)*rng.NormFloat64()
		y2[i] = y1*y1 + math.Sqrt(0.005)*rng.NormFloat64()
	}
	slices.Sort(y2)
	for _, q := range []float64{0.1, 0.5, 0.9} {
		if p := bananaCDF(1, y2[int(q*n)]); math.Abs(p-q) > 5*math.Sqrt(q*(1-q)/n) {
			t.Errorf("exact CDF at the %.1f quantile of exact draws is %.4f", q, p)
		}
	}
}

// TestBurn checks the automatic burn-in: about 2τ from a start drawn from
// the target, longer from a tight ball far from the typical set.
func TestBurn(t *testing.T) {
	const d, walkers, steps = 5, 20, 3000
	rng := rand.New(rand.NewPCG(3, 3))
	init := make([]float64, walkers*d)
	for i := range init {
		init[i] = rng.NormFloat64()
	}
	g := &gaussian{d: d, mu: make([]float64, d), cov: make([]float64, d*d), prec: make([]float64, d*d)}
	for i := range d {
		g.cov[i*d+i], g.prec[i*d+i] = 1, 1
	}
	r, err := Sample(context.Background(), g.logDensity, d, &Settings{Init: init, Steps: steps})
	if err != nil {
		t.Fatal(err)
	}
	twoTau := int(math.Ceil(2 * slices.Max(r.Tau)))
	if r.Burn < twoTau || r.Burn > twoTau+10 {
		t.Errorf("start in equilibrium: burn %d, want about 2 tau = %d", r.Burn, twoTau)
	}
	far := make([]float64, d)
	for i := range far {
		far[i] = 30
	}
	r, err = Sample(context.Background(), g.logDensity, d, &Settings{Walkers: walkers, InitCenter: far, Steps: steps})
	if err != nil {
		t.Fatal(err)
	}
	// The walkers start at log p ≈ -2250; the first kept draws must be in
	// the typical set, log p ≈ -d/2 ± √(d/2).
	var first float64
	for _, lp := range r.LogP {
		first += lp[0] / walkers
	}
	if first < -d/2-3 {
		t.Errorf("far start: burn %d (2 tau = %.0f) keeps a transient: mean log p of the first kept draws %.2f", r.Burn, 2*slices.Max(r.Tau), first)
	}
	t.Logf("far start: burn %d, 2 tau = %.0f", r.Burn, 2*slices.Max(r.Tau))

	for _, c := range []struct {
		avg []float64
		s0  int
		ok  bool
	}{
		{[]float64{-9, -8, -6, -5, -5.1, -4.9, -5, -5}, 3, true},
		{[]float64{3, 1, -4, -6, -5.1, -4.9, -5, -5}, 3, true},
		{[]float64{-9, -8, -7, -6, -5.5, -5, -4, -5}, 0, false},
	} {
		s0, ok := equilibration([][]float64{c.avg}, len(c.avg))
		if s0 != c.s0 || ok != c.ok {
			t.Errorf("equilibration(%v) = %d, %v, want %d, %v", c.avg, s0, ok, c.s0, c.ok)
		}
	}
}

func TestDeterministic(t *testing.T) {
	g := randomGaussian(rand.New(rand.NewPCG(5, 6)), 3, 10)
	for _, m := range []Move{Stretch, DifferentialEvolution} {
		run := func(seed uint64) *Result {
			r, err := Sample(context.Background(), g.logDensity, 3, &Settings{Steps: 300, Move: m, Seed: seed})
			if err != nil {
				t.Fatal(err)
			}
			return r
		}
		a, b, c := run(9), run(9), run(10)
		if !reflect.DeepEqual(a, b) {
			t.Errorf("%v: equal seeds gave different results", m)
		}
		if reflect.DeepEqual(a.Chain, c.Chain) {
			t.Errorf("%v: different seeds gave equal chains", m)
		}
	}
}

// TestBatchSize checks that every call of the log density gets exactly one
// half of the ensemble, so that a parallel callback sees full batches.
func TestBatchSize(t *testing.T) {
	const d, walkers, steps = 3, 12, 50
	for _, m := range []Move{Stretch, DifferentialEvolution} {
		var calls int
		f := func(dst, x []float64) error {
			calls++
			if len(dst) != walkers/2 || len(x) != len(dst)*d {
				t.Fatalf("%v: call %d got len(dst) = %d, len(x) = %d, want %d and %d", m, calls, len(dst), len(x), walkers/2, walkers/2*d)
			}
			for i := range dst {
				var s float64
				for _, v := range x[i*d : (i+1)*d] {
					s += v * v
				}
				dst[i] = -s / 2
			}
			return nil
		}
		r, err := Sample(context.Background(), f, d, &Settings{Walkers: walkers, Steps: steps, Move: m, Burn: 10, Thin: 1})
		if err != nil {
			t.Fatal(err)
		}
		if want := 2 + 2*steps; calls != want {
			t.Errorf("%v: %d calls, want %d (two per step and two at the start)", m, calls, want)
		}
		if r.NCall != int64(calls*walkers/2) {
			t.Errorf("%v: NCall = %d, want %d", m, r.NCall, calls*walkers/2)
		}
		if len(r.Chain) != walkers || len(r.Chain[0]) != (steps-10)*d || len(r.LogP[0]) != steps-10 {
			t.Errorf("%v: kept shape %d×%d, want %d×%d", m, len(r.Chain), len(r.Chain[0]), walkers, (steps-10)*d)
		}
	}
}

// TestLogP checks that the stored log densities belong to the stored draws.
func TestLogP(t *testing.T) {
	r, err := Sample(context.Background(), bananaLogDensity, 2, &Settings{Steps: 200, InitCenter: []float64{1, 1}, Thin: 3, Burn: 20})
	if err != nil {
		t.Fatal(err)
	}
	if r.Burn != 20 || r.Thin != 3 {
		t.Errorf("burn, thin = %d, %d, want the explicit 20, 3", r.Burn, r.Thin)
	}
	for w := range r.Walkers {
		want := make([]float64, len(r.LogP[w]))
		bananaLogDensity(want, r.Chain[w])
		if !slices.Equal(want, r.LogP[w]) {
			t.Fatalf("walker %d: LogP differs from the log density of Chain", w)
		}
	}
}

// TestSupport samples the uniform density on the unit square, -Inf
// outside, starting from a larger box: starting positions outside the
// support are redrawn and every proposal outside is rejected.
func TestSupport(t *testing.T) {
	var first = true
	f := func(dst, x []float64) error {
		if first {
			for _, v := range x {
				if v < -1 || v > 2 {
					t.Errorf("starting coordinate %v outside the box [-1, 2]", v)
				}
			}
			first = false
		}
		for i := range dst {
			dst[i] = math.Inf(-1)
			if x[2*i] >= 0 && x[2*i] <= 1 && x[2*i+1] >= 0 && x[2*i+1] <= 1 {
				dst[i] = 0
			}
		}
		return nil
	}
	const steps = 4000
	r, err := Sample(context.Background(), f, 2, &Settings{Steps: steps, Lower: []float64{-1, -1}, Upper: []float64{2, 2}, Seed: 4})
	if err != nil {
		t.Fatal(err)
	}
	if r.NCall <= int64(2*steps+2)*int64(r.Walkers/2) {
		t.Errorf("NCall = %d: no starting position was redrawn", r.NCall)
	}
	mu, cov := moments(r)
	for i := range 2 {
		for _, v := range column(r, i) {
			if v < 0 || v > 1 {
				t.Fatalf("draw %v outside the support", v)
			}
		}
		e := ess(r, steps, i)
		if se := math.Sqrt(1.0 / 12 / e); math.Abs(mu[i]-0.5) > 5*se {
			t.Errorf("mean[%d] = %.4f, want 0.5 ± %.3f", i, mu[i], 5*se)
		}
		// Var of a sample variance of U(0,1): (1/80 − 1/144)/n.
		if se := math.Sqrt((1.0/80 - 1.0/144) / e); math.Abs(cov[3*i]-1.0/12) > 5*se {
			t.Errorf("var[%d] = %.4f, want %.4f ± %.3f", i, cov[3*i], 1.0/12, 5*se)
		}
	}
}

func TestCallbackErrors(t *testing.T) {
	boom := errors.New("boom")
	failAt := func(n int, fail func(dst []float64) error) LogDensityFunc {
		var calls int
		return func(dst, x []float64) error {
			calls++
			for i := range dst {
				dst[i] = -x[i] * x[i]
			}
			if calls == n {
				return fail(dst)
			}
			return nil
		}
	}
	cases := []struct {
		name string
		f    LogDensityFunc
		is   error
		want []string
	}{
		{"error", failAt(7, func([]float64) error { return boom }), boom, []string{"log density failed", "at step 3", "boom"}},
		{"error at start", failAt(1, func([]float64) error { return boom }), boom, []string{"starting positions", "boom"}},
		{"NaN", failAt(9, func(dst []float64) error { dst[2] = math.NaN(); return nil }), nil, []string{"log density is NaN", "at step 4", "x = ["}},
		{"+Inf", failAt(5, func(dst []float64) error { dst[0] = math.Inf(1); return nil }), nil, []string{"log density is +Inf", "at step 2"}},
	}
	for _, c := range cases {
		r, err := Sample(context.Background(), c.f, 1, &Settings{Steps: 100})
		if err == nil || r != nil {
			t.Errorf("%s: got result %v, error %v; want only an error", c.name, r, err)
			continue
		}
		if c.is != nil && !errors.Is(err, c.is) {
			t.Errorf("%s: error %v does not wrap the callback error", c.name, err)
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: error %q does not contain %q", c.name, err, w)
			}
		}
	}
}

func TestCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	var calls int
	f := func(dst, x []float64) error {
		if calls++; calls == 20 {
			cancel()
		}
		for i := range dst {
			dst[i] = -x[i] * x[i]
		}
		return nil
	}
	_, err := Sample(ctx, f, 1, &Settings{Steps: 1000})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("error %v, want context.Canceled", err)
	}
	if calls != 20 {
		t.Errorf("%d calls after cancellation at call 20, want none", calls-20)
	}
	if _, err := Sample(ctx, f, 1, nil); !errors.Is(err, context.Canceled) {
		t.Errorf("canceled context: error %v, want context.Canceled", err)
	}
}

func TestBadSettings(t *testing.T) {
	f := func(dst, x []float64) error {
		for i := range dst {
			dst[i] = 0
		}
		return nil
	}
	zeroAt := func(dst, x []float64) error {
		for i := range dst {
			dst[i] = 0
			if x[2*i] > 0 {
				dst[i] = math.Inf(-1)
			}
		}
		return nil
	}
	init8x2 := func() []float64 {
		x := make([]float64, 16)
		for i := range x {
			x[i] = float64(i * i % 7)
		}
		return x
	}
	degenerate := init8x2()
	for w := range 8 {
		degenerate[2*w+1] = 3
	}
	cases := []struct {
		name string
		f    LogDensityFunc
		d    int
		s    Settings
		want string
	}{
		{"nil f", nil, 2, Settings{}, "nil log density"},
		{"d = 0", f, 0, Settings{}, "dimension 0"},
		{"d < 0", f, -3, Settings{}, "dimension -3"},
		{"odd walkers", f, 2, Settings{Walkers: 7}, "even"},
		{"one walker", f, 1, Settings{Walkers: 1}, "at least 2"},
		{"negative walkers", f, 1, Settings{Walkers: -4}, "negative walker"},
		{"too few for d", f, 5, Settings{Walkers: 8}, "at least 2d = 10"},
		{"DE with two walkers", f, 1, Settings{Walkers: 2, Move: DifferentialEvolution}, "at least 4"},
		{"Init length", f, 2, Settings{Walkers: 8, Init: make([]float64, 15)}, "len(Init) = 15"},
		{"Init not a multiple of d", f, 2, Settings{Init: make([]float64, 15)}, "multiple of d"},
		{"Init NaN", f, 2, Settings{Init: append(init8x2()[:15], math.NaN())}, "Init[15]"},
		{"Init degenerate", f, 2, Settings{Init: degenerate}, "coordinate 1"},
		{"Init zero density", zeroAt, 2, Settings{Init: init8x2()}, "zero density"},
		{"no start in support", zeroAt, 2, Settings{Lower: []float64{1, 0}, Upper: []float64{2, 1}}, "still have zero density"},
		{"negative steps", f, 1, Settings{Steps: -1}, "negative step"},
		{"one step", f, 1, Settings{Steps: 1}, "at least 2"},
		{"burn too long", f, 1, Settings{Steps: 10, Burn: 10}, "Burn = 10"},
		{"negative thin", f, 1, Settings{Thin: -1}, "negative Thin"},
		{"A < 1", f, 1, Settings{A: 0.5}, "A = 0.5"},
		{"A NaN", f, 1, Settings{A: math.NaN()}, "A = NaN"},
		{"DEGamma < 0", f, 1, Settings{Move: DifferentialEvolution, DEGamma: -1}, "DEGamma = -1"},
		{"unknown move", f, 1, Settings{Move: 7}, "unknown move Move(7)"},
		{"InitCenter length", f, 2, Settings{InitCenter: []float64{1}}, "len(InitCenter) = 1"},
		{"InitScale < 0", f, 2, Settings{InitScale: -1}, "InitScale"},
		{"Lower alone", f, 2, Settings{Lower: []float64{0, 0}}, "together"},
		{"box length", f, 2, Settings{Lower: []float64{0}, Upper: []float64{1}}, "len(Lower) = 1"},
		{"empty box", f, 2, Settings{Lower: []float64{0, 1}, Upper: []float64{1, 1}}, "coordinate 1"},
	}
	for _, c := range cases {
		r, err := Sample(context.Background(), c.f, c.d, &c.s)
		if err == nil || r != nil {
			t.Errorf("%s: no error", c.name)
			continue
		}
		if !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %q does not contain %q", c.name, err, c.want)
		}
	}
}

func TestDefaults(t *testing.T) {
	r, err := Sample(context.Background(), bananaLogDensity, 2, &Settings{Steps: 100})
	if err != nil {
		t.Fatal(err)
	}
	if r.Walkers != 32 || r.Dim != 2 {
		t.Errorf("walkers %d, dim %d; want the default 32 and 2", r.Walkers, r.Dim)
	}
	found := false
	for _, w := range r.Warnings {
		found = found || strings.Contains(w, "shorter than 50 τ")
	}
	if !found {
		t.Errorf("100 steps on the banana gave no short-run warning: %q", r.Warnings)
	}
	g := randomGaussian(rand.New(rand.NewPCG(1, 1)), 20, 10)
	r, err = Sample(context.Background(), g.logDensity, 20, &Settings{Steps: 10})
	if err != nil {
		t.Fatal(err)
	}
	if r.Walkers != 42 {
		t.Errorf("d = 20: %d walkers, want 2d+2 = 42", r.Walkers)
	}
}

// TestStuckWalker gives one walker a start in a deep, isolated well: the
// acceptance warning must name it.
func TestStuckWalker(t *testing.T) {
	f := func(dst, x []float64) error {
		for i, v := range x {
			dst[i] = -v * v / 2
			if v > 99.5 && v < 100.5 {
				dst[i] = 1000
			}
		}
		return nil
	}
	init := make([]float64, 8)
	for i := range init {
		init[i] = float64(i) / 8
	}
	init[3] = 100
	r, err := Sample(context.Background(), f, 1, &Settings{Init: init, Steps: 200, Burn: 50})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(strings.Join(r.Warnings, "\n"), "stuck") {
		t.Errorf("no stuck-walker warning: %q (acceptance %.2f)", r.Warnings, r.AcceptanceFraction)
	}
}

func BenchmarkStretch10d(b *testing.B) {
	const d, steps = 10, 1000
	g := randomGaussian(rand.New(rand.NewPCG(1, 2)), d, 100)
	var calls int64
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		r, err := Sample(context.Background(), g.logDensity, d, &Settings{Steps: steps, Burn: 100, Thin: 1, Seed: uint64(i)})
		if err != nil {
			b.Fatal(err)
		}
		calls += r.NCall
	}
	// Both rates include the autocorrelation analysis at the end of
	// each run, which dominates for a log density this cheap.
	sec := b.Elapsed().Seconds()
	b.ReportMetric(float64(calls)/sec, "calls/s")
	b.ReportMetric(sec*1e9/float64(b.N*steps), "ns/step")
}
