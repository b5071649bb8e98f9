package flow

import (
	"math"
)

// scaleLayer rescales every coordinate but one by an exponential of that
// one:
//
//	z_j ↦ z_j exp(-(a_j + b_j z_k)),   j ≠ k,   z_k unchanged,
//
// so log|J| = -Σ_j (a_j + b_j z_k). It is the geometry of a hierarchical
// scale (Neal's funnel: x_j ~ N(0, e^{2 x_1}) is this map with b_j = 1),
// which neither kind of Gaussianizing layer can learn where the draws are
// few: their maps are fitted on bins or quantiles of the draws and held
// constant or linear beyond them, while the funnel's neck, which the
// draws under-visit, is exactly where the scale keeps shrinking. Fitted
// by likelihood over all the draws, the exponential follows their trend
// to the ends of their range, and no further: beyond it z_k is held at
// the range's end (letting the trend run on fitted held-out points
// worse: 1.23 nats from p against 0.49 with the neck cut from the
// draws, 0.12 against 0.11 without the cut). On 8000 exact draws of
// the 16-d funnel the flow without this layer is 1.75 nats from p (held
// out), with it 0.11; with the neck cut, 3.53 and 0.49.
type scaleLayer struct {
	k      int
	a, b   []float64 // per coordinate; a[k] = b[k] = 0
	lo, hi float64   // z_k's range in the training points: the scales are held beyond it
}

// maxLogScale bounds |a_j + b_j z_k|, so that a point far beyond the
// draws in z_k cannot overflow exp; the map stays a bijection (each z_j's
// factor is positive whatever it is).
const maxLogScale = 300

// logScale is a_j + b_j t, bounded by maxLogScale.
func (c *scaleLayer) logScale(j int, t float64) float64 {
	t = math.Max(c.lo, math.Min(c.hi, t))
	return math.Max(-maxLogScale, math.Min(maxLogScale, c.a[j]+c.b[j]*t))
}

// apply maps r rows of z in place (forward, or its inverse) and adds
// log|J| of the map applied to ld unless ld is nil.
func (c *scaleLayer) apply(z, ld []float64, r, d int, inverse bool) {
	sign := -1.0
	if inverse {
		sign = 1
	}
	for i := 0; i < r; i++ {
		row := z[i*d : (i+1)*d]
		t := row[c.k]
		var sum float64
		for j := range row {
			if j == c.k {
				continue
			}
			s := c.logScale(j, t)
			row[j] *= math.Exp(sign * s)
			sum += s
		}
		if ld != nil {
			ld[i] += sign * sum
		}
	}
}

// scaleSelectRows is the most training rows the choice of the scale
// coordinate looks at: it costs d² operations per row.
const scaleSelectRows = 4096

// maxScaleDim is the largest dimension for which a scale layer is tried:
// the choice of k costs d² per row.
const maxScaleDim = 256

// fitScale fits a scale layer to the n×d rows z (weights w, nil for
// equal): k is the coordinate whose value best predicts the others' log
// squares (the summed R² of their least-squares lines), and (a_j, b_j)
// maximize the likelihood of z_j ~ N(0, e^{2(a_j + b_j z_k)}), a convex
// problem that Newton's method solves in a few steps. ok is false when
// no coordinate predicts the others' scales at all.
func fitScale(z []float64, n, d int, w []float64) (c scaleLayer, ok bool) {
	if d < 2 || d > maxScaleDim || n < 2*d {
		return c, false
	}
	weight := func(i int) float64 {
		if w == nil {
			return 1
		}
		return w[i]
	}
	// The choice of k: weighted correlations of z_k with log(z_j² + ε)
	// over the first rows (the training rows are in random order).
	m := min(n, scaleSelectRows)
	u := make([]float64, m*d)
	for i := range u {
		v := z[i]
		u[i] = math.Log(v*v + 1e-8)
	}
	mean := func(x []float64, j int) float64 {
		var s, sw float64
		for i := 0; i < m; i++ {
			s += weight(i) * x[i*d+j]
			sw += weight(i)
		}
		return s / sw
	}
	mz, mu := make([]float64, d), make([]float64, d)
	vz, vu := make([]float64, d), make([]float64, d)
	for j := 0; j < d; j++ {
		mz[j], mu[j] = mean(z, j), mean(u, j)
	}
	cov := make([]float64, d*d) // cov[k*d+j]: z_k with u_j
	var sw float64
	for i := 0; i < m; i++ {
		wi := weight(i)
		sw += wi
		for k := 0; k < d; k++ {
			dz := z[i*d+k] - mz[k]
			vz[k] += wi * dz * dz
			du := u[i*d+k] - mu[k]
			vu[k] += wi * du * du
			for j := 0; j < d; j++ {
				cov[k*d+j] += wi * dz * (u[i*d+j] - mu[j])
			}
		}
	}
	best := 0.0
	for k := 0; k < d; k++ {
		var r2 float64
		for j := 0; j < d; j++ {
			if j != k && vz[k] > 0 && vu[j] > 0 {
				r2 += cov[k*d+j] * cov[k*d+j] / (vz[k] * vu[j])
			}
		}
		if r2 > best {
			best, c.k = r2, k
		}
	}
	if best == 0 {
		return c, false
	}
	c.lo, c.hi = math.Inf(1), math.Inf(-1)
	for i := 0; i < n; i++ {
		if w == nil || w[i] > 0 {
			c.lo, c.hi = math.Min(c.lo, z[i*d+c.k]), math.Max(c.hi, z[i*d+c.k])
		}
	}
	c.a, c.b = make([]float64, d), make([]float64, d)
	for j := 0; j < d; j++ {
		if j != c.k {
			c.a[j], c.b[j] = fitLogScale(z, n, d, j, c.k, w)
		}
	}
	return c, true
}

// fitLogScale returns the (a, b) that minimize the weighted negative
// log-likelihood Σ w_i [z_ij² e^{-2(a + b t_i)}/2 + a + b t_i], t_i = z_ik,
// by Newton's method with step halving; (0, 0) if it fails.
func fitLogScale(z []float64, n, d, j, k int, w []float64) (a, b float64) {
	nll := func(a, b float64) float64 {
		var s float64
		for i := 0; i < n; i++ {
			wi := 1.0
			if w != nil {
				wi = w[i]
			}
			t, v := z[i*d+k], z[i*d+j]
			s += wi * (v*v*math.Exp(-2*(a+b*t))/2 + a + b*t)
		}
		return s
	}
	f := nll(a, b)
	for range 50 {
		var ga, gb, haa, hab, hbb float64
		for i := 0; i < n; i++ {
			wi := 1.0
			if w != nil {
				wi = w[i]
			}
			t, v := z[i*d+k], z[i*d+j]
			e := wi * v * v * math.Exp(-2*(a+b*t))
			ga += wi - e
			gb += (wi - e) * t
			haa += 2 * e
			hab += 2 * e * t
			hbb += 2 * e * t * t
		}
		det := haa*hbb - hab*hab
		if !(det > 0) {
			return 0, 0
		}
		da, db := (hbb*ga-hab*gb)/det, (haa*gb-hab*ga)/det
		step := 1.0
		for ; step > 1e-6; step /= 2 {
			if fn := nll(a-step*da, b-step*db); fn <= f {
				a, b, f = a-step*da, b-step*db, fn
				break
			}
		}
		if step <= 1e-6 || math.Abs(step*da)+math.Abs(step*db) < 1e-10 {
			break
		}
	}
	if math.IsNaN(a) || math.IsNaN(b) || math.IsInf(a, 0) || math.IsInf(b, 0) {
		return 0, 0
	}
	return a, b
}
