package pipeline

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/gbs-evidence/gbs/gbs"
	"github.com/gbs-evidence/gbs/nuts"
)

// Settings configures NUTS and NUTSBatch; the zero value means the
// defaults of each stage.
type Settings struct {
	// Sampler configures NUTS. Its Seed is used when Evidence.Seed is zero.
	// Its TargetAccept defaults to TargetAccept (0.9) here, not NUTS's
	// 0.8.
	Sampler nuts.Settings
	// RetryTargetAccept is the acceptance target of a second NUTS run,
	// from scratch and with the same seed, made when the kept draws of
	// the first run contain divergent transitions and Sampler.TargetAccept
	// is lower: the evidence inherits any bias of the draws, and
	// divergences mark regions (such as the neck of a funnel) that the
	// chains under-sample. The same second run is made when the first did
	// not diverge but the evidence's coverage check found mass of p beyond
	// the draws' range that ln Z does not account for (chains that never
	// reached the neck). The second run's draws replace the first's; both
	// runs' gradient calls are counted. Zero means RetryTargetAccept
	// (0.99); a negative value disables the retry.
	RetryTargetAccept float64
	// RetryDrawsFactor multiplies the warm-up and the draws per chain of
	// a further NUTS run, from scratch and with the same seed, made when
	// the kept draws have not mixed by the rule of the evidence's own
	// convergence warnings (gbs.Unmixed), when more than
	// MaxDivergentFraction of the kept transitions diverged, or when the
	// evidence warns about the draws: longer chains repair what a warning
	// could only report. Up to MaxLengthenings such runs are made, each
	// RetryDrawsFactor times longer than the one before; the last run's
	// draws replace the others, every run's gradient calls are counted,
	// and a finding (gbs.CheckRerun) says why. Whatever the last run
	// still shows is warned about. Zero means RetryDrawsFactor (2); a
	// negative value disables it.
	RetryDrawsFactor float64
	// Evidence configures the evidence stage. Its bounds default to the
	// sampler's, its seed to the sampler's.
	Evidence gbs.Settings
	// Global configures the flow as a global move of the sampler (see
	// GlobalSettings); on by default where each warm-up stage's draws
	// number at least GlobalMinPointsPerDim per dimension. With global
	// moves and no Sampler.Init, the chains start at points drawn
	// uniformly in the central 90 % of the box when the box is finite.
	Global GlobalSettings
}

// TargetAccept is the NUTS acceptance target the pipeline uses when
// Sampler.TargetAccept is zero, and RetryTargetAccept the target of the
// second run after divergences (Settings.RetryTargetAccept).
//
// At the paper's budget banana, Cauchy and ring run without divergences
// at 0.8 to 0.99, and their gradient calls per effective draw grow with
// the target (banana about 1.5, 1.7, 2.5 and 4.3 thousand at 0.8, 0.9,
// 0.95 and 0.99); the funnel diverges at 0.8 to 0.95 and under-samples
// its neck (ln Z off by up to 3.5 error bars), which 0.99 repairs for
// about twice the gradient calls of 0.95. Hence 0.9 first and 0.99 only
// where it is needed (docs/benchmarks.md).
const (
	TargetAccept      = 0.9
	RetryTargetAccept = 0.99
)

// RetryDrawsFactor is the default Settings.RetryDrawsFactor, and
// MaxLengthenings the number of longer runs made at most, the k-th with
// RetryDrawsFactor^k times the warm-up and the draws of the first.
const (
	RetryDrawsFactor = 2
	MaxLengthenings  = 2
)

// MaxDivergentFraction is the fraction of kept NUTS transitions that may
// diverge before the pipeline warns (and runs longer); fewer go to the
// information findings.
//
// A few divergences at the retry's 0.99 are what a funnel's neck produces
// when the chains do reach it: over 80 funnel runs those with up to 0.36 %
// divergent transitions after the retry were within 2.4σ (z mean -0.24,
// sd 1.09), while the runs that never diverged at 0.9 were the ones off
// (their chains never reached the neck). A few divergences are a sign of
// exploration there, not of bias. Many (beyond 1 %) mean the sampler
// cannot follow the posterior, and warn.
const MaxDivergentFraction = 0.01

