package flow

import (
	"errors"
	"math"
)

// spline is a monotone rational-quadratic spline (Gregory & Delbourgo 1982,
// as used by Durkan et al. 2019 in neural spline flows) with linear tails.
// Inside [x[0], x[n-1]] it interpolates the knots (x[i], y[i]) with
// derivatives d[i] > 0; beyond, it continues linearly with slope d[0] on
// the left and d[n-1] on the right, so it is C¹ and strictly increasing on
// the whole line and its inverse exists in closed form.
type spline struct {
	x, y, d []float64

	// Derived per-bin quantities, recomputed by init from x, y and d only,
	// so a deserialized spline evaluates bitwise like the fitted one.
	w, h, s []float64 // bin width, height, slope h/w
	logD0   float64   // log d[0]
	logDn   float64   // log d[n-1]
}

// init validates the knots and fills the derived quantities.
func (sp *spline) init() error {
	n := len(sp.x)
	if n < 2 || len(sp.y) != n || len(sp.d) != n {
		return errors.New("flow: spline needs at least two knots of matching length")
	}
	for i := 0; i < n; i++ {
		if !isFinite(sp.x[i]) || !isFinite(sp.y[i]) || !(sp.d[i] > 0) || math.IsInf(sp.d[i], 1) {
			return errors.New("flow: spline knot is not finite or derivative not positive")
		}
		if i > 0 && !(sp.x[i] > sp.x[i-1] && sp.y[i] > sp.y[i-1]) {
			return errors.New("flow: spline knots are not strictly increasing")
		}
	}
	sp.w = make([]float64, n-1)
	sp.h = make([]float64, n-1)
	sp.s = make([]float64, n-1)
	for i := 0; i < n-1; i++ {
		sp.w[i] = sp.x[i+1] - sp.x[i]
		sp.h[i] = sp.y[i+1] - sp.y[i]
		sp.s[i] = sp.h[i] / sp.w[i]
		if !(sp.s[i] > 0) || math.IsInf(sp.s[i], 1) {
			return errors.New("flow: spline bin slope is not positive and finite")
		}
	}
	sp.logD0 = math.Log(sp.d[0])
	sp.logDn = math.Log(sp.d[n-1])
	return nil
}

// bin returns the index i of the bin [x[i], x[i+1]) holding v, for v
// strictly inside the knot range of the increasing knots k.
func bin(k []float64, v float64) int {
	lo, hi := 0, len(k)-1 // invariant: k[lo] <= v < k[hi]
	for hi-lo > 1 {
		m := int(uint(lo+hi) >> 1)
		if k[m] <= v {
			lo = m
		} else {
			hi = m
		}
	}
	return lo
}

// eval returns ψ(v) and log ψ'(v).
func (sp *spline) eval(v float64) (y, logd float64) {
	n := len(sp.x)
	switch {
	case v <= sp.x[0]:
		return sp.y[0] + sp.d[0]*(v-sp.x[0]), sp.logD0
	case v >= sp.x[n-1]:
		return sp.y[n-1] + sp.d[n-1]*(v-sp.x[n-1]), sp.logDn
	case v != v:
		return v, v
	}
	i := bin(sp.x, v)
	w, h, s := sp.w[i], sp.h[i], sp.s[i]
	d0, d1 := sp.d[i], sp.d[i+1]
	xi := (v - sp.x[i]) / w
	om := 1 - xi
	t := xi * om
	den := s + (d1+d0-2*s)*t
	y = sp.y[i] + h*(s*xi*xi+d0*t)/den
	num := s * s * (d1*xi*xi + 2*s*t + d0*om*om)
	return y, math.Log(num / (den * den))
}

// inverse returns ψ⁻¹(y) and log (ψ⁻¹)'(y) = -log ψ'(ψ⁻¹(y)).
func (sp *spline) inverse(y float64) (v, logd float64) {
	n := len(sp.x)
	switch {
	case y <= sp.y[0]:
		return sp.x[0] + (y-sp.y[0])/sp.d[0], -sp.logD0
	case y >= sp.y[n-1]:
		return sp.x[n-1] + (y-sp.y[n-1])/sp.d[n-1], -sp.logDn
	case y != y:
		return y, y
	}
	i := bin(sp.y, y)
	w, h, s := sp.w[i], sp.h[i], sp.s[i]
	d0, d1 := sp.d[i], sp.d[i+1]
	// Solve y - y[i] = h (s ξ² + d0 ξ(1-ξ)) / (s + (d1+d0-2s) ξ(1-ξ)) for
	// ξ in [0, 1]: a quadratic a ξ² + b ξ + c = 0. The root is taken in
	// the form 2c / (-b - sqrt(b²-4ac)), which does not cancel (b > 0 near
	// the lower knot, c <= 0 throughout); the discriminant is clamped at 0
	// against rounding.
	dy := y - sp.y[i]
	e := d1 + d0 - 2*s
	a := h*(s-d0) + dy*e
	b := h*d0 - dy*e
	c := -s * dy
	disc := b*b - 4*a*c
	if disc < 0 {
		disc = 0
	}
	xi := 2 * c / (-b - math.Sqrt(disc))
	if !(xi >= 0) { // also catches NaN from 0/0, which needs dy == 0
		xi = 0
	} else if xi > 1 {
		xi = 1
	}
	om := 1 - xi
	t := xi * om
	den := s + e*t
	num := s * s * (d1*xi*xi + 2*s*t + d0*om*om)
	return sp.x[i] + xi*w, -math.Log(num / (den * den))
}

// identitySpline is the map ψ(v) = v.
func identitySpline() spline {
	sp := spline{x: []float64{-1, 1}, y: []float64{-1, 1}, d: []float64{1, 1}}
	if err := sp.init(); err != nil {
		panic(err) // unreachable: the knots are valid
	}
	return sp
}

func isFinite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }
