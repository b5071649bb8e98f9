package gbs

import (
	"fmt"
	"math"
)

// EvaluationPlan is the number of log-density evaluations an Evidence
// call will make, known before it starts: a progress bar's total, and the
// accounting that callers in other languages read through the C ABI
// (gbs_evidence_plan) instead of copying it.
type EvaluationPlan struct {
	// Planned is the number of evaluations when Settings.NQ is set, and
	// otherwise when the adaptive rule keeps its first n_q, for draws
	// whose autocorrelation time is 1 (longer times start from fewer
	// proposal draws).
	Planned int64
	// MaxExtra is the most the adaptive n_q rule can add to Planned (0
	// when NQ is set): it spends at most the share FEva of all
	// evaluations, counting the sampler's Samples.NCall (10 per draw when
	// unknown), on the proposal.
	MaxExtra int64
}

// PlanEvaluations returns the evaluation plan of Evidence for chains
// chains of draws draws each in dimension dim, with log p at the draws
// given (haveLogP) or not, ncall evaluations spent by the sampler (0:
// unknown), and the settings set (nil: the defaults). It follows
// Evidence's accounting: the stored log p's spot-check, log p at the
// draws each bridge pass estimates with (unless given), n_q proposal
// draws per pass, warp-III's second evaluation at the reflection of
// every point, and the bridge's coverage check (a tenth of each pass's
// proposal draws, when the proposal is the default flow).
func PlanEvaluations(chains, draws, dim int, haveLogP bool, ncall int64, set *Settings) (EvaluationPlan, error) {
	cfg, err := set.withDefaults()
	if err != nil {
		return EvaluationPlan{}, err
	}
	switch {
	case chains < 1 || draws < 1 || dim < 1:
		return EvaluationPlan{}, fmt.Errorf("gbs: %d chains × %d draws in dimension %d: want at least 1 of each", chains, draws, dim)
	case ncall < 0:
		return EvaluationPlan{}, fmt.Errorf("gbs: ncall = %d is negative", ncall)
	}
	n := chains * draws
	var plan EvaluationPlan
	if haveLogP {
		plan.Planned += int64(min(spotCheckDraws, n)) // spotCheck
	}
	// The halves of splitHalves: by chains when there are several.
	fit, use := (chains/2)*draws, (chains-chains/2)*draws
	if chains == 1 {
		fit, use = draws/2, draws-draws/2
	}
	ncallP := float64(ncall)
	if ncallP == 0 {
		ncallP = drawCostUnknown * float64(n)
	}
	// pass adds one bridge pass estimating with np draws, nq proposal
	// draws (0: adaptive) and the share costShare of the FEva budget.
	pass := func(np, nq int, warp bool, costShare float64) {
		perPoint := int64(1)
		if warp {
			perPoint = 2 // target.logp evaluates p at x and at its reflection
		}
		if !haveLogP {
			plan.Planned += int64(np)
		}
		if warp {
			plan.Planned += int64(np)
		}
		// The coverage check's widened draws (coverage.go).
		coverage := func(nq int) int64 {
			if warp || cfg.CoverageCheck == Off || cfg.Proposal != nil {
				return 0
			}
			return int64(coverageWideDraws(nq))
		}
		if nq > 0 {
			plan.Planned += perPoint*int64(nq) + coverage(nq)
			return
		}
		nq0 := startNQ(np, 1)
		plan.Planned += perPoint*int64(nq0) + coverage(nq0)
		byCost := costShare * cfg.FEva / (1 - cfg.FEva) * ncallP
		most := math.Min(byCost, float64(maxProposalValues/dim))
		if extra := int64(most) - int64(nq0); extra > 0 {
			plan.MaxExtra += perPoint*extra + coverage(int(most)) - coverage(nq0)
		}
	}
	switch cfg.Method {
	case IS:
		nq := cfg.NQ
		if nq == 0 {
			nq = n
		}
		plan.Planned += int64(nq)
	case HM:
		if !haveLogP {
			plan.Planned += int64(use)
		}
	case Warp3:
		pass(use, cfg.NQ, true, 1)
	case Bridge:
		if cfg.CrossFit == Off {
			pass(use, cfg.NQ, false, 1)
			break
		}
		if cfg.NQ == 1 {
			return EvaluationPlan{}, fmt.Errorf("gbs: NQ = 1 cannot be shared by the two cross-fitting passes; use NQ >= 2 or CrossFit = Off")
		}
		pass(use, cfg.NQ/2, false, 0.5)
		pass(fit, cfg.NQ-cfg.NQ/2, false, 0.5)
	}
	return plan, nil
}
