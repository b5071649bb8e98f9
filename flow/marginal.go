package flow

import (
	"cmp"
	"math"
	"slices"
)

// marginalOptions are the settings of one 1-D map.
type marginalOptions struct {
	knots      int     // interior quantile knots
	damping    float64 // fraction of the way to the Gaussian target (1: all the way)
	bandwidth  float64 // multiple of Scott's bandwidth
	tailPoints float64 // effective number of points beyond each outermost knot
}

// Bounds on the fitted tail slope relative to the slope of the outermost
// bin. The upper bound keeps q's tails at least as heavy as the straight
// continuation of the last bin (a tail estimated from a handful of points
// must not make q lighter-tailed than the data it has seen); the lower one
// only guards against a degenerate fit.
const (
	maxTailSlopeRatio = 1
	minTailSlopeRatio = 1e-3
)

// marginalData is one projection of the training points, sorted, with
// the summaries every candidate map of that direction shares.
type marginalData struct {
	v, w   []float64 // sorted values and their weights (summing to one)
	cw, cu []float64 // cw[i]: weight of v[:i]; cu[i]: weight of v[i:]
	mid    []float64 // mid[i] = cw[i] + w[i]/2, the level of point i
	neff   float64   // effective sample size 1/Σw²
	sd     float64   // weighted standard deviation
	iqr    float64   // interquartile range
	km     *kdeMoments
}

// newMarginalData sorts the values v (weights w, nil for equal weights)
// in place and summarizes them. It returns nil when the values carry no
// spread, so that the only sensible map is the identity.
func newMarginalData(v, w []float64) *marginalData {
	sortValues(v, w)
	return summarize(v, w)
}

// summarize is newMarginalData for values already sorted increasingly.
func summarize(v, w []float64) *marginalData {
	n := len(v)
	if w == nil {
		w = make([]float64, n)
		for i := range w {
			w[i] = 1 / float64(n)
		}
	} else {
		var total float64
		for _, wi := range w {
			total += wi
		}
		for i := range w {
			w[i] /= total
		}
	}
	md := &marginalData{v: v, w: w, cw: make([]float64, n+1), cu: make([]float64, n+1), mid: make([]float64, n)}
	var sumW2, mean float64
	for i, wi := range w {
		md.cw[i+1] = md.cw[i] + wi
		md.mid[i] = md.cw[i] + 0.5*wi
		sumW2 += wi * wi
		mean += wi * v[i]
	}
	for i := n - 1; i >= 0; i-- {
		md.cu[i] = md.cu[i+1] + w[i]
	}
	var variance float64
	for i, wi := range w {
		r := v[i] - mean
		variance += wi * r * r
	}
	md.neff = 1 / sumW2
	md.sd = math.Sqrt(variance)
	if !(md.sd > 0) || !isFinite(md.sd) {
		return nil
	}
	md.iqr = md.quantile(0.75) - md.quantile(0.25)
	md.km = newKDEMoments(v, w)
	return md
}

// quantile is the weighted quantile at level p, interpolating linearly
// between the levels mid of neighbouring points.
func (md *marginalData) quantile(p float64) float64 {
	v, n := md.v, len(md.v)
	i, _ := slices.BinarySearch(md.mid, p) // mid[i-1] < p <= mid[i]
	switch {
	case i == 0:
		return v[0]
	case i == n:
		return v[n-1]
	}
	f := (p - md.mid[i-1]) / (md.mid[i] - md.mid[i-1])
	return v[i-1] + f*(v[i]-v[i-1])
}

