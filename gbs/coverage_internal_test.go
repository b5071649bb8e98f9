package gbs

import (
	"math"
	"testing"
)

// The one-point rule of the coverage check's edge statistic: the ring's
// false alarm (one point held 1429 of the 1435 steps beyond the range)
// rests on one point; steps spread over several points do not.
func TestOneHeldPoint(t *testing.T) {
	const total, draws = 137199, 2001.0 // one draw's share: 68.6 steps
	for _, c := range []struct {
		held map[int32]int
		want bool
	}{
		{map[int32]int{1: 1429, 2: 3, 3: 2, 4: 1}, true},
		{map[int32]int{1: 1000, 2: 40, 3: 20, 4: 8}, true},  // 68 others: not above the share
		{map[int32]int{1: 1000, 2: 40, 3: 20, 4: 9}, false}, // 69 others
		{map[int32]int{1: 300, 2: 300, 3: 300, 4: 300}, false},
	} {
		if got := oneHeldPoint(c.held, total, draws); got != c.want {
			t.Errorf("oneHeldPoint(%v) = %v, want %v", c.held, got, c.want)
		}
	}
}

// The edge statistic's trials: the independence chains' accepted moves,
// at most the pools' summed Kish size. The ring's false alarms (NUTS
// draws, seeds 960009, 960035, 960038) had about 4300 moves over pools
// of Kish size 150 to 264: counted as 4300 trials, a few steps at a
// heavy point of q's tail passed the limit.
func TestCoverageTrials(t *testing.T) {
	for _, c := range []struct {
		moves int
		kish  []float64
		want  int
	}{
		{4300, []float64{150.4, 113.9}, 264},
		{63, []float64{400, 500}, 63},
		{0, []float64{100, 100}, 1},
		{500, []float64{0, 0}, 1}, // all weights zero or infinite
	} {
		tl := &coverageTally{moves: c.moves}
		for _, k := range c.kish {
			tl.passes = append(tl.passes, chainStates{kish: k})
		}
		if got := tl.trials(); got != c.want {
			t.Errorf("moves %d, Kish sizes %v: trials %d, want %d", c.moves, c.kish, got, c.want)
		}
	}
	// Seed 960038 (d = 64, N_eff 14640): 848 of 142327 steps above the
	// draws' range in x[8], 797 of them at one of 4 points, with ln Z
	// right. Against 4354 trials that is 3.2 times the limit; against
	// the pools' Kish size, 264, half of it.
	const frac, neff, m = 848.0 / 142327, 14640.3, 65
	if l := coverageLimit(4354, neff, m, 1); !(frac > 3*l) {
		t.Errorf("limit at 4354 trials %.4g, want below a third of %.4g", l, frac)
	}
	if l := coverageLimit(264, neff, m, 1); !(frac < 0.6*l) {
		t.Errorf("limit at 264 trials %.4g, want above %.4g / 0.6", l, frac)
	}
}

// The cluster size of the steps beyond the range: the pool's w-weighted
// mean weight beyond over its w-weighted mean weight overall, at least 1.
// One heavy proposal beyond (weight 50 against 1 elsewhere) makes its
// steps come in clusters of about 50 · Σw/Σw² trials; light proposals
// beyond leave the count Poisson in trials.
func TestCoverageCluster(t *testing.T) {
	lw := make([]float64, 1000) // weights 1
	lw[7] = math.Log(50)
	tl := &coverageTally{wBeyond: make([]float64, 4), w2Beyond: make([]float64, 4), steps: make([]int, 4), held: make([]map[int32]int, 4), total: 22000}
	tl.addWeights(lw, []int32{7, 3, 5}, []int32{0, 1, 1})
	s, s2 := 999.0+50, 999.0+2500
	if got, want := tl.cluster(0, 11000), 50/(s2/s); math.Abs(got-want) > 1e-9*want {
		t.Errorf("heavy point beyond: cluster %.6g, want %.6g", got, want)
	}
	if got := tl.cluster(1, 11000); got != 1 {
		t.Errorf("light points beyond: cluster %v, want 1", got)
	}
	if got := tl.cluster(2, 11000); got != 1 {
		t.Errorf("nothing beyond: cluster %v, want 1", got)
	}
	// The chains' stays: 28 steps at 4 points, Σh²/Σh = 328/28 steps,
	// at two steps a trial 5.9 trials; single steps leave it at 1.
	tl.steps[3], tl.held[3] = 28, map[int32]int{1: 16, 2: 8, 3: 2, 4: 2}
	if got, want := tl.cluster(3, 11000), 328.0/28/2; math.Abs(got-want) > 1e-12 {
		t.Errorf("stays of 16, 8, 2 and 2 steps: cluster %v, want %v", got, want)
	}
	tl.steps[3], tl.held[3] = 4, map[int32]int{1: 1, 2: 1, 3: 1, 4: 1}
	if got := tl.cluster(3, 11000); got != 1 {
		t.Errorf("single steps: cluster %v, want 1", got)
	}
	// The limit in clusters is the trials' own at 1 and grows with the
	// cluster size, less than in proportion.
	const n, neff, m = 11000, 20000.0, 101
	l1, l5 := coverageLimit(n, neff, m, 1), coverageLimit(n, neff, m, 5)
	if !(l5 > 1.5*l1 && l5 < 5*l1) {
		t.Errorf("limit %.4g at cluster 1, %.4g at 5: want between 1.5 and 5 times", l1, l5)
	}
}

// The funnel's NUTS draws through the pipeline (d = 16, error bar about
// 0.0009) under-visit the neck: the chains find 0.1 to 0.3 % of p beyond
// the draws' range in x[0]. Where q covers it and the first-order shift
// is at the error bar within the count's precision, or the shift's upper
// bound is within it whatever q does, the finding is a note; a shift
// whose lower bound exceeds the error bar, or a region q reaches thinly
// with an upper bound beyond it, stays a warning.
func TestCoverageFunnelNote(t *testing.T) {
	for _, c := range []struct {
		frac, covered, cluster, logZErr float64
		trials                          int
		kind                            Kind
	}{
		// shift 0.00092 against 0.000915, from 54 clusters: not shown
		{0.00291, 0.683, 5.35, 0.000915, 98462, KindInfo},
		// shift 0.0011 from four times the count: its lower bound
		// 0.00098 beyond the error bar
		{0.0035, 0.683, 5.35, 0.000915, 4 * 98462, KindEstimate},
		// q reaches it thinly, the missed mass's bound 0.0022 within
		// an error bar of 0.003
		{0.000987, 0.28, 15.87, 0.003, 100291, KindInfo},
		// the same against an error bar of 0.0009
		{0.000987, 0.28, 15.87, 0.0009, 100291, KindEstimate},
		// more than 2 % of p missing: a warning whatever ln Z
		{0.03, 0.9, 1, 0.5, 100000, KindEstimate},
	} {
		st := coverageStat{frac: c.frac, covered: c.covered, cluster: c.cluster, trials: c.trials, limit: c.frac / 2, points: 50, code: 0, neff: 12000}
		if f := coverageFinding(st, 0, "x[0]", c.logZErr); f.Kind != c.kind {
			t.Errorf("%+v: %v (bounds %.3g to %.3g), want %v: %s", c, f.Kind, massLower(st), massBound(st), c.kind, f.Message)
		}
	}
}
