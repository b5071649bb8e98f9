package gbs

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/gbs-evidence/gbs/ensemble"
	"github.com/gbs-evidence/gbs/nuts"
)

// PipelineSettings configures Pipeline; the zero value means the defaults
// of each stage.
type PipelineSettings struct {
	// Sampler configures NUTS. Its Seed is used when Evidence.Seed is zero.
	// Its TargetAccept defaults to PipelineTargetAccept (0.9) here, not
	// NUTS's 0.8, and a box given by Lower and Upper is sampled in
	// unconstrained coordinates unless Box says otherwise.
	Sampler nuts.Settings
	// RetryTargetAccept is the acceptance target of a second NUTS run
	// that Pipeline makes, from scratch and with the same seed, when the
	// kept draws of the first run contain divergent transitions and
	// Sampler.TargetAccept is lower: the evidence inherits any bias of the
	// draws, and divergences mark regions (such as the neck of a funnel)
	// that the chains under-sample. The same second run is made when
	// the first did not diverge but the evidence's coverage check found
	// mass of p beyond the draws' range that ln Z does not account for
	// (chains that never reached the neck). The second run's draws
	// replace the first's; both runs' gradient calls are counted. Zero means
	// PipelineRetryTargetAccept (0.99); a negative value disables the
	// retry.
	RetryTargetAccept float64
	// RetryDrawsFactor multiplies the warm-up and the draws per chain of
	// a further NUTS run that Pipeline makes, from scratch and with the
	// same seed, when the kept draws have not mixed by the rule of the
	// evidence's own convergence warnings (an R-hat beyond what chance
	// gives for chains of their length, or a bulk ESS below 100), when
	// more than PipelineMaxDivergentFraction of the kept transitions
	// diverged, or when the evidence warns about the draws (chains too
	// short for the autocorrelation time of its summands): the funnel's
	// neck holds some chains for most of a run now and then, and longer
	// chains repair it where a warning could only report it. Up to
	// PipelineMaxLengthenings such runs are made, each RetryDrawsFactor
	// times longer than the one before; the last run's draws replace
	// the others, every run's gradient calls are counted, and Info says
	// why. Whatever the last run still shows is warned about. Zero means
	// PipelineRetryDrawsFactor (2); a negative value disables it.
	RetryDrawsFactor float64
	// Evidence configures the evidence stage. Its bounds default to the
	// sampler's.
	Evidence Settings
	// Global configures the flow as a global move of the sampler (see
	// GlobalSettings); on by default where each warm-up stage's draws
	// number at least GlobalMinPointsPerDim per dimension
	// (PipelineGlobalDefault). With global
	// moves and no Sampler.Init, the chains start at points drawn
	// uniformly in the central 90 % of the box when the box is finite.
	Global GlobalSettings
}

// PipelineTargetAccept is the NUTS acceptance target Pipeline uses when
// Sampler.TargetAccept is zero, and PipelineRetryTargetAccept the target
// of the second run after divergences (PipelineSettings.RetryTargetAccept).
//
// Measured at the paper's budget (8 chains, 500 + 2000 iterations; 8 to 12
// seeds on the funnel, 2 to 3 on the others): banana, Cauchy and ring run
// without divergences at 0.8 to 0.99, and their gradient calls per
// effective draw grow with the target (banana about 1.5, 1.7, 2.5 and 4.3
// thousand at 0.8, 0.9, 0.95 and 0.99); the funnel diverges at 0.8 to 0.95
// and under-samples its neck (x1 variance 0.68 to 0.96 instead of 1; ln Z
// off by up to -0.11, 3.5 error bars), which 0.99 reduces (ln Z error
// -0.01 on average over 12 seeds, never beyond 1.9 error bars; x1
// variance 0.82 to 0.99) for about twice the gradient calls of 0.95.
// Hence 0.9 first and 0.99 only where it is needed.
const (
	PipelineTargetAccept      = 0.9
	PipelineRetryTargetAccept = 0.99
)

// PipelineRetryDrawsFactor is the default PipelineSettings.RetryDrawsFactor.
// Over 64 funnel runs at seeds 920000-920063, 3 had chains that had not
// mixed by that rule (R-hat 1.088 and 1.084 with tail ESS below 20; a bulk
// ESS of 99) and warned, although ln Z was within 1.2σ; in the others
// the check costs a few milliseconds. At seeds 940000-940063 four runs
// were lengthened (three for divergences beyond 1 %, one for a bulk ESS
// of 88), all then quiet and within 1.4σ, and no run warned; the mean
// gradient calls over the 64 runs were 2.33 M (2.17 M at seeds 920000+
// with the unmixed rule alone).
const PipelineRetryDrawsFactor = 2

