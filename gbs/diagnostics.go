package gbs

import (
	"fmt"
	"math"
	"strings"
)

// Diagnostics are the numbers behind every check Evidence runs on its
// input and on its own estimate, whether or not the check found anything;
// what a check found is a Finding in Result.Findings. docs/diagnostics.md
// explains every field, threshold and reference.
//
// Fields that a run could not compute are NaN (or -1 for an index).
type Diagnostics struct {
	// The draws.

	// RHatMax is the largest rank-normalized split-R̂ (Vehtari et al.
	// 2021; the larger of the bulk and folded ones) over the coordinates
	// and log p, RHatWhere its coordinate (-1: log p). RHatCrit is the
	// value chance exceeds on converged chains of that length with
	// probability about 1e-3 for all quantities together; R̂ warns above
	// max(1.01, RHatCrit).
	RHatMax, RHatCrit float64
	RHatWhere         int
	// ESSBulkMin and ESSTailMin are the smallest bulk and tail effective
	// sample sizes over the coordinates and log p, at ESSBulkWhere and
	// ESSTailWhere (-1: log p).
	ESSBulkMin, ESSTailMin     float64
	ESSBulkWhere, ESSTailWhere int
	// OutlierChains are chains whose draws sit apart from the others';
	// StuckChains are chains that never or almost never move.
	OutlierChains, StuckChains []int
	// BurnInZ is the largest |z| of the first 10% of the chains against
	// their last 50% (Geweke 1992), at BurnInWhere (-1: log p).
	BurnInZ     float64
	BurnInWhere int
	// CopiedChains are groups of chains that are exact or near copies of
	// each other; StepCorrMax is the largest correlation of two chains'
	// steps (copies.go).
	CopiedChains [][]int
	StepCorrMax  float64
	// InterleavePeriod is the number of chains a single chain looks
	// interleaved from (0: none), InterleaveRho its autocorrelation at
	// that lag (interleave.go).
	InterleavePeriod int
	InterleaveRho    float64
	// SpotChecked is the number of draws at which the stored log p
	// (Samples.LogP) was evaluated again, SpotMaxDiff the largest
	// absolute difference found (0 when log p was not given).
	SpotChecked int
	SpotMaxDiff float64

	// The estimate.

	// ParetoKQ is the Pareto k̂ of p/q at the proposal draws, ParetoKP of
	// q/p at the posterior draws (Vehtari et al. 2024), the larger over
	// the cross-fitting passes; ParetoKThreshold is min(1 - 1/log10 S,
	// 0.7) for the smaller sample size S.
	ParetoKQ, ParetoKP, ParetoKThreshold float64
	// CrossFitZ is the difference of the two cross-fitting passes' ln Z
	// over its standard error. TiltZ is the largest |z| of the checks that
	// the draws come from the density passed (see consistency.go). ISZ and
	// HMZ compare the importance-sampling and reciprocal
	// importance-sampling estimates with the same proposal against the
	// bridge estimate (NaN where their Pareto k̂ makes them unreliable).
	CrossFitZ, TiltZ, ISZ, HMZ float64
	// SignCorr is the rank correlation of log p and log q at the
	// posterior draws (negative: a flipped sign; sign.go).
	SignCorr float64
	// OutsideShare is the share of proposal draws where log p = -inf;
	// PileUpWhere the coordinate whose draws end most abruptly at a side
	// without a bound (-1: none) and PileUpRatio that side's spread ratio
	// (pileup.go).
	OutsideShare float64
	PileUpWhere  int
	PileUpRatio  float64

	// CoverageFrac is the coverage check's statistic (bridge only; see
	// coverage.go and docs/diagnostics.md): the fraction of the
	// independence Metropolis-Hastings chains' draws, proposed by q and a
	// widened copy of q and targeting p, that lie beyond the range of the
	// posterior draws in the quantity CoverageWhere (-1: log p, -2: the
	// largest standardized deviation over the coordinates) on the
	// side CoverageSide (-1 below, +1 above; 0 when no quantity had
	// enough distinct points beyond, or its excess rested on the one
	// point the chains held longest), the worst against its limit over
	// quantities, sides and passes. For draws of p it is about 1/N_eff;
	// the check warns when it exceeds CoverageLimit, that quantity and
	// side's limit (about c/N_eff, more where the chains' steps beyond
	// come in clusters) with c set for a false-alarm rate of 10^-3 per
	// run. CoverageCalls is the log-density calls the check
	// spent (included in Result.NCall). NaN and 0 when the check did not
	// run.
	CoverageFrac, CoverageLimit float64
	CoverageWhere, CoverageSide int
	CoverageCalls               int
	// CoverageCovered is, at the quantity and side the coverage check
	// names, the mean of the bridge function q/(s_p p/Z + s_q q) over the
	// independence chains' steps beyond the draws' range, over its mean
	// at the posterior draws: near 1 where q covers the region the draws
	// missed (ln Z then accounts for it), near 0 where q reaches it only
	// thinly (ln Z is then low by about the missed mass). NaN when the
	// check found nothing beyond the range or the pass was annealed.
	CoverageCovered float64
	// CoverageKS is the coverage check's two-sample statistic: the
	// largest distance between the distribution functions of log p over
	// the posterior draws and over a pass's independence chains' states
	// (twosample.go), for the pass closest to its limit; CoverageKSLimit
	// is the distance chance exceeds with probability 10^-3 at their
	// effective sizes, CoverageKSAt the log p where the distance is
	// largest. NaN when the check did not run or an effective size was
	// below 100.
	CoverageKS, CoverageKSLimit, CoverageKSAt float64

	// CensusModes are the local maxima of log p that the mode census
	// (census.go; with a finite box, Settings.ModeCensus) found where
	// neither the draws nor the proposal reach, heaviest first (nil:
	// none, or the census did not run). CensusShortfall is
	// ln(1 + Σ m/Z) over their Laplace masses m, what ln Z is low by
	// (0: none found; NaN: the census did not run), and CensusCalls the
	// log-density calls it spent (included in Result.NCall).
	CensusModes     []MissedMode
	CensusShortfall float64
	CensusCalls     int

	// SymmetryCalls are the log-density calls the symmetry search spent
	// testing candidate relabelings (symmetry.go; included in
	// Result.NCall).
	SymmetryCalls int
}

