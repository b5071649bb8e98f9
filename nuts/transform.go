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
	// the density of u carries the Jacobian, log p(x(u)) + log |dx/du|.
	// Trajectories then never meet the walls of the box, where a chain
	// started far from the mass can otherwise get stuck with every
	// trajectory divergent, and the step size is not limited by the
	// walls. Draws and LogP are reported in x, without the Jacobian;
	// step sizes and metrics in ChainStats refer to u.
	BoxTransform BoxMode = iota
	// BoxStartOnly uses the box only to draw starting points (uniformly in
	// its central 90%) and samples x directly; the density itself must
	// return -Inf outside its support, and every step that leaves it is a
	// divergence. This was the only mode before the transform existed.
	BoxStartOnly
)

func (b BoxMode) String() string {
	switch b {
	case BoxTransform:
		return "transform"
	case BoxStartOnly:
		return "start-only"
	}
	return fmt.Sprintf("BoxMode(%d)", int(b))
}

// Kinds of coordinate in a boxMap.
const (
	coordFree  = iota // x = u
	coordBoth         // x = lo + (hi-lo) σ(u)
	coordLower        // x = lo + e^u
	coordUpper        // x = hi - e^u
)

// boxMap maps unconstrained u to the box, coordinate by coordinate.
type boxMap struct {
	kind             []uint8
	lo, hi, logWidth []float64
}

func newBoxMap(lower, upper []float64, d int) *boxMap {
	b := &boxMap{kind: make([]uint8, d), lo: make([]float64, d), hi: make([]float64, d), logWidth: make([]float64, d)}
	for j := 0; j < d; j++ {
		lo, hi := bounds(lower, upper, j)
		b.lo[j], b.hi[j] = lo, hi
		switch {
		case !math.IsInf(lo, 0) && !math.IsInf(hi, 0):
			b.kind[j] = coordBoth
			b.logWidth[j] = math.Log(hi - lo)
		case !math.IsInf(lo, 0):
			b.kind[j] = coordLower
		case !math.IsInf(hi, 0):
			b.kind[j] = coordUpper
		}
	}
	return b
}

// toX writes x(u) into x and returns log |dx/du|. If deriv is not nil it
// receives dx_j/du_j, and dlogJ the derivative of log |dx_j/du_j| by u_j.
//
// Between two bounds, with e = exp(-|u|) (never overflowing), σ(u) is
// 1/(1+e) or e/(1+e), x is computed from the nearer bound so that points
// close to either bound keep their precision, and
// log σ(u)(1-σ(u)) = -|u| - 2 log(1+e). The factors 1+e, each in [1, 2],
// are multiplied and their log taken once per few hundred coordinates, so
// the transform costs one exponential per coordinate.
func (b *boxMap) toX(x, u, deriv, dlogJ []float64) float64 {
	n := len(u)
	kind, lo, hi, logWidth := b.kind[:n], b.lo[:n], b.hi[:n], b.logWidth[:n]
	x = x[:n]
	// The exponentials come first, in a loop of their own, parked in x:
	// a call spills every value held in a register, so the arithmetic
	// below, free of calls, keeps its operands in registers.
	for j, v := range u {
		switch kind[j] {
		case coordBoth:
			x[j] = math.Exp(-math.Abs(v))
		case coordLower, coordUpper:
			x[j] = math.Exp(v)
		}
	}
	var logJ float64
	prod := 1.0 // product of the pending factors 1+e
	for j, v := range u {
		switch kind[j] {
		case coordBoth:
			lo, hi := lo[j], hi[j]
			a := math.Abs(v)
			e := x[j]
			inv := 1 / (1 + e)
			small := e * inv // σ(-|u|), the smaller of σ(u), 1-σ(u)
			var xj float64
			if v >= 0 {
				xj = hi - (hi-lo)*small
			} else {
				xj = lo + (hi-lo)*small
			}
			// Rounding must never put x on a bound, where the
			// density may be -Inf although u is finite.
			if xj <= lo {
				xj = math.Nextafter(lo, hi)
			} else if xj >= hi {
				xj = math.Nextafter(hi, lo)
			}
			x[j] = xj
			logJ += logWidth[j] - a
			prod *= 1 + e
			if prod > 1e300 {
				logJ -= 2 * math.Log(prod)
				prod = 1
			}
			if deriv != nil {
				deriv[j] = (hi - lo) * small * inv
				// 1 - 2σ(u)
				if v >= 0 {
					dlogJ[j] = 2*small - 1
				} else {
					dlogJ[j] = 1 - 2*small
				}
			}
		case coordLower:
			e := x[j]
			x[j] = lo[j] + e
			logJ += v
			if deriv != nil {
				deriv[j] = e
				dlogJ[j] = 1
			}
		case coordUpper:
			e := x[j]
			x[j] = hi[j] - e
			logJ += v
			if deriv != nil {
				deriv[j] = -e
				dlogJ[j] = 1
			}
		default:
			x[j] = v
			if deriv != nil {
				deriv[j] = 1
				dlogJ[j] = 0
			}
		}
	}
	if prod != 1 {
		logJ -= 2 * math.Log(prod)
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
		switch b.kind[j] {
		case coordBoth:
			// log(p/(1-p)) from the nearer bound.
			u[j] = math.Log(v-lo) - math.Log(hi-v)
		case coordLower:
			u[j] = math.Log(v - lo)
		case coordUpper:
			u[j] = math.Log(hi - v)
		default:
			u[j] = v
		}
	}
	return nil
}

// wrap returns the log density of u and its gradient by the chain rule:
// d/du_j [log p(x(u)) + log|dx/du|] = ∂log p/∂x_j · x_j'(u_j) + ∂/∂u_j
// log|x_j'(u_j)|, where the last term is 1 - 2σ(u_j) between two bounds, 1
// with one and 0 with none. After each call *raw holds log p(x) itself.
// The returned function owns scratch buffers: use one per goroutine.
func (b *boxMap) wrap(f density, d int) (g density, raw *float64) {
	x := make([]float64, d)
	deriv := make([]float64, d)
	dlogJ := make([]float64, d)
	raw = new(float64)
	return func(grad, u []float64) (float64, error) {
		logJ := b.toX(x, u, deriv, dlogJ)
		lp, err := f(grad, x)
		*raw = lp
		if err != nil || math.IsInf(lp, -1) || math.IsNaN(lp) {
			return lp, err
		}
		deriv, dlogJ := deriv[:len(grad)], dlogJ[:len(grad)]
		for j, g := range grad {
			grad[j] = g*deriv[j] + dlogJ[j]
		}
		return lp + logJ, nil
	}, raw
}