// fit returns the monotone map ψ that sends the distribution of the
// values towards N(0, 1):
//
//   - knots at sample quantiles: a uniform grid of o.knots probability
//     levels, refined geometrically towards levels o.tailPoints/n_eff at
//     both ends, so the extreme knots sit where a few points remain beyond;
//   - targets y = Φ⁻¹(F_KDE(x)) with an Epanechnikov kernel of o.bandwidth
//     times Scott's bandwidth;
//   - derivatives at interior knots by the weighted harmonic mean of the
//     neighbouring secants (Fritsch & Butland; it follows the data without
//     overshoot), and at the outermost knots the tail slopes;
//   - linear tails whose slopes are the maximum-likelihood fit of a
//     Gaussian tail to the points beyond the outermost knots;
//   - damping: knots and derivatives move the fraction o.damping of the way
//     from the identity to the target.
//
// The spline is strictly increasing and finite whatever the data (the
// identity when too few distinct knots remain).
func (md *marginalData) fit(o marginalOptions) spline {
	v, w := md.v, md.w
	h := o.bandwidth * scottBandwidth(md.sd, md.iqr, md.neff)
	a := kernelHalfWidth * h

	levels := knotLevels(o.knots, o.tailPoints/md.neff)
	kx := make([]float64, len(levels))
	for j, p := range levels {
		kx[j] = md.quantile(p)
	}
	kx = slices.Compact(kx)
	lower := make([]float64, len(kx))
	upper := make([]float64, len(kx))
	kdeCDF(lower, upper, v, w, md.cw, md.cu, md.km, kx, a)
	ky := make([]float64, len(kx))
	for j := range kx {
		if lower[j] < 0.5 {
			ky[j] = normQuantile(lower[j])
		} else {
			ky[j] = -normQuantile(upper[j])
		}
	}

	// Keep only knots that rise in both x and y by a margin: ties in the
	// data (duplicated values) and flat stretches of the compact kernel
	// would otherwise give zero-width or zero-height bins.
	minDx := 1e-12 * md.sd
	const minDy = 1e-9
	m := 0
	for j := range kx {
		if !isFinite(ky[j]) {
			continue
		}
		if m > 0 && !(kx[j]-kx[m-1] > minDx && ky[j]-ky[m-1] > minDy) {
			continue
		}
		kx[m], ky[m] = kx[j], ky[j]
		m++
	}
	kx, ky = kx[:m], ky[:m]
	if m < 2 {
		return identitySpline()
	}

	kd := make([]float64, m)
	for j := 1; j < m-1; j++ {
		h1, h2 := kx[j]-kx[j-1], kx[j+1]-kx[j]
		s1, s2 := (ky[j]-ky[j-1])/h1, (ky[j+1]-ky[j])/h2
		w1, w2 := 2*h2+h1, h2+2*h1
		kd[j] = (w1 + w2) / (w1/s1 + w2/s2)
	}
	sLo := (ky[1] - ky[0]) / (kx[1] - kx[0])
	sHi := (ky[m-1] - ky[m-2]) / (kx[m-1] - kx[m-2])
	kd[0] = tailSlope(v, w, kx[0], -ky[0], -1, sLo)
	kd[m-1] = tailSlope(v, w, kx[m-1], ky[m-1], 1, sHi)

	if al := o.damping; al < 1 {
		for j := range kx {
			ky[j] = (1-al)*kx[j] + al*ky[j]
			kd[j] = (1 - al) + al*kd[j]
		}
	}
	sp := spline{x: kx, y: ky, d: kd}
	if sp.init() != nil {
		// Only reachable through extreme rounding (knots closer than the
		// filter above allows after damping); fall back to no change.
		return identitySpline()
	}
	return sp
}

// tailSlope fits the slope s of a linear tail beyond the knot x0 whose
// Gaussian target is y0 (both mirrored so that the tail points upwards:
// dir = +1 for the upper tail, -1 for the lower one, with y0 passed as
// the mirrored target). Under the tail model the points beyond x0 are
// z = y0 + s u (u = distance past the knot) conditioned on z > y0, so the
// weighted log-likelihood Σ w [log s - (y0 + s u)²/2] is maximal at the
// positive root of s² Σwu² + s y0 Σwu - Σw = 0. The result is clamped to
// [minTailSlopeRatio, maxTailSlopeRatio] times the outermost secant.
func tailSlope(v, w []float64, x0, y0, dir, secant float64) float64 {
	var sw, s1, s2 float64
	if dir > 0 {
		for i := len(v) - 1; i >= 0 && v[i] > x0; i-- {
			u := v[i] - x0
			sw += w[i]
			s1 += w[i] * u
			s2 += w[i] * u * u
		}
	} else {
		for i := 0; i < len(v) && v[i] < x0; i++ {
			u := x0 - v[i]
			sw += w[i]
			s1 += w[i] * u
			s2 += w[i] * u * u
		}
	}
	if !(s2 > 0) {
		return secant
	}
	b := y0 * s1
	s := (-b + math.Sqrt(b*b+4*sw*s2)) / (2 * s2)
	if b > 0 {
		// Same root without cancellation.
		s = 2 * sw / (b + math.Sqrt(b*b+4*sw*s2))
	}
	return min(max(s, minTailSlopeRatio*secant), maxTailSlopeRatio*secant)
}

// knotLevels returns increasing probability levels: k levels on the
// uniform grid (j+1/2)/k, then levels halving from the outermost grid
// level down to pmin (and mirrored above), so that the map follows the
// distribution far into the tails with fewer points per bin where the
// data thin out.
func knotLevels(k int, pmin float64) []float64 {
	step := 1 / float64(k)
	var tail []float64 // descending
	if pmin < 0.5*step {
		for p := 0.25 * step; p > 1.5*pmin; p *= 0.5 {
			tail = append(tail, p)
		}
		tail = append(tail, pmin)
	}
	levels := make([]float64, 0, k+2*len(tail))
	for i := len(tail) - 1; i >= 0; i-- {
		levels = append(levels, tail[i])
	}
	for j := 0; j < k; j++ {
		levels = append(levels, (float64(j)+0.5)*step)
	}
	for _, p := range tail {
		levels = append(levels, 1-p)
	}
	return levels
}

// sortWeighted sorts v increasingly, carrying w along.
func sortWeighted(v, w []float64) {
	type pair struct{ v, w float64 }
	p := make([]pair, len(v))
	for i := range v {
		p[i] = pair{v[i], w[i]}
	}
	slices.SortFunc(p, func(a, b pair) int { return cmp.Compare(a.v, b.v) })
	for i := range p {
		v[i], w[i] = p[i].v, p[i].w
	}
}