// newDiagnostics returns diagnostics with every field "not computed".
func newDiagnostics() Diagnostics {
	nan := math.NaN()
	return Diagnostics{RHatMax: nan, RHatCrit: nan, RHatWhere: -1,
		ESSBulkMin: nan, ESSTailMin: nan, ESSBulkWhere: -1, ESSTailWhere: -1,
		BurnInZ: nan, BurnInWhere: -1, StepCorrMax: nan, InterleaveRho: nan,
		ParetoKQ: nan, ParetoKP: nan, ParetoKThreshold: nan,
		CrossFitZ: nan, TiltZ: nan, ISZ: nan, HMZ: nan,
		SignCorr: nan, OutsideShare: nan, PileUpWhere: -1, PileUpRatio: nan,
		CoverageFrac: nan, CoverageLimit: nan, CoverageWhere: -1,
		CoverageCovered: nan, CoverageKS: nan, CoverageKSLimit: nan, CoverageKSAt: nan,
		CensusShortfall: nan}
}

// essMin is the effective sample size below which the error bar, which
// rests on an autocorrelation time estimated from the chains, is itself
// too uncertain to trust (Vehtari et al. 2021 ask for 100 per chain for
// R̂; 100 in all is the floor for any error estimate).
const essMin = 100

// rhatMin is the R̂ above which chains count as unmixed when chance does
// not explain it (Vehtari et al. 2021).
const rhatMin = 1.01

// passData is what one estimation pass leaves for the diagnostics.
type passData struct {
	a, b    []float64 // log q - log p at the p-draws; log p - log q at the q-draws
	logp    []float64 // log p at the p-draws (nil when not kept)
	signA   []float64 // log q - log p at the p-draws of logp, for the sign check (a, unless a holds annealed works)
	logZ    float64
	logZErr float64
	nchains int
	iid     bool
}

// causes lists the usual reasons for draws and log density that disagree.
const causesMismatch = "likely causes: a log density that is not the one the draws come from (another function, " +
	"a missing or different prior, a log likelihood alone, a temperature, a parameter transform without its " +
	"Jacobian), unconverged chains, or modes the chains never visited"

