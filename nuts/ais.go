package nuts

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"

	"github.com/gbs-evidence/gbs/internal/memlimit"
)

// AISSettings configures AIS and RAIS. The zero value, and a nil pointer,
// select the defaults documented on each field.
type AISSettings struct {
	// Steps is the number T of inverse temperatures β_0 = 0 < ... <
	// β_{T-1} = 1; default 1000, at least 2. The cost is about
	// (T-2)·Transitions NUTS transitions per run.
	Steps int
	// Chains is the number of independent annealing runs; default 16.
	Chains int
	// Delta is the steepness of the sigmoid schedule (see
	// SigmoidSchedule); default 4.
	Delta float64
	// Transitions is the number of NUTS transitions per temperature;
	// default 1.
	Transitions int
	// MaxDepth caps the NUTS tree depth; default 10.
	MaxDepth int
	// StepSize, if positive, is used at every temperature. Otherwise a
	// pilot (PilotChains extra runs along the same schedule, with their
	// own random streams) tracks the step size that gives TargetAccept
	// at each temperature by stochastic approximation, and the averaged
	// per-temperature step sizes are then fixed for the real runs. Fixing
	// the kernels in advance keeps each transition exactly invariant for
	// its temperature, which the AIS identity needs; adapting inside a
	// run would not.
	StepSize float64
	// TargetAccept is the acceptance statistic the pilot aims for;
	// default 0.8.
	TargetAccept float64
	// PilotChains is the number of pilot runs; default 4.
	PilotChains int
	// InvMetric optionally gives a diagonal inverse metric (length d),
	// such as posterior variances, used at every temperature; default
	// the identity.
	InvMetric []float64
	// Seed seeds all random streams; run i uses its own stream, so the
	// result does not depend on Threads.
	Seed uint64
	// Threads is the number of goroutines; 0 means GOMAXPROCS, 1 serial.
	Threads int
}

// AISResult is the outcome of AIS or RAIS.
type AISResult struct {
	// LogZ is the estimate of ln Z: for AIS the log of the mean weight,
	// for RAIS minus the log of the mean reverse weight (a harmonic-mean
	// estimator). Both are consistent as the runs grow in number; for a
	// finite schedule AIS is biased low and RAIS high in expectation.
	LogZ float64
	// LogZErr is the delta-method standard error of LogZ from the spread
	// of the weights. It understates the error when a few runs dominate
	// (see ESS).
	LogZErr float64
	// LogZRuns[i] is run i's single-run estimate: log w_i for AIS,
	// -log w_i for RAIS. Their mean, MeanLogZ, is a stochastic lower
	// (AIS) or upper (RAIS) bound on ln Z by Jensen's inequality, looser
	// than LogZ.
	LogZRuns []float64
	MeanLogZ float64
	// ESS is the effective number of runs, (Σw)²/Σw²: near Chains when
	// the weights are even, near 1 when one run dominates.
	ESS float64
	// Betas is the schedule; StepSizes[t] the step size used for the
	// transitions at Betas[t] (zero where no transition happens).
	Betas     []float64
	StepSizes []float64
	// Divergences counts divergent transitions over all real runs. With a
	// box prior, trajectories at small β run into the walls (log p = -Inf)
	// and count here; that only shortens them and is harmless.
	Divergences int
	// GradCalls counts evaluations of the tempered density (each calls
	// logPrior and, inside the prior's support, logLike once), pilot
	// included.
	GradCalls int64
}

// SigmoidSchedule returns T inverse temperatures
//
//	β_t = (σ(δ(2t/(T-1) - 1)) - σ(-δ)) / (σ(δ) - σ(-δ)),
//
// a sigmoid in t rescaled so that β_0 = 0 and β_{T-1} = 1. It spends more
// temperatures near both ends, where the tempered densities change fastest
// (Grosse et al. 2015). T must be at least 2 and δ positive.
func SigmoidSchedule(T int, delta float64) []float64 {
	b := make([]float64, T)
	sig := func(x float64) float64 { return 1 / (1 + math.Exp(-x)) }
	lo, hi := sig(-delta), sig(delta)
	for t := range b {
		b[t] = (sig(delta*(2*float64(t)/float64(T-1)-1)) - lo) / (hi - lo)
	}
	b[0], b[T-1] = 0, 1
	return b
}

