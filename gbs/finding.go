package gbs

import (
	"fmt"
	"math"
	"slices"
)

// Check identifies one of the library's checks. Its value is the stable
// code C callers see (GBS_CHECK_* in include/gbs.h) and its String the
// stable ID that Python and the documentation use; neither ever changes
// meaning, and new checks take new values.
type Check int32

// The checks, in the order of the documentation's table. Values are
// stable: never renumber, only append.
const (
	// About the draws.
	CheckLayout            Check = 1  // chain and draw axes exchanged
	CheckEnsembleWalkers   Check = 2  // an ensemble's walkers shorter than 50 τ
	CheckStuckChains       Check = 3  // chains that never move
	CheckCopiedChains      Check = 4  // chains that are copies of each other
	CheckInterleavedChains Check = 5  // several chains read as one
	CheckRHat              Check = 6  // chains that have not mixed
	CheckBurnIn            Check = 7  // burn-in left in
	CheckESS               Check = 8  // too few effective draws
	CheckShortChains       Check = 9  // chains too short for their τ
	CheckDivergences       Check = 10 // NUTS's divergent transitions
	CheckLowChains         Check = 11 // chains stuck at low log p
	CheckTreeDepth         Check = 12 // NUTS transitions stopped at the maximum tree depth
	CheckRerun             Check = 13 // the pipeline ran the sampler again
	// About the estimate.
	CheckParetoK     Check = 14 // heavy-tailed importance ratios (IS, HM)
	CheckOverlap     Check = 15 // proposal and draws barely overlap (bridge)
	CheckConsistency Check = 16 // the estimate is not self-consistent
	CheckSign        Check = 17 // log p falls where the draws are dense
	CheckPileUp      Check = 18 // draws piled against a side without a bound
	CheckCoverage    Check = 19 // mass of p beyond the draws' range
	CheckCoverageKS  Check = 20 // parts of p held in the wrong proportion
	CheckAnneal      Check = 21 // the annealed bridge ran
	CheckNQCapped    Check = 22 // n_q capped by memory
	CheckProposalFit Check = 23 // the proposal's fit
	CheckStanRewrite Check = 24 // a Stan program's ~ statements rewritten
	// About the draws, from the ensemble sampler's own run.
	CheckEnsembleSampler Check = 25 // the ensemble sampler's warnings
	// About the estimate.
	CheckSymmetry   Check = 26 // label switching found and corrected
	CheckMissedMode Check = 27 // a mode of p no draw visited
)

// Kind says what a finding is about, and so whether it is a warning.
type Kind int32

const (
	// KindDraws is a warning about the draws (the chains' convergence,
	// layout, copies, the sampler's divergences), which no estimator can
	// repair.
	KindDraws Kind = 1
	// KindEstimate is a warning about the estimate (the proposal, the
	// overlap of q and p, draws and log density that disagree).
	KindEstimate Kind = 2
	// KindInfo is a fact worth knowing that is not a warning: designed
	// behaviour that worked, or a limit the error bar accounts for.
	KindInfo Kind = 3
)

func (k Kind) String() string {
	switch k {
	case KindDraws:
		return "draws"
	case KindEstimate:
		return "estimate"
	case KindInfo:
		return "info"
	}
	return fmt.Sprintf("Kind(%d)", int(k))
}

// WhereNone is Finding.Where for a finding about no single quantity.
const WhereNone = -2

// Finding is the outcome of one check that has something to say.
type Finding struct {
	Check Check
	Kind  Kind
	// Message says what is wrong, its likely causes and what to do, in
	// words; code branches on Check and Kind, never on Message.
	Message string
	// Where is the quantity the finding is about: a coordinate
	// (0..d-1), -1 for log p, or WhereNone.
	Where int
	// Value is the check's statistic and Limit the threshold it was
	// compared with (NaN where the check has none).
	Value, Limit float64
}

// IsWarning reports whether f is a warning rather than information.
func (f Finding) IsWarning() bool { return f.Kind == KindDraws || f.Kind == KindEstimate }

// CheckInfo describes a check for the documentation and for bindings.
type CheckInfo struct {
	// ID is the stable name (Check.String).
	ID string
	// Kind is what the check's warnings are about; some checks also
	// report information (KindInfo) when what they found is harmless.
	Kind Kind
	// Title names what the check found, as a phrase ("the chains have
	// not mixed").
	Title string
	// Meaning says what a finding means for ln Z, Action what to do.
	Meaning, Action string
}

