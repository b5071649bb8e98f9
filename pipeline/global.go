package pipeline

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/gbs-evidence/gbs/gbs"
	seedpkg "github.com/gbs-evidence/gbs/internal/seed"

	"github.com/gbs-evidence/gbs/flow"
	"github.com/gbs-evidence/gbs/nuts"
)

// Global moves, with GlobalSettings.Mode Auto (the default), are on where
// each warm-up stage's draws (chains × StageIters points) number at least
// GlobalMinPointsPerDim per dimension, so that the flow fitted on them is
// worth proposing from, and off elsewhere.
//
// With the flow's scale layer the moves measure better on the funnel
// (smaller bias and spread of ln Z, moves accepted about 55 % of the
// time) and no worse on the banana, the Cauchy problem and the ring,
// where a flow fitted on the chains in 32 to 64 dimensions is almost never
// accepted: there they stop after the first warm-up stage that makes them
// (GlobalSettings.MinAccept), which spares the later fits and the moves
// in the kept draws (docs/speed.md). On separated modes they are what
// makes the weights right (see TestPipelineTwoModes).

// GlobalMinPointsPerDim is the least number of a warm-up stage's draws per
// dimension for which gbs.Auto turns global moves on: 8 chains of
// 100 stage iterations cover the ring's 64 dimensions.
const GlobalMinPointsPerDim = 10

// GlobalSettings configures the flow as a global move of the NUTS pipeline's
// sampler (see nuts.GlobalSettings). After NUTS's warm-up the chains run
// Stages more warm-up stages of StageIters iterations; after each, a flow
// q is fitted on the pooled draws of that stage, and the next stage (and,
// after the last, the kept draws) alternates each NUTS transition with
// Moves independence Metropolis–Hastings moves from q. q is fixed once
// the kept draws begin, so every chain is a Markov chain for p. Global
// moves jump between modes, which NUTS cannot, and set the weights of
// modes the chains found in the wrong proportions; q only reaches what the
// chains showed it, so starts are dispersed (see NUTS).
//
// The zero value means the defaults documented on each field.
type GlobalSettings struct {
	// Mode turns the moves on or off; Auto (the default) as said above.
	Mode gbs.Switch
	// Stages is the number of warm-up stages, each ending with a fit of
	// q; default 2.
	Stages int
	// StageIters is the number of iterations per chain in each stage;
	// default 100.
	StageIters int
	// Moves is the number of global moves per NUTS transition; default 1.
	Moves int
	// MinAccept stops the moves after a warm-up stage whose moves were
	// accepted at a lower rate (see nuts.GlobalSettings.MinAccept):
	// default DefaultGlobalMinAccept; negative never stops.
	MinAccept float64
	// Defensive is the weight of a widened copy of the flow in q, a
	// defensive mixture: its base is N(0, DefensiveScale² I) instead of
	// N(0, I). Zero means none; DefensiveScale defaults to 2.
	Defensive, DefensiveScale float64
	// Flow configures q's flow; nil means the defaults with the
	// sampler's box as bounds. Its Seed is replaced by one derived from
	// the pipeline's seed and the stage.
	Flow *flow.Settings
}

// The pipeline's random streams of the sampler's seed (internal/seed):
// the dispersed starts, and the flow fitted after each warm-up stage
// (stage k uses streamGlobalFit+k).
const (
	streamStarts    = 1
	streamGlobalFit = 1 << 32
)

// Defaults of GlobalSettings.
const (
	DefaultGlobalStages     = 2
	DefaultGlobalStageIters = 100
	DefaultGlobalMoves      = 1
	// DefaultGlobalMinAccept is the warm-up acceptance below which the
	// moves stop. Where the flow is worth proposing from its moves are
	// accepted far more often (the funnel 43 to 58 % per stage, two
	// separated modes about 70 %); on the banana and the Cauchy problem
	// none of a stage's 800 moves is, on the ring almost none, and each
	// costs a log-density call with its gradient.
	DefaultGlobalMinAccept = 0.01
)

// on reports whether the settings turn global moves on, after checking
// them.
func (g *GlobalSettings) on() (bool, error) {
	switch {
	case g.Mode.Check("pipeline: Global.Mode") != nil:
		return false, g.Mode.Check("pipeline: Global.Mode")
	case g.Stages < 0:
		return false, fmt.Errorf("pipeline: Global.Stages = %d is negative", g.Stages)
	case g.StageIters < 0:
		return false, fmt.Errorf("pipeline: Global.StageIters = %d is negative", g.StageIters)
	case g.Moves < 0:
		return false, fmt.Errorf("pipeline: Global.Moves = %d is negative", g.Moves)
	case g.MinAccept > 1 || math.IsNaN(g.MinAccept):
		return false, fmt.Errorf("pipeline: Global.MinAccept = %v, want a rate up to 1 (negative: never stop)", g.MinAccept)
	case !(g.Defensive >= 0 && g.Defensive < 1):
		return false, fmt.Errorf("pipeline: Global.Defensive = %v, want a weight in [0, 1)", g.Defensive)
	case !(g.DefensiveScale == 0 || g.DefensiveScale >= 1 && !math.IsInf(g.DefensiveScale, 1)):
		return false, fmt.Errorf("pipeline: Global.DefensiveScale = %v, want a finite scale >= 1 (0 for the default 2)", g.DefensiveScale)
	}
	return g.Mode != gbs.Off, nil
}