// AIS estimates ln Z = ln ∫ prior(x) L(x) dx by annealed importance
// sampling (Neal 2001) from the prior to the posterior along a sigmoid
// schedule, with NUTS transitions at each intermediate density
// prior·L^β. logPrior must be the normalized log prior (for a flat box,
// -Σ log width inside and -Inf outside) and samplePrior must draw from it
// exactly. Each run's log weight Σ_t (β_t - β_{t-1}) log L(x_{t-1}) is an
// unbiased estimate of Z in the exponent, so the estimate is a stochastic
// lower bound on ln Z.
func AIS(ctx context.Context, logPrior, logLike LogDensityGrad, samplePrior func(dst []float64, rng *rand.Rand), d int, s *AISSettings) (*AISResult, error) {
	if samplePrior == nil {
		return nil, errors.New("nuts: AIS: nil prior sampler")
	}
	a, err := newAnnealer(logPrior, logLike, d, s)
	if err != nil {
		return nil, err
	}
	a.samplePrior = samplePrior
	return a.estimate(ctx, false)
}

// RAIS estimates ln Z by reverse annealed importance sampling (Grosse et
// al. 2015): each run starts at one of posteriorDraws (exact draws, or
// MCMC draws whose autocorrelation is then inherited) and anneals from the
// posterior to the prior. Its weight Π_t f_{t-1}(x_t)/f_t(x_t) estimates
// 1/Z without bias when the start is an exact posterior draw, so -log of
// the mean weight is a stochastic upper bound on ln Z. With n runs and
// m ≥ n draws, run i starts at draw i·m/n (evenly spaced, so runs started
// from one MCMC chain are far apart); with fewer draws than runs, at draw
// i mod m. Chains defaults to min(16, m).
func RAIS(ctx context.Context, logPrior, logLike LogDensityGrad, posteriorDraws [][]float64, d int, s *AISSettings) (*AISResult, error) {
	if len(posteriorDraws) == 0 {
		return nil, errors.New("nuts: RAIS: no posterior draws")
	}
	for i, x := range posteriorDraws {
		if len(x) != d {
			return nil, fmt.Errorf("nuts: RAIS: posterior draw %d has length %d, want d = %d", i, len(x), d)
		}
		if !allFinite(x) {
			return nil, fmt.Errorf("nuts: RAIS: posterior draw %d is not finite", i)
		}
	}
	if (s == nil || s.Chains == 0) && len(posteriorDraws) < 16 {
		var c AISSettings
		if s != nil {
			c = *s
		}
		c.Chains = len(posteriorDraws)
		s = &c
	}
	a, err := newAnnealer(logPrior, logLike, d, s)
	if err != nil {
		return nil, err
	}
	a.start = posteriorDraws
	return a.estimate(ctx, true)
}

// annealer holds what AIS and RAIS share.
type annealer struct {
	AISSettings
	prior, like LogDensityGrad
	samplePrior func([]float64, *rand.Rand)
	start       [][]float64
	d           int
	betas       []float64
}

