package gbs

import (
	"fmt"

	"github.com/gbs-evidence/gbs/internal/onoff"
)

// Method selects the evidence estimator.
type Method int

const (
	// Bridge is optimal bridge sampling between p and a proposal fitted on
	// the other half of the samples (Gaussianized bridge sampling, GBS,
	// when the proposal is the default flow).
	Bridge Method = iota
	// IS is importance sampling with a proposal fitted on all samples
	// (GIS with the default flow).
	IS
	// HM is the reciprocal importance sampling (harmonic mean) estimator
	// with a proposal fitted on half of the samples (GHM).
	HM
	// Warp3 is warp-III bridge sampling (Meng & Schilling 2002): a Gaussian
	// proposal and the target symmetrized about the sample mean. It ignores
	// Settings.Proposal and is the classical baseline.
	Warp3
)

var methodNames = [...]string{Bridge: "bridge", IS: "is", HM: "hm", Warp3: "warp3"}

func (m Method) String() string {
	if m < 0 || int(m) >= len(methodNames) {
		return fmt.Sprintf("Method(%d)", int(m))
	}
	return methodNames[m]
}

// ParseMethod returns the method named s ("bridge", "is", "hm" or "warp3").
func ParseMethod(s string) (Method, error) {
	for i, n := range methodNames {
		if n == s {
			return Method(i), nil
		}
	}
	return 0, fmt.Errorf("gbs: unknown method %q (want bridge, is, hm or warp3)", s)
}

// Switch turns an optional stage of Evidence on or off; its zero value,
// Auto, is the stage's default (see each setting).
type Switch = onoff.Switch

// The values of a Switch.
const (
	Auto = onoff.Auto
	On   = onoff.On
	Off  = onoff.Off
)

// Settings configures Evidence. The zero value, and a nil *Settings, mean
// the defaults documented on each field.
type Settings struct {
	// Method is the estimator; default Bridge.
	Method Method

	// NQ is the number of proposal draws. Zero selects the adaptive rule
	// (bridge) or the number of samples (importance sampling). The rule
	// starts from the effective number of draws n_p/tau (at least 1000,
	// at most n_p), tau being that of log q/p along the chains, and grows
	// n_q while the proposal's term exceeds FErr of the squared error,
	// within FEva of the sampler's calls.
	NQ int

	// Seed seeds every random choice (proposal fit, proposal draws).
	Seed uint64

	// FErr is the target fraction of the squared relative error that the
	// proposal draws may contribute under the adaptive n_q rule; default 0.1.
	FErr float64
	// FEva caps the proposal's log-density evaluations at the fraction FEva
	// of all evaluations (sampling plus evidence); default 0.1.
	FEva float64

	// Proposal fits the proposal density. Nil means the default
	// (a Gaussianizing flow). Ignored by Warp3.
	Proposal ProposalFitter
	// Lower and Upper optionally bound the support of p coordinate by
	// coordinate (nil for none; entries may be ±Inf). The default proposal
	// then puts no mass outside the box, where p is zero.
	Lower, Upper []float64

	// CrossFit: Auto and On make Bridge also run the other way round (q
	// fitted on the second half of the draws, the estimator on the first)
	// and report the mean of the two ln Z, which has about half the
	// posterior-side variance for one more proposal fit and about as
	// many proposal draws again (each pass may spend half of FEva); when
	// the draws' log p is not given, the second pass also evaluates log p
	// at the first half. Off estimates once, as in Jia & Seljak (2019): q
	// fitted on the first half, the estimator on the second. The other
	// methods ignore it.
	CrossFit Switch

	// CoverageCheck: Auto and On run the coverage check (bridge only):
	// short independence Metropolis-Hastings chains from q, which look for
	// mass of p beyond the range of the posterior draws; see
	// Diagnostics.CoverageFrac. It costs coverageWideFrac = 10% of n_q in
	// log-density calls. Off skips it.
	CoverageCheck Switch

	// Anneal says when the bridge is annealed (bridge method only):
	// where the direct bridge's proposal and draws barely overlap, a path
	// of intermediate densities q^(1-β) p^β is crossed by particles from
	// both ends and ln Z comes from the bridge of their works
	// (anneal.go). Auto anneals only when the direct bridge's diagnostics
	// say it is unreliable, On always (with a proposal that has a latent
	// space), Off never; Result.AnnealSteps and AnnealCalls report its use
	// and cost.
	Anneal Switch

	// ModeCensus: Auto runs the mode census when Lower and Upper bound
	// every coordinate (a finite box), On the same but makes a box that
	// is not finite an error, Off skips it. The census climbs log p from
	// points spread over the box and from draws of a widened proposal,
	// looking for modes that no draw visited (check missed-mode,
	// Diagnostics.CensusModes). It costs a few thousand log-density
	// calls at small d (census.go states the budget), counted in
	// Result.NCall.
	ModeCensus Switch
	// Symmetry: Auto looks for relabelings of blocks of coordinates
	// (exchangeable mixture components) under which log p is invariant
	// while the draws hold one labeling, and corrects ln Z by averaging
	// the proposal over them (symmetry.go; a CheckSymmetry finding says
	// what was found). It tests SymmetryGroups first, then pairs of
	// coordinates and block layouts for d up to 256, at a cost of at
	// most 64 log-density calls plus 32 per generator of a group that
	// passes. On also symmetrizes when the draws already cover the
	// relabelings alike; Off never looks.
	Symmetry Switch
	// SymmetryGroups are candidate symmetries (see Blocks), for example
	// an adapter's variables of one length K; each is used only if log p
	// is invariant under it at the draws. Groups may share coordinates:
	// the finest verified ones are used, disjoint.
	SymmetryGroups []Blocks

	// Names optionally names the d coordinates in messages (nil: by
	// number, "coordinate k"); an adapter passes the model's variable
	// names, such as "mu" or "theta[3]".
	Names []string

	// BatchSize is the number of points per log-density call; default 4096.
	BatchSize int
	// Concurrent allows the log-density function to be called from
	// several goroutines at once (it must then be safe for that).
	Concurrent bool

	// Log receives progress messages; nil discards them.
	Log func(msg string)
}

