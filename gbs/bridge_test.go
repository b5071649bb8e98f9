package gbs

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// A third of the proposal's draws fall where p = 0: they carry no weight
// but must not break the solver.
func TestBridgeZeroDensityDraws(t *testing.T) {
	const d, n, c = 3, 4000, 1.25
	rng := rand.New(rand.NewPCG(5, 5))
	// p = e^c · 2 N(x; 0, I) on x_0 > 0 (a half-normal in x_0).
	logp := func(dst, x []float64) error {
		for i := range dst {
			if x[i*d] <= 0 {
				dst[i] = math.Inf(-1)
				continue
			}
			s := c + math.Ln2
			for k := 0; k < d; k++ {
				s -= 0.5*x[i*d+k]*x[i*d+k] + 0.5*math.Log(2*math.Pi)
			}
			dst[i] = s
		}
		return nil
	}
	x := make([]float64, n*d)
	for i := range x {
		x[i] = rng.NormFloat64()
		if i%d == 0 {
			x[i] = math.Abs(x[i])
		}
	}
	// q = N(m, I) with P(x_0 < 0) = 1/3: m_0 = Φ^-1(2/3).
	mu := []float64{0.4307272992954576, 0, 0}
	cov := []float64{1, 0, 0, 0, 1, 0, 0, 0, 1}
	fixed := func([]float64, int, []float64, uint64) (Proposal, []string, error) {
		g, err := NewGaussian(mu, cov)
		return g, nil, err
	}
	res, err := Evidence(context.Background(), logp, iidSamples(x, d), &Settings{Proposal: fixed, NQ: n})
	if err != nil {
		t.Fatal(err)
	}
	if !(math.Abs(res.LogZ-c) < 4*res.LogZErr) || !(res.LogZErr < 0.05) {
		t.Errorf("ln Z = %.5f ± %.5f, want %g", res.LogZ, res.LogZErr, c)
	}
}

func TestSolveBridgeExtremeRatios(t *testing.T) {
	// log p/q = c + noise on both sides: the root is near c for any c.
	rng := rand.New(rand.NewPCG(1, 2))
	for _, c := range []float64{-1e4, -5000, 0, 5000, 1e4} {
		a := make([]float64, 5000)
		b := make([]float64, 5000)
		for i := range a {
			a[i] = -c + 0.3*rng.NormFloat64()
			b[i] = c + 0.3*rng.NormFloat64()
		}
		est, err := solveBridge(&bridgeInput{logQoverP: a, logPoverQ: b, nchains: 1, iid: true})
		if err != nil {
			t.Fatalf("c = %g: %v", c, err)
		}
		if math.Abs(est.logZ-c) > 0.05 || math.IsNaN(est.re2P) || math.IsNaN(est.re2Q) {
			t.Errorf("c = %g: root %v, RE2 %v %v", c, est.logZ, est.re2P, est.re2Q)
		}
	}
}

func TestSolveBridgeNoOverlap(t *testing.T) {
	inf := math.Inf(-1)
	_, err := solveBridge(&bridgeInput{logQoverP: []float64{0, 0}, logPoverQ: []float64{inf, inf}, nchains: 1, iid: true})
	if !errors.Is(err, errNoOverlap) {
		t.Errorf("got %v, want the no-overlap error", err)
	}
}

func TestIntegratedTimeAR1(t *testing.T) {
	const rho, n = 0.9, 100000
	rng := rand.New(rand.NewPCG(2024, 1))
	x := make([]float64, n)
	for i := 1; i < n; i++ {
		x[i] = rho*x[i-1] + math.Sqrt(1-rho*rho)*rng.NormFloat64()
	}
	want := (1 + rho) / (1 - rho)
	tau, short := integratedTime(x, 1)
	if math.Abs(tau/want-1) > 0.1 || short {
		t.Errorf("tau = %.3f (short %v), want %.3f within 10%%", tau, short, want)
	}
	// Four chains of the same process, and a chain too short to trust.
	tau4, _ := integratedTime(x, 4)
	if math.Abs(tau4/want-1) > 0.1 {
		t.Errorf("4 chains: tau = %.3f, want %.3f within 10%%", tau4, want)
	}
	if _, short := integratedTime(x[:200], 1); !short {
		t.Error("200 draws of a tau = 19 chain not reported short")
	}
}

