package gbs

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"

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
	set := &PipelineSettings{Sampler: nuts.Settings{Chains: 4, Warmup: 300, Draws: 1000, Seed: 5}}
	r, err := pipeline(context.Background(), sample, gradToBatch(f, d), d, set)
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 2 || runs[1].Warmup != 600 || runs[1].Draws != 2000 || !r.Lengthened {
		t.Fatalf("%d runs (%+v), lengthened %v", len(runs), runs, r.Lengthened)
	}
	why := "the evidence's checks warned about the draws (chains "
	if len(r.Evidence.Info) == 0 || !strings.HasPrefix(r.Evidence.Info[0], why) || !strings.Contains(r.Evidence.Info[0], "600 warm-up iterations and 2000 draws") {
		t.Errorf("info %q, want it to begin %q", r.Evidence.Info, why)
	}
	if len(r.Evidence.Warnings) != 0 {
		t.Errorf("warnings after the longer run: %q", r.Evidence.Warnings)
	}
	if n := calls.Load(); n != r.GradCalls+r.LogDensityCalls || r.LogDensityCalls <= r.Evidence.NCall {
		t.Errorf("%d calls; result: %d gradient + %d log-density (last evidence %d)", n, r.GradCalls, r.LogDensityCalls, r.Evidence.NCall)
	}
}
