package ensemble

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"

	"github.com/gbs-evidence/gbs/internal/seed"

	"github.com/gbs-evidence/gbs/internal/memlimit"
)

// LogDensityFunc evaluates the log density, up to an additive constant, at
// len(dst) points stored row-major in x (len(x) == len(dst)*d), writing the
// values into dst. It must not retain or modify x.
//
// -Inf is a valid value (zero density, e.g. outside the prior support) and
// the proposal is then rejected. NaN and +Inf are reported as errors, and a
// non-nil error aborts sampling; Sample returns it wrapped.
//
// During sampling every call receives exactly Walkers/2 points; see the
// package documentation. The function is called from a single goroutine,
// so it may parallelize internally over the points of a batch.
type LogDensityFunc func(dst, x []float64) error

// Move selects how proposals are built from the complementary half of the
// ensemble.
type Move int

const (
	// Stretch is the Goodman & Weare stretch move, emcee's default.
	Stretch Move = iota
	// DifferentialEvolution is the differential-evolution move: a walker
	// is displaced by a scaled difference of two other walkers.
	DifferentialEvolution
)

var moveNames = [...]string{Stretch: "stretch", DifferentialEvolution: "de"}

func (m Move) String() string {
	if m < 0 || int(m) >= len(moveNames) {
		return "Move(" + strconv.Itoa(int(m)) + ")"
	}
	return moveNames[m]
}

// Settings configures Sample. The zero value, and a nil *Settings, select
// the defaults documented on each field.
type Settings struct {
	// Walkers is the ensemble size K. It must be even, at least 2 and at
	// least 2d (emcee's rule: the ensemble must be able to span the
	// space; with fewer walkers the moves stay in a subspace), and at least
	// 4 for DifferentialEvolution. The default is len(Init)/d when Init is
	// given, else max(32, 2d+2).
	Walkers int

	// Steps is the total number of steps per walker, burn-in included.
	// The default is 5000. All Steps × Walkers states are kept in memory
	// until burn-in and thinning are known.
	Steps int

	// Burn is the number of initial steps discarded. Zero or negative
	// selects s₀ + ⌈2 τmax⌉, at most Steps/2, with τmax the largest
	// autocorrelation time over coordinates estimated on the second half
	// of the run and s₀ the first step at which the log density averaged
	// over walkers crosses its mean over the second half (s₀ ≈ 0 for a
	// start in equilibrium; see the package documentation). An explicit
	// Burn must be less than Steps.
	Burn int

	// Thin keeps every Thin-th step after burn-in. Zero selects
	// max(1, ⌊τmax/2⌋), reduced if needed so that each walker keeps at
	// least one draw.
	Thin int

	// Move is the proposal move; default Stretch.
	Move Move

	// A is the stretch scale a > 1 of the stretch move; default 2.
	A float64

	// DEGamma is the base scale γ0 of the differential-evolution move;
	// default 2.38/√(2d), the optimal scale for a Gaussian target. Each
	// proposal uses γ = γ0(1 + 0.1 ξ), ξ ~ N(0, 1): with a fixed γ only
	// a countable set of points would be reachable from a given start.
	DEGamma float64

	// Init optionally gives the starting positions, Walkers × d row-major.
	// Every walker must have finite log density and no coordinate may have
	// the same value for all walkers.
	Init []float64

	// InitCenter, when Init is nil, starts the walkers in a small Gaussian
	// ball around this point: coordinate i has standard deviation
	// InitScale·max(1, |InitCenter[i]|). Without Init, InitCenter and
	// Lower/Upper, the ball is centered at the origin.
	InitCenter []float64
	// InitScale is the relative radius of the initial ball; default 1e-3.
	InitScale float64

	// Lower and Upper, when Init and InitCenter are nil, give a box from
	// which the starting positions are drawn uniformly. They only shape
	// the start: the sampler does not confine walkers to the box, so the
	// log density must return -Inf outside its support.
	Lower, Upper []float64

	// Seed seeds the PCG random stream.
	Seed uint64
}

