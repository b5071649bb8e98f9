package nuts

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime/pprof"
	"sync"

	"github.com/gbs-evidence/gbs/internal/seed"

	"github.com/gbs-evidence/gbs/internal/memlimit"
)

// LogDensityGrad writes the gradient of log p at x into grad and returns
// log p. The density need not be normalized. It may return -Inf outside the
// support; such points, and points where log p or the gradient is NaN, are
// rejected as divergent transitions rather than treated as errors. A non-nil
// error aborts sampling; Sample returns it wrapped with the chain index.
//
// x and grad must not be retained after the call returns. Unless
// Settings.Threads is 1, the function is called concurrently from several
// goroutines (one chain each).
type LogDensityGrad func(grad, x []float64) (float64, error)

// DefaultWarmup and DefaultDraws are the iterations per chain of warm-up
// and of kept draws when Settings leaves them zero.
const (
	DefaultWarmup = 1000
	DefaultDraws  = 1000
)

// Settings configures Sample. The zero value, and a nil *Settings, select
// the defaults documented on each field.
type Settings struct {
	// Chains is the number of independent chains; default 4, or
	// len(Init) when Init is given.
	Chains int
	// Warmup is the number of adaptation iterations per chain; default
	// DefaultWarmup. A negative value means no warmup at all: the metric stays the
	// identity and the step size is StepSize (or the heuristic's choice).
	Warmup int
	// Draws is the number of kept draws per chain after warmup; default
	// DefaultDraws.
	Draws int
	// MaxDepth caps the tree depth, so a transition takes at most
	// 2^MaxDepth - 1 leapfrog steps; default 10, at most 30.
	MaxDepth int
	// TargetAccept is the mean acceptance statistic that step-size
	// adaptation aims for, in (0, 1); default 0.8. Raise it (0.9, 0.95)
	// when there are divergences.
	TargetAccept float64
	// Metric is the form of the adapted metric; default DiagMetric.
	Metric Metric
	// StepSize is the initial step size. With warmup it only seeds the
	// step-size heuristic, whose result seeds dual averaging. Without
	// warmup a positive StepSize is used as is; zero means the heuristic's
	// choice from a unit step.
	StepSize float64

	// Init optionally gives one starting point per chain (each of length d).
	// log p must be finite there, and under BoxTransform the point must
	// lie strictly inside the box.
	Init [][]float64
	// Lower and Upper optionally bound a box (either may be nil, entries
	// may be infinite); the density must be zero (log p = -Inf) outside
	// it. With the default Box mode, BoxTransform, the chains run in
	// unconstrained coordinates u (x = lo + (hi-lo) σ(u) between two
	// bounds, lo + e^u or hi - e^u with one), so they never meet a wall;
	// Draws and LogP are still x and log p(x). When Init is nil, each
	// chain starts at a uniform draw of u in (-2, 2), Stan's convention,
	// which for a two-sided bound is x in the central 76% of the interval.
	// With BoxStartOnly the chains run in x itself: each starts at a
	// uniform draw in the central 90% of the box, along unbounded
	// coordinates at a uniform draw in (-2, 2), or an exponential offset
	// from a one-sided bound, and every step that leaves the support is a
	// divergence. Starting points where log p or its gradient is not
	// finite are redrawn up to 100 times.
	Lower, Upper []float64
	// Box selects how the box is used: BoxTransform (the default) samples
	// in unconstrained coordinates, BoxStartOnly only draws starting
	// points in it.
	Box BoxMode

	// Seed seeds the random streams. Chain c uses its own PCG stream
	// derived from (Seed, c), so draws do not depend on Threads or on
	// GOMAXPROCS.
	Seed uint64
	// Threads is the number of goroutines running chains; 0 means one
	// per chain, among which the Go runtime shares GOMAXPROCS cores, so
	// that chains of unequal cost (tree depths differ between chains)
	// end together rather than leave a core idle while the last chain
	// of a thread finishes; 1 runs the chains one after another (for
	// densities that are not safe for concurrent use). The draws are
	// identical for any value.
	Threads int

	// Global, if not nil, adds independence Metropolis–Hastings moves
	// from a global proposal to each iteration (see GlobalSettings); nil
	// means NUTS alone.
	Global *GlobalSettings
}