// PipelineResult is the outcome of sampling followed by evidence.
type PipelineResult struct {
	Evidence *Result
	// Sampling holds the NUTS draws and statistics of the run the
	// evidence used.
	Sampling *nuts.Result
	// TargetAccept is the acceptance target of that run; Retried reports
	// whether it is the second run at RetryTargetAccept, made because the
	// first diverged or missed mass that the coverage check found.
	TargetAccept float64
	Retried      bool
	// Lengthened reports whether the draws come from a longer run made
	// because the draws of a shorter one had not mixed, diverged often or
	// were warned about by the evidence (PipelineSettings.RetryDrawsFactor).
	Lengthened bool
	// GradCalls counts the sampler's log-density-and-gradient evaluations,
	// over every run (a retry, a longer run); LogDensityCalls counts the evidence
	// stage's log-density evaluations (over every evidence run, when the
	// evidence's warnings about the draws led to a longer run).
	GradCalls, LogDensityCalls int64
	// SamplingTime (both runs after a retry) and EvidenceTime are the
	// wall times of the two stages.
	SamplingTime, EvidenceTime time.Duration
	// Global reports whether the sampler made global moves from the
	// flow; GlobalAcceptRate is their acceptance rate over the kept
	// draws of all chains (NaN without global moves). Each chain's
	// counts are in Sampling.Chains[c].Global; the draws' effective
	// sizes are in Evidence.Diagnostics (ESSBulkMin, ESSTailMin).
	Global           bool
	GlobalAcceptRate float64
}

// globalAcceptRate is the acceptance rate of the global moves over all
// chains' kept draws; NaN when none was proposed.
func globalAcceptRate(r *nuts.Result) float64 {
	var prop, acc int64
	for _, c := range r.Chains {
		prop += c.Global.Proposed
		acc += c.Global.Accepted
	}
	if prop == 0 {
		return math.NaN()
	}
	return float64(acc) / float64(prop)
}

// Pipeline draws from p with NUTS and estimates ln Z from the draws: the
// method's recipe when the gradient of log p is available. The chains'
// log p values are reused, so the evidence stage evaluates p only at the
// proposal's draws. Divergent first runs are repeated at a higher
// acceptance target (see PipelineSettings.RetryTargetAccept). Problems
// the chains still show (divergences beyond PipelineMaxDivergentFraction,
// chains stuck at low log p) are reported in Evidence.Warnings (among its
// sampler warnings) beside the evidence's own checks, a retry and a few
// divergences in Evidence.Info; no chain is dropped.
func Pipeline(ctx context.Context, f nuts.LogDensityGrad, d int, s *PipelineSettings) (*PipelineResult, error) {
	run := func(ctx context.Context, s *nuts.Settings) (*nuts.Result, error) { return nuts.Sample(ctx, f, d, s) }
	return pipeline(ctx, run, gradToBatch(f, d), d, s)
}

// PipelineBatch is Pipeline with a batched density: the chains advance
// together and f evaluates one point of each in one call (see
// nuts.SampleBatch), and the evidence stage evaluates log p through f in
// batches of Evidence.BatchSize, discarding the gradient. With a batched f
// that gives each point the per-point values, the result is Pipeline's.
func PipelineBatch(ctx context.Context, f nuts.BatchLogDensityGrad, d int, s *PipelineSettings) (*PipelineResult, error) {
	if f == nil {
		return nil, errors.New("gbs: nil batch log density")
	}
	run := func(ctx context.Context, s *nuts.Settings) (*nuts.Result, error) {
		return nuts.SampleBatch(ctx, f, d, s)
	}
	return pipeline(ctx, run, gradBatchToBatch(f, d), d, s)
}

