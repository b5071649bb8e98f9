package flow

import (
	"fmt"
	"math"
	"slices"
)

// Box bounds enter as a first, coordinate-wise layer that maps the box
// onto the whole space, so that every later layer works unconstrained and
// q vanishes outside the box by construction. With g_s(t) = s·log(expm1(t/s)),
// the inverse of a softplus of scale s, which is logarithmic for t ≪ s and
// the identity for t ≫ s:
//
//	lower bound l only:   y = g_l(x - l)                (softplus)
//	upper bound u only:   y = -g_u(u - x)
//	both:                 y = g_l(x - l) - g_u(u - x)   (a softened logit)
//	neither:              y = x
//
// Each scale is the smaller of the median distance of the data from the
// bound and half the data's spread. Data crowding a bound (a variance
// near zero) thus see a logarithm over most of their mass, while data far
// from it see the identity: a plain logit would bend a posterior that sits
// well inside a wide prior box, and measurably so (on the 32-d banana in
// its box (-15, 15), the held-out KL divergence of the fitted flow is 7.2
// nats with a logit layer against 5.5 with this one or none). The
// two-sided map has no closed-form inverse; Inverse solves it by
// safeguarded Newton iterations to full precision.

type boundKind uint8

const (
	boundNone boundKind = iota
	boundBoth
	boundLower
	boundUpper
)

// bounds is the coordinate-wise bounds layer; nil means no bounds at all.
type bounds struct {
	kind     []boundKind
	lo, hi   []float64
	sLo, sHi []float64 // softplus scales at the lower and upper bounds (1 where unused)

	// Derived by derive from the fields above, for the two-sided
	// coordinates' inverse: the map's value at the box's centre, and
	// g_s(width) at each bound's scale.
	mid, farLo, farHi []float64
}

// derive computes the derived fields; setScales and the decoder call it
// once the scales are known, so that a fitted and a deserialized flow
// evaluate alike.
func (b *bounds) derive() {
	d := len(b.kind)
	b.mid, b.farLo, b.farHi = make([]float64, d), make([]float64, d), make([]float64, d)
	for j, k := range b.kind {
		if k != boundBoth {
			continue
		}
		w := b.hi[j] - b.lo[j]
		b.mid[j] = softValue(w/2, b.sLo[j]) - softValue(w/2, b.sHi[j])
		b.farLo[j] = softValue(w, b.sLo[j])
		b.farHi[j] = softValue(w, b.sHi[j])
	}
}

// boundScaleSpread is the multiple of a coordinate's spread beyond which a
// bound's scale does not grow.
const boundScaleSpread = 0.5

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
		kind: make([]boundKind, d),
		lo:   make([]float64, d),
		hi:   make([]float64, d),
		sLo:  make([]float64, d),
		sHi:  make([]float64, d),
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
		b.lo[j], b.hi[j], b.sLo[j], b.sHi[j] = l, u, 1, 1
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
	b.derive()
	return b, nil
}