// Warp-III symmetrizes the target, which removes the skewness a Gaussian
// proposal cannot follow: at the same n its error is smaller.
func TestWarp3BeatsGaussianOnSkewedTarget(t *testing.T) {
	const d, n, alpha, c = 4, 4000, 6.0, -1.5
	// p = e^c Π 2 φ(x) Φ(α x), a product of skew normals.
	logp := func(dst, x []float64) error {
		for i := range dst {
			s := c
			for _, v := range x[i*d : (i+1)*d] {
				s += math.Ln2 - 0.5*v*v - 0.5*math.Log(2*math.Pi) + math.Log(0.5*math.Erfc(-alpha*v/math.Sqrt2))
			}
			dst[i] = s
		}
		return nil
	}
	rng := rand.New(rand.NewPCG(8, 8))
	x := make([]float64, n*d)
	delta := alpha / math.Sqrt(1+alpha*alpha)
	for i := range x {
		u0, u1 := rng.NormFloat64(), rng.NormFloat64()
		x[i] = delta*math.Abs(u0) + math.Sqrt(1-delta*delta)*u1
	}
	s := iidSamples(x, d)
	gauss, err := Evidence(context.Background(), logp, s, &Settings{Proposal: FitGaussian, NQ: n / 2})
	if err != nil {
		t.Fatal(err)
	}
	warp, err := Evidence(context.Background(), logp, s, &Settings{Method: Warp3, NQ: n / 2})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range []*Result{gauss, warp} {
		if !(math.Abs(r.LogZ-c) < 4*r.LogZErr) {
			t.Errorf("%v: ln Z = %.4f ± %.4f, want %g", r.Method, r.LogZ, r.LogZErr, c)
		}
	}
	if !(warp.LogZErr < gauss.LogZErr) {
		t.Errorf("warp-III error %.4f not below the Gaussian proposal's %.4f", warp.LogZErr, gauss.LogZErr)
	}
	t.Logf("errors: gaussian %.4f, warp3 %.4f", gauss.LogZErr, warp.LogZErr)
}

func TestEvidenceBadInput(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 4))
	g := newGaussTarget(2, 0, rng)
	good := g.draws(100, rng)
	withValue := func(v float64) []float64 {
		x := append([]float64(nil), good...)
		x[37] = v
		return x
	}
	failing := func(dst, x []float64) error { return errors.New("likelihood blew up") }
	nan := func(dst, x []float64) error {
		for i := range dst {
			dst[i] = math.NaN()
		}
		return nil
	}
	allNegInf := func(dst, x []float64) error {
		for i := range dst {
			dst[i] = math.Inf(-1)
		}
		return nil
	}
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		logp LogDensityFunc
		s    *Samples
		want string
	}{
		{"NaN sample", g.logp, iidSamples(withValue(math.NaN()), 2), "NaN at chain 0, draw 18, coordinate 1"},
		{"Inf sample", g.logp, iidSamples(withValue(math.Inf(1)), 2), "+Inf at chain 0, draw 18"},
		{"d = 0", g.logp, &Samples{Dim: 0, Chains: [][]float64{good}}, "d = 0"},
		{"no chains", g.logp, &Samples{Dim: 2}, "no chains"},
		{"ragged", g.logp, &Samples{Dim: 2, Chains: [][]float64{good, good[:20]}}, "ragged chains"},
		{"not a multiple of d", g.logp, &Samples{Dim: 3, Chains: [][]float64{good[:10]}}, "not a multiple of d = 3"},
		{"too few draws", g.logp, &Samples{Dim: 2, Chains: [][]float64{good[:6]}}, "too few draws"},
		{"failing callback", failing, iidSamples(good, 2), "likelihood blew up"},
		{"NaN callback", nan, iidSamples(good, 2), "returned NaN"},
		{"all -Inf", allNegInf, iidSamples(good, 2), "-Inf"},
		{"log p length", g.logp, &Samples{Dim: 2, Chains: [][]float64{good}, LogP: [][]float64{{1, 2}}}, "log p of chain 0 has 2 values"},
	} {
		_, err := Evidence(ctx, tc.logp, tc.s, &Settings{Proposal: FitGaussian})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one containing %q", tc.name, err, tc.want)
		}
	}
	if _, err := Evidence(ctx, g.logp, iidSamples(good, 2), &Settings{FErr: 2}); err == nil {
		t.Error("FErr = 2 accepted")
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := Evidence(cancelled, g.logp, iidSamples(good, 2), &Settings{Proposal: FitGaussian}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled context: got %v", err)
	}
}