// Result holds the draws of Sample.
type Result struct {
	// Dim is the dimension d and Walkers the ensemble size.
	Dim     int
	Walkers int

	// Chain[w] holds the kept draws of walker w row-major: draw i is
	// Chain[w][i*Dim : (i+1)*Dim]. The draws follow burn-in and thinning
	// and are in step order.
	Chain [][]float64
	// LogP[w][i] is the log density of draw i of walker w.
	LogP [][]float64

	// AcceptanceFraction is the fraction of accepted proposals of each
	// walker over all steps, burn-in included.
	AcceptanceFraction []float64

	// Tau is the integrated autocorrelation time of each coordinate, in
	// steps, estimated with IntegratedTime (c = 5) over all walkers on
	// the steps after an explicit burn-in, or on the second half of the
	// run when the burn-in is automatic.
	Tau []float64

	// Burn and Thin are the burn-in and thinning used.
	Burn, Thin int

	// NCall is the total number of points at which the log density was
	// evaluated.
	NCall int64

	// Warnings lists conditions that make the draws doubtful, such as a
	// run shorter than 50 τ or stuck walkers.
	Warnings []string
}

// config is Settings with defaults filled in and validated.
type config struct {
	d, walkers, steps, burn, thin int
	move                          proposer
	init, center                  []float64
	scale                         float64
	lower, upper                  []float64
	seed                          uint64
}

const (
	defaultSteps     = 5000
	defaultMinWalker = 32
	defaultA         = 2.0
	defaultInitScale = 1e-3
	deJitter         = 0.1

	// tauWindow is the constant c of the automatic window of the
	// autocorrelation time estimator (emcee's default).
	tauWindow = 5
	// tauLengths is the number of autocorrelation times a run should span
	// for the estimate of τ to be trusted (emcee's default tolerance).
	tauLengths = 50
	// maxInitRounds bounds the redraws of generated starting positions
	// that fall where the density is zero.
	maxInitRounds = 100
)

func newConfig(f LogDensityFunc, d int, s *Settings) (*config, error) {
	if f == nil {
		return nil, errors.New("ensemble: nil log density")
	}
	if d <= 0 {
		return nil, fmt.Errorf("ensemble: dimension %d, want d >= 1", d)
	}
	if s == nil {
		s = &Settings{}
	}
	c := &config{d: d, steps: s.Steps, burn: s.Burn, thin: s.Thin, seed: s.Seed}

	c.walkers = s.Walkers
	switch {
	case c.walkers < 0:
		return nil, fmt.Errorf("ensemble: negative walker count %d", c.walkers)
	case c.walkers == 0 && s.Init != nil:
		if len(s.Init) == 0 || len(s.Init)%d != 0 {
			return nil, fmt.Errorf("ensemble: len(Init) = %d is not a positive multiple of d = %d", len(s.Init), d)
		}
		c.walkers = len(s.Init) / d
	case c.walkers == 0:
		c.walkers = max(defaultMinWalker, 2*d+2)
	}
	switch {
	case c.walkers < 2:
		return nil, fmt.Errorf("ensemble: %d walkers, need at least 2", c.walkers)
	case c.walkers%2 != 0:
		return nil, fmt.Errorf("ensemble: %d walkers, need an even number (the ensemble is split in two halves)", c.walkers)
	case c.walkers < 2*d:
		return nil, fmt.Errorf("ensemble: %d walkers for d = %d, need at least 2d = %d", c.walkers, d, 2*d)
	}

	switch {
	case c.steps < 0:
		return nil, fmt.Errorf("ensemble: negative step count %d", c.steps)
	case c.steps == 0:
		c.steps = defaultSteps
	case c.steps < 2:
		return nil, fmt.Errorf("ensemble: %d steps, need at least 2", c.steps)
	}
	if c.burn < 0 {
		c.burn = 0
	}
	if c.burn >= c.steps {
		return nil, fmt.Errorf("ensemble: Burn = %d leaves no draws of Steps = %d", c.burn, c.steps)
	}
	if c.thin < 0 {
		return nil, fmt.Errorf("ensemble: negative Thin %d", c.thin)
	}
	// Every step of every walker is stored, and the kept ones copied into
	// the result: refuse sizes that cannot fit rather than run out of
	// memory.
	what := fmt.Sprintf("Walkers × Steps = %d × %d states of dimension %d", c.walkers, c.steps, d)
	if err := memlimit.Check(what, 16, c.walkers, c.steps, d+1); err != nil {
		return nil, fmt.Errorf("ensemble: %w", err)
	}

	switch s.Move {
	case Stretch:
		a := s.A
		if a == 0 {
			a = defaultA
		}
		if !(a > 1) || math.IsInf(a, 1) {
			return nil, fmt.Errorf("ensemble: stretch scale A = %v, need a finite A > 1", a)
		}
		c.move = stretch{a: a}
	case DifferentialEvolution:
		if c.walkers < 4 {
			return nil, fmt.Errorf("ensemble: %d walkers, the differential-evolution move needs at least 4", c.walkers)
		}
		g := s.DEGamma
		if g == 0 {
			g = 2.38 / math.Sqrt(2*float64(d))
		}
		if !(g > 0) || math.IsInf(g, 1) {
			return nil, fmt.Errorf("ensemble: DEGamma = %v, need a finite DEGamma > 0", g)
		}
		c.move = diffEvolution{gamma: g, jitter: deJitter}
	default:
		return nil, fmt.Errorf("ensemble: unknown move %v", s.Move)
	}

	if err := c.setInit(s); err != nil {
		return nil, err
	}
	return c, nil
}