// pipeline runs the sampler through sample and the evidence stage with
// the log density logp.
func pipeline(ctx context.Context, sample func(context.Context, *nuts.Settings) (*nuts.Result, error), logp LogDensityFunc, d int, s *PipelineSettings) (*PipelineResult, error) {
	var cfg PipelineSettings
	if s != nil {
		cfg = *s
	}
	if cfg.Sampler.TargetAccept == 0 {
		cfg.Sampler.TargetAccept = PipelineTargetAccept
	}
	retry := cfg.RetryTargetAccept
	if retry == 0 {
		retry = PipelineRetryTargetAccept
	}
	if retry > 0 && !(retry < 1) {
		return nil, fmt.Errorf("gbs: RetryTargetAccept = %v, want a value in (0, 1), 0 for the default or negative for none", retry)
	}
	longer := cfg.RetryDrawsFactor
	if longer == 0 {
		longer = PipelineRetryDrawsFactor
	}
	if longer > 0 && !(longer > 1 && longer <= 100) {
		return nil, fmt.Errorf("gbs: RetryDrawsFactor = %v, want a value in (1, 100], 0 for the default or negative for none", longer)
	}
	var (
		global bool
		err    error
	)
	if cfg.Sampler, global, err = WithGlobalMoves(cfg.Sampler, cfg.Global, d); err != nil {
		return nil, err
	}
	start := time.Now()
	draws, err := sample(ctx, &cfg.Sampler)
	if err != nil {
		return nil, fmt.Errorf("gbs: sampling: %w", err)
	}
	out := &PipelineResult{Sampling: draws, TargetAccept: cfg.Sampler.TargetAccept, GradCalls: draws.GradCalls, Global: global}
	var info []string
	if n := draws.Divergences(); n > 0 && retry > cfg.Sampler.TargetAccept {
		again := cfg.Sampler
		again.TargetAccept = retry
		draws, err = sample(ctx, &again)
		if err != nil {
			return nil, fmt.Errorf("gbs: sampling again at TargetAccept %v: %w", retry, err)
		}
		// The retry is designed behaviour: a problem only if the second
		// run diverges often, which samplingWarnings reports.
		info = append(info, fmt.Sprintf("NUTS diverged %d times after warm-up at TargetAccept %v, so the chains were run again at %v; the draws come from that second run", n, cfg.Sampler.TargetAccept, retry))
		out.Sampling, out.TargetAccept, out.Retried = draws, retry, true
		out.GradCalls += draws.GradCalls
	}
	out.SamplingTime = time.Since(start)
	evidence := func() (*Result, error) {
		start := time.Now()
		defer func() { out.EvidenceTime += time.Since(start) }()
		samples := &Samples{Dim: d, Chains: draws.Draws, LogP: draws.LogP, NCall: out.GradCalls}
		ev := pipelineEvidence(cfg.Evidence, cfg.Sampler.Seed, cfg.Sampler.Lower, cfg.Sampler.Upper)
		ev.Concurrent = ev.Concurrent || cfg.Sampler.Threads != 1
		return Evidence(ctx, logp, samples, &ev)
	}
	var res *Result
	for runs := 0; ; {
		// What NUTS's own statistics show is checked before the evidence,
		// the rest (tau of the estimator's summands) only after it.
		why := drawsProblem(draws, d)
		if why == "" {
			if res, err = evidence(); err != nil {
				return nil, err
			}
			if res.SamplerWarnings == 0 && res.coverageWarns() && retry > out.TargetAccept {
				// The chains missed mass of p that ln Z does not account
				// for: on the funnel, runs that never diverge at the
				// first target never reach the neck (see
				// PipelineMaxDivergentFraction), and the retry's target
				// is what repairs them.
				start = time.Now()
				again := lengthened(cfg.Sampler, longer, runs)
				again.TargetAccept = retry
				if draws, err = sample(ctx, &again); err != nil {
					return nil, fmt.Errorf("gbs: sampling again at TargetAccept %v: %w", retry, err)
				}
				info = append(info, fmt.Sprintf("the evidence's coverage check found mass of p beyond the draws' range that ln Z does not account for "+
					"(%.2g of its independence chains' steps, limit %.2g), so the chains were run again at TargetAccept %v; the draws come from that run",
					res.Diagnostics.CoverageFrac, res.Diagnostics.CoverageLimit, retry))
				out.LogDensityCalls += res.NCall
				out.Sampling, out.TargetAccept, out.Retried, res = draws, retry, true, nil
				out.GradCalls += draws.GradCalls
				out.SamplingTime += time.Since(start)
				continue
			}
			if res.SamplerWarnings == 0 {
				break
			}
			why = "the evidence's checks warned about the draws (" + leadClause(res.Warnings[0]) + ")"
		}
		if longer <= 0 || runs == PipelineMaxLengthenings {
			break
		}
		runs++
		start = time.Now()
		again := lengthened(cfg.Sampler, longer, runs)
		again.TargetAccept = out.TargetAccept
		if draws, err = sample(ctx, &again); err != nil {
			return nil, fmt.Errorf("gbs: sampling again with %d draws per chain: %w", again.Draws, err)
		}
		info = append(info, fmt.Sprintf("%s, so the chains were run again with %d warm-up iterations and %d draws each; the draws come from that longer run", why, max(again.Warmup, 0), again.Draws))
		if res != nil {
			out.LogDensityCalls += res.NCall
		}
		out.Sampling, out.Lengthened, res = draws, true, nil
		out.GradCalls += draws.GradCalls
		out.SamplingTime += time.Since(start)
	}
	if res == nil {
		if res, err = evidence(); err != nil {
			return nil, err
		}
	}
	warn, few := samplingWarnings(draws, out.TargetAccept)
	res.Info = append(append(info, few...), res.Info...)
	res.addSamplerWarnings(warn)
	out.Evidence = res
	out.LogDensityCalls += res.NCall
	out.GlobalAcceptRate = globalAcceptRate(draws)
	return out, nil
}