// ChainStats describes one chain's adaptation and post-warmup behaviour.
type ChainStats struct {
	// StepSize is the adapted leapfrog step size used for the kept draws.
	// Under BoxTransform it, like the metric below, refers to the
	// unconstrained coordinates u, not to x.
	StepSize float64
	// MeanAccept is the mean acceptance statistic over the kept draws;
	// it should be near TargetAccept.
	MeanAccept float64
	// Divergences counts kept draws whose trajectory diverged; any at all
	// means the estimates may be biased. WarmupDivergences counts those
	// during warmup, which are expected while the step size is large.
	Divergences       int
	WarmupDivergences int
	// TreeDepths is the histogram of tree depths over the kept draws
	// (index 0..MaxDepth); MeanTreeDepth its mean. MaxDepthHits counts
	// transitions stopped by MaxDepth rather than by a U-turn.
	TreeDepths    []int
	MeanTreeDepth float64
	MaxDepthHits  int
	// Leapfrogs counts leapfrog steps over the kept draws.
	Leapfrogs int64
	// GradCalls counts gradient evaluations, warmup and initialization
	// included.
	GradCalls int64
	// InvMetric is the diagonal of the adapted inverse metric (the
	// estimated marginal variances, of u under BoxTransform).
	// InvMetricDense is the full d×d row-major inverse metric, only for
	// DenseMetric.
	InvMetric      []float64
	InvMetricDense []float64
	// Global counts the chain's global moves (zero without
	// Settings.Global); Global.AcceptRate() is their acceptance rate
	// over the kept draws.
	Global GlobalStats
}

// Result holds the draws of all chains.
type Result struct {
	// Dim is the dimension d.
	Dim int
	// Draws[c] holds the kept draws of chain c, row-major draws×d.
	Draws [][]float64
	// LogP[c][i] is log p at draw i of chain c.
	LogP [][]float64
	// Chains holds per-chain statistics.
	Chains []ChainStats
	// GradCalls is the total number of gradient evaluations, warmup
	// included.
	GradCalls int64
	// Batches is the number of calls of the batched density of
	// SampleBatch (zero for Sample). A chain that ends a transition
	// starts the next at once, so it is the largest GradCalls of a
	// chain, not their sum.
	Batches int64
	// RHatLogP is R-hat (see RHat) of log p across the chains' kept
	// draws: near 1 when the chains agree, above 1.01 to 1.05 when they
	// have not mixed. It is NaN with fewer than 4 draws per chain or when
	// log p is constant. LowChains names chains stuck at low log p.
	RHatLogP float64
	// GlobalStopped is the warm-up stage after which the global moves
	// stopped because too few were accepted (GlobalSettings.MinAccept);
	// zero when they ran to the end.
	GlobalStopped int
}

// Draw returns draw i of chain c as a slice of r.Draws[c].
func (r *Result) Draw(c, i int) []float64 {
	return r.Draws[c][i*r.Dim : (i+1)*r.Dim]
}

// Trace returns coordinate j of every chain, one series per chain, in the
// form ESS takes.
func (r *Result) Trace(j int) [][]float64 {
	out := make([][]float64, len(r.Draws))
	for c, dr := range r.Draws {
		n := len(dr) / r.Dim
		s := make([]float64, n)
		for i := range s {
			s[i] = dr[i*r.Dim+j]
		}
		out[c] = s
	}
	return out
}

// ESS returns the effective sample size of coordinate j over all chains.
func (r *Result) ESS(j int) (float64, error) {
	if j < 0 || j >= r.Dim {
		return 0, fmt.Errorf("nuts: coordinate %d out of range [0, %d)", j, r.Dim)
	}
	return ESS(r.Trace(j))
}

// Divergences returns the number of divergent kept draws over all chains.
func (r *Result) Divergences() int {
	var n int
	for _, c := range r.Chains {
		n += c.Divergences
	}
	return n
}

// errCanceled is what a chain returns when it notices that sampling was
// cancelled, either by the caller or because another chain failed.
var errCanceled = errors.New("nuts: canceled")

// maxInitAttempts is the number of random starting points tried per chain.
const maxInitAttempts = 100

// config is Settings with the defaults filled in and the input checked.
type config struct {
	Settings
	warmup int
}