// Sample draws from the density exp(f) on R^d with the affine-invariant
// ensemble sampler configured by s (nil means defaults). It returns an
// error for invalid settings, for a failing, NaN or +Inf log density, for
// starting positions of zero density, and when ctx is done; the context is
// checked before every step.
func Sample(ctx context.Context, f LogDensityFunc, d int, s *Settings) (*Result, error) {
	if ctx == nil {
		return nil, errors.New("ensemble: nil context")
	}
	c, err := newConfig(f, d, s)
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("ensemble: not started: %w", err)
	}
	sm := newSampler(f, c)
	if err := sm.start(); err != nil {
		return nil, err
	}
	for step := range c.steps {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("ensemble: stopped before step %d of %d: %w", step+1, c.steps, err)
		}
		if err := sm.step(step); err != nil {
			return nil, err
		}
	}
	return sm.result(), nil
}

// sampler is the state of one run.
type sampler struct {
	f    LogDensityFunc
	c    *config
	rng  *rand.Rand
	half int

	x  []float64 // walkers×d current positions
	lp []float64 // current log densities

	perm []int     // walker order; perm[:half] and perm[half:] are the halves
	y    []float64 // half×d proposals
	lpy  []float64 // their log densities
	lnq  []float64 // log Hastings factors of the proposals

	accepted []int64
	chain    [][]float64 // chain[w]: steps×d states of walker w
	logp     [][]float64 // logp[w]: steps log densities
	ncall    int64
}

func newSampler(f LogDensityFunc, c *config) *sampler {
	rng := seed.New(c.seed, 0)
	half := c.walkers / 2
	sm := &sampler{
		f: f, c: c, rng: rng, half: half,
		lp:       make([]float64, c.walkers),
		perm:     make([]int, c.walkers),
		y:        make([]float64, half*c.d),
		lpy:      make([]float64, half),
		lnq:      make([]float64, half),
		accepted: make([]int64, c.walkers),
		chain:    make([][]float64, c.walkers),
		logp:     make([][]float64, c.walkers),
	}
	for w := range sm.perm {
		sm.perm[w] = w
	}
	for w := range sm.chain {
		sm.chain[w] = make([]float64, c.steps*c.d)
		sm.logp[w] = make([]float64, c.steps)
	}
	return sm
}

// eval evaluates f at the points x into dst and checks the values. where
// names the stage for error messages.
func (sm *sampler) eval(dst, x []float64, where string) error {
	sm.ncall += int64(len(dst))
	if err := sm.f(dst, x); err != nil {
		return fmt.Errorf("ensemble: log density failed %s: %w", where, err)
	}
	d := sm.c.d
	for i, v := range dst {
		if math.IsNaN(v) || math.IsInf(v, 1) {
			return fmt.Errorf("ensemble: log density is %v %s at x = %s", v, where, formatPoint(x[i*d:(i+1)*d]))
		}
	}
	return nil
}