// Result is the outcome of sampling followed by evidence.
type Result struct {
	Evidence *gbs.Result
	// Sampling holds the NUTS draws and statistics of the run the
	// evidence used.
	Sampling *nuts.Result
	// TargetAccept is the acceptance target of that run; Retried reports
	// whether it is a run at RetryTargetAccept, made because the first
	// diverged or missed mass that the coverage check found.
	TargetAccept float64
	Retried      bool
	// Lengthened reports whether the draws come from a longer run made
	// because the draws of a shorter one had not mixed, diverged often or
	// were warned about by the evidence (Settings.RetryDrawsFactor).
	Lengthened bool
	// Restarted reports whether the draws come from a run whose chains
	// were started at modes of p that the evidence's mode census found
	// unvisited (gbs.CheckMissedMode), made once.
	Restarted bool
	// GradCalls counts the sampler's log-density-and-gradient evaluations
	// over every run; LogDensityCalls counts the evidence stage's
	// log-density evaluations over every evidence run.
	GradCalls, LogDensityCalls int64
	// SamplingTime (every run) and EvidenceTime are the wall times of the
	// two stages.
	SamplingTime, EvidenceTime time.Duration
	// Global reports whether the sampler made global moves from the
	// flow; GlobalAcceptRate is their acceptance rate over the kept
	// draws of all chains (NaN without global moves, and when they
	// stopped during warm-up for want of acceptance: see
	// Sampling.GlobalStopped and GlobalSettings.MinAccept). Each chain's
	// counts are in Sampling.Chains[c].Global.
	Global           bool
	GlobalAcceptRate float64
}

// NUTS draws from p with NUTS and estimates ln Z from the draws: the
// method's recipe when the gradient of log p is available. The chains'
// log p values are reused, so the evidence stage evaluates p only at the
// proposal's draws. Divergent first runs are repeated at a higher
// acceptance target, unmixed ones made longer (see Settings). Problems
// the chains still show (divergences beyond MaxDivergentFraction, chains
// stuck at low log p) are findings about the draws beside the evidence's
// own; no chain is dropped.
func NUTS(ctx context.Context, f nuts.LogDensityGrad, d int, s *Settings) (*Result, error) {
	sample := func(ctx context.Context, s *nuts.Settings) (*nuts.Result, error) { return nuts.Sample(ctx, f, d, s) }
	return run(ctx, sample, gradToBatch(f, d), d, s)
}

// NUTSBatch is NUTS with a batched density: the chains advance together
// and f evaluates one point of each in one call (see nuts.SampleBatch),
// and the evidence stage evaluates log p through f in batches of
// Evidence.BatchSize, discarding the gradient. With a batched f that gives
// each point the per-point values, the result is NUTS's.
func NUTSBatch(ctx context.Context, f nuts.BatchLogDensityGrad, d int, s *Settings) (*Result, error) {
	if f == nil {
		return nil, errors.New("pipeline: nil batch log density")
	}
	sample := func(ctx context.Context, s *nuts.Settings) (*nuts.Result, error) {
		return nuts.SampleBatch(ctx, f, d, s)
	}
	return run(ctx, sample, gradBatchToBatch(f, d), d, s)
}

// sampler runs NUTS with the given settings.
type sampler func(context.Context, *nuts.Settings) (*nuts.Result, error)

// state is one pipeline call: its settings with the defaults filled in,
// the result so far and the findings about its reruns.
type state struct {
	ctx    context.Context
	sample sampler
	logp   gbs.LogDensityFunc
	d      int
	cfg    Settings
	retry  float64 // acceptance target of the retry; <= 0: none
	longer float64 // factor of a longer run; <= 0: none
	out    *Result
	reruns []gbs.Finding
}

// run is NUTS and NUTSBatch: the sampler through sample, the evidence
// with the log density logp, and the reruns their findings call for.
func run(ctx context.Context, sample sampler, logp gbs.LogDensityFunc, d int, s *Settings) (*Result, error) {
	st, err := newState(ctx, sample, logp, d, s)
	if err != nil {
		return nil, err
	}
	draws, err := st.firstRun()
	if err != nil {
		return nil, err
	}
	res, err := st.repair(draws)
	if err != nil {
		return nil, err
	}
	warn, few := samplerFindings(st.out.Sampling, st.out.TargetAccept)
	res.AddFindings(append(append(st.reruns, few...), warn...)...)
	st.out.Evidence = res
	st.out.LogDensityCalls += res.NCall
	st.out.GlobalAcceptRate = globalAcceptRate(st.out.Sampling)
	return st.out, nil
}