// Known log p values are used as they are: the callback then only sees the
// proposal's draws and the spot-check's few posterior draws (and the
// symmetry search's, off here: TestSymmetryNoFalseFinding bounds them).
func TestEvidenceReusesKnownLogP(t *testing.T) {
	rng := rand.New(rand.NewPCG(6, 6))
	g := newGaussTarget(3, 0.5, rng)
	const nc, m = 4, 500
	s := &Samples{Dim: 3}
	for c := 0; c < nc; c++ {
		x := g.draws(m, rng)
		lp := make([]float64, m)
		g.logp(lp, x)
		s.Chains = append(s.Chains, x)
		s.LogP = append(s.LogP, lp)
	}
	for _, single := range []bool{false, true} {
		res, err := Evidence(context.Background(), g.logp, s, &Settings{Proposal: FitGaussian, NQ: 1000, CrossFit: map[bool]Switch{false: Auto, true: Off}[single], Symmetry: Off})
		if err != nil {
			t.Fatal(err)
		}
		np := nc * m // cross-fitting: every draw is a p-draw in one pass
		if single {
			np = nc / 2 * m
		}
		if res.NCall != 1000+spotCheckDraws || res.NP != np || res.NQ != 1000 {
			t.Errorf("single pass %v: NCall %d, n_p %d, n_q %d; want %d, %d, 1000", single, res.NCall, res.NP, res.NQ, 1000+spotCheckDraws, np)
		}
		if !(math.Abs(res.LogZ-0.5) < 4*res.LogZErr) {
			t.Errorf("single pass %v: ln Z = %v ± %v", single, res.LogZ, res.LogZErr)
		}
	}
}

// Cross-fitting averages two passes. Their posterior terms are
// independent where q differs from p (a Gaussian q for Laplace draws: the
// cross-fitted posterior term is about half of one pass's), and one shared
// term where q fits p up to its fitting noise (a Gaussian q for Gaussian
// draws: about one pass's, not half; crossfit.go). The trace adds up the
// passes' proposal draws.
func TestEvidenceCrossFit(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	g := newGaussTarget(4, -1.5, rng)
	const d = 4
	laplace := func(dst, x []float64) error {
		for i := range dst {
			s := -d * math.Ln2 // ln Z = 0
			for _, v := range x[i*d : (i+1)*d] {
				s -= math.Abs(v)
			}
			dst[i] = s
		}
		return nil
	}
	sg, sl := &Samples{Dim: d}, &Samples{Dim: d}
	for c := 0; c < 6; c++ {
		sg.Chains = append(sg.Chains, g.draws(2000, rng))
		x := make([]float64, 2000*d)
		for i := range x {
			x[i] = rng.ExpFloat64()
			if rng.IntN(2) == 0 {
				x[i] = -x[i]
			}
		}
		sl.Chains = append(sl.Chains, x)
	}
	ctx := context.Background()
	for _, tc := range []struct {
		name         string
		logp         LogDensityFunc
		s            *Samples
		logZ, lo, hi float64
	}{
		{"laplace", laplace, sl, 0, 0.35, 0.75},
		{"gauss", g.logp, sg, -1.5, 0.75, 1.4},
	} {
		one, err := Evidence(ctx, tc.logp, tc.s, &Settings{Proposal: FitGaussian, Seed: 3, NQ: 6000, CrossFit: Off})
		if err != nil {
			t.Fatal(err)
		}
		both, err := Evidence(ctx, tc.logp, tc.s, &Settings{Proposal: FitGaussian, Seed: 3, NQ: 12000})
		if err != nil {
			t.Fatal(err)
		}
		if r := both.RE2P / one.RE2P; !(r > tc.lo && r < tc.hi) {
			t.Errorf("%s: cross-fitted RE2P = %.3g is %.2f of one pass's %.3g, want in (%.2f, %.2f)", tc.name, both.RE2P, r, one.RE2P, tc.lo, tc.hi)
		}
		if !(math.Abs(both.LogZ-tc.logZ) < 4*both.LogZErr) || both.LogZErr > 0.02 {
			t.Errorf("%s: cross-fitted ln Z = %v ± %v, want %v within 4 sigma and sigma < 0.02", tc.name, both.LogZ, both.LogZErr, tc.logZ)
		}
		t.Logf("%s: RE2P one pass %.3g, cross-fitted %.3g", tc.name, one.RE2P, both.RE2P)
	}
	both, err := Evidence(ctx, g.logp, sg, &Settings{Proposal: FitGaussian, Seed: 3, NQ: 12000})
	if err != nil {
		t.Fatal(err)
	}
	last := both.Trace[len(both.Trace)-1]
	if last.NQ != both.NQ || last.LogZ != both.LogZ || math.Abs(last.LogZErr/both.LogZErr-1) > 1e-12 {
		t.Errorf("last trace point %+v, want the result (n_q %d, %v ± %v)", last, both.NQ, both.LogZ, both.LogZErr)
	}
	for i := 1; i < len(both.Trace); i++ {
		if both.Trace[i].NQ <= both.Trace[i-1].NQ {
			t.Errorf("trace n_q not increasing: %+v", both.Trace)
		}
	}
	if _, err := Evidence(ctx, g.logp, sg, &Settings{Proposal: FitGaussian, NQ: 1}); err == nil || !strings.Contains(err.Error(), "NQ = 1") {
		t.Errorf("NQ = 1 with cross-fitting: got %v, want an error naming NQ", err)
	}
}

