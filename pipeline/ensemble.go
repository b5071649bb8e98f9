package pipeline

import (
	"context"
	"fmt"

	"github.com/gbs-evidence/gbs/ensemble"
	"github.com/gbs-evidence/gbs/gbs"
)

// EnsembleSettings configures Ensemble.
type EnsembleSettings struct {
	// Sampler configures the ensemble sampler. Its Seed is used when
	// Evidence.Seed is zero.
	Sampler ensemble.Settings
	// Evidence configures the evidence stage. Unlike NUTS's, the sampler's
	// box only places the starting walkers, so give the support's bounds
	// here.
	Evidence gbs.Settings
}

// EnsembleResult is the outcome of ensemble sampling followed by
// evidence.
type EnsembleResult struct {
	Evidence *gbs.Result
	Sampling *ensemble.Result
	// SamplerCalls and LogDensityCalls count the log-density evaluations of
	// the two stages.
	SamplerCalls, LogDensityCalls int64
}

// Ensemble draws from p with the affine-invariant ensemble sampler and
// estimates ln Z: the recipe when no gradient is available. Each walker
// is a chain for the sample split and for the autocorrelation time.
func Ensemble(ctx context.Context, f gbs.LogDensityFunc, d int, s *EnsembleSettings) (*EnsembleResult, error) {
	var cfg EnsembleSettings
	if s != nil {
		cfg = *s
	}
	draws, err := ensemble.Sample(ctx, ensemble.LogDensityFunc(f), d, &cfg.Sampler)
	if err != nil {
		return nil, fmt.Errorf("pipeline: sampling: %w", err)
	}
	// Not marked as an ensemble's walkers: the sampler applied emcee's
	// 50 τ rule itself, on the walkers before thinning (Sampling.Warnings).
	samples := &gbs.Samples{Dim: d, Chains: draws.Chain, LogP: draws.LogP, NCall: draws.NCall}
	// The ensemble's box only shapes its start, so it says nothing of the
	// support: only the seed carries over.
	ev := evidenceSettings(cfg.Evidence, cfg.Sampler.Seed, nil, nil)
	res, err := gbs.Evidence(ctx, f, samples, &ev)
	if err != nil {
		return nil, err
	}
	return &EnsembleResult{Evidence: res, Sampling: draws, SamplerCalls: draws.NCall, LogDensityCalls: res.NCall}, nil
}
