package gbs

import (
	"fmt"
	"math"
)

// checkBounds checks the support bounds of the settings against the
// samples: each given array has one entry per coordinate, no entry is
// NaN, each lower bound is below its upper bound, and every draw lies
// strictly inside (a draw from p cannot lie where p is zero, and the
// default proposal maps the box's edges to infinity).
func checkBounds(lower, upper []float64, s *Samples) error {
	if lower == nil && upper == nil {
		return nil
	}
	d := s.Dim
	for _, b := range []struct {
		v    []float64
		name string
	}{{lower, "Lower"}, {upper, "Upper"}} {
		if b.v == nil {
			continue
		}
		if len(b.v) != d {
			return fmt.Errorf("gbs: %s has %d entries, want one per coordinate (d = %d)", b.name, len(b.v), d)
		}
		for j, v := range b.v {
			if math.IsNaN(v) {
				return fmt.Errorf("gbs: %s[%d] is NaN; use -Inf or +Inf for an open side", b.name, j)
			}
		}
	}
	lo := func(j int) float64 {
		if lower == nil {
			return math.Inf(-1)
		}
		return lower[j]
	}
	hi := func(j int) float64 {
		if upper == nil {
			return math.Inf(1)
		}
		return upper[j]
	}
	for j := 0; j < d; j++ {
		if !(lo(j) < hi(j)) {
			return fmt.Errorf("gbs: the bounds of coordinate %d are (%g, %g): Lower must be below Upper", j, lo(j), hi(j))
		}
	}
	for c, ch := range s.Chains {
		for i, v := range ch {
			if j := i % d; !(v > lo(j) && v < hi(j)) {
				return fmt.Errorf("gbs: sample value %g at chain %d, draw %d, coordinate %d is not strictly inside its bounds (%g, %g)", v, c, i/d, j, lo(j), hi(j))
			}
		}
	}
	return nil
}
