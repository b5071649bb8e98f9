package nuts

import (
	"context"
	"math"
	"math/rand/v2"
	"reflect"
	"testing"
)

// twoModes is a mixture of N(-a·1, I) with weight w and N(+a·1, I) with
// weight 1-w in d dimensions: modes far enough apart that NUTS never
// crosses between them.
type twoModes struct {
	d    int
	a, w float64
}

func (m twoModes) logp(grad, x []float64) (float64, error) {
	var sm, sp float64
	for _, v := range x {
		sm += (v + m.a) * (v + m.a)
		sp += (v - m.a) * (v - m.a)
	}
	lm := math.Log(m.w) - 0.5*sm
	lp := math.Log(1-m.w) - 0.5*sp
	hi := math.Max(lm, lp)
	l := hi + math.Log(math.Exp(lm-hi)+math.Exp(lp-hi))
	rm := math.Exp(lm - l) // responsibility of the minus mode
	for j, v := range x {
		grad[j] = -rm*(v+m.a) - (1-rm)*(v-m.a)
	}
	return l, nil
}

// wideGauss is N(0, s² I), a global proposal that covers both modes.
type wideGauss struct {
	d int
	s float64
}

func (g wideGauss) Propose(dst []float64, rng *rand.Rand) float64 {
	for j := range dst {
		dst[j] = g.s * rng.NormFloat64()
	}
	return g.LogQ(dst)
}

func (g wideGauss) LogQ(x []float64) float64 {
	var s float64
	for _, v := range x {
		s += v * v
	}
	return -0.5*s/(g.s*g.s) - float64(len(x))*(math.Log(g.s)+0.5*math.Log(2*math.Pi))
}

// minorStarts puts every chain but the last in the minus mode.
func minorStarts(chains, d int, a float64) [][]float64 {
	init := make([][]float64, chains)
	for c := range init {
		init[c] = make([]float64, d)
		s := -a
		if c == chains-1 {
			s = a
		}
		for j := range init[c] {
			init[c][j] = s
		}
	}
	return init
}

// fracMinus is the fraction of draws in the minus mode (sum of x < 0).
func fracMinus(r *Result) float64 {
	var n, k int
	for c := range r.Draws {
		for i := 0; i < len(r.Draws[c])/r.Dim; i++ {
			var s float64
			for _, v := range r.Draw(c, i) {
				s += v
			}
			n++
			if s < 0 {
				k++
			}
		}
	}
	return float64(k) / float64(n)
}

// From chains started in the wrong proportions (7 of 8 in the minor
// mode), NUTS alone keeps the starting proportions and R-hat flags it;
// with global moves from a proposal that covers both modes the weights
// come out right. The tolerance 0.05 is about 4 standard errors of the
// weight at this size (8 × 500 draws, global acceptance near 0.2).
func TestGlobalMovesFixModeWeights(t *testing.T) {
	const d, a, w = 2, 3.0, 0.2
	target := twoModes{d: d, a: a, w: w}
	base := Settings{Chains: 8, Warmup: 300, Draws: 500, Seed: 11, Init: minorStarts(8, d, a)}

	plain, err := Sample(context.Background(), target.logp, d, &base)
	if err != nil {
		t.Fatal(err)
	}
	if f := fracMinus(plain); math.Abs(f-7.0/8) > 0.01 {
		t.Errorf("NUTS alone: minus-mode fraction %.3f, want the starts' 7/8 (no crossing)", f)
	}
	if !(plain.RHatLogP > 1.05) {
		// log p differs between the modes by ln(0.8/0.2).
		t.Errorf("NUTS alone: R-hat of log p %.3f does not flag the mixed-up chains", plain.RHatLogP)
	}

	s := base
	s.Global = &GlobalSettings{Move: wideGauss{d: d, s: 4}}
	got, err := Sample(context.Background(), target.logp, d, &s)
	if err != nil {
		t.Fatal(err)
	}
	if f := fracMinus(got); math.Abs(f-w) > 0.05 {
		t.Errorf("with global moves: minus-mode fraction %.3f, want %v", f, w)
	}
	for c, st := range got.Chains {
		g := st.Global
		if g.Proposed != int64(s.Draws) || g.WarmupProposed != 0 {
			t.Errorf("chain %d: %d (%d in warm-up) moves proposed, want %d (0)", c, g.Proposed, g.WarmupProposed, s.Draws)
		}
		if r := g.AcceptRate(); !(r > 0.05 && r < 0.6) {
			t.Errorf("chain %d: global acceptance %.3f, want a rate between 0.05 and 0.6 for this q", c, r)
		}
		if g.Calls < g.Proposed/2 || g.Calls > g.Proposed || g.Calls >= st.GradCalls {
			t.Errorf("chain %d: %d global calls for %d moves and %d gradient calls", c, g.Calls, g.Proposed, st.GradCalls)
		}
	}
	if !(got.RHatLogP < 1.05) {
		t.Errorf("with global moves: R-hat of log p %.3f, want below 1.05", got.RHatLogP)
	}
}

// recordingFit fits a mixture of two wide Gaussians at the draws' means of
// each sign (a stand-in for a flow) and records what it was given.
type recordingFit struct {
	stages []int
	shapes [][2]int
}

func (r *recordingFit) fit(stage int, x, logp [][]float64) (GlobalMove, error) {
	r.stages = append(r.stages, stage)
	r.shapes = append(r.shapes, [2]int{len(x), len(logp[0])})
	return wideGauss{d: 2, s: 4 + float64(stage)}, nil
}