// WithGlobalMoves returns the sampler settings s with the flow's global
// moves added as g says, for a density in d dimensions, and whether they
// are on. With global moves and no s.Init, the chains start at points
// drawn uniformly in the central 90 % of the box when s.Lower and s.Upper
// are finite (dispersed starts, so that q sees every mode a chain
// finds). s is not modified. With s.Global already set, Auto keeps it;
// On is then an error, as is a bad setting.
func WithGlobalMoves(s nuts.Settings, g GlobalSettings, d int) (nuts.Settings, bool, error) {
	on, err := g.on()
	if err != nil || !on {
		return s, false, err
	}
	if s.Global != nil {
		if g.Mode == gbs.Auto {
			return s, true, nil // the caller's own global moves
		}
		return s, false, errors.New("pipeline: both the sampler's Global and GlobalSettings are set; use Auto or Off with your own nuts.GlobalSettings")
	}
	chains := cmp.Or(s.Chains, len(s.Init), 4) // nuts's defaults
	if g.Mode == gbs.Auto && chains*cmp.Or(g.StageIters, DefaultGlobalStageIters) < GlobalMinPointsPerDim*d {
		return s, false, nil
	}
	s.Global = g.nutsGlobal(d, s.Seed, s.Lower, s.Upper)
	if s.Init == nil {
		s.Init = dispersedStarts(chains, s.Lower, s.Upper, s.Seed)
	}
	return s, true, nil
}

// nutsGlobal returns the sampler's global-move settings: a flow fitted on
// the draws of each warm-up stage, within the box (lower, upper).
func (g *GlobalSettings) nutsGlobal(d int, seed uint64, lower, upper []float64) *nuts.GlobalSettings {
	out := &nuts.GlobalSettings{Stages: g.Stages, StageIters: g.StageIters, Moves: g.Moves}
	if out.Stages == 0 {
		out.Stages = DefaultGlobalStages
	}
	if out.StageIters == 0 {
		out.StageIters = DefaultGlobalStageIters
	}
	if out.Moves == 0 {
		out.Moves = DefaultGlobalMoves
	}
	switch {
	case g.MinAccept == 0:
		out.MinAccept = DefaultGlobalMinAccept
	case g.MinAccept > 0:
		out.MinAccept = g.MinAccept
	}
	var fs flow.Settings
	if g.Flow != nil {
		fs = *g.Flow
	}
	if fs.Lower == nil && fs.Upper == nil {
		fs.Lower, fs.Upper = lower, upper
	}
	out.Fit = func(stage int, x, _ [][]float64) (nuts.GlobalMove, error) {
		var pooled []float64
		for _, c := range x {
			pooled = append(pooled, c...)
		}
		set := fs
		set.Seed = seedpkg.Derive(seed, streamGlobalFit+uint64(stage))
		f, err := flow.Fit(pooled, d, nil, &set)
		if err != nil {
			return nil, err
		}
		wide := g.DefensiveScale
		if wide == 0 {
			wide = 2
		}
		return flowMove{f: f, eps: g.Defensive, wide: wide}, nil
	}
	return out
}

// flowMove is a fitted flow as a global move, optionally a defensive
// mixture: with weight eps the flow's base N(0, I) is widened to
// N(0, wide² I), which puts more of q's mass in the tails of the flow's
// Gaussianized space, where the regions the chains under-visited (a
// funnel's neck) are mapped. flow.Flow is safe for concurrent use.
type flowMove struct {
	f         *flow.Flow
	eps, wide float64
}

func (m flowMove) Propose(dst []float64, rng *rand.Rand) float64 {
	s := 1.0
	if m.eps > 0 && rng.Float64() < m.eps {
		s = m.wide
	}
	z := make([]float64, len(dst))
	for j := range z {
		z[j] = s * rng.NormFloat64()
	}
	var ld [1]float64
	m.f.Inverse(dst, ld[:], z)
	// The density of the mixture at the point proposed, from the same
	// map as LogQ, so that the two agree to the bit.
	return m.LogQ(dst)
}

func (m flowMove) LogQ(x []float64) float64 {
	z := make([]float64, len(x))
	var ld [1]float64
	m.f.Forward(z, ld[:], x)
	if math.IsNaN(ld[0]) || math.IsInf(ld[0], 0) {
		return math.Inf(-1)
	}
	const halfLog2Pi = 0.91893853320467274178
	var a, b float64
	for _, v := range z {
		a += -0.5*v*v - halfLog2Pi
		if m.eps > 0 {
			w := v / m.wide
			b += -0.5*w*w - halfLog2Pi - math.Log(m.wide)
		}
	}
	if m.eps <= 0 {
		return ld[0] + a
	}
	return ld[0] + logAddExp(math.Log1p(-m.eps)+a, math.Log(m.eps)+b)
}

// dispersedStarts returns one starting point per chain drawn uniformly in
// the central 90 % of the box along each coordinate (nil when the box is
// not finite along every coordinate: NUTS's own random starts apply).
func dispersedStarts(chains int, lower, upper []float64, seed uint64) [][]float64 {
	if lower == nil || upper == nil {
		return nil
	}
	for j := range lower {
		if math.IsInf(lower[j], 0) || math.IsInf(upper[j], 0) {
			return nil
		}
	}
	rng := seedpkg.New(seed, streamStarts)
	out := make([][]float64, chains)
	for c := range out {
		out[c] = make([]float64, len(lower))
		for j := range lower {
			w := upper[j] - lower[j]
			out[c][j] = lower[j] + w*(0.05+0.9*rng.Float64())
		}
	}
	return out
}

func logAddExp(a, b float64) float64 {
	if a < b {
		a, b = b, a
	}
	if math.IsInf(b, -1) {
		return a
	}
	return a + math.Log1p(math.Exp(b-a))
}