func newConfig(d int, s *Settings) (*config, error) {
	if d <= 0 {
		return nil, fmt.Errorf("nuts: dimension d = %d, want d > 0", d)
	}
	var c config
	if s != nil {
		c.Settings = *s
	}
	switch {
	case c.Chains < 0:
		return nil, fmt.Errorf("nuts: Chains = %d is negative", c.Chains)
	case c.Draws < 0:
		return nil, fmt.Errorf("nuts: Draws = %d is negative", c.Draws)
	case c.MaxDepth < 0 || c.MaxDepth > 30:
		return nil, fmt.Errorf("nuts: MaxDepth = %d, want 1..30 (0 for the default)", c.MaxDepth)
	case c.Threads < 0:
		return nil, fmt.Errorf("nuts: Threads = %d is negative", c.Threads)
	case !(c.TargetAccept >= 0 && c.TargetAccept < 1):
		return nil, fmt.Errorf("nuts: TargetAccept = %v, want a value in (0, 1)", c.TargetAccept)
	case !(c.StepSize >= 0) || math.IsInf(c.StepSize, 1):
		return nil, fmt.Errorf("nuts: StepSize = %v, want a finite value >= 0", c.StepSize)
	case c.Metric < DiagMetric || c.Metric > UnitMetric:
		return nil, fmt.Errorf("nuts: unknown metric %v", c.Metric)
	case c.Box < BoxTransform || c.Box > BoxStartOnly:
		return nil, fmt.Errorf("nuts: unknown box mode %d", int(c.Box))
	}
	if c.Chains == 0 {
		c.Chains = 4
		if c.Init != nil {
			c.Chains = len(c.Init)
		}
	}
	c.warmup = c.Warmup
	switch {
	case c.Warmup == 0:
		c.warmup = DefaultWarmup
	case c.Warmup < 0:
		c.warmup = 0
	}
	if c.Draws == 0 {
		c.Draws = DefaultDraws
	}
	if c.MaxDepth == 0 {
		c.MaxDepth = 10
	}
	// The kept draws and their log p are the storage that grows with the
	// settings; refuse sizes that cannot fit rather than run out of memory.
	what := fmt.Sprintf("Chains × Draws = %d × %d draws of dimension %d", c.Chains, c.Draws, d)
	if err := memlimit.Check(what, 8, c.Chains, c.Draws, d+1); err != nil {
		return nil, fmt.Errorf("nuts: %w", err)
	}
	if c.TargetAccept == 0 {
		c.TargetAccept = 0.8
	}
	if c.Threads == 0 {
		c.Threads = c.Chains
	}
	if c.Threads > c.Chains {
		c.Threads = c.Chains
	}
	if c.Init != nil {
		if len(c.Init) != c.Chains {
			return nil, fmt.Errorf("nuts: %d starting points in Init for %d chains", len(c.Init), c.Chains)
		}
		for i, x := range c.Init {
			if len(x) != d {
				return nil, fmt.Errorf("nuts: Init[%d] has length %d, want d = %d", i, len(x), d)
			}
			for j, v := range x {
				if math.IsNaN(v) || math.IsInf(v, 0) {
					return nil, fmt.Errorf("nuts: Init[%d][%d] = %v is not finite", i, j, v)
				}
			}
		}
	}
	if c.Lower != nil && len(c.Lower) != d {
		return nil, fmt.Errorf("nuts: Lower has length %d, want d = %d", len(c.Lower), d)
	}
	if c.Upper != nil && len(c.Upper) != d {
		return nil, fmt.Errorf("nuts: Upper has length %d, want d = %d", len(c.Upper), d)
	}
	for j := 0; j < d; j++ {
		lo, hi := bounds(c.Lower, c.Upper, j)
		if !(lo < hi) {
			return nil, fmt.Errorf("nuts: empty box along coordinate %d: Lower = %v, Upper = %v", j, lo, hi)
		}
	}
	return &c, nil
}

func bounds(lower, upper []float64, j int) (lo, hi float64) {
	lo, hi = math.Inf(-1), math.Inf(1)
	if lower != nil {
		lo = lower[j]
	}
	if upper != nil {
		hi = upper[j]
	}
	return lo, hi
}

