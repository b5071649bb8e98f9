package nuts

import (
	"fmt"
	"math"
)

// BoxMode selects how Settings.Lower and Settings.Upper are used.
type BoxMode int

const (
	// BoxTransform (the default) samples in unconstrained coordinates u,
	// as Stan does for bounded parameters: x = lo + (hi-lo) σ(u) between
	// two bounds, x = lo + e^u or hi - e^u with one, x = u with none, and
	// the density of u carries the Jacobian. Trajectories then never meet
	// the walls of the box, where a chain started far from the mass can
	// otherwise get stuck with every trajectory divergent. Draws and LogP
	// are reported in x, without the Jacobian; step sizes and metrics in
	// ChainStats refer to u.
	BoxTransform BoxMode = iota
	// BoxStartOnly uses the box only to draw starting points; the
	// density itself must return -Inf outside its support.
	BoxStartOnly
)

// boxMap maps unconstrained u to the box, coordinate by coordinate.
type boxMap struct {
	lo, hi []float64
}

func newBoxMap(lower, upper []float64, d int) *boxMap {
	b := &boxMap{lo: make([]float64, d), hi: make([]float64, d)}
	for j := 0; j < d; j++ {
		b.lo[j], b.hi[j] = bounds(lower, upper, j)
	}
	return b
}

// toX writes x(u) into x and returns log |dx/du|.
func (b *boxMap) toX(x, u []float64) float64 {
	var logJ float64
	for j, v := range u {
		lo, hi := b.lo[j], b.hi[j]
		switch {
		case !math.IsInf(lo, 0) && !math.IsInf(hi, 0):
			s := 1 / (1 + math.Exp(-v))
			x[j] = lo + (hi-lo)*s
			logJ += math.Log(hi-lo) + logSigmoid(v) + logSigmoid(-v)
		case !math.IsInf(lo, 0):
			x[j] = lo + math.Exp(v)
			logJ += v
		case !math.IsInf(hi, 0):
			x[j] = hi - math.Exp(v)
			logJ += v
		default:
			x[j] = v
		}
	}
	return logJ
}

// toU writes u(x) into u; x must lie strictly inside the box.
func (b *boxMap) toU(u, x []float64) error {
	for j, v := range x {
		lo, hi := b.lo[j], b.hi[j]
		if !(v > lo && v < hi) {
			return fmt.Errorf("coordinate %d = %v is not strictly inside (%v, %v)", j, v, lo, hi)
		}
		switch {
		case !math.IsInf(lo, 0) && !math.IsInf(hi, 0):
			p := (v - lo) / (hi - lo)
			u[j] = math.Log(p) - math.Log1p(-p)
		case !math.IsInf(lo, 0):
			u[j] = math.Log(v - lo)
		case !math.IsInf(hi, 0):
			u[j] = math.Log(hi - v)
		default:
			u[j] = v
		}
	}
	return nil
}

// wrap returns the log density of u and its gradient by the chain rule.
func (b *boxMap) wrap(f density, d int) density {
	return func(grad, u []float64) (float64, error) {
		x := make([]float64, d)
		logJ := b.toX(x, u)
		lp, err := f(grad, x)
		if err != nil || math.IsInf(lp, -1) || math.IsNaN(lp) {
			return lp, err
		}
		for j, v := range u {
			lo, hi := b.lo[j], b.hi[j]
			switch {
			case !math.IsInf(lo, 0) && !math.IsInf(hi, 0):
				s := 1 / (1 + math.Exp(-v))
				grad[j] = grad[j]*(hi-lo)*s*(1-s) + 1 - 2*s
			case !math.IsInf(lo, 0):
				grad[j] = grad[j]*math.Exp(v) + 1
			case !math.IsInf(hi, 0):
				grad[j] = -grad[j]*math.Exp(v) + 1
			}
		}
		return lp + logJ, nil
	}
}

func logSigmoid(v float64) float64 {
	if v >= 0 {
		return -math.Log1p(math.Exp(-v))
	}
	return v - math.Log1p(math.Exp(v))
}
