package gbs

import (
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// normalLogP returns the log density of N(mu·1, sd² I) in d dimensions,
// normalized (ln Z = 0).
func normalLogP(d int, mu, sd float64) LogDensityFunc {
	return func(dst, x []float64) error {
		for i := range dst {
			s := -float64(d) * (math.Log(sd) + 0.5*math.Log(2*math.Pi))
			for k := 0; k < d; k++ {
				z := (x[i*d+k] - mu) / sd
				s -= 0.5 * z * z
			}
			dst[i] = s
		}
		return nil
	}
}

// metropolisChains runs random-walk Metropolis on logp from x0 (one
// start per chain), keeping every draw: the repeats of rejected steps
// are in the chains as in emcee's.
func metropolisChains(logp LogDensityFunc, d, nchains, m int, step float64, start func(c int) []float64, rng *rand.Rand) *Samples {
	s := &Samples{Dim: d}
	for c := 0; c < nchains; c++ {
		x := start(c)
		lp := make([]float64, 1)
		logp(lp, x)
		cur := lp[0]
		ch := make([]float64, 0, m*d)
		lps := make([]float64, 0, m)
		y := make([]float64, d)
		for t := 0; t < m; t++ {
			for k := range y {
				y[k] = x[k] + step*rng.NormFloat64()
			}
			logp(lp, y)
			if math.Log(rng.Float64()) < lp[0]-cur {
				copy(x, y)
				cur = lp[0]
			}
			ch = append(ch, x...)
			lps = append(lps, cur)
		}
		s.Chains = append(s.Chains, ch)
		s.LogP = append(s.LogP, lps)
	}
	return s
}

func normalChains(d, nchains, m int, mu, sd float64, rng *rand.Rand) *Samples {
	s := &Samples{Dim: d}
	for c := 0; c < nchains; c++ {
		ch := make([]float64, m*d)
		for i := range ch {
			ch[i] = mu + sd*rng.NormFloat64()
		}
		s.Chains = append(s.Chains, ch)
	}
	return s
}

func runEvidence(t *testing.T, name string, logp LogDensityFunc, s *Samples) *Result {
	t.Helper()
	res, err := Evidence(context.Background(), logp, s, &Settings{Seed: 3})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	t.Logf("%s: ln Z = %.4f ± %.4f\n  diagnostics: %s", name, res.LogZ, res.LogZErr, res.Diagnostics)
	for _, f := range res.Findings {
		t.Logf("  %s [%s]: %s", f.Kind, f.Check, f.Message)
	}
	return res
}

// Draws of one density passed with the log density of another: each is a
// user mistake that used to give a wrong ln Z with a small error bar.
func TestDiagnosticsWrongDensity(t *testing.T) {
	const d = 6
	for _, tc := range []struct {
		name    string
		drawsSD float64
		logp    LogDensityFunc
	}{
		// N(0, I) draws with the log density of N(3·1, I).
		{"shifted", 1, normalLogP(d, 3, 1)},
		// A log density twice as wide as the draws.
		{"twice as wide", 1, normalLogP(d, 0, 2)},
		// Posterior of N(0, I) likelihood × N(0, I) prior is N(0, I/2);
		// the log likelihood alone is passed.
		{"prior-less", math.Sqrt(0.5), normalLogP(d, 0, 1)},
	} {
		s := normalChains(d, 8, 500, 0, tc.drawsSD, rand.New(rand.NewPCG(1, 2)))
		res := runEvidence(t, tc.name, tc.logp, s)
		if !res.Warns(CheckConsistency) || !(res.Diagnostics.TiltZ > consistencyZ) {
			t.Errorf("%s: no warning that draws and log density disagree: %q", tc.name, res.Warnings())
		}
	}
}

// Eight chains, one of them in a second, equally heavy mode.
func TestDiagnosticsChainInAnotherMode(t *testing.T) {
	const d = 4
	rng := rand.New(rand.NewPCG(2, 2))
	s := normalChains(d, 8, 500, -3, 1, rng)
	for i := range s.Chains[5] {
		s.Chains[5][i] = 3 + rng.NormFloat64()
	}
	mix := func(dst, x []float64) error {
		a, b := make([]float64, len(dst)), make([]float64, len(dst))
		normalLogP(d, -3, 1)(a, x)
		normalLogP(d, 3, 1)(b, x)
		for i := range dst {
			dst[i] = logAddExp(a[i], b[i]) - math.Ln2
		}
		return nil
	}
	res := runEvidence(t, "other mode", mix, s)
	if !res.Warns(CheckRHat) || !slices.Equal(res.Diagnostics.OutlierChains, []int{5}) {
		t.Errorf("no warning naming chain 5: %q", res.Warnings())
	}
}

// Stored log p that belongs to other draws, or is shifted, is an error
// naming the draws and both values.
func TestDiagnosticsSpotCheck(t *testing.T) {
	const d = 3
	logp := normalLogP(d, 0, 1)
	rng := rand.New(rand.NewPCG(3, 2))
	s := metropolisChains(logp, d, 8, 2000, 1.5, func(int) []float64 { return []float64{0, 0, 0} }, rng)
	res := runEvidence(t, "clean", logp, s)
	if res.Diagnostics.SpotChecked != spotCheckDraws || len(res.Warnings()) != 0 {
		t.Errorf("clean: spot-checked %d draws, warnings %q", res.Diagnostics.SpotChecked, res.Warnings())
	}
	// Counted in NCall, with the coverage check's calls.
	if want := int64(res.NQ + spotCheckDraws + res.Diagnostics.CoverageCalls); res.NCall != want {
		t.Errorf("clean: NCall = %d, want n_q + %d + the coverage check's %d = %d", res.NCall, spotCheckDraws, res.Diagnostics.CoverageCalls, want)
	}

	shuffled := &Samples{Dim: d, Chains: s.Chains}
	flat := []float64{}
	for _, lp := range s.LogP {
		flat = append(flat, lp...)
	}
	// A (draws, chains) reshape mix-up: the values of chain c, draw t
	// read as those of chain t%8, draw ...
	m := s.Draws()
	for c := 0; c < 8; c++ {
		lp := make([]float64, m)
		for t := 0; t < m; t++ {
			lp[t] = flat[t*8+c]
		}
		shuffled.LogP = append(shuffled.LogP, lp)
	}
	shifted := &Samples{Dim: d, Chains: s.Chains}
	for _, lp := range s.LogP {
		sh := make([]float64, len(lp))
		for i, v := range lp {
			sh[i] = v + 10
		}
		shifted.LogP = append(shifted.LogP, sh)
	}
	for _, tc := range []struct {
		name string
		s    *Samples
	}{{"misaligned", shuffled}, {"shifted by +10", shifted}} {
		_, err := Evidence(context.Background(), logp, tc.s, &Settings{Seed: 3})
		if err == nil || !strings.Contains(err.Error(), "does not match the log density") || !strings.Contains(err.Error(), "chain ") {
			t.Errorf("%s: error %v", tc.name, err)
			continue
		}
		t.Logf("%s: %v", tc.name, err)
	}
}

// arChains are AR(1) chains x_t = ρ x_{t-1} + sqrt(1-ρ²) ε of N(0, I),
// started at x0.
func arChains(d, nchains, m int, rho, x0 float64, rng *rand.Rand) *Samples {
	s := &Samples{Dim: d}
	a := math.Sqrt(1 - rho*rho)
	for c := 0; c < nchains; c++ {
		ch := make([]float64, m*d)
		for k := 0; k < d; k++ {
			x := x0
			for t := 0; t < m; t++ {
				x = rho*x + a*rng.NormFloat64()
				ch[t*d+k] = x
			}
		}
		s.Chains = append(s.Chains, ch)
	}
	return s
}

func TestDiagnosticsBurnIn(t *testing.T) {
	const d = 4
	s := arChains(d, 8, 1000, 0.98, 25, rand.New(rand.NewPCG(4, 2)))
	res := runEvidence(t, "burn-in", normalLogP(d, 0, 1), s)
	if !res.Warns(CheckBurnIn) {
		t.Errorf("no burn-in warning: %q", res.Warnings())
	}
}

func TestDiagnosticsLayoutAndShortChains(t *testing.T) {
	const d = 3
	// emcee's get_chain(): 32 walkers, 1500 steps, stored (steps, walkers,
	// d) and read as 1500 chains of 32 draws.
	s := arChains(d, 32, 1500, 0.9, 0, rand.New(rand.NewPCG(5, 2)))
	swapped := &Samples{Dim: d}
	for t := 0; t < 1500; t++ {
		ch := make([]float64, 0, 32*d)
		for w := 0; w < 32; w++ {
			ch = append(ch, s.Chains[w][t*d:(t+1)*d]...)
		}
		swapped.Chains = append(swapped.Chains, ch)
	}
	res := runEvidence(t, "emcee layout", normalLogP(d, 0, 1), swapped)
	if !res.Warns(CheckLayout) {
		t.Errorf("emcee layout: no layout warning: %q", res.Warnings())
	}
	// Chains far too short: 4 chains of 60 draws with tau about 40.
	short := arChains(d, 4, 60, 0.95, 0, rand.New(rand.NewPCG(6, 2)))
	res = runEvidence(t, "short", normalLogP(d, 0, 1), short)
	if !res.Warns(CheckESS) {
		t.Errorf("short chains: no ESS warning: %q", res.Warnings())
	}
}

func TestDiagnosticsStuckChain(t *testing.T) {
	const d = 3
	logp := normalLogP(d, 0, 1)
	s := metropolisChains(logp, d, 8, 500, 1, func(int) []float64 { return []float64{0, 0, 0} }, rand.New(rand.NewPCG(7, 2)))
	// Chain 6 never moves from its start.
	for t := 0; t < 500; t++ {
		copy(s.Chains[6][t*d:(t+1)*d], []float64{0.3, -0.2, 0.1})
		s.LogP[6][t] = -0.5*(0.09+0.04+0.01) - 1.5*math.Log(2*math.Pi)
	}
	res := runEvidence(t, "stuck", logp, s)
	if !res.Warns(CheckStuckChains) || !slices.Equal(res.Diagnostics.StuckChains, []int{6}) {
		t.Errorf("no stuck-chain warning naming chain 6: %q", res.Warnings())
	}
}

// Healthy chains raise no warning, repeated points (three in four steps
// rejected) included.
func TestDiagnosticsNoFalseAlarm(t *testing.T) {
	const d = 4
	logp := normalLogP(d, 1, 1)
	rng := rand.New(rand.NewPCG(8, 2))
	s := metropolisChains(logp, d, 32, 1000, 1.6, func(int) []float64 {
		x := make([]float64, d)
		for k := range x {
			x[k] = 1 + rng.NormFloat64()
		}
		return x
	}, rng)
	res := runEvidence(t, "metropolis", logp, s)
	if w := res.Warnings(); len(w) != 0 {
		t.Errorf("healthy Metropolis chains: warnings %q", w)
	}
	iid := normalChains(d, 1, 4000, 1, 1, rng)
	iid.Kind = IndependentDraws
	res = runEvidence(t, "exact draws", logp, iid)
	if w := res.Warnings(); len(w) != 0 {
		t.Errorf("exact draws: warnings %q", w)
	}
}
