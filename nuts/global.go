package nuts

import (
	"fmt"
	"math"
	"math/rand/v2"
)

// GlobalMove is the proposal q of an independence Metropolis–Hastings move:
// a density over x (the user's coordinates, also under BoxTransform) that
// can be sampled and evaluated exactly. A move draws x' ~ q and accepts it
// with probability min(1, p(x') q(x) / (p(x) q(x'))), which leaves p
// invariant whatever q is; the closer q is to p, the more moves are
// accepted. Alternated with NUTS trajectories, such moves jump between
// modes and into regions the local dynamics under-visit.
//
// Both methods are called concurrently from several chains and must be
// safe for concurrent use. Propose must take all its randomness from rng,
// so that the draws depend only on the seed.
type GlobalMove interface {
	// Propose draws a point from q into dst (length d) and returns its
	// ln q.
	Propose(dst []float64, rng *rand.Rand) float64
	// LogQ returns ln q(x); -Inf where q has no mass.
	LogQ(x []float64) float64
}

// GlobalFitter builds the proposal of global moves from draws: x[c] holds
// chain c's draws of one warm-up stage (row-major, in x), logp[c] their
// log p. stage counts from 1. It must be deterministic in its input, so
// that the chains stay reproducible for a seed.
type GlobalFitter func(stage int, x, logp [][]float64) (GlobalMove, error)

// GlobalSettings turns on global moves: each iteration of a chain is one
// NUTS transition followed by Moves independence Metropolis–Hastings moves
// from q (see GlobalMove). Each kernel leaves p invariant, so their cycle
// does too.
//
// q is either fixed (Move) or fitted on the chains (Fit). With Fit, the
// warm-up gains Stages stages of StageIters iterations each after NUTS's
// own adaptation: the first without global moves (unless Move is given),
// each later one with the q fitted on the draws of the stage before. q is
// refitted only between these warm-up stages; the kept draws all come
// from one fixed kernel, so each chain is a Markov chain with stationary
// density p.
type GlobalSettings struct {
	// Move is the proposal used from the first stage on; nil with Fit
	// means no global moves until the first fit.
	Move GlobalMove
	// Fit, if not nil, is called after each warm-up stage on the draws
	// of that stage, and its proposal replaces the current one.
	Fit GlobalFitter
	// Stages is the number of warm-up stages with Fit; default 2.
	// Ignored without Fit.
	Stages int
	// StageIters is the number of iterations per chain in each stage;
	// default 200.
	StageIters int
	// Moves is the number of global moves per NUTS transition; default 1.
	Moves int
	// MinAccept, if positive, stops the global moves after a warm-up
	// stage whose moves (all chains together) were accepted at a rate
	// below it: the remaining stages and fits are skipped and the kept
	// draws are NUTS's alone (Result.GlobalStopped says after which
	// stage). A proposal that is almost never accepted costs a
	// log-density call per move and cannot move the chains. Zero never
	// stops.
	MinAccept float64
}

// GlobalStats counts a chain's global moves.
type GlobalStats struct {
	// Proposed and Accepted count the global moves after warm-up;
	// WarmupProposed and WarmupAccepted those of the warm-up stages.
	Proposed, Accepted             int64
	WarmupProposed, WarmupAccepted int64
	// Calls counts the log-density evaluations of the global moves, all
	// stages included (a proposal q puts outside the box costs none).
	// They are included in ChainStats.GradCalls: the chains' density
	// returns the gradient with log p.
	Calls int64
}

// AcceptRate returns Accepted/Proposed, NaN when no move was proposed.
func (g GlobalStats) AcceptRate() float64 {
	if g.Proposed == 0 {
		return math.NaN()
	}
	return float64(g.Accepted) / float64(g.Proposed)
}

// globalConfig is GlobalSettings with the defaults filled in.
type globalConfig struct {
	GlobalSettings
}

func newGlobalConfig(g *GlobalSettings) (*globalConfig, error) {
	if g == nil {
		return nil, nil
	}
	c := &globalConfig{*g}
	switch {
	case c.Move == nil && c.Fit == nil:
		return nil, fmt.Errorf("nuts: Global has neither a Move nor a Fit")
	case c.Stages < 0:
		return nil, fmt.Errorf("nuts: Global.Stages = %d is negative", c.Stages)
	case c.StageIters < 0:
		return nil, fmt.Errorf("nuts: Global.StageIters = %d is negative", c.StageIters)
	case c.Moves < 0:
		return nil, fmt.Errorf("nuts: Global.Moves = %d is negative", c.Moves)
	case !(c.MinAccept >= 0 && c.MinAccept <= 1):
		return nil, fmt.Errorf("nuts: Global.MinAccept = %v, want a rate in [0, 1]", c.MinAccept)
	}
	if c.Fit == nil {
		c.Stages = 0
	} else if c.Stages == 0 {
		c.Stages = 2
	}
	if c.StageIters == 0 {
		c.StageIters = 200
	}
	if c.Moves == 0 {
		c.Moves = 1
	}
	return c, nil
}

// globalMove makes one independence Metropolis–Hastings move from q. Under
// a box map the chain runs in u but q is a density in x; the Jacobians of
// the target and of the proposal in u are the same and cancel, so the
// ratio is taken in x. xbuf and prop are scratch of length d. It reports
// whether the move was accepted.
func (s *sampler) globalMove(q GlobalMove, box *boxMap, xbuf, prop []float64) (bool, error) {
	x := s.cur.q
	if box != nil {
		box.toX(xbuf, s.cur.q, nil, nil)
		x = xbuf
	}
	lqx := q.LogQ(x)
	lqy := q.Propose(prop, s.rng)
	logU := math.Log(s.rng.Float64())
	if math.IsNaN(lqy) || math.IsInf(lqy, 0) || !allFinite(prop) {
		return false, nil
	}
	z := s.propose
	if box != nil {
		if box.toU(z.q, prop) != nil {
			return false, nil // outside the box: p = 0
		}
	} else {
		copy(z.q, prop)
	}
	if err := s.eval(z); err != nil {
		return false, err
	}
	s.globalCalls++
	if !isFinite(z.lp) || !allFinite(z.grad) {
		return false, nil
	}
	// ln of p(x') q(x) / (p(x) q(x')); NaN (q(x) = 0 and p(x') = 0 cannot
	// both happen here) compares false and rejects.
	logR := z.lpx - s.cur.lpx + lqx - lqy
	if logU < logR {
		s.cur, s.propose = z, s.cur
		return true, nil
	}
	return false, nil
}