// PipelineMaxDivergentFraction is the fraction of kept NUTS transitions
// that may diverge before Pipeline warns; fewer go to Result.Info.
//
// A few divergences at the retry's 0.99 are what a funnel's neck produces
// when the chains do reach it. Over the 80 funnel runs of the benchmark
// (seeds 1000-1063 and 900000-900015), the 41 runs with 1 to 57
// divergences after the retry (at most 0.36 % of 16000 kept draws) had
// z-scores of mean -0.24 and sd 1.09, none beyond 2.4; the 27 retried runs
// without any had mean -0.16; the 12 runs that never diverged at 0.9 (and
// so were not retried) were the ones off, mean -1.78, the -4.5 sigma run
// among them: their chains never reached the neck. A few divergences are
// a sign of exploration there, not of bias. Many (beyond 1 %) mean the
// sampler cannot follow the posterior, and warn.
const PipelineMaxDivergentFraction = 0.01

// lengthened returns s with its warm-up and draws per chain multiplied by
// longer^runs (runs = 0: s itself).
func lengthened(s nuts.Settings, longer float64, runs int) nuts.Settings {
	if runs == 0 {
		return s
	}
	scale := math.Pow(longer, float64(runs))
	if w := cmp.Or(s.Warmup, nuts.DefaultWarmup); w > 0 {
		s.Warmup = int(math.Ceil(scale * float64(w)))
	}
	s.Draws = int(math.Ceil(scale * float64(cmp.Or(s.Draws, nuts.DefaultDraws))))
	return s
}

// PipelineMaxLengthenings is the number of longer NUTS runs Pipeline
// makes at most (PipelineSettings.RetryDrawsFactor), the k-th with
// RetryDrawsFactor^k times the warm-up and the draws of the first.
const PipelineMaxLengthenings = 2

// drawsProblem says why NUTS's draws call for a longer run, or "": chains
// that have not mixed by the evidence's rule (unmixed), or divergences
// beyond PipelineMaxDivergentFraction. Funnel seed 920058 diverged in
// 1.7 % of its transitions at TargetAccept 0.99 after 500 warm-up
// iterations and in 0.16 % after 1000: a step size adapted in a short
// warm-up, which a longer one repairs (more draws alone do not: the same
// warm-up gives the same step size).
func drawsProblem(r *nuts.Result, d int) string {
	if n, kept := r.Divergences(), keptTransitions(r); float64(n) > PipelineMaxDivergentFraction*float64(kept) {
		return fmt.Sprintf("NUTS diverged in %d of the %d kept transitions, more than %g %%", n, kept, 100*PipelineMaxDivergentFraction)
	}
	if why := unmixed(&Samples{Dim: d, Chains: r.Draws, LogP: r.LogP}); why != "" {
		return "the chains had not mixed (" + why + ")"
	}
	return ""
}

// leadClause is a warning's statement of what is wrong: the text before
// its first ": ", where the explanation begins.
func leadClause(w string) string {
	head, _, _ := strings.Cut(w, ": ")
	return head
}

// keptTransitions is the number of kept draws over all chains.
func keptTransitions(r *nuts.Result) int {
	var n int
	for _, c := range r.LogP {
		n += len(c)
	}
	return n
}

