package pipeline

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/gbs-evidence/gbs/gbs"
	"github.com/gbs-evidence/gbs/nuts"
)

// When the evidence warns about the draws of a run whose NUTS statistics
// looked fine (here: a first run whose chains are all copies of one, as if
// started with the same seed, which R-hat cannot see), the pipeline runs
// NUTS again with RetryDrawsFactor times the warm-up and draws, says why
// in Info, warns about nothing the longer run does not show, and counts
// every call of both runs and both evidence stages.
func TestPipelineLengthensOnEvidenceWarning(t *testing.T) {
	const d = 2
	var calls atomic.Int64
	f := func(g, x []float64) (float64, error) {
		calls.Add(1)
		var lp float64
		for i, v := range x {
			lp -= 0.5 * v * v
			g[i] = -v
		}
		return lp, nil
	}
	var runs []nuts.Settings
	sample := func(ctx context.Context, s *nuts.Settings) (*nuts.Result, error) {
		runs = append(runs, *s)
		r, err := nuts.Sample(ctx, f, d, s)
		if err != nil || len(runs) > 1 {
			return r, err
		}
		for c := 1; c < len(r.Draws); c++ {
			r.Draws[c] = append([]float64(nil), r.Draws[0]...)
			r.LogP[c] = append([]float64(nil), r.LogP[0]...)
		}
		return r, nil
	}
	set := &Settings{Sampler: nuts.Settings{Chains: 4, Warmup: 300, Draws: 1000, Seed: 5}}
	r, err := run(context.Background(), sample, gradToBatch(f, d), d, set)
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 2 || runs[1].Warmup != 600 || runs[1].Draws != 2000 || !r.Lengthened {
		t.Fatalf("%d runs (%+v), lengthened %v", len(runs), runs, r.Lengthened)
	}
	if f := r.Evidence.Found(gbs.CheckRerun); len(f) != 1 || f[0].Kind != gbs.KindInfo {
		t.Errorf("rerun findings %+v, want one note", f)
	}
	if w := r.Evidence.Warnings(); len(w) != 0 {
		t.Errorf("warnings after the longer run: %q", w)
	}
	if n := calls.Load(); n != r.GradCalls+r.LogDensityCalls || r.LogDensityCalls <= r.Evidence.NCall {
		t.Errorf("%d calls; result: %d gradient + %d log-density (last evidence %d)", n, r.GradCalls, r.LogDensityCalls, r.Evidence.NCall)
	}
}