// step advances the ensemble by one step: a random split into halves and
// an update of each half against the other.
func (sm *sampler) step(step int) error {
	d, half := sm.c.d, sm.half
	// emcee (v3) redraws the split at every step; any split that does not
	// depend on the current positions leaves the target invariant.
	sm.rng.Shuffle(len(sm.perm), func(i, j int) { sm.perm[i], sm.perm[j] = sm.perm[j], sm.perm[i] })
	for h := range 2 {
		active := sm.perm[h*half : (h+1)*half]
		comp := sm.perm[(1-h)*half : (2-h)*half]
		sm.c.move.propose(sm.y, sm.lnq, sm.x, active, comp, d, sm.rng)
		if err := sm.eval(sm.lpy, sm.y, "at step "+strconv.Itoa(step+1)); err != nil {
			return err
		}
		for i, w := range active {
			// Draw u for every proposal, even a sure accept or reject, so
			// that the random stream does not depend on rounding.
			u := sm.rng.Float64()
			lpy := sm.lpy[i]
			if math.IsInf(lpy, -1) {
				continue
			}
			if math.Log(u) < sm.lnq[i]+lpy-sm.lp[w] {
				copy(sm.x[w*d:(w+1)*d], sm.y[i*d:(i+1)*d])
				sm.lp[w] = lpy
				sm.accepted[w]++
			}
		}
	}
	for w := range sm.c.walkers {
		copy(sm.chain[w][step*d:(step+1)*d], sm.x[w*d:(w+1)*d])
		sm.logp[w][step] = sm.lp[w]
	}
	return nil
}

// result chooses burn-in and thinning and assembles the Result.
func (sm *sampler) result() *Result {
	c := sm.c
	r := &Result{
		Dim:                c.d,
		Walkers:            c.walkers,
		AcceptanceFraction: make([]float64, c.walkers),
		NCall:              sm.ncall,
	}
	var meanAcc float64
	for w, n := range sm.accepted {
		r.AcceptanceFraction[w] = float64(n) / float64(c.steps)
		meanAcc += r.AcceptanceFraction[w]
	}
	meanAcc /= float64(c.walkers)

	start := c.burn
	if start == 0 {
		start = c.steps / 2
	}
	r.Tau = coordinateTimes(sm.chain, c.d, start, c.steps, tauWindow)
	r.Burn, r.Thin, r.Warnings = burnThin(sm.logp, r.Tau, c.steps, c.burn, c.thin)

	n := (c.steps - r.Burn + r.Thin - 1) / r.Thin
	r.Chain = make([][]float64, c.walkers)
	r.LogP = make([][]float64, c.walkers)
	for w := range c.walkers {
		ch := make([]float64, 0, n*c.d)
		lp := make([]float64, 0, n)
		for s := r.Burn; s < c.steps; s += r.Thin {
			ch = append(ch, sm.chain[w][s*c.d:(s+1)*c.d]...)
			lp = append(lp, sm.logp[w][s])
		}
		r.Chain[w], r.LogP[w] = ch, lp
	}

	if meanAcc < 0.1 {
		r.Warnings = append(r.Warnings, fmt.Sprintf("mean acceptance fraction %.3g is low (< 0.1): the ensemble mixes slowly", meanAcc))
	}
	var stuck int
	for _, a := range r.AcceptanceFraction {
		if a < 0.2*meanAcc {
			stuck++
		}
	}
	if stuck > 0 {
		r.Warnings = append(r.Warnings, fmt.Sprintf("%d walkers accepted less than a fifth of the mean acceptance fraction %.3g: they may be stuck", stuck, meanAcc))
	}
	return r
}

// formatPoint renders a point for error messages, abbreviated in high
// dimension.
func formatPoint(x []float64) string {
	const maxShown = 8
	var b strings.Builder
	b.WriteByte('[')
	for i, v := range x {
		if i == maxShown {
			fmt.Fprintf(&b, " … (%d more)", len(x)-maxShown)
			break
		}
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(strconv.FormatFloat(v, 'g', 6, 64))
	}
	b.WriteByte(']')
	return b.String()
}