// newState checks the settings and fills in their defaults.
func newState(ctx context.Context, sample sampler, logp gbs.LogDensityFunc, d int, s *Settings) (*state, error) {
	st := &state{ctx: ctx, sample: sample, logp: logp, d: d}
	if s != nil {
		st.cfg = *s
	}
	st.cfg.Sampler.TargetAccept = cmp.Or(st.cfg.Sampler.TargetAccept, TargetAccept)
	st.retry = cmp.Or(st.cfg.RetryTargetAccept, RetryTargetAccept)
	if st.retry > 0 && !(st.retry < 1) {
		return nil, fmt.Errorf("pipeline: RetryTargetAccept = %v, want a value in (0, 1), 0 for the default or negative for none", st.retry)
	}
	st.longer = cmp.Or(st.cfg.RetryDrawsFactor, RetryDrawsFactor)
	if st.longer > 0 && !(st.longer > 1 && st.longer <= 100) {
		return nil, fmt.Errorf("pipeline: RetryDrawsFactor = %v, want a value in (1, 100], 0 for the default or negative for none", st.longer)
	}
	var global bool
	var err error
	if st.cfg.Sampler, global, err = WithGlobalMoves(st.cfg.Sampler, st.cfg.Global, d); err != nil {
		return nil, err
	}
	st.out = &Result{Global: global}
	return st, nil
}

// sampleAgain runs the sampler with s and makes its draws the pipeline's.
func (st *state) sampleAgain(s nuts.Settings, what string) (*nuts.Result, error) {
	start := time.Now()
	draws, err := st.sample(st.ctx, &s)
	if err != nil {
		return nil, fmt.Errorf("pipeline: %s: %w", what, err)
	}
	st.out.Sampling, st.out.TargetAccept = draws, s.TargetAccept
	st.out.GradCalls += draws.GradCalls
	st.out.SamplingTime += time.Since(start)
	return draws, nil
}

// rerun records why the sampler ran again.
func (st *state) rerun(format string, args ...any) {
	st.reruns = append(st.reruns, gbs.Finding{Check: gbs.CheckRerun, Kind: gbs.KindInfo, Where: gbs.WhereNone,
		Value: math.NaN(), Limit: math.NaN(), Message: fmt.Sprintf(format, args...)})
}

// firstRun samples at the first target and, when the kept draws diverge,
// again at the retry's.
func (st *state) firstRun() (*nuts.Result, error) {
	draws, err := st.sampleAgain(st.cfg.Sampler, "sampling")
	if err != nil {
		return nil, err
	}
	first := st.cfg.Sampler.TargetAccept
	n := draws.Divergences()
	if n == 0 || !(st.retry > first) {
		return draws, nil
	}
	again := st.cfg.Sampler
	again.TargetAccept = st.retry
	if draws, err = st.sampleAgain(again, fmt.Sprintf("sampling again at TargetAccept %v", st.retry)); err != nil {
		return nil, err
	}
	st.out.Retried = true
	// The retry is designed behaviour: a problem only if the second run
	// diverges often, which samplerFindings reports.
	st.rerun("NUTS diverged %d times after warm-up at TargetAccept %v, so the chains were run again at %v; the draws come from that second run", n, first, st.retry)
	return draws, nil
}

// evidence estimates ln Z from draws.
func (st *state) evidence(draws *nuts.Result) (*gbs.Result, error) {
	start := time.Now()
	defer func() { st.out.EvidenceTime += time.Since(start) }()
	samples := &gbs.Samples{Dim: st.d, Chains: draws.Draws, LogP: draws.LogP, NCall: st.out.GradCalls}
	ev := evidenceSettings(st.cfg.Evidence, st.cfg.Sampler.Seed, st.cfg.Sampler.Lower, st.cfg.Sampler.Upper)
	ev.Concurrent = ev.Concurrent || st.cfg.Sampler.Threads != 1
	return gbs.Evidence(st.ctx, st.logp, samples, &ev)
}