const (
	defaultFErr      = 0.1
	defaultFEva      = 0.1
	defaultBatchSize = 4096
	// drawCostUnknown is the number of log-density evaluations assumed per
	// draw when the sampler's cost is not known: a typical cost of one
	// retained draw of NUTS or an ensemble sampler.
	drawCostUnknown = 10
)

func (s *Settings) withDefaults() (Settings, error) {
	var out Settings
	if s != nil {
		out = *s
	}
	if out.Method < Bridge || out.Method > Warp3 {
		return out, fmt.Errorf("gbs: unknown method %d", int(out.Method))
	}
	for _, sw := range []struct {
		s    Switch
		name string
	}{{out.CrossFit, "CrossFit"}, {out.CoverageCheck, "CoverageCheck"}, {out.Anneal, "Anneal"},
		{out.ModeCensus, "ModeCensus"}, {out.Symmetry, "Symmetry"}} {
		if err := sw.s.Check("gbs: Settings." + sw.name); err != nil {
			return out, err
		}
	}
	if out.NQ < 0 {
		return out, fmt.Errorf("gbs: NQ = %d is negative", out.NQ)
	}
	if out.FErr == 0 {
		out.FErr = defaultFErr
	}
	if out.FEva == 0 {
		out.FEva = defaultFEva
	}
	if !(out.FErr > 0 && out.FErr < 1) {
		return out, fmt.Errorf("gbs: FErr = %g is not in (0, 1)", out.FErr)
	}
	if !(out.FEva > 0 && out.FEva < 1) {
		return out, fmt.Errorf("gbs: FEva = %g is not in (0, 1)", out.FEva)
	}
	if out.BatchSize == 0 {
		out.BatchSize = defaultBatchSize
	}
	if out.BatchSize < 0 {
		return out, fmt.Errorf("gbs: BatchSize = %d is negative", out.BatchSize)
	}
	return out, nil
}