// checkTable holds every check's description, indexed by its code.
var checkTable = map[Check]CheckInfo{
	CheckLayout: {"layout", KindDraws, "the samples' chain and draw axes look exchanged",
		"neighbouring chains are correlated and there are more chains than draws per chain: the autocorrelation runs across chains, where the estimator cannot see it, and the error bar is far too small",
		"pass the draws as (chains, draws, d); emcee's get_chain() is (draws, walkers, d): pass chain_axis=1 or the sampler itself"},
	CheckEnsembleWalkers: {"ensemble-walkers", KindDraws, "the ensemble's walkers are too short",
		"walkers shorter than 50 autocorrelation times of a coordinate (emcee's rule) give a τ, and so an error bar, that is likely too small",
		"run the ensemble sampler longer"},
	CheckStuckChains: {"stuck-chains", KindDraws, "chains never or almost never move",
		"a stuck chain repeats one point, which counts as many draws and biases ln Z",
		"check the sampler's step size, starting points and bounds, or drop those chains"},
	CheckCopiedChains: {"copied-chains", KindDraws, "chains are copies of each other",
		"copied chains count the same draws twice, and the error bar is too small",
		"pass each chain once; check how the chains were gathered"},
	CheckInterleavedChains: {"interleaved-chains", KindDraws, "a chain looks like several chains interleaved",
		"interleaved chains read as one hide their autocorrelation, and the error bar is too small",
		"pass the chains separately, as (chains, draws, d)"},
	CheckRHat: {"rhat", KindDraws, "the chains have not mixed",
		"R-hat beyond what chance gives: the draws misrepresent p (modes weighted as the chains started, burn-in, chains too short), and ln Z may be off by more than its error bar",
		"run longer chains, start them from dispersed points, or use a sampler that moves between modes"},
	CheckBurnIn: {"burn-in", KindDraws, "the chains still carry burn-in",
		"the first 10 % of the chains differ from their last half: early draws come from the starting points, not from p, and bias ln Z",
		"discard more draws as warm-up"},
	CheckESS: {"ess", KindDraws, "the effective sample size is small",
		"below 100 effective draws the autocorrelation time, and so the error bar, is itself uncertain by tens of per cent",
		"run longer chains or thin less"},
	CheckShortChains: {"short-chains", KindDraws, "the chains are too short for a reliable autocorrelation time",
		"chains shorter than 50 τ of the estimator's summands give a τ, and so an error bar, that is likely too small",
		"run chains of at least 50 τ after burn-in"},
	CheckDivergences: {"divergences", KindDraws, "NUTS reported divergent transitions",
		"the sampler cannot follow the posterior's curvature there, so the draws, and ln Z, may be biased (a few are information, beyond 1 % a warning)",
		"raise the acceptance target or reparameterize (non-centered)"},
	CheckLowChains: {"low-chains", KindDraws, "chains sit at much lower log p than the others",
		"chains stuck or not yet in the bulk of the posterior bias ln Z",
		"check the starting points, the bounds and the warm-up length"},
	CheckTreeDepth: {"tree-depth", KindDraws, "NUTS transitions stopped at the maximum tree depth",
		"the chains may not have explored the posterior",
		"raise the maximum tree depth or reparameterize"},
	CheckRerun: {"rerun", KindInfo, "the pipeline ran the sampler again",
		"the first run's draws showed a problem (divergences, unmixed chains, missed mass) that a higher acceptance target or longer chains repair; ln Z comes from the last run",
		"nothing: the repair is designed behaviour; its reason is in the message"},
	CheckParetoK: {"pareto-k", KindEstimate, "the importance ratios are heavy-tailed",
		"Pareto k-hat above its threshold: importance sampling's (or the harmonic mean's) ln Z and error bar are unreliable",
		"use the default bridge estimator"},
	CheckOverlap: {"overlap", KindEstimate, "the proposal and the draws barely overlap",
		"Pareto k-hat above 1 in both directions, and the passes or consistency checks disagree: ln Z is less reliable than its error bar says",
		"more draws per dimension, fewer parameters, or a reparameterization closer to Gaussian"},
	CheckConsistency: {"consistency", KindEstimate, "the estimate is not self-consistent",
		"the cross-fitting passes, the tilt test or the estimators that share the proposal disagree beyond chance: the draws and the log density do not match",
		"check the log density against the sampler's (prior, Jacobian, temperature), then the chains' convergence"},
	CheckSign: {"sign", KindEstimate, "log p falls where the draws are dense",
		"the log density's sign looks flipped (a negative log likelihood, a loss)",
		"pass log p, not -log p"},
	CheckPileUp: {"pile-up", KindInfo, "draws are piled against a side without a bound",
		"the support probably ends there; ln Z stays right, at some cost in efficiency",
		"give the bound (bounds=) so the proposal puts no mass beyond it"},
	CheckCoverage: {"coverage", KindEstimate, "the chains appear to miss part of p",
		"independence Metropolis-Hastings chains from the proposal find mass of p beyond the draws' range that ln Z does not account for (information when it does)",
		"run the sampler longer or from dispersed starts, reparameterize, or check the draws' bounds"},
	CheckCoverageKS: {"coverage-ks", KindEstimate, "the chains appear to hold part of p in the wrong proportion",
		"log p over independence chains from the proposal differs from log p over the draws beyond chance: ln Z is off by about the mass the chains over- or under-visited",
		"check the log density against the sampler's, then run longer or from dispersed starts"},
	CheckAnneal: {"anneal", KindInfo, "the annealed bridge ran",
		"the direct bridge's overlap was poor, so ln Z comes from a path of densities between q and p, at the log-density calls the message gives",
		"nothing; more draws per dimension make it unnecessary"},
	CheckNQCapped: {"nq-capped", KindInfo, "n_q was capped by the memory available",
		"the error bar includes the proposal's larger share",
		"nothing, or free memory for a smaller error bar"},
	CheckProposalFit: {"proposal-fit", KindEstimate, "the proposal's fit reported a problem",
		"the flow could not be fitted as asked (a layer dropped, a bound violated); ln Z is still unbiased but may be less precise",
		"see the message"},
	CheckEnsembleSampler: {"ensemble-sampler", KindDraws, "the ensemble sampler reported a problem with its run",
		"a low acceptance fraction, stuck walkers or a run shorter than 50 autocorrelation times: the draws may not represent p",
		"run the sampler longer, with more walkers, or from better starting points"},
	CheckSymmetry: {"symmetry", KindInfo, "log p is invariant under relabeling blocks of coordinates that the draws hold in one labeling",
		"the posterior has copies that differ only in labels (exchangeable mixture components) and the chains stayed in one: ln Z was computed with the proposal averaged over the relabelings and the draws relabeled at random, which is exact whether the copies are apart or overlap (without it ln Z would be low by up to ln K!)",
		"nothing; the message names the relabeling found (symmetry=\"off\" turns the correction off)"},
	CheckMissedMode: {"missed-mode", KindEstimate, "log p has a mode that no draw visited",
		"the mode census found a local maximum of log p in the box where neither the draws nor the proposal reach: ln Z is low by about ln(1 + m/Z) for its mass m (information when that is within the error bar)",
		"run chains from the mode the message names or from starts dispersed over the box (the pipeline does), or exclude it by the bounds if it is not part of the model"},
	CheckStanRewrite: {"stan-rewrite", KindInfo, "the Stan program's ~ statements were rewritten",
		"~ drops the constants ln Z needs; the program was rebuilt with target += statements, checked to differ from the original by one constant at the draws",
		"nothing; write target += in the model to skip the rebuild"},
}