// repair estimates ln Z from draws and reruns the sampler where the
// draws call for it: at the retry's target when the coverage check found
// mass the chains missed, longer when they have not mixed, diverged often
// or drew the evidence's warnings. It returns the evidence of the last
// run.
func (st *state) repair(draws *nuts.Result) (*gbs.Result, error) {
	var res *gbs.Result
	for runs := 0; ; {
		// What NUTS's own statistics show is checked before the evidence,
		// the rest (tau of the estimator's summands) only after it.
		why := drawsProblem(draws, st.d, st.cfg.Evidence.Names)
		if why == "" {
			var err error
			if res, err = st.evidence(draws); err != nil {
				return nil, err
			}
			if again, ok := st.censusStarts(res, draws); ok {
				// Modes no chain visited: start chains there, so that
				// the global moves' flow sees every mode and sets the
				// weights.
				st.out.LogDensityCalls += res.NCall
				var err error
				if draws, err = st.sampleAgain(again, "sampling again from the modes the census found"); err != nil {
					return nil, err
				}
				st.rerun("the evidence's mode census found %d mode(s) of p that no chain visited (ln Z low by about %.3g), "+
					"so the chains were run again, some started at those modes; the draws come from that run",
					len(res.Diagnostics.CensusModes), res.Diagnostics.CensusShortfall)
				st.out.Restarted, res = true, nil
				continue
			}
			drawWarnings := res.DrawWarnings()
			if len(drawWarnings) == 0 && res.Warns(gbs.CheckCoverage) && st.retry > st.out.TargetAccept {
				// The chains missed mass of p that ln Z does not account
				// for: on the funnel, runs that never diverge at the
				// first target never reach the neck, and the retry's
				// target is what repairs them.
				again := lengthened(st.cfg.Sampler, st.longer, runs)
				again.TargetAccept = st.retry
				st.out.LogDensityCalls += res.NCall
				if draws, err = st.sampleAgain(again, fmt.Sprintf("sampling again at TargetAccept %v", st.retry)); err != nil {
					return nil, err
				}
				d := res.Diagnostics
				st.rerun("the evidence's coverage check found mass of p beyond the draws' range that ln Z does not account for "+
					"(%.2g of its independence chains' steps, limit %.2g), so the chains were run again at TargetAccept %v; the draws come from that run",
					d.CoverageFrac, d.CoverageLimit, st.retry)
				st.out.Retried, res = true, nil
				continue
			}
			if len(drawWarnings) == 0 {
				return res, nil
			}
			f := res.Findings[0] // the first warning about the draws
			info, _ := f.Check.Info()
			why = fmt.Sprintf("the evidence's checks warned about the draws (%s: %s)", f.Check, info.Title)
		}
		if st.longer <= 0 || runs == MaxLengthenings {
			break
		}
		runs++
		again := lengthened(st.cfg.Sampler, st.longer, runs)
		again.TargetAccept = st.out.TargetAccept
		if res != nil {
			st.out.LogDensityCalls += res.NCall
		}
		var err error
		if draws, err = st.sampleAgain(again, fmt.Sprintf("sampling again with %d draws per chain", again.Draws)); err != nil {
			return nil, err
		}
		st.rerun("%s, so the chains were run again with %d warm-up iterations and %d draws each; the draws come from that longer run",
			why, max(again.Warmup, 0), again.Draws)
		st.out.Lengthened, res = true, nil
	}
	if res != nil {
		return res, nil
	}
	return st.evidence(draws)
}

// censusStarts returns the sampler's settings for a run whose chains
// start at the modes the evidence's census found unvisited (and ok),
// when it warned about them and no such run was made yet: with k modes,
// every (k+1)-th chain continues from its last draw, the others start at
// the modes in turn.
func (st *state) censusStarts(res *gbs.Result, draws *nuts.Result) (nuts.Settings, bool) {
	modes := res.Diagnostics.CensusModes
	if st.out.Restarted || !res.Warns(gbs.CheckMissedMode) || len(modes) == 0 {
		return nuts.Settings{}, false
	}
	again := st.cfg.Sampler
	again.TargetAccept = st.out.TargetAccept
	k := len(modes)
	again.Init = make([][]float64, len(draws.Draws))
	for c, ch := range draws.Draws {
		if i := c % (k + 1); i > 0 {
			again.Init[c] = slices.Clone(modes[i-1].X)
		} else {
			again.Init[c] = slices.Clone(ch[len(ch)-st.d:])
		}
	}
	return again, true
}

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