func newAnnealer(logPrior, logLike LogDensityGrad, d int, s *AISSettings) (*annealer, error) {
	if logPrior == nil || logLike == nil {
		return nil, errors.New("nuts: nil log prior or log likelihood")
	}
	if d <= 0 {
		return nil, fmt.Errorf("nuts: dimension d = %d, want d > 0", d)
	}
	a := &annealer{prior: logPrior, like: logLike, d: d}
	if s != nil {
		a.AISSettings = *s
	}
	c := &a.AISSettings
	switch {
	case c.Steps < 0 || c.Steps == 1:
		return nil, fmt.Errorf("nuts: Steps = %d, want at least 2", c.Steps)
	case c.Chains < 0 || c.Transitions < 0 || c.PilotChains < 0 || c.Threads < 0:
		return nil, errors.New("nuts: negative Chains, Transitions, PilotChains or Threads")
	case !(c.Delta >= 0) || math.IsInf(c.Delta, 1):
		return nil, fmt.Errorf("nuts: Delta = %v, want a positive finite value", c.Delta)
	case c.MaxDepth < 0 || c.MaxDepth > 30:
		return nil, fmt.Errorf("nuts: MaxDepth = %d, want 1..30", c.MaxDepth)
	case !(c.StepSize >= 0) || math.IsInf(c.StepSize, 1):
		return nil, fmt.Errorf("nuts: StepSize = %v, want a finite value >= 0", c.StepSize)
	case !(c.TargetAccept >= 0 && c.TargetAccept < 1):
		return nil, fmt.Errorf("nuts: TargetAccept = %v, want a value in (0, 1)", c.TargetAccept)
	case c.InvMetric != nil && len(c.InvMetric) != d:
		return nil, fmt.Errorf("nuts: InvMetric has length %d, want d = %d", len(c.InvMetric), d)
	}
	for j, v := range c.InvMetric {
		if !(v > 0) || math.IsInf(v, 1) {
			return nil, fmt.Errorf("nuts: InvMetric[%d] = %v is not positive and finite", j, v)
		}
	}
	if c.Steps == 0 {
		c.Steps = 1000
	}
	if c.Chains == 0 {
		c.Chains = 16
	}
	if c.Delta == 0 {
		c.Delta = 4
	}
	if c.Transitions == 0 {
		c.Transitions = 1
	}
	if c.MaxDepth == 0 {
		c.MaxDepth = 10
	}
	if c.TargetAccept == 0 {
		c.TargetAccept = 0.8
	}
	if c.PilotChains == 0 {
		c.PilotChains = 4
	}
	if c.Threads == 0 {
		c.Threads = runtime.GOMAXPROCS(0)
	}
	// The schedule and the step sizes per temperature (one table per
	// pilot, a handful of shared ones) grow with Steps, the runs' results
	// with Chains; refuse sizes that cannot fit rather than run out of
	// memory.
	what := fmt.Sprintf("Steps = %d temperatures for %d pilot chains", c.Steps, c.PilotChains)
	if err := memlimit.Check(what, 8, c.Steps, c.PilotChains+5); err != nil {
		return nil, fmt.Errorf("nuts: %w", err)
	}
	if err := memlimit.Check(fmt.Sprintf("Chains = %d annealing runs", c.Chains), 64, c.Chains); err != nil {
		return nil, fmt.Errorf("nuts: %w", err)
	}
	a.betas = SigmoidSchedule(c.Steps, c.Delta)
	return a, nil
}

// Stream tags keep the pilot's random numbers apart from the runs'.
const (
	streamRun   = 1 << 40
	streamPilot = 2 << 40
)

// pilotGain is the Robbins-Monro gain of the pilot's step-size tracking:
// log ε moves by gain·(accept - target) per transition, fast enough to
// follow a hundredfold change of scale over a few dozen temperatures.
const pilotGain = 0.5

