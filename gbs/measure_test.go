package gbs_test

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/gbs-evidence/gbs/flow"
	"github.com/gbs-evidence/gbs/gbs"
	"github.com/gbs-evidence/gbs/nuts"
	"github.com/gbs-evidence/gbs/problems"
)

// TestMeasureRingFlow reproduces the ring numbers of the flow package's
// documentation, where no exact sampler exists: NUTS draws of the 64-d
// ring (8 chains × 2000 kept draws, target acceptance 0.9), a flow fitted
// on the first four chains with and without conditional layers, its
// KL(p‖q) on the other four (ln Z is known), and GBS with each flow.
// Skipped unless GBS_MEASURE is set; GBS_REPS sets the repeats:
//
//	GBS_MEASURE=1 GBS_REPS=4 go test -run TestMeasureRingFlow -v ./gbs/
func TestMeasureRingFlow(t *testing.T) {
	skipUnlessMeasuring(t)
	reps := envInt("GBS_REPS", 3)
	p := problems.Ring()
	d := p.Dim
	grad := func(g, x []float64) (float64, error) { return p.LogProbGrad(g, x), nil }
	for rep := 0; rep < reps; rep++ {
		seed := uint64(100 + rep)
		r, err := nuts.Sample(context.Background(), grad, d, &nuts.Settings{Chains: 8, Warmup: 500, Draws: 2000, Lower: p.Lower, Upper: p.Upper, Seed: seed})
		if err != nil {
			t.Fatal(err)
		}
		var train, test []float64
		for c, ch := range r.Draws {
			if c < 4 {
				train = append(train, ch...)
			} else {
				test = append(test, ch...)
			}
		}
		var meanLogP float64
		for c := 4; c < 8; c++ {
			for _, v := range r.LogP[c] {
				meanLogP += v
			}
		}
		nt := len(test) / d
		meanLogP /= float64(nt)
		for _, cond := range []bool{false, true} {
			set := &flow.Settings{Seed: seed, Lower: p.Lower, Upper: p.Upper}
			if !cond {
				set.Conditional = flow.Off
			}
			start := time.Now()
			f, err := flow.Fit(train, d, nil, set)
			if err != nil {
				t.Fatal(err)
			}
			fit := time.Since(start)
			lq := make([]float64, nt)
			f.LogProb(lq, test)
			var meanLogQ float64
			for _, v := range lq {
				meanLogQ += v / float64(nt)
			}
			ev, err := gbs.Evidence(context.Background(), p.LogProbBatch, &gbs.Samples{Dim: d, Chains: r.Draws, LogP: r.LogP, NCall: r.GradCalls},
				&gbs.Settings{Seed: seed, Lower: p.Lower, Upper: p.Upper, Proposal: gbs.FlowProposal(set)})
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("ring rep %d conditional %-5v: %2d layers (%2d conditional), fit %.1fs, KL(p‖q) %5.2f nats; GBS ln Z - exact %+.4f ± %.4f",
				rep, cond, f.Layers(), f.ConditionalLayers(), fit.Seconds(), meanLogP-p.LogZ-meanLogQ, ev.LogZ-p.LogZ, ev.LogZErr)
			if math.IsNaN(ev.LogZ) {
				t.Error("NaN ln Z")
			}
		}
	}
}