// drawsProblem says why NUTS's draws call for a longer run, or "": chains
// that have not mixed by the evidence's rule, or divergences beyond
// MaxDivergentFraction. A step size adapted in a short warm-up can
// diverge often at 0.99 where a longer warm-up does not; more draws
// alone would not help (the same warm-up gives the same step size).
func drawsProblem(r *nuts.Result, d int, names []string) string {
	if n, kept := r.Divergences(), keptTransitions(r); float64(n) > MaxDivergentFraction*float64(kept) {
		return fmt.Sprintf("NUTS diverged in %d of the %d kept transitions, more than %g %%", n, kept, 100*MaxDivergentFraction)
	}
	if why := gbs.Unmixed(&gbs.Samples{Dim: d, Chains: r.Draws, LogP: r.LogP}, names); why != "" {
		return "the chains had not mixed (" + why + ")"
	}
	return ""
}

// keptTransitions is the number of kept draws over all chains.
func keptTransitions(r *nuts.Result) int {
	var n int
	for _, c := range r.LogP {
		n += len(c)
	}
	return n
}

// samplerFindings checks what only NUTS knows: divergences, and chains
// stuck at low log p. R-hat and ESS (of log p and of every coordinate)
// are the evidence's own checks, with thresholds set by what chance gives
// for chains of the length at hand. No chain is dropped: the estimate
// uses every draw, and the warnings say why it may be off. Divergences
// too few to warn about (MaxDivergentFraction) are returned as
// information.
func samplerFindings(r *nuts.Result, targetAccept float64) (warn, info []gbs.Finding) {
	if n, kept := r.Divergences(), keptTransitions(r); n > 0 {
		frac := float64(n) / float64(kept)
		f := gbs.Finding{Check: gbs.CheckDivergences, Kind: gbs.KindDraws, Where: gbs.WhereNone, Value: frac, Limit: MaxDivergentFraction}
		if frac > MaxDivergentFraction {
			f.Message = fmt.Sprintf("NUTS reported %d divergent transitions after warm-up at TargetAccept %v (%.1f %% of the %d kept draws): the chains cannot follow the posterior's curvature there, so the draws, and so ln Z, may be biased; raise Sampler.TargetAccept or reparameterize", n, targetAccept, 100*frac, kept)
			warn = append(warn, f)
		} else {
			f.Kind = gbs.KindInfo
			f.Message = fmt.Sprintf("NUTS reported %d divergent transitions after warm-up at TargetAccept %v (%.2f %% of the %d kept draws, at most %g %% is not warned about): few enough that the chains reached the curved region rather than avoided it", n, targetAccept, 100*frac, kept, 100*MaxDivergentFraction)
			info = append(info, f)
		}
	}
	if low := r.LowChains(); len(low) > 0 {
		warn = append(warn, gbs.Finding{Check: gbs.CheckLowChains, Kind: gbs.KindDraws, Where: -1,
			Value: float64(len(low)), Limit: math.NaN(),
			Message: fmt.Sprintf("chains %v sit at much lower log p than the others (median log p below the 1%% quantile of the other chains): they are stuck or have not reached the bulk of the posterior, and their draws bias ln Z; check the starting points, the bounds and the warm-up length", low)})
	}
	return warn, info
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

// evidenceSettings fills the evidence settings' seed and bounds from the
// sampler's where they are unset.
func evidenceSettings(ev gbs.Settings, seed uint64, lower, upper []float64) gbs.Settings {
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
func gradToBatch(f nuts.LogDensityGrad, d int) gbs.LogDensityFunc {
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
func gradBatchToBatch(f nuts.BatchLogDensityGrad, d int) gbs.LogDensityFunc {
	return func(dst, x []float64) error {
		return f(dst, make([]float64, len(dst)*d), x)
	}
}
