package gbs

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gbs-evidence/gbs/flow"
	"github.com/gbs-evidence/gbs/problems"
)

// correlatedDraws returns n exact draws of problems.CorrelatedGaussian(d,
// 1, 0) (condition number 100, random rotation, ln Z = 0) as samples.
func correlatedDraws(d, n int, seed uint64) (*problems.Problem, *Samples) {
	p := problems.CorrelatedGaussian(d, 1, 0)
	x := make([]float64, n*d)
	p.Sample(x, rand.New(rand.NewPCG(seed, 3)))
	return p, iidSamples(x, d)
}

// TestAnnealedBridgeFewDraws: 400 draws in 80 dimensions, where a fitted
// Gaussian is about d²/(4n) = 8 nats from p in each direction and the
// direct passes' k̂ exceed 1 both ways with error bars of 0.28 and 0.29:
// the automatic rule anneals, and the annealed estimate is right with a
// far smaller error bar (0.062 measured).
func TestAnnealedBridgeFewDraws(t *testing.T) {
	p, s := correlatedDraws(80, 400, 1)
	r, err := Evidence(context.Background(), p.LogProbBatch, s, &Settings{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if r.AnnealSteps < 2 || r.AnnealCalls <= 0 || r.AnnealCalls > r.NCall {
		t.Fatalf("annealed bridge not used or not counted: steps %d, calls %d of %d", r.AnnealSteps, r.AnnealCalls, r.NCall)
	}
	t.Logf("ln Z = %.4f ± %.4f, %d rungs, %d calls", r.LogZ, r.LogZErr, r.AnnealSteps, r.AnnealCalls)
	// K - 1 moves of 2 × 64 particles per pass, plus their starts.
	if want := int64(2 * (r.AnnealSteps - 1 + 1) * 2 * annealParticles); r.AnnealCalls != want-2*annealParticles {
		t.Errorf("AnnealCalls = %d, want %d", r.AnnealCalls, want-2*annealParticles)
	}
	if dz := r.LogZ - p.LogZ; math.Abs(dz) > 4*r.LogZErr || r.LogZErr > 0.1 {
		t.Errorf("ln Z = %.4f ± %.4f, exact %.4f: want within 4σ and σ < 0.1", r.LogZ, r.LogZErr, p.LogZ)
	}
	if f := r.Found(CheckAnneal); len(f) != 1 || f[0].Kind != KindInfo {
		t.Errorf("no note of the annealed bridge: %+v", r.Findings)
	}
	if r.Warns(CheckConsistency) {
		t.Errorf("warning blames the log density: %q", r.Warnings())
	}
	off, err := Evidence(context.Background(), p.LogProbBatch, s, &Settings{Seed: 1, Anneal: Off})
	if err != nil {
		t.Fatal(err)
	}
	if off.AnnealSteps != 0 || off.NCall >= r.NCall {
		t.Errorf("Off: %d steps, %d calls (auto: %d)", off.AnnealSteps, off.NCall, r.NCall)
	}
}

// TestAnnealNotUsedWhenHealthy: a low-dimensional case with plenty of
// draws keeps the direct bridge, bit for bit.
func TestAnnealNotUsedWhenHealthy(t *testing.T) {
	p, s := correlatedDraws(8, 4000, 2)
	r, err := Evidence(context.Background(), p.LogProbBatch, s, &Settings{Seed: 2})
	if err != nil {
		t.Fatal(err)
	}
	if r.AnnealSteps != 0 || r.AnnealCalls != 0 || len(r.Found(CheckAnneal)) != 0 {
		t.Fatalf("annealed bridge used on a healthy case: %d steps, info %q", r.AnnealSteps, r.Info())
	}
	off, err := Evidence(context.Background(), p.LogProbBatch, s, &Settings{Seed: 2, Anneal: Off})
	if err != nil {
		t.Fatal(err)
	}
	if off.LogZ != r.LogZ || off.LogZErr != r.LogZErr || off.NCall != r.NCall {
		t.Errorf("auto %v ± %v (%d calls) differs from off %v ± %v (%d calls)", r.LogZ, r.LogZErr, r.NCall, off.LogZ, off.LogZErr, off.NCall)
	}
}

// TestOnBoundedChains: forced on, for draws in a box (the flow's
// bounds layer in the latent map) from several autocorrelated chains,
// the annealed bridge stays right.
func TestOnBoundedChains(t *testing.T) {
	p := problems.Funnel()
	d := p.Dim
	rng := rand.New(rand.NewPCG(5, 6))
	const nc, m = 4, 500
	s := &Samples{Dim: d}
	for c := 0; c < nc; c++ {
		x := make([]float64, m*d)
		p.Sample(x, rng)
		// Repeat each draw twice: a chain with tau about 2.
		for i := m/2 - 1; i >= 0; i-- {
			copy(x[(2*i+1)*d:(2*i+2)*d], x[i*d:(i+1)*d])
			copy(x[2*i*d:(2*i+1)*d], x[i*d:(i+1)*d])
		}
		s.Chains = append(s.Chains, x)
	}
	r, err := Evidence(context.Background(), p.LogProbBatch, s, &Settings{Seed: 3, Anneal: On, Lower: p.Lower, Upper: p.Upper})
	if err != nil {
		t.Fatal(err)
	}
	if r.AnnealSteps < 2 {
		t.Fatalf("On did not anneal: %q", r.Info())
	}
	t.Logf("ln Z = %.4f ± %.4f (exact %.4f), %d rungs, %d calls", r.LogZ, r.LogZErr, p.LogZ, r.AnnealSteps, r.AnnealCalls)
	if dz := r.LogZ - p.LogZ; math.Abs(dz) > 4*r.LogZErr || r.LogZErr > 0.3 {
		t.Errorf("ln Z = %.4f ± %.4f, exact %.4f: want within 4σ and σ < 0.3", r.LogZ, r.LogZErr, p.LogZ)
	}
}

// TestOneRungIsDirect: a path of one rung (β = 0 → 1, no move)
// gives as works exactly the direct bridge's log ratios: log p/q at the
// draws of q and log q/p at the posterior draws.
func TestOneRungIsDirect(t *testing.T) {
	p, s := correlatedDraws(5, 400, 4)
	x := s.Chains[0]
	f, err := flow.Fit(x, 5, nil, &flow.Settings{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	e, err := newEstimation(context.Background(), p.LogProbBatch, s, nil)
	if err != nil {
		t.Fatal(err)
	}
	xr := x[:10*5]
	lp := make([]float64, 10)
	p.LogProbBatch(lp, xr)
	plan := annealPlan{beta: []float64{0, 1}, rho: []float64{0, 0}}
	wF, wR, err := e.annealRun(f, plan, 7, xr, lp, rand.New(rand.NewPCG(1, 2)))
	if err != nil {
		t.Fatal(err)
	}
	lq := make([]float64, 10)
	f.LogProb(lq, xr)
	for i := range wR {
		if want := lq[i] - lp[i]; math.Abs(wR[i]-want) > 1e-9*math.Max(1, math.Abs(want)) {
			t.Errorf("reverse work %d = %v, want log q - log p = %v", i, wR[i], want)
		}
	}
	// The forward particles are draws of q: their works are log p - log q
	// there, which Sample with the same stream reproduces.
	y := make([]float64, 7*5)
	ly := make([]float64, 7)
	f.Sample(y, ly, rand.New(rand.NewPCG(1, 2)))
	lpy := make([]float64, 7)
	p.LogProbBatch(lpy, y)
	for i := range wF {
		if want := lpy[i] - ly[i]; math.Abs(wF[i]-want) > 1e-9*math.Max(1, math.Abs(want)) {
			t.Errorf("forward work %d = %v, want log p - log q = %v", i, wF[i], want)
		}
	}
	if e.ev.calls != 7 {
		t.Errorf("%d log-density calls for one rung, want 7 (the forward starts)", e.ev.calls)
	}
}

// TestAnnealPlan: the rungs rise from 0 to 1, the steps lie in (0, 1],
// and a wider spread of w asks for more rungs.
func TestAnnealPlan(t *testing.T) {
	prev := 0
	for _, sd := range []float64{0.5, 2, 5} {
		p := newAnnealPlan(sd, 1.3*sd)
		k := p.steps()
		if p.beta[0] != 0 || p.beta[k] != 1 || k < 2 {
			t.Fatalf("sd %g: rungs %v", sd, p.beta)
		}
		for i := 1; i <= k; i++ {
			if !(p.beta[i] > p.beta[i-1]) {
				t.Fatalf("sd %g: β not increasing at %d: %v", sd, i, p.beta[i-1:i+1])
			}
			if i < k && !(p.rho[i] > 0 && p.rho[i] <= 1) {
				t.Fatalf("sd %g: ρ[%d] = %v", sd, i, p.rho[i])
			}
		}
		if k < prev {
			t.Errorf("sd %g: %d rungs, fewer than %d for a narrower w", sd, k, prev)
		}
		prev = k
	}
	if _, err := (&Settings{Anneal: 7}).withDefaults(); err == nil {
		t.Error("Anneal = 7 accepted")
	}
}