// quantityName names quantity k in messages: coordinate k (names[k]
// when given) or log p (k = -1).
func quantityName(names []string, k int) string {
	switch {
	case k == coverageExtreme:
		return "the largest standardized deviation max_k |x_k - median_k|/scale_k"
	case k < 0:
		return "log p"
	case k < len(names):
		return names[k]
	}
	return fmt.Sprintf("coordinate %d", k)
}

// diagnose runs the checks, each wired in its own file, in the order in
// which later ones read earlier ones: the statistics of the overlap
// before the warnings that compare them, the specific mistakes (copies,
// interleaving, sign, pile-up) before the generic consistency warning
// that names them as its cause (explain).
func (e *estimation) diagnose() {
	for _, check := range []func(){
		e.diagnoseLayout,      // layout.go
		e.diagnoseWalkers,     // autocorr.go
		e.diagnoseStuck,       // stuck.go
		e.diagnoseCopies,      // copies.go
		e.diagnoseInterleave,  // interleave.go
		e.diagnoseConvergence, // convergence.go
		e.measurePareto,       // pareto.go
		e.measureConsistency,  // consistency.go
		e.diagnosePareto,      // pareto.go
		e.diagnoseSign,        // sign.go
		e.diagnosePileUp,      // pileup.go
		e.diagnoseConsistency, // consistency.go
		e.diagnoseCoverage,    // coverage.go, twosample.go
		e.diagnoseCensus,      // census.go
	} {
		check()
	}
	e.res.Diagnostics = e.diag
}

// chainLogP returns log p at every draw, chain after chain, when known
// (given, or evaluated by both bridge passes); nil otherwise.
func (e *estimation) chainLogP() []float64 {
	if e.s.LogP != nil {
		var lp []float64
		for _, c := range e.s.LogP {
			lp = append(lp, c...)
		}
		return lp
	}
	return e.drawsLogP // set by the cross-fitted bridge, in chain order
}

func nanMax(a, b float64) float64 {
	switch {
	case math.IsNaN(a):
		return b
	case math.IsNaN(b):
		return a
	}
	return math.Max(a, b)
}

// nanMaxAbs returns whichever of a and b is larger in absolute value,
// ignoring NaN.
func nanMaxAbs(a, b float64) float64 {
	switch {
	case math.IsNaN(a):
		return b
	case math.IsNaN(b):
		return a
	case math.Abs(b) > math.Abs(a):
		return b
	}
	return a
}

// String summarizes the diagnostics on one line; quantities not computed
// are left out.
func (d Diagnostics) String() string { return d.Summary(nil) }

// Summary is String with coordinates named by names (nil: by number).
func (d Diagnostics) Summary(names []string) string {
	var parts []string
	add := func(format string, v float64, args ...any) {
		if !math.IsNaN(v) && !math.IsInf(v, 0) {
			parts = append(parts, fmt.Sprintf(format, append([]any{v}, args...)...))
		}
	}
	add("R-hat %.3f (%s)", d.RHatMax, quantityName(names, d.RHatWhere))
	add("ESS bulk %.0f", d.ESSBulkMin)
	add("tail %.0f", d.ESSTailMin)
	add("burn-in |z| %.1f", d.BurnInZ)
	add("Pareto k-hat p/q %.2f", d.ParetoKQ)
	add("q/p %.2f", d.ParetoKP)
	add("cross-fit z %.1f", d.CrossFitZ)
	add("consistency |z| %.1f", d.TiltZ)
	if d.CoverageLimit > 0 {
		parts = append(parts, fmt.Sprintf("coverage %.2g of limit", d.CoverageFrac/d.CoverageLimit))
	}
	if d.SpotChecked > 0 {
		parts = append(parts, fmt.Sprintf("log p spot-checked at %d draws (max diff %.2g)", d.SpotChecked, d.SpotMaxDiff))
	}
	return strings.Join(parts, ", ")
}

// explain records the first specific mistake found, which the generic
// consistency warning then names instead of its list of usual causes.
func (e *estimation) explain(cause string) {
	if e.cause == "" {
		e.cause = cause
	}
}