// Sample draws from the density whose log and gradient f computes, in d
// dimensions, with Settings.Chains chains of multinomial NUTS with Stan's
// adaptation. With a box (Settings.Lower, Upper) the chains run in
// unconstrained coordinates unless Settings.Box is BoxStartOnly; the
// result holds x and log p(x) either way. Check Result.RHatLogP,
// Result.LowChains and the divergences before trusting the draws.
// Cancelling ctx stops all chains within a few leapfrog steps and Sample
// returns ctx.Err(). An error from f stops all chains and is returned
// wrapped with the index of the chain that met it.
func Sample(ctx context.Context, f LogDensityGrad, d int, s *Settings) (*Result, error) {
	if f == nil {
		return nil, errors.New("nuts: nil log density")
	}
	return sample(ctx, density(f), nil, d, s)
}

// sample runs Sample with the per-point density f, or SampleBatch with the
// batched density bf when f is nil.
func sample(ctx context.Context, f density, bf BatchLogDensityGrad, d int, s *Settings) (*Result, error) {
	cfg, err := newConfig(d, s)
	if err != nil {
		return nil, err
	}
	if ctx == nil {
		ctx = context.Background()
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}

	res := &Result{
		Dim:    d,
		Draws:  make([][]float64, cfg.Chains),
		LogP:   make([][]float64, cfg.Chains),
		Chains: make([]ChainStats, cfg.Chains),
	}
	box, err := cfg.boxTransform(d)
	if err != nil {
		return nil, err
	}
	gcfg, err := newGlobalConfig(cfg.Global)
	if err != nil {
		return nil, err
	}
	var batchCalls int64
	// phase runs work for every chain, through the batched density when
	// there is one; a failure of any chain ends the run.
	phase := func(work func(ch *chainRun, done <-chan struct{}, f density) error, chains []*chainRun) error {
		var errs []error
		if bf != nil {
			b := newBatchRun(bf, d, cfg.Chains)
			errs = b.run(ctx, cfg.Chains, func(done <-chan struct{}, c int, f density) error {
				return work(chains[c], done, f)
			})
			batchCalls += b.calls
		} else {
			errs = forEachChain(ctx, cfg.Chains, cfg.Threads, func(done <-chan struct{}, c int) error {
				return work(chains[c], done, f)
			})
		}
		for c, ch := range chains {
			res.Chains[c].GradCalls = ch.smp.gradCalls
		}
		return firstError(ctx, errs)
	}
	chains := make([]*chainRun, cfg.Chains)
	for c := range chains {
		chains[c] = newChainRun(c, box, d, cfg, res)
	}
	// The phases are separated by the fits of q, which need every
	// chain's draws; the first phase includes NUTS's warm-up and the last
	// the kept draws, so without global moves there is a single phase.
	// A phase's work is a list of steps run in turn by each chain.
	type step func(ch *chainRun, done <-chan struct{}, f density) error
	var pending []step
	run := func(steps ...step) error {
		pending = append(pending, steps...)
		work := pending
		pending = nil
		return phase(func(ch *chainRun, done <-chan struct{}, f density) error {
			for _, w := range work {
				if err := w(ch, done, f); err != nil {
					return err
				}
			}
			return nil
		}, chains)
	}
	pending = append(pending, (*chainRun).warmup)
	if gcfg != nil {
		move := gcfg.Move
		for stage := 1; stage <= gcfg.Stages; stage++ {
			cur := move
			var prop0, acc0 int64
			for _, ch := range chains {
				prop0 += ch.stats.Global.WarmupProposed
				acc0 += ch.stats.Global.WarmupAccepted
			}
			if err := run(func(ch *chainRun, done <-chan struct{}, f density) error {
				return ch.stage(done, f, cur, gcfg)
			}); err != nil {
				return nil, err
			}
			if stageAcceptLow(chains, prop0, acc0, gcfg.MinAccept) {
				move = nil
				res.GlobalStopped = stage
				break
			}
			if move, err = fitStageMove(ctx, gcfg, stage, chains); err != nil {
				return nil, err
			}
		}
		for _, ch := range chains {
			ch.move, ch.moves = move, gcfg.Moves
		}
	}
	if err := run((*chainRun).production); err != nil {
		return nil, err
	}
	res.Batches = batchCalls
	for _, c := range res.Chains {
		res.GradCalls += c.GradCalls
	}
	res.RHatLogP = math.NaN()
	if rh, err := RHat(res.LogP); err == nil {
		res.RHatLogP = rh
	}
	return res, nil
}

