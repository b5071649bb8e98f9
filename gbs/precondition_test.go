package gbs_test

import (
	"context"
	"math"
	"strings"
	"testing"

	"github.com/gbs-evidence/gbs/gbs"
	"github.com/gbs-evidence/gbs/nuts"
	"github.com/gbs-evidence/gbs/problems"
)

// TestPipelinePreconditioned runs the pipeline with NUTS in the flow's
// base space on a 6-d funnel in its box, per point and batched: ln Z
// within 4 error bars of the exact value, draws mapped back into the box
// with their log p, and the pilot's gradient calls counted.
func TestPipelinePreconditioned(t *testing.T) {
	p := problems.FunnelN(6)
	f := func(g, x []float64) (float64, error) { return p.LogProbGrad(g, x), nil }
	bf := func(lp, g, x []float64) error {
		for i := range lp {
			lp[i] = p.LogProbGrad(g[i*p.Dim:(i+1)*p.Dim], x[i*p.Dim:(i+1)*p.Dim])
		}
		return nil
	}
	set := &gbs.PipelineSettings{
		Sampler:      nuts.Settings{Chains: 4, Warmup: 300, Draws: 1000, Seed: 11, Lower: p.Lower, Upper: p.Upper},
		Precondition: gbs.PreconditionSettings{Mode: gbs.PreconditionOn},
	}
	for _, batched := range []bool{false, true} {
		var r *gbs.PipelineResult
		var err error
		if batched {
			r, err = gbs.PipelineBatch(context.Background(), bf, p.Dim, set)
		} else {
			r, err = gbs.Pipeline(context.Background(), f, p.Dim, set)
		}
		if err != nil {
			t.Fatal(err)
		}
		ev := r.Evidence
		z := (ev.LogZ - p.LogZ) / ev.LogZErr
		t.Logf("batched %v: ln Z %.4f ± %.4f (exact %.4f, z %.2f), %d gradient calls, warnings %q", batched, ev.LogZ, ev.LogZErr, p.LogZ, z, r.GradCalls, ev.Warnings)
		if !(math.Abs(z) < 4 && ev.LogZErr < 0.05) {
			t.Errorf("batched %v: ln Z %.4f ± %.4f, exact %.4f", batched, ev.LogZ, ev.LogZErr, p.LogZ)
		}
		var chainCalls int64
		for c, dr := range r.Sampling.Draws {
			chainCalls += r.Sampling.Chains[c].GradCalls
			if len(dr) != 1000*p.Dim {
				t.Fatalf("chain %d: %d values, want %d draws of %d", c, len(dr), 1000, p.Dim)
			}
			for i := 0; i < 1000; i += 97 {
				x := dr[i*p.Dim : (i+1)*p.Dim]
				for j, v := range x {
					if !(v > p.Lower[j] && v < p.Upper[j]) {
						t.Fatalf("chain %d draw %d: x_%d = %v outside the box", c, i, j, v)
					}
				}
				if want, got := p.LogProb(x), r.Sampling.LogP[c][i]; math.Abs(got-want) > 1e-8*(1+math.Abs(want)) {
					t.Errorf("chain %d draw %d: log p %v, want %v", c, i, got, want)
				}
			}
		}
		if chainCalls != r.Sampling.GradCalls || r.GradCalls < r.Sampling.GradCalls {
			t.Errorf("gradient calls: chains %d, sampling %d, pipeline %d", chainCalls, r.Sampling.GradCalls, r.GradCalls)
		}
	}
}

// TestPreconditionSettingsErrors checks the settings' errors.
func TestPreconditionSettingsErrors(t *testing.T) {
	p := problems.FunnelN(2)
	f := func(g, x []float64) (float64, error) { return p.LogProbGrad(g, x), nil }
	for _, tc := range []struct {
		set  gbs.PipelineSettings
		want string
	}{
		{gbs.PipelineSettings{Precondition: gbs.PreconditionSettings{Mode: 7}}, "unknown precondition mode"},
		{gbs.PipelineSettings{Precondition: gbs.PreconditionSettings{Mode: gbs.PreconditionOn, PilotDraws: -1}}, "PilotDraws"},
		{gbs.PipelineSettings{Precondition: gbs.PreconditionSettings{Mode: gbs.PreconditionOn, Warmup: -2}}, "Warmup"},
		{gbs.PipelineSettings{Precondition: gbs.PreconditionSettings{Mode: gbs.PreconditionOn}, Global: gbs.GlobalSettings{Mode: gbs.GlobalOn}}, "cannot be combined"},
	} {
		tc.set.Sampler = nuts.Settings{Chains: 2, Warmup: 10, Draws: 10, Lower: p.Lower, Upper: p.Upper}
		_, err := gbs.Pipeline(context.Background(), f, p.Dim, &tc.set)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("error %v, want one naming %q", err, tc.want)
		}
	}
}