// String returns the check's stable ID.
func (c Check) String() string {
	if info, ok := checkTable[c]; ok {
		return info.ID
	}
	return fmt.Sprintf("Check(%d)", int(c))
}

// Info returns the check's description; ok is false for an unknown code.
func (c Check) Info() (info CheckInfo, ok bool) {
	info, ok = checkTable[c]
	return info, ok
}

// AllChecks returns every check, in increasing code.
func AllChecks() []Check {
	cs := make([]Check, 0, len(checkTable))
	for c := range checkTable {
		cs = append(cs, c)
	}
	slices.Sort(cs)
	return cs
}

// ParseCheck returns the check whose ID is id.
func ParseCheck(id string) (Check, error) {
	for c, info := range checkTable {
		if info.ID == id {
			return c, nil
		}
	}
	return 0, fmt.Errorf("gbs: unknown check %q", id)
}

// finding builds a finding of check c; kind 0 means the check's own.
func finding(c Check, kind Kind, where int, value, limit float64, format string, args ...any) Finding {
	if kind == 0 {
		kind = checkTable[c].Kind
	}
	return Finding{Check: c, Kind: kind, Message: fmt.Sprintf(format, args...), Where: where, Value: value, Limit: limit}
}

// note builds an information finding about no single quantity and with
// no statistic.
func note(c Check, format string, args ...any) Finding {
	return finding(c, KindInfo, WhereNone, math.NaN(), math.NaN(), format, args...)
}