// estimate runs the pilot (unless the step size is fixed) and the real
// runs, forward (AIS) or reverse (RAIS), and combines the weights.
func (a *annealer) estimate(ctx context.Context, reverse bool) (*AISResult, error) {
	if ctx == nil {
		ctx = context.Background()
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	T := a.Steps
	res := &AISResult{Betas: a.betas, StepSizes: make([]float64, T)}
	var calls int64

	if a.StepSize > 0 {
		for t := 1; t < T-1; t++ {
			res.StepSizes[t] = a.StepSize
		}
	} else if T > 2 {
		logEps := make([][]float64, a.PilotChains)
		pilots := make([]runResult, a.PilotChains)
		errs := forEachChain(ctx, a.PilotChains, min(a.Threads, a.PilotChains), func(done <-chan struct{}, p int) error {
			logEps[p] = make([]float64, T)
			var err error
			pilots[p], err = a.run(done, streamPilot|uint64(p), p, a.PilotChains, reverse, true, logEps[p])
			if err != nil {
				return fmt.Errorf("nuts: pilot run %d: %w", p, err)
			}
			return nil
		})
		if err := firstError(ctx, unwrapCanceled(errs)); err != nil {
			return nil, err
		}
		// A forward pilot whose prior draw has zero likelihood
		// stops at once and has no step sizes to offer.
		var tables [][]float64
		for p, r := range pilots {
			calls += r.gradCalls
			if r.completed {
				tables = append(tables, logEps[p])
			}
		}
		if len(tables) == 0 {
			return nil, errors.New("nuts: no pilot run got past a zero-likelihood prior draw; set StepSize or PilotChains")
		}
		logEps = tables
		res.StepSizes = smoothStepSizes(logEps)
	}

	logSteps := make([]float64, T)
	for t, e := range res.StepSizes {
		logSteps[t] = math.Log(e)
	}
	runs := make([]runResult, a.Chains)
	errs := forEachChain(ctx, a.Chains, min(a.Threads, a.Chains), func(done <-chan struct{}, i int) error {
		var err error
		runs[i], err = a.run(done, streamRun|uint64(i), i, a.Chains, reverse, false, logSteps)
		if err != nil {
			return fmt.Errorf("nuts: annealing run %d: %w", i, err)
		}
		return nil
	})
	if err := firstError(ctx, unwrapCanceled(errs)); err != nil {
		return nil, err
	}

	res.LogZRuns = make([]float64, a.Chains)
	logw := make([]float64, a.Chains)
	for i, r := range runs {
		calls += r.gradCalls
		res.Divergences += r.divergences
		logw[i] = r.logw
		res.LogZRuns[i] = r.logw
		if reverse {
			res.LogZRuns[i] = -r.logw
		}
		res.MeanLogZ += res.LogZRuns[i]
	}
	res.MeanLogZ /= float64(a.Chains)
	res.GradCalls = calls

	lme, relErr, ess := logMeanExp(logw)
	if math.IsInf(lme, -1) {
		return nil, errors.New("nuts: every annealing run ended with zero weight (log L = -Inf at its start)")
	}
	res.LogZ, res.LogZErr, res.ESS = lme, relErr, ess
	if reverse {
		res.LogZ = -lme
	}
	return res, nil
}

// unwrapCanceled maps wrapped cancellations back to errCanceled so that
// firstError reports the caller's ctx.Err() for them.
func unwrapCanceled(errs []error) []error {
	for i, err := range errs {
		if errors.Is(err, errCanceled) {
			errs[i] = errCanceled
		}
	}
	return errs
}

// smoothStepSizes averages the pilots' log step sizes per temperature and
// smooths them over neighbouring temperatures to damp the noise of the
// stochastic approximation.
func smoothStepSizes(logEps [][]float64) []float64 {
	T := len(logEps[0])
	mean := make([]float64, T)
	for _, le := range logEps {
		for t, v := range le {
			mean[t] += v / float64(len(logEps))
		}
	}
	const half = 2
	out := make([]float64, T)
	for t := 1; t < T-1; t++ {
		var s float64
		var n int
		for k := max(1, t-half); k <= min(T-2, t+half); k++ {
			s += mean[k]
			n++
		}
		out[t] = math.Exp(s / float64(n))
	}
	return out
}

// runResult is what one annealing run reports.
type runResult struct {
	completed   bool // the run reached the end of the schedule
	logw        float64
	gradCalls   int64
	divergences int
}

// run anneals one chain along the schedule. A pilot run (pilot true)
// tunes log ε by stochastic approximation and records in logEps the value
// reached at each temperature; a real run only reads logEps.
func (a *annealer) run(done <-chan struct{}, stream uint64, index, runs int, reverse, pilot bool, logEps []float64) (out runResult, err error) {
	d := a.d
	rng := newRNG(a.Seed, stream)
	tmp := &tempered{prior: a.prior, like: a.like, gl: make([]float64, d)}
	m := newMetric(DiagMetric, d)
	if a.InvMetric != nil {
		m.setDiag(a.InvMetric)
	}
	smp := newSampler(d, tmp.eval, rng, m, a.MaxDepth, done)
	defer func() { out.gradCalls = smp.gradCalls }()

	T := len(a.betas)
	if reverse {
		copy(smp.cur.q, a.start[startIndex(index, runs, len(a.start))])
	} else {
		a.samplePrior(smp.cur.q, rng)
		if !allFinite(smp.cur.q) {
			return out, errors.New("prior sampler returned a non-finite point")
		}
	}

	// Forward, temperature index t runs 1..T-1: the weight picks up
	// (β_t - β_{t-1}) log L(x_{t-1}) and, below the top, x_t comes from
	// a transition at β_t. Reverse, t runs T-1..1: the weight picks up
	// -(β_t - β_{t-1}) log L(x_t) and, above the bottom, x_{t-1} comes
	// from a transition at β_{t-1}.
	var logw, le float64
	first := true
	for k := 1; k < T; k++ {
		t, next := k, k
		if reverse {
			t, next = T-k, T-k-1
		}
		// Evaluate at the current point under the temperature of the
		// coming transition: one call yields both log L for the weight
		// and the tempered density and gradient the transition needs.
		tmp.beta = a.betas[next]
		if err := smp.eval(smp.cur); err != nil {
			return out, err
		}
		ll := tmp.lastLL
		switch {
		case math.IsNaN(ll) || math.IsInf(ll, 1):
			return out, fmt.Errorf("log likelihood is %v at a state of the annealing chain", ll)
		case math.IsInf(ll, -1) && reverse:
			return out, errors.New("log likelihood is -Inf at a posterior draw")
		case math.IsInf(ll, -1):
			// The prior draw has L = 0: the weight is zero and no
			// transition can change that.
			out.logw = ll
			return out, nil
		}
		dBeta := a.betas[t] - a.betas[t-1]
		if reverse {
			logw -= dBeta * ll
		} else {
			logw += dBeta * ll
		}
		if next == 0 || next == T-1 {
			continue
		}
		if !isFinite(smp.cur.lp) || !allFinite(smp.cur.grad) {
			return out, fmt.Errorf("tempered log density %v or its gradient is not finite at the current state (β = %v)", smp.cur.lp, a.betas[next])
		}
		if pilot && first {
			smp.eps = 1
			if err := smp.initStepSize(); err != nil {
				return out, err
			}
			le = math.Log(smp.eps)
			first = false
		}
		if !pilot {
			le = logEps[next]
		}
		for r := 0; r < a.Transitions; r++ {
			smp.eps = math.Exp(le)
			info, err := smp.transition()
			if err != nil {
				return out, err
			}
			if info.divergent {
				out.divergences++
			}
			if pilot {
				le += pilotGain * (info.accept - a.TargetAccept)
			}
		}
		if pilot {
			logEps[next] = le
		}
	}
	out.logw = logw
	out.completed = true
	return out, nil
}

// startIndex picks the posterior draw that starts reverse run i of n from
// m draws: evenly spaced when there are enough draws, so that runs started
// from one MCMC chain are as far apart as possible, else cycling.
func startIndex(i, n, m int) int {
	if n <= m {
		return i * m / n
	}
	return i % m
}

// tempered is the density prior·L^β with its gradient. It remembers log L
// at the last point evaluated, which the weight update needs.
type tempered struct {
	prior, like LogDensityGrad
	beta        float64
	gl          []float64
	lastLL      float64
}

func (t *tempered) eval(grad, x []float64) (float64, error) {
	lp, err := t.prior(grad, x)
	if err != nil {
		return 0, err
	}
	if math.IsInf(lp, -1) {
		// Outside the prior's support the likelihood need not even
		// be defined.
		t.lastLL = math.Inf(-1)
		return lp, nil
	}
	ll, err := t.like(t.gl, x)
	if err != nil {
		return 0, err
	}
	t.lastLL = ll
	if t.beta == 0 {
		return lp, nil
	}
	for i, g := range t.gl {
		grad[i] += t.beta * g
	}
	return lp + t.beta*ll, nil
}

// logMeanExp returns log mean exp(v), the delta-method standard error of
// that log (the relative standard error of the mean weight) and the
// effective sample size (Σw)²/Σw² of the weights.
func logMeanExp(v []float64) (lme, se, ess float64) {
	mx := math.Inf(-1)
	for _, x := range v {
		mx = math.Max(mx, x)
	}
	if math.IsInf(mx, -1) {
		return mx, math.Inf(1), 0
	}
	n := float64(len(v))
	var sum, sum2 float64
	for _, x := range v {
		w := math.Exp(x - mx)
		sum += w
		sum2 += w * w
	}
	mean := sum / n
	lme = mx + math.Log(mean)
	ess = sum * sum / sum2
	if len(v) < 2 {
		return lme, math.Inf(1), ess
	}
	variance := (sum2 - n*mean*mean) / (n - 1)
	se = math.Sqrt(math.Max(variance, 0)/n) / mean
	return lme, se, ess
}
