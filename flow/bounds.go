package flow

import (
	"fmt"
	"math"
	"slices"
)

// Box bounds enter as a first, coordinate-wise layer that maps the box
// onto the whole space, so that every later layer works unconstrained and
// q vanishes outside the box by construction:
//
//	lower and upper finite: y = log((x-l)/(u-x))           (logit)
//	lower finite only:      y = log(expm1((x-l)/s))        (inverse softplus)
//	upper finite only:      y = -log(expm1((u-x)/s))
//	neither:                y = x
//
// The softplus scale s is the median distance of the data from the bound,
// which makes the layer independent of the units of x: data far from the
// bound see the identity, data crowding it see a logarithm.

type boundKind uint8

const (
	boundNone boundKind = iota
	boundBoth
	boundLower
	boundUpper
	numBoundKinds
)

// bounds is the coordinate-wise bounds layer; nil means no bounds at all.
type bounds struct {
	kind   []boundKind
	lo, hi []float64
	scale  []float64 // softplus scale for one-sided bounds, 1 otherwise
	logW   []float64 // log(hi-lo) for two-sided bounds, log scale for one-sided, 0 otherwise
}

// newBounds validates the settings' bounds. It returns nil when no
// coordinate is bounded.
func newBounds(lower, upper []float64, d int) (*bounds, error) {
	if lower == nil && upper == nil {
		return nil, nil
	}
	if lower != nil && len(lower) != d {
		return nil, fmt.Errorf("flow: len(Lower) = %d, want d = %d", len(lower), d)
	}
	if upper != nil && len(upper) != d {
		return nil, fmt.Errorf("flow: len(Upper) = %d, want d = %d", len(upper), d)
	}
	b := &bounds{
		kind:  make([]boundKind, d),
		lo:    make([]float64, d),
		hi:    make([]float64, d),
		scale: make([]float64, d),
		logW:  make([]float64, d),
	}
	any := false
	for j := 0; j < d; j++ {
		l, u := math.Inf(-1), math.Inf(1)
		if lower != nil {
			l = lower[j]
		}
		if upper != nil {
			u = upper[j]
		}
		switch {
		case math.IsNaN(l) || math.IsNaN(u):
			return nil, fmt.Errorf("flow: bound of coordinate %d is NaN", j)
		case math.IsInf(l, 1) || math.IsInf(u, -1):
			return nil, fmt.Errorf("flow: bounds of coordinate %d are (%g, %g): empty", j, l, u)
		case !(l < u):
			return nil, fmt.Errorf("flow: bounds of coordinate %d are (%g, %g): lower must be below upper", j, l, u)
		}
		b.lo[j], b.hi[j], b.scale[j] = l, u, 1
		switch {
		case !math.IsInf(l, 0) && !math.IsInf(u, 0):
			b.kind[j] = boundBoth
			if math.IsInf(u-l, 0) {
				return nil, fmt.Errorf("flow: bounds of coordinate %d are (%g, %g): width overflows", j, l, u)
			}
		case !math.IsInf(l, 0):
			b.kind[j] = boundLower
		case !math.IsInf(u, 0):
			b.kind[j] = boundUpper
		default:
			b.kind[j] = boundNone
		}
		any = any || b.kind[j] != boundNone
	}
	if !any {
		return nil, nil
	}
	return b, nil
}

// setScales sets the softplus scales from the data (n×d, all inside the
// bounds) and the log-widths.
func (b *bounds) setScales(x []float64, n, d int) {
	dist := make([]float64, n)
	for j, k := range b.kind {
		if k != boundLower && k != boundUpper {
			continue
		}
		for i := 0; i < n; i++ {
			if k == boundLower {
				dist[i] = x[i*d+j] - b.lo[j]
			} else {
				dist[i] = b.hi[j] - x[i*d+j]
			}
		}
		slices.Sort(dist)
		s := dist[n/2]
		if !(s > 0) || math.IsInf(s, 0) {
			s = 1
		}
		b.scale[j] = s
	}
	b.initLogW()
}

func (b *bounds) initLogW() {
	for j, k := range b.kind {
		switch k {
		case boundBoth:
			b.logW[j] = math.Log(b.hi[j] - b.lo[j])
		case boundLower, boundUpper:
			b.logW[j] = math.Log(b.scale[j])
		default:
			b.logW[j] = 0
		}
	}
}

// inside reports whether x (one point) lies strictly inside the bounds;
// it returns the first offending coordinate otherwise.
func (b *bounds) inside(x []float64) (int, bool) {
	for j, v := range x {
		if !(v > b.lo[j] && v < b.hi[j]) && b.kind[j] != boundNone {
			return j, false
		}
	}
	return -1, true
}

// forward maps one point x (inside the bounds) to the unconstrained y in
// place and returns log|dy/dx|.
func (b *bounds) forward(x []float64) float64 {
	var ld float64
	for j, v := range x {
		switch b.kind[j] {
		case boundBoth:
			la, lb := math.Log(v-b.lo[j]), math.Log(b.hi[j]-v)
			x[j] = la - lb
			ld += b.logW[j] - la - lb
		case boundLower:
			u := (v - b.lo[j]) / b.scale[j]
			x[j] = softplusInv(u)
			ld -= b.logW[j] + math.Log(-math.Expm1(-u))
		case boundUpper:
			u := (b.hi[j] - v) / b.scale[j]
			x[j] = -softplusInv(u)
			ld -= b.logW[j] + math.Log(-math.Expm1(-u))
		}
	}
	return ld
}

// inverse maps one unconstrained point y back into the box in place and
// returns log|dx/dy|. Results that round onto a bound are moved to the
// nearest representable value inside, so that samples always have a
// finite log q.
func (b *bounds) inverse(y []float64) float64 {
	var ld float64
	for j, v := range y {
		lo, hi := b.lo[j], b.hi[j]
		var x float64
		switch b.kind[j] {
		case boundNone:
			continue
		case boundBoth:
			// σ(v) from the side where it is small, for precision.
			if v >= 0 {
				e := math.Exp(-v)
				x = hi - (hi-lo)*(e/(1+e))
			} else {
				e := math.Exp(v)
				x = lo + (hi-lo)*(e/(1+e))
			}
			ld += b.logW[j] - softplus(v) - softplus(-v)
		case boundLower:
			x = lo + b.scale[j]*softplus(v)
			ld += b.logW[j] - softplus(-v)
		case boundUpper:
			x = hi - b.scale[j]*softplus(-v)
			ld += b.logW[j] - softplus(v)
		}
		if !(x > lo) {
			x = math.Nextafter(lo, math.Inf(1))
		}
		if !(x < hi) {
			x = math.Nextafter(hi, math.Inf(-1))
		}
		y[j] = x
	}
	return ld
}
