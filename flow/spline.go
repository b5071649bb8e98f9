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
	invW    []float64 // 1/w
	xi, yi  binIndex  // bin lookup on x and on y
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
	sp.invW = make([]float64, n-1)

	for i := 0; i < n-1; i++ {
		sp.w[i] = sp.x[i+1] - sp.x[i]
		sp.invW[i] = 1 / sp.w[i]
		sp.h[i] = sp.y[i+1] - sp.y[i]
		sp.s[i] = sp.h[i] / sp.w[i]
		if !(sp.s[i] > 0) || math.IsInf(sp.s[i], 1) {
			return errors.New("flow: spline bin slope is not positive and finite")
		}
	}
	if n > 1<<16 {
		return errors.New("flow: spline has too many knots")
	}
	sp.xi = newBinIndex(sp.x)
	sp.yi = newBinIndex(sp.y)
	return nil
}

// binIndex finds bins of a set of increasing knots fast: a table over a
// uniform grid of cells on the knot range gives, for each cell, the bins
// of its two edges, so that a lookup costs a multiplication and usually
// no comparison at all. (A plain bisection over ~100 knots mispredicts
// half of its seven branches on fresh data and was the most expensive
// part of evaluating a flow.)
type binIndex struct {
	k       []float64
	lo      float64
	invCell float64
	first   []uint16 // first[g]: bin of the left edge of cell g (len cells+1)
}

// binCellsPerBin is the number of grid cells per knot bin.
const binCellsPerBin = 4

func newBinIndex(k []float64) binIndex {
	nb := len(k) - 1
	cells := binCellsPerBin * nb
	bi := binIndex{k: k, lo: k[0], invCell: float64(cells) / (k[nb] - k[0]), first: make([]uint16, cells+1)}
	i := 0
	for g := 0; g <= cells; g++ {
		edge := k[0] + float64(g)/bi.invCell
		for i < nb-1 && k[i+1] <= edge {
			i++
		}
		bi.first[g] = uint16(i)
	}
	return bi
}

// find returns i with k[i] <= v < k[i+1], for v strictly inside the knots.
func (bi *binIndex) find(v float64) int {
	k := bi.k
	g := int((v - bi.lo) * bi.invCell)
	g = min(max(g, 0), len(bi.first)-2)
	lo, hi := int(bi.first[g]), int(bi.first[g+1])
	for lo < hi { // bins lo..hi: bisect (rarely more than a step)
		mid := int(uint(lo+hi+1) >> 1)
		if k[mid] <= v {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	if k[lo] <= v && v < k[lo+1] {
		return lo
	}
	// Rounding put v just across a cell edge: bisect the whole range.
	lo, hi = 0, len(k)-1
	for hi-lo > 1 {
		mid := int(uint(lo+hi) >> 1)
		if k[mid] <= v {
			lo = mid
		} else {
			hi = mid
		}
	}
	return lo
}

// eval returns ψ(v) and ψ'(v). Callers accumulate derivatives in a
// logProduct: one logarithm per point and layer instead of one per
// direction.
func (sp *spline) eval(v float64) (y, dy float64) {
	n := len(sp.x)
	switch {
	case v <= sp.x[0]:
		return sp.y[0] + sp.d[0]*(v-sp.x[0]), sp.d[0]
	case v >= sp.x[n-1]:
		return sp.y[n-1] + sp.d[n-1]*(v-sp.x[n-1]), sp.d[n-1]
	case v != v:
		return v, v
	}
	return sp.evalBin(v, sp.xi.find(v))
}

// evalNear is eval for v near a point already evaluated, whose bin *bin
// holds (-1: none yet): a root finder's iterates stay in one bin, whose
// test is cheaper than the lookup. It updates *bin.
// Its tails repeat eval's on purpose: a shared helper is too large to
// inline, and the call cost BenchmarkApplySplines 20 %.
func (sp *spline) evalNear(v float64, bin *int) (y, dy float64) {
	n := len(sp.x)
	switch {
	case v <= sp.x[0]:
		return sp.y[0] + sp.d[0]*(v-sp.x[0]), sp.d[0]
	case v >= sp.x[n-1]:
		return sp.y[n-1] + sp.d[n-1]*(v-sp.x[n-1]), sp.d[n-1]
	case v != v:
		return v, v
	}
	i := *bin
	if !(i >= 0 && sp.x[i] <= v && v < sp.x[i+1]) {
		i = sp.xi.find(v)
		*bin = i
	}
	return sp.evalBin(v, i)
}

// evalBin is eval at v inside bin i.
func (sp *spline) evalBin(v float64, i int) (y, dy float64) {
	h, s := sp.h[i], sp.s[i]
	d0, d1 := sp.d[i], sp.d[i+1]
	xi := (v - sp.x[i]) * sp.invW[i]
	om := 1 - xi
	t := xi * om
	inv := 1 / (s + (d1+d0-2*s)*t)
	y = sp.y[i] + h*(s*xi*xi+d0*t)*inv
	num := s * s * (d1*xi*xi + 2*s*t + d0*om*om)
	return y, num * inv * inv
}

// inverse returns v = ψ⁻¹(y) and ψ'(v), the reciprocal of the inverse's
// derivative.
func (sp *spline) inverse(y float64) (v, dy float64) {
	n := len(sp.x)
	switch {
	case y <= sp.y[0]:
		return sp.x[0] + (y-sp.y[0])/sp.d[0], sp.d[0]
	case y >= sp.y[n-1]:
		return sp.x[n-1] + (y-sp.y[n-1])/sp.d[n-1], sp.d[n-1]
	case y != y:
		return y, y
	}
	i := sp.yi.find(y)
	w, h, s := sp.w[i], sp.h[i], sp.s[i]
	d0, d1 := sp.d[i], sp.d[i+1]
	// Solve y - y[i] = h (s ξ² + d0 ξ(1-ξ)) / (s + (d1+d0-2s) ξ(1-ξ)) for
	// ξ in [0, 1]: a quadratic a ξ² + b ξ + c = 0. The root is taken in
	// the form 2c / (-b - sqrt(b²-4ac)), which does not cancel (b > 0 near
	// the lower knot, c <= 0 throughout); the discriminant is clamped at 0
	// against rounding.
	ry := y - sp.y[i]
	e := d1 + d0 - 2*s
	a := h*(s-d0) + ry*e
	b := h*d0 - ry*e
	c := -s * ry
	disc := b*b - 4*a*c
	if disc < 0 {
		disc = 0
	}
	xi := 2 * c / (-b - math.Sqrt(disc))
	if !(xi >= 0) { // also catches NaN from 0/0, which needs ry == 0
		xi = 0
	} else if xi > 1 {
		xi = 1
	}
	om := 1 - xi
	t := xi * om
	inv := 1 / (s + e*t)
	num := s * s * (d1*xi*xi + 2*s*t + d0*om*om)
	return sp.x[i] + xi*w, num * inv * inv
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
