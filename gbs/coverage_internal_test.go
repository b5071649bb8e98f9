package gbs

import "testing"

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