// boxTransform returns the map to the unbounded space when the chains
// run there (BoxTransform with bounds), with the starting points mapped
// to it and the bounds cleared, so that starting points are drawn from
// (-2, 2) in u, Stan's convention; nil when they run in x.
func (cfg *config) boxTransform(d int) (*boxMap, error) {
	if cfg.Box != BoxTransform || (cfg.Lower == nil && cfg.Upper == nil) {
		return nil, nil
	}
	box := newBoxMap(cfg.Lower, cfg.Upper, d)
	if cfg.Init != nil {
		init := make([][]float64, len(cfg.Init))
		for i, x := range cfg.Init {
			init[i] = make([]float64, d)
			if err := box.toU(init[i], x); err != nil {
				return nil, fmt.Errorf("nuts: Init[%d]: %v", i, err)
			}
		}
		cfg.Init = init
	}
	cfg.Lower, cfg.Upper = nil, nil
	return box, nil
}

// fitStageMove fits the global move on the draws of warm-up stage
// stage, pooled over the chains.
func fitStageMove(ctx context.Context, gcfg *globalConfig, stage int, chains []*chainRun) (GlobalMove, error) {
	x := make([][]float64, len(chains))
	lp := make([][]float64, len(chains))
	for c, ch := range chains {
		x[c], lp[c] = ch.stageX, ch.stageLogP
	}
	var q GlobalMove
	var err error
	// The fit's cost apart from the chains' in a CPU profile: goroutines
	// it starts inherit the label.
	pprof.Do(ctx, pprof.Labels("stage", fmt.Sprintf("global-move fit %d", stage)), func(context.Context) {
		q, err = gcfg.Fit(stage, x, lp)
	})
	if err != nil {
		return nil, fmt.Errorf("nuts: fitting the global move after warm-up stage %d: %w", stage, err)
	}
	if q == nil {
		return nil, fmt.Errorf("nuts: the global move's Fit returned no proposal after warm-up stage %d", stage)
	}
	return q, nil
}

// stageAcceptLow reports whether the global moves of the stage just run
// (the chains' warm-up counts beyond prop0 proposed and acc0 accepted)
// were accepted at a rate below minAccept.
func stageAcceptLow(chains []*chainRun, prop0, acc0 int64, minAccept float64) bool {
	var prop, acc int64
	for _, ch := range chains {
		prop += ch.stats.Global.WarmupProposed
		acc += ch.stats.Global.WarmupAccepted
	}
	prop, acc = prop-prop0, acc-acc0
	return prop > 0 && float64(acc) < minAccept*float64(prop)
}

// forEachChain runs work for chains 0..n-1 on the given number of
// goroutines and returns each chain's error. The first failure cancels the
// others through done. Which goroutine runs which chain does not matter:
// each chain's computation depends only on its index.
func forEachChain(ctx context.Context, n, threads int, work func(done <-chan struct{}, c int) error) []error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	threads = max(1, min(threads, n))
	errs := make([]error, n)
	next := make(chan int)
	var wg sync.WaitGroup
	for range threads {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for c := range next {
				if ctx.Err() != nil {
					errs[c] = errCanceled
					continue
				}
				if err := work(ctx.Done(), c); err != nil {
					errs[c] = err
					cancel()
				}
			}
		}()
	}
	for c := 0; c < n; c++ {
		next <- c
	}
	close(next)
	wg.Wait()
	return errs
}

