package ensemble

import (
	"fmt"
	"math"
	"slices"
)

// setInit validates the settings that choose the starting positions.
func (c *config) setInit(s *Settings) error {
	d, k := c.d, c.walkers
	if s.Init != nil {
		if len(s.Init) != k*d {
			return fmt.Errorf("ensemble: len(Init) = %d, want Walkers×d = %d×%d = %d", len(s.Init), k, d, k*d)
		}
		if i := nonFinite(s.Init); i >= 0 {
			return fmt.Errorf("ensemble: Init[%d] (walker %d, coordinate %d) is %v", i, i/d, i%d, s.Init[i])
		}
		// The moves build every proposal from affine combinations of
		// walkers, so an ensemble with no spread in a coordinate can
		// never acquire one.
		for j := range d {
			same := true
			for w := 1; w < k && same; w++ {
				same = s.Init[w*d+j] == s.Init[j]
			}
			if same {
				return fmt.Errorf("ensemble: all Init walkers have coordinate %d equal to %v: the ensemble cannot leave that hyperplane", j, s.Init[j])
			}
		}
		c.init = slices.Clone(s.Init)
	}
	if s.InitCenter != nil {
		if len(s.InitCenter) != d {
			return fmt.Errorf("ensemble: len(InitCenter) = %d, want d = %d", len(s.InitCenter), d)
		}
		if i := nonFinite(s.InitCenter); i >= 0 {
			return fmt.Errorf("ensemble: InitCenter[%d] is %v", i, s.InitCenter[i])
		}
		c.center = slices.Clone(s.InitCenter)
	}
	c.scale = s.InitScale
	if c.scale == 0 {
		c.scale = defaultInitScale
	}
	if !(c.scale > 0) || math.IsInf(c.scale, 1) {
		return fmt.Errorf("ensemble: InitScale = %v, need a finite InitScale > 0", s.InitScale)
	}
	if (s.Lower == nil) != (s.Upper == nil) {
		return fmt.Errorf("ensemble: Lower and Upper must be given together")
	}
	if s.Lower != nil {
		if len(s.Lower) != d || len(s.Upper) != d {
			return fmt.Errorf("ensemble: len(Lower) = %d and len(Upper) = %d, want d = %d", len(s.Lower), len(s.Upper), d)
		}
		for i := range d {
			lo, hi := s.Lower[i], s.Upper[i]
			if !(lo < hi) || math.IsInf(lo, 0) || math.IsInf(hi, 0) {
				return fmt.Errorf("ensemble: box coordinate %d is [%v, %v], need finite Lower < Upper", i, lo, hi)
			}
		}
		c.lower, c.upper = slices.Clone(s.Lower), slices.Clone(s.Upper)
	}
	return nil
}

// nonFinite returns the index of the first NaN or infinite value of x, or -1.
func nonFinite(x []float64) int {
	for i, v := range x {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return i
		}
	}
	return -1
}

// draw writes a generated starting position into x: from the ball around
// the center if there is one, else uniformly from the box if there is
// one, else from the ball around the origin.
func (sm *sampler) draw(x []float64) {
	c := sm.c
	if c.center == nil && c.lower != nil {
		for i := range x {
			x[i] = c.lower[i] + (c.upper[i]-c.lower[i])*sm.rng.Float64()
		}
		return
	}
	for i := range x {
		var m float64
		if c.center != nil {
			m = c.center[i]
		}
		x[i] = m + c.scale*max(1, math.Abs(m))*sm.rng.NormFloat64()
	}
}

// start sets and evaluates the starting positions. Generated walkers that
// land where the density is zero are redrawn; given ones are an error,
// since the stretch move can never leave a zero-density start (its
// acceptance ratio would divide by zero).
func (sm *sampler) start() error {
	c := sm.c
	d, k, half := c.d, c.walkers, sm.half
	sm.x = make([]float64, k*d)
	if c.init != nil {
		copy(sm.x, c.init)
	} else {
		for w := range k {
			sm.draw(sm.x[w*d : (w+1)*d])
		}
	}
	// Two batches of Walkers/2, the batch size of every later call.
	for h := range 2 {
		if err := sm.eval(sm.lp[h*half:(h+1)*half], sm.x[h*half*d:(h+1)*half*d], "at the starting positions"); err != nil {
			return err
		}
	}
	var bad []int
	for w, v := range sm.lp {
		if math.IsInf(v, -1) {
			bad = append(bad, w)
		}
	}
	if len(bad) == 0 {
		return nil
	}
	if c.init != nil {
		w := bad[0]
		return fmt.Errorf("ensemble: %d Init walkers have zero density, first walker %d at x = %s", len(bad), w, formatPoint(sm.x[w*d:(w+1)*d]))
	}
	y := make([]float64, len(bad)*d)
	lp := make([]float64, len(bad))
	for range maxInitRounds {
		y, lp = y[:len(bad)*d], lp[:len(bad)]
		for i := range bad {
			sm.draw(y[i*d : (i+1)*d])
		}
		if err := sm.eval(lp, y, "at redrawn starting positions"); err != nil {
			return err
		}
		still := bad[:0]
		for i, w := range bad {
			if math.IsInf(lp[i], -1) {
				still = append(still, w)
				continue
			}
			copy(sm.x[w*d:(w+1)*d], y[i*d:(i+1)*d])
			sm.lp[w] = lp[i]
		}
		bad = still
		if len(bad) == 0 {
			return nil
		}
	}
	return fmt.Errorf("ensemble: %d of %d starting positions still have zero density after %d redraws; give Init, InitCenter or a box inside the support", len(bad), k, maxInitRounds)
}
