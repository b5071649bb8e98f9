package gbs

import "github.com/gbs-evidence/gbs/flow"

// FlowProposal returns a ProposalFitter that fits a Gaussianizing flow with
// the given settings (nil for the defaults). The fitter's seed replaces
// s.Seed, so that one Evidence seed controls every random choice.
func FlowProposal(s *flow.Settings) ProposalFitter {
	var base flow.Settings
	if s != nil {
		base = *s
	}
	return func(x []float64, d int, weights []float64, seed uint64) (Proposal, []string, error) {
		set := base
		set.Seed = seed
		f, err := flow.Fit(x, d, weights, &set)
		if err != nil {
			return nil, nil, err
		}
		return f, f.Warnings(), nil
	}
}