// firstError picks the error to report: a real failure of the lowest
// chain index if there is one, otherwise the caller's cancellation.
func firstError(ctx context.Context, errs []error) error {
	for _, err := range errs {
		if err != nil && !errors.Is(err, errCanceled) {
			return err
		}
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	for _, err := range errs {
		if err != nil {
			// Cancelled without a cause we know of; should not
			// happen, but never report success.
			return err
		}
	}
	return nil
}

// chainRun is the state of one chain across the phases of sampling:
// NUTS's warm-up, the warm-up stages of global moves and the kept draws.
// With a box map the chain runs in unconstrained coordinates and its draws
// are mapped back to the box.
type chainRun struct {
	c     int
	d     int
	cfg   *config
	box   *boxMap
	smp   *sampler
	m     *metric
	stats *ChainStats
	res   *Result

	move       GlobalMove // the production kernel's proposal, if any
	moves      int
	xbuf, prop []float64
	// The draws of the last warm-up stage, in x.
	stageX, stageLogP []float64
}

func newChainRun(c int, box *boxMap, d int, cfg *config, res *Result) *chainRun {
	m := newMetric(cfg.Metric, d)
	smp := newSampler(d, nil, newRNG(cfg.Seed, uint64(c)), m, cfg.MaxDepth, nil)
	return &chainRun{
		c: c, d: d, cfg: cfg, box: box, smp: smp, m: m, stats: &res.Chains[c], res: res,
		xbuf: make([]float64, d), prop: make([]float64, d),
	}
}

// bind makes f (the user's density, or the batch's for this chain) and
// done the sampler's for one phase.
func (ch *chainRun) bind(done <-chan struct{}, f density) {
	ch.smp.raw = nil
	if ch.box != nil {
		f, ch.smp.raw = ch.box.wrap(f, ch.d)
	}
	ch.smp.f, ch.smp.done = f, done
}

func (ch *chainRun) wrap(err error) error {
	if errors.Is(err, errCanceled) {
		return err
	}
	return fmt.Errorf("nuts: chain %d: %w", ch.c, err)
}

// warmup places the chain at its start and runs NUTS's adaptation.
func (ch *chainRun) warmup(done <-chan struct{}, f density) error {
	ch.bind(done, f)
	smp, cfg := ch.smp, ch.cfg
	var init []float64
	if cfg.Init != nil {
		init = cfg.Init[ch.c]
	}
	if err := smp.start(init, cfg.Lower, cfg.Upper); err != nil {
		return ch.wrap(err)
	}
	smp.eps = cfg.StepSize
	if smp.eps == 0 {
		smp.eps = 1
	}
	if cfg.warmup > 0 || cfg.StepSize == 0 {
		if err := smp.initStepSize(); err != nil {
			return ch.wrap(err)
		}
	}
	if cfg.warmup > 0 {
		if err := smp.warmup(cfg.warmup, cfg.TargetAccept, ch.stats); err != nil {
			return ch.wrap(err)
		}
	}
	return nil
}

// stage runs one warm-up stage of global moves from q (none if q is nil)
// and keeps its draws for the next fit.
func (ch *chainRun) stage(done <-chan struct{}, f density, q GlobalMove, g *globalConfig) error {
	ch.bind(done, f)
	n, d := g.StageIters, ch.d
	ch.stageX = make([]float64, n*d)
	ch.stageLogP = make([]float64, n)
	gs := &ch.stats.Global
	for i := 0; i < n; i++ {
		info, err := ch.smp.transition()
		if err != nil {
			return ch.wrap(err)
		}
		if info.divergent {
			ch.stats.WarmupDivergences++
		}
		if q != nil {
			for range g.Moves {
				ok, err := ch.smp.globalMove(q, ch.box, ch.xbuf, ch.prop)
				if err != nil {
					return ch.wrap(err)
				}
				gs.WarmupProposed++
				if ok {
					gs.WarmupAccepted++
				}
			}
		}
		ch.store(ch.stageX[i*d:(i+1)*d], &ch.stageLogP[i])
	}
	gs.Calls = ch.smp.globalCalls
	return nil
}

// store writes the chain's state in x and its log p.
func (ch *chainRun) store(x []float64, lp *float64) {
	if ch.box != nil {
		ch.box.toX(x, ch.smp.cur.q, nil, nil)
	} else {
		copy(x, ch.smp.cur.q)
	}
	*lp = ch.smp.cur.lpx
}

// production draws the kept draws, with the fixed kernel.
func (ch *chainRun) production(done <-chan struct{}, f density) error {
	ch.bind(done, f)
	smp, cfg, stats, d := ch.smp, ch.cfg, ch.stats, ch.d
	moves := 0
	if ch.move != nil {
		moves = ch.moves
	}
	draws := make([]float64, cfg.Draws*d)
	logp := make([]float64, cfg.Draws)
	stats.TreeDepths = make([]int, cfg.MaxDepth+1)
	var sumAccept, sumDepth float64
	for i := 0; i < cfg.Draws; i++ {
		info, err := smp.transition()
		if err != nil {
			return ch.wrap(err)
		}
		for range moves {
			ok, err := smp.globalMove(ch.move, ch.box, ch.xbuf, ch.prop)
			if err != nil {
				return ch.wrap(err)
			}
			stats.Global.Proposed++
			if ok {
				stats.Global.Accepted++
			}
		}
		ch.store(draws[i*d:(i+1)*d], &logp[i])
		sumAccept += info.accept
		sumDepth += float64(info.depth)
		stats.TreeDepths[info.depth]++
		if info.depth == cfg.MaxDepth {
			stats.MaxDepthHits++
		}
		if info.divergent {
			stats.Divergences++
		}
		stats.Leapfrogs += int64(info.leapfrogs)
	}
	stats.Global.Calls = smp.globalCalls
	n := float64(cfg.Draws)
	stats.StepSize = smp.eps
	stats.MeanAccept = sumAccept / n
	stats.MeanTreeDepth = sumDepth / n
	stats.InvMetric = ch.m.invDiag()
	if ch.m.kind == DenseMetric {
		stats.InvMetricDense = append([]float64(nil), ch.m.dense...)
	}
	ch.res.Draws[ch.c] = draws
	ch.res.LogP[ch.c] = logp
	return nil
}

// warmup runs the adaptation phase: dual averaging of the step size
// throughout, and metric updates at the end of each slow window, after
// which the step size is re-tuned from scratch for the new metric.
func (s *sampler) warmup(n int, target float64, stats *ChainStats) error {
	da := newDualAveraging(target)
	da.restart(s.eps)
	var (
		win     *windows
		est     *welford
		scratch []float64
	)
	if s.metric.kind != UnitMetric {
		win = newWindows(n)
		est = newWelford(s.d, s.metric.kind == DenseMetric)
		scratch = make([]float64, len(est.m2))
	}
	for i := 0; i < n; i++ {
		info, err := s.transition()
		if err != nil {
			return err
		}
		if info.divergent {
			stats.WarmupDivergences++
		}
		s.eps = da.learn(info.accept)
		if win == nil {
			continue
		}
		changed, err := win.adaptMetric(est, s.metric, s.cur.q, scratch)
		if err != nil {
			return err
		}
		if changed {
			if err := s.initStepSize(); err != nil {
				return err
			}
			da.restart(s.eps)
		}
	}
	s.eps = da.final()
	return nil
}

// start places the chain at init, or at a random point drawn as
// documented on Settings.Lower, and evaluates the density there.
func (s *sampler) start(init, lower, upper []float64) error {
	z := s.cur
	attempts := maxInitAttempts
	if init != nil {
		attempts = 1
	}
	for a := 0; a < attempts; a++ {
		select {
		case <-s.done:
			return errCanceled
		default:
		}
		if init != nil {
			copy(z.q, init)
		} else {
			for j := range z.q {
				lo, hi := bounds(lower, upper, j)
				z.q[j] = randomStart(s.rng, lo, hi)
			}
		}
		if err := s.eval(z); err != nil {
			return err
		}
		if isFinite(z.lp) && allFinite(z.grad) {
			return nil
		}
	}
	if init != nil {
		return fmt.Errorf("log p = %v at the given starting point, or its gradient is not finite", z.lpx)
	}
	return fmt.Errorf("no starting point with finite log p and gradient in %d random attempts (last log p = %v)", maxInitAttempts, z.lpx)
}

// randomStart draws one starting coordinate for the interval (lo, hi).
func randomStart(rng *rand.Rand, lo, hi float64) float64 {
	u := rng.Float64()
	switch {
	case !math.IsInf(lo, 0) && !math.IsInf(hi, 0):
		// Keep away from the edges, where densities often vanish or
		// their gradients blow up.
		return lo + (hi-lo)*(0.05+0.9*u)
	case !math.IsInf(lo, 0):
		return lo + math.Exp(4*u-2)
	case !math.IsInf(hi, 0):
		return hi - math.Exp(4*u-2)
	default:
		return 4*u - 2
	}
}

func isFinite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }

func allFinite(x []float64) bool {
	for _, v := range x {
		if !isFinite(v) {
			return false
		}
	}
	return true
}

// newRNG returns the random stream number stream under seed.
func newRNG(s, stream uint64) *rand.Rand { return seed.New(s, stream) }