// Weighing the p side by its effective size: p-draws that each repeat k
// times carry the information of the distinct draws, tau = k, and the
// bridge with tauP = k must solve the equation of the distinct draws with
// tauP = 1, so give the same ln Z (to the solver's tolerance, 1e-11
// relative, far below any error bar) and the same weights in the error.
func TestSolveBridgeEffectiveSize(t *testing.T) {
	const n, nq, k = 3000, 2000, 5
	rng := rand.New(rand.NewPCG(4, 4))
	// p = e^0.7 N(0, 1), q = N(0.1, 1.1²): a = log q - log p at p-draws.
	logRatio := func(x float64) float64 {
		lq := -0.5*((x-0.1)/1.1)*((x-0.1)/1.1) - math.Log(1.1)
		lp := 0.7 - 0.5*x*x
		return lq - lp
	}
	distinct := make([]float64, n)
	repeated := make([]float64, 0, n*k)
	for i := range distinct {
		distinct[i] = logRatio(rng.NormFloat64())
		for range k {
			repeated = append(repeated, distinct[i])
		}
	}
	b := make([]float64, nq)
	for j := range b {
		b[j] = -logRatio(0.1 + 1.1*rng.NormFloat64())
	}
	one, err := solveBridge(&bridgeInput{logQoverP: distinct, logPoverQ: b, nchains: 1, iid: true})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := solveBridge(&bridgeInput{logQoverP: repeated, logPoverQ: b, nchains: 1, iid: true, tauP: k})
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(rep.logZ-one.logZ) > 1e-9 || math.Abs(rep.re2Q/one.re2Q-1) > 1e-9 {
		t.Errorf("repeated draws with tauP %d: ln Z %v, re2 q %v; distinct draws: %v, %v", k, rep.logZ, rep.re2Q, one.logZ, one.re2Q)
	}
	if math.Abs(one.logZ-0.7) > 4*math.Sqrt(one.re2P+one.re2Q) {
		t.Errorf("ln Z %v ± %v, exact 0.7", one.logZ, math.Sqrt(one.re2P+one.re2Q))
	}
	// Without the effective size, the repeated draws would outweigh the
	// proposal k-fold and the root would move.
	plain, _ := solveBridge(&bridgeInput{logQoverP: repeated, logPoverQ: b, nchains: 1, iid: true})
	t.Logf("ln Z: distinct %.6f, repeated with tauP %.6f, repeated without %.6f", one.logZ, rep.logZ, plain.logZ)
}

func TestStartNQ(t *testing.T) {
	for _, tc := range []struct {
		np   int
		tau  float64
		want int
	}{
		{64000, 1, 64000},
		{64000, 24, 2667},
		{64000, 640, minStartNQ},
		{500, 10, 500},
	} {
		if got := startNQ(tc.np, tc.tau); got != tc.want {
			t.Errorf("startNQ(%d, %v) = %d, want %d", tc.np, tc.tau, got, tc.want)
		}
	}
}