// setScales sets the softplus scales from the data (n×d, all inside the
// bounds, at least two distinct values per coordinate).
func (b *bounds) setScales(x []float64, n, d int) {
	col := make([]float64, n)
	dist := make([]float64, n)
	for j, k := range b.kind {
		if k == boundNone {
			continue
		}
		for i := range col {
			col[i] = x[i*d+j]
		}
		slices.Sort(col)
		var mean, ss float64
		for _, v := range col {
			mean += v / float64(n)
		}
		for _, v := range col {
			ss += (v - mean) * (v - mean)
		}
		spread := math.Sqrt(ss / float64(n))
		if iqr := (col[3*n/4] - col[n/4]) / 1.349; iqr > 0 && iqr < spread {
			spread = iqr
		}
		scale := func(median float64) float64 {
			s := min(median, boundScaleSpread*spread)
			if !(s > 0) || math.IsInf(s, 0) {
				s = median
			}
			if !(s > 0) || math.IsInf(s, 0) {
				s = 1
			}
			return s
		}
		if k == boundBoth || k == boundLower {
			for i, v := range col {
				dist[i] = v - b.lo[j]
			}
			b.sLo[j] = scale(dist[n/2])
		}
		if k == boundBoth || k == boundUpper {
			for i, v := range col {
				dist[i] = b.hi[j] - v
			}
			b.sHi[j] = scale(dist[(n-1)/2])
		}
	}
	b.derive()
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

// softInv is g_s(t) = s·log(expm1(t/s)) for t > 0, and log g_s'(t).
func softInv(t, s float64) (g, logDeriv float64) {
	u := t / s
	return s * softplusInv(u), -math.Log(-math.Expm1(-u))
}

// softValue is g_s(t), softInv's first value alone.
func softValue(t, s float64) float64 { return s * softplusInv(t/s) }

// softDeriv is g_s'(t) = 1/(1 - exp(-t/s)).
func softDeriv(t, s float64) float64 { return 1 / -math.Expm1(-t/s) }

// softValDeriv returns g_s(t) and g_s'(t) with one expm1 and one log:
// with e = expm1(t/s), g = s log e and g' = 1 + 1/e.
func softValDeriv(t, s float64) (g, deriv float64) {
	u := t / s
	if u > 30 {
		// exp(-u) < 1e-13: g = s (u + log1p(-exp(-u))).
		em := math.Exp(-u)
		return s * (u + math.Log1p(-em)), 1 + em/(1-em)
	}
	e := math.Expm1(u)
	return s * math.Log(e), 1 + 1/e
}

// forward maps one point x (inside the bounds) to the unconstrained y in
// place and returns log|dy/dx|.
func (b *bounds) forward(x []float64) float64 {
	var ld float64
	for j, v := range x {
		switch b.kind[j] {
		case boundBoth:
			t, r := v-b.lo[j], b.hi[j]-v
			x[j] = softValue(t, b.sLo[j]) - softValue(r, b.sHi[j])
			ld += math.Log(softDeriv(t, b.sLo[j]) + softDeriv(r, b.sHi[j]))
		case boundLower:
			g, lg := softInv(v-b.lo[j], b.sLo[j])
			x[j] = g
			ld += lg
		case boundUpper:
			g, lg := softInv(b.hi[j]-v, b.sHi[j])
			x[j] = -g
			ld += lg
		}
	}
	return ld
}

// inverse maps one unconstrained point y back into the box in place and
// returns log|dx/dy|. Results that round onto a bound are moved to the
// nearest representable value inside, so that samples always lie inside.
// exact is false when the point returned does not carry the distance t to
// its bound to about ten digits (t below boundPrecision times the bound's
// magnitude, where x = bound ± t rounds t): log|dx/dy| then no longer
// describes it to that precision, and callers recompute from x.
func (b *bounds) inverse(y []float64) (ld float64, exact bool) {
	exact = true
	for j, v := range y {
		lo, hi := b.lo[j], b.hi[j]
		var x, t, near float64
		switch b.kind[j] {
		case boundNone:
			continue
		case boundBoth:
			var lg float64
			var upper bool
			t, upper, lg = b.solveBoth(j, v)
			if upper {
				x, near = hi-t, hi
			} else {
				x, near = lo+t, lo
			}
			ld += lg
		case boundLower:
			s := b.sLo[j]
			t = s * softplus(v/s)
			x, near = lo+t, lo
			ld -= softplus(-v / s)
		case boundUpper:
			s := b.sHi[j]
			t = s * softplus(-v/s)
			x, near = hi-t, hi
			ld -= softplus(v / s)
		}
		if !(t > max(boundPrecision*math.Abs(near), minNormalDistance)) {
			exact = false
		}
		if !(x > lo) {
			x, exact = math.Nextafter(lo, math.Inf(1)), false
		}
		if !(x < hi) {
			x, exact = math.Nextafter(hi, math.Inf(-1)), false
		}
		y[j] = x
	}
	return ld, exact && isFinite(ld)
}

// A point within boundPrecision·|bound| of a bound keeps fewer than about
// twelve digits of its distance to the bound; so does one closer than
// minNormalDistance, where the distance is a subnormal number.
const (
	boundPrecision    = 1e-4
	minNormalDistance = 1e-300
)

// solveBoth inverts the two-sided map of coordinate j: it returns the
// distance t of x to the nearer bound (upper tells which), with
// g_l(x-l) - g_u(u-x) = y, and log|dx/dy|. Solving for the distance keeps
// full relative precision near either bound; the solver is Newton's
// method safeguarded with bisection on a bracket.
func (b *bounds) solveBoth(j int, y float64) (t float64, upper bool, logDeriv float64) {
	sl, su := b.sLo[j], b.sHi[j]
	w := b.hi[j] - b.lo[j]
	// Distance t from the near bound: F(t) = gNear(t) - gFar(w-t) - sign·y,
	// increasing in t on (0, w/2].
	upper = y > b.mid[j]
	sNear, sFar, target, gFar := sl, su, y, b.farHi[j]
	if upper {
		sNear, sFar, target, gFar = su, sl, -y, b.farLo[j]
	}
	f := func(t float64) (float64, float64) {
		gn, dn := softValDeriv(t, sNear)
		gf, df := softValDeriv(w-t, sFar)
		return gn - gf - target, dn + df
	}
	// Start from the better of two approximations: the near side alone
	// (the far side nearly constant), right close to the bound, and both
	// sides linear (g(t) ≈ t), right far from both.
	tNear := sNear * softplus((target+gFar)/sNear)
	if tNear < minNormalDistance {
		// So close to the bound that x rounds onto it: the near side
		// alone is exact, and the caller moves x inside.
		return tNear, upper, -math.Log(softDeriv(tNear, sNear))
	}
	t = min(max(min(tNear, (target+w)/2), minNormalDistance), w/2)
	// Newton's method in log t: the map is logarithmic in t near the
	// bound and linear far from it, nearly linear in log t in both
	// regimes, so that the iteration converges in a few steps; a bracket
	// in log t guards it.
	a, c := math.Log(minNormalDistance), math.Log(w/2)
	v := math.Log(t)
	var der float64
	for it := 0; it < 100; it++ {
		var val float64
		val, der = f(t)
		if val == 0 {
			break
		}
		step := val / (der * t)
		if math.Abs(step) <= 1e-15*max(1, math.Abs(v)) {
			break // converged: the residual is at rounding level
		}
		if val < 0 {
			a = v
		} else {
			c = v
		}
		next := v - step
		if !(next > a && next < c) {
			next = a + (c-a)/2
		}
		v, t = next, math.Exp(next)
		if c-a <= 1e-15*max(1, math.Abs(v)) {
			_, der = f(t)
			break
		}
	}
	return t, upper, -math.Log(der)
}