// samplingWarnings checks what only NUTS knows: divergences, and chains
// stuck at low log p. R-hat and ESS (of log p and of every coordinate)
// are the evidence's own checks, with thresholds set by what chance gives
// for chains of the length at hand; a fixed R-hat threshold of 1.05 here
// fired on 3 of 64 healthy funnel runs (R-hat 1.058-1.064, the evidence's
// check quiet, ln Z within 1σ). No chain is dropped: the estimate uses
// every draw, and the warnings say why it may be off.
// Divergences too few to warn about (PipelineMaxDivergentFraction) are
// returned as information.
func samplingWarnings(r *nuts.Result, targetAccept float64) (w, info []string) {
	if n, kept := r.Divergences(), keptTransitions(r); n > 0 {
		frac := float64(n) / float64(kept)
		if frac > PipelineMaxDivergentFraction {
			w = append(w, fmt.Sprintf("NUTS reported %d divergent transitions after warm-up at TargetAccept %v (%.1f %% of the %d kept draws): the chains cannot follow the posterior's curvature there, so the draws, and so ln Z, may be biased; raise Sampler.TargetAccept or reparameterize", n, targetAccept, 100*frac, kept))
		} else {
			info = append(info, fmt.Sprintf("NUTS reported %d divergent transitions after warm-up at TargetAccept %v (%.2f %% of the %d kept draws, at most %g %% is not warned about): few enough that the chains reached the curved region rather than avoided it", n, targetAccept, 100*frac, kept, 100*PipelineMaxDivergentFraction))
		}
	}
	if low := r.LowChains(); len(low) > 0 {
		w = append(w, fmt.Sprintf("chains %v sit at much lower log p than the others (median log p below the 1%% quantile of the other chains): they are stuck or have not reached the bulk of the posterior, and their draws bias ln Z; check the starting points, the bounds and the warm-up length", low))
	}
	return w, info
}

// EnsemblePipelineSettings configures EnsemblePipeline.
type EnsemblePipelineSettings struct {
	// Sampler configures the ensemble sampler. Its Seed is used when
	// Evidence.Seed is zero.
	Sampler ensemble.Settings
	// Evidence configures the evidence stage. Unlike NUTS's, the sampler's
	// box only places the starting walkers, so give the support's bounds
	// here.
	Evidence Settings
}

// EnsemblePipelineResult is the outcome of ensemble sampling followed by
// evidence.
type EnsemblePipelineResult struct {
	Evidence *Result
	Sampling *ensemble.Result
	// SamplerCalls and LogDensityCalls count the log-density evaluations of
	// the two stages.
	SamplerCalls, LogDensityCalls int64
}

// EnsemblePipeline draws from p with the affine-invariant ensemble sampler
// and estimates ln Z: the recipe when no gradient is available. Each
// walker is a chain for the sample split and for the autocorrelation time.
func EnsemblePipeline(ctx context.Context, f LogDensityFunc, d int, s *EnsemblePipelineSettings) (*EnsemblePipelineResult, error) {
	var cfg EnsemblePipelineSettings
	if s != nil {
		cfg = *s
	}
	draws, err := ensemble.Sample(ctx, ensemble.LogDensityFunc(f), d, &cfg.Sampler)
	if err != nil {
		return nil, fmt.Errorf("gbs: sampling: %w", err)
	}
	samples := &Samples{Dim: d, Chains: draws.Chain, LogP: draws.LogP, NCall: draws.NCall}
	// Not marked Ensemble: the sampler applied emcee's 50 τ rule itself,
	// on the walkers before thinning (Sampling.Warnings).
	// The ensemble's box only shapes its start, so it says nothing of the
	// support: only the seed carries over.
	ev := pipelineEvidence(cfg.Evidence, cfg.Sampler.Seed, nil, nil)
	res, err := Evidence(ctx, f, samples, &ev)
	if err != nil {
		return nil, err
	}
	return &EnsemblePipelineResult{Evidence: res, Sampling: draws, SamplerCalls: draws.NCall, LogDensityCalls: res.NCall}, nil
}

// pipelineEvidence fills the evidence settings' seed and bounds from the
// sampler's where they are unset.
func pipelineEvidence(ev Settings, seed uint64, lower, upper []float64) Settings {
	if ev.Seed == 0 {
		ev.Seed = seed
	}
	if ev.Lower == nil && ev.Upper == nil {
		ev.Lower, ev.Upper = lower, upper
	}
	return ev
}

// gradToBatch evaluates a log-density-and-gradient function point by point
// as a batch log density, discarding the gradient.
func gradToBatch(f nuts.LogDensityGrad, d int) LogDensityFunc {
	return func(dst, x []float64) error {
		grad := make([]float64, d)
		for i := range dst {
			v, err := f(grad, x[i*d:(i+1)*d])
			if err != nil {
				return err
			}
			dst[i] = v
		}
		return nil
	}
}

// gradBatchToBatch evaluates a batched log-density-and-gradient function
// as a batch log density, discarding the gradient.
func gradBatchToBatch(f nuts.BatchLogDensityGrad, d int) LogDensityFunc {
	return func(dst, x []float64) error {
		return f(dst, make([]float64, len(dst)*d), x)
	}
}
