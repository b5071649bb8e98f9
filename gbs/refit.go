package gbs

import (
	"context"
	"fmt"
)

// FittedProposal returns the proposal q that Evidence fits for the
// samples s and the settings set (nil: the defaults): for Bridge and HM
// the one fitted on the first half of the draws (with cross-fitting, the
// first pass's), for Warp3 the Gaussian of that half, for IS the one
// fitted on all draws. The fit is deterministic for a seed, so q is the
// very proposal the estimate used; callers draw from it to compare q
// with the posterior draws (Python's Result.proposal_draws, through
// gbs_evidence_proposal_sample). It evaluates no log density.
func FittedProposal(s *Samples, set *Settings) (Proposal, error) {
	if s == nil {
		return nil, fmt.Errorf("gbs: nil samples")
	}
	noDensity := func(dst, x []float64) error {
		return fmt.Errorf("gbs: FittedProposal evaluates no log density")
	}
	e, err := newEstimation(context.Background(), noDensity, s, set)
	if err != nil {
		return nil, err
	}
	if e.cfg.Method == IS {
		x, _ := allDraws(s)
		return e.fitProposal(x, streamFit)
	}
	h, err := splitHalves(s)
	if err != nil {
		return nil, err
	}
	if e.cfg.Method == Warp3 {
		g, _, err := FitGaussian(h.fit, s.Dim, nil, 0)
		if err != nil {
			return nil, fmt.Errorf("gbs: fitting the warp-III Gaussian: %w", err)
		}
		return g, nil
	}
	return e.fitProposal(h.fit, streamFit)
}