// Fit is called after each warm-up stage with every chain's draws of the
// stage; the draws are the same for any Threads and for SampleBatch.
func TestGlobalFitStagesReproducible(t *testing.T) {
	const d = 2
	target := twoModes{d: d, a: 3, w: 0.2}
	run := func(threads int, batch bool) (*Result, *recordingFit) {
		rf := &recordingFit{}
		s := &Settings{Chains: 4, Warmup: 100, Draws: 100, Seed: 3, Threads: threads,
			Init:   minorStarts(4, d, 3),
			Global: &GlobalSettings{Fit: rf.fit, Stages: 3, StageIters: 50, Moves: 2}}
		var r *Result
		var err error
		if batch {
			r, err = SampleBatch(context.Background(), perPoint(target.logp, d), d, s)
		} else {
			r, err = Sample(context.Background(), target.logp, d, s)
		}
		if err != nil {
			t.Fatal(err)
		}
		return r, rf
	}
	r1, rf := run(1, false)
	if want := []int{1, 2, 3}; !reflect.DeepEqual(rf.stages, want) {
		t.Errorf("Fit called at stages %v, want %v", rf.stages, want)
	}
	for _, sh := range rf.shapes {
		if sh != [2]int{4, 50} {
			t.Errorf("Fit got %d chains of %d draws, want 4 of 50", sh[0], sh[1])
		}
	}
	for c, st := range r1.Chains {
		// Stage 1 has no move yet; stages 2 and 3 make 2 per iteration.
		if st.Global.WarmupProposed != 2*2*50 || st.Global.Proposed != 2*100 {
			t.Errorf("chain %d: %d warm-up and %d kept moves, want 200 and 200", c, st.Global.WarmupProposed, st.Global.Proposed)
		}
	}
	for _, alt := range []struct {
		threads int
		batch   bool
	}{{4, false}, {0, true}} {
		r2, _ := run(alt.threads, alt.batch)
		if !reflect.DeepEqual(r1.Draws, r2.Draws) || !reflect.DeepEqual(r1.Chains, r2.Chains) {
			t.Errorf("Threads %d, batch %v: draws or statistics differ from Threads 1", alt.threads, alt.batch)
		}
	}
}

func TestGlobalSettingsErrors(t *testing.T) {
	target := twoModes{d: 2, a: 3, w: 0.2}
	for _, g := range []*GlobalSettings{
		{},
		{Move: wideGauss{d: 2, s: 1}, Moves: -1},
		{Fit: (&recordingFit{}).fit, StageIters: -1},
		{Fit: (&recordingFit{}).fit, MinAccept: 1.5},
	} {
		if _, err := Sample(context.Background(), target.logp, 2, &Settings{Draws: 10, Warmup: 10, Global: g}); err == nil {
			t.Errorf("Global %+v: no error", *g)
		}
	}
	fail := func(int, [][]float64, [][]float64) (GlobalMove, error) { return nil, nil }
	if _, err := Sample(context.Background(), target.logp, 2, &Settings{Draws: 10, Warmup: 10, Global: &GlobalSettings{Fit: fail}}); err == nil {
		t.Error("a Fit returning no proposal: no error")
	}
}

// farGauss is N(c·1, s² I) with c far from p's mass: its moves are never
// accepted.
type farGauss struct{ c, s float64 }

func (g farGauss) Propose(dst []float64, rng *rand.Rand) float64 {
	for j := range dst {
		dst[j] = g.c + g.s*rng.NormFloat64()
	}
	return g.LogQ(dst)
}

func (g farGauss) LogQ(x []float64) float64 {
	var s float64
	for _, v := range x {
		s += (v - g.c) * (v - g.c)
	}
	return -0.5*s/(g.s*g.s) - float64(len(x))*(math.Log(g.s)+0.5*math.Log(2*math.Pi))
}

// With MinAccept, a stage whose moves are not accepted ends the global
// moves: no further stage or fit, and no moves in the kept draws. A
// proposal that is accepted keeps them.
func TestGlobalMovesStopWhenNotAccepted(t *testing.T) {
	const d = 2
	target := twoModes{d: d, a: 3, w: 0.2}
	run := func(fit GlobalFitter) *Result {
		s := &Settings{Chains: 4, Warmup: 100, Draws: 100, Seed: 3, Init: minorStarts(4, d, 3),
			Global: &GlobalSettings{Fit: fit, Stages: 3, StageIters: 50, MinAccept: 0.01}}
		r, err := Sample(context.Background(), target.logp, d, s)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	var stages []int
	r := run(func(stage int, _, _ [][]float64) (GlobalMove, error) {
		stages = append(stages, stage)
		return farGauss{c: 50, s: 0.1}, nil
	})
	if !reflect.DeepEqual(stages, []int{1}) || r.GlobalStopped != 2 {
		t.Errorf("a never-accepted proposal: fits after stages %v, stopped after stage %d; want [1] and 2", stages, r.GlobalStopped)
	}
	for c, st := range r.Chains {
		if st.Global.WarmupProposed != 50 || st.Global.WarmupAccepted != 0 || st.Global.Proposed != 0 {
			t.Errorf("chain %d: %d warm-up moves (%d accepted), %d kept; want 50 (0) and none",
				c, st.Global.WarmupProposed, st.Global.WarmupAccepted, st.Global.Proposed)
		}
	}
	rf := &recordingFit{}
	r = run(rf.fit)
	if r.GlobalStopped != 0 || len(rf.stages) != 3 {
		t.Errorf("an accepted proposal: stopped after stage %d with %d fits; want 0 and 3", r.GlobalStopped, len(rf.stages))
	}
	for c, st := range r.Chains {
		if st.Global.Proposed != 100 {
			t.Errorf("chain %d: %d kept moves, want 100", c, st.Global.Proposed)
		}
	}
}
