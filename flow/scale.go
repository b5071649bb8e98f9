package flow

import (
	"math"

	"gonum.org/v1/gonum/mat"
)

// scaleLayer centres and rescales every coordinate but one by lines in
// that one:
//
//	z_j ↦ (z_j - m_j - c_j z_k) exp(-(a_j + b_j z_k)),   j ≠ k,   z_k unchanged,
//
// so log|J| = -Σ_j (a_j + b_j z_k). It is the geometry of a hierarchical
// scale (Neal's funnel: x_j ~ N(0, e^{2 x_1}) is this map with b_j = 1),
// which neither kind of Gaussianizing layer can learn where the draws are
// few: their maps are fitted on bins or quantiles of the draws and held
// constant or linear beyond them, while the funnel's neck, which the
// draws under-visit, is exactly where the scale keeps shrinking. Fitted
// by likelihood over all the draws, the lines follow the draws' trend
// into the neck and beyond it. The centre matters there: whitening
// leaves each coordinate's mean linear in z_k, and where the scale is a
// few hundredths an offset of that size is many standard deviations
// (without it, q extrapolated into the neck was worse than q holding the
// scale at the draws' range). On 8000 exact draws of the 16-d funnel the
// flow without this layer is 1.75 nats from p (held out), with it 0.04.
type scaleLayer struct {
	k    int
	m, c []float64 // per coordinate: the centre m_j + c_j z_k; m[k] = c[k] = 0
	a, b []float64 // per coordinate: the log-scale a_j + b_j z_k; a[k] = b[k] = 0
}

// maxLogScale bounds |a_j + b_j z_k|, so that a point far beyond the
// draws in z_k cannot overflow exp; the map stays a bijection (each z_j's
// factor is positive whatever it is).
const maxLogScale = 300

// logScale is a_j + b_j t, bounded by maxLogScale.
func (c *scaleLayer) logScale(j int, t float64) float64 {
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
			centre := c.m[j] + c.c[j]*t
			if inverse {
				row[j] = row[j]*math.Exp(s) + centre
			} else {
				row[j] = (row[j] - centre) * math.Exp(-s)
			}
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

// scaleGateAlpha is the false-pass rate of the gate in front of the
// scale layer's candidate (scaleChoice): the candidate is fitted only
// where the dependence of the other coordinates' log squares on the
// chosen coordinate is beyond what independent coordinates give at that
// rate. Where no coordinate sets the others' scales (Gaussian draws, the
// ring, the Cauchy problem) the candidate's lines cost a third of a fit
// at d = 256 and gain nothing; skipping them leaves the flow exactly the
// one the full procedure gives whenever it would not keep the layer.
// The test, not a threshold on the predicted gain, is the gate: a funnel
// whose scale varies as exp(x1/8) (predicted gain 0.24 nats at d = 16)
// still keeps the layer, and with it the bridge's error falls from
// 0.0025 to 0.0011 (docs/benchmarks.md, "Speed").
const scaleGateAlpha = 1e-3

// scaleSureGain is the scale layer's own held-out gain (nats per point)
// above which the whole flow is not fitted again without it to compare:
// where a candidate gained alone and the flow without it won in the end
// (the banana, the Cauchy problem: the later layers do better without),
// its own gain was at most 0.9 nats; on the funnel, where the flow with
// it always won, its own gain was 5.1 to 16 nats (TestScaleGateMeasure on
// the pipeline's draws of 8 to 64 seeds per problem, docs/benchmarks.md,
// "Speed"). The second fit was half of the funnel's flow fits.
const scaleSureGain = 3.0

// fitScale fits a scale layer to the n×d rows z (weights w, nil for
// equal): k is the coordinate whose value best predicts the others' log
// squares (scaleChoice), and the lines maximize the likelihood of
// z_j ~ N(m_j + c_j z_k, e^{2(a_j + b_j z_k)}) (fitScaleLine). ok is false
// when no coordinate predicts the others' log squares beyond chance
// (scaleGateAlpha) unless ungated, or at all. g is the gate's numbers.
func fitScale(z []float64, n, d int, w []float64, gated bool) (c scaleLayer, g scaleGate, ok bool) {
	if d < 2 || d > maxScaleDim || n < 2*d {
		return c, scaleGate{gain: math.NaN()}, false
	}
	k, g := scaleChoice(z, n, d, w)
	if k < 0 || gated && !g.pass() {
		return c, g, false
	}
	c.k = k
	c.m, c.c = make([]float64, d), make([]float64, d)
	c.a, c.b = make([]float64, d), make([]float64, d)
	t, v := make([]float64, n), make([]float64, n)
	for i := range n {
		t[i] = z[i*d+c.k]
	}
	for j := 0; j < d; j++ {
		if j != c.k {
			for i := range n {
				v[i] = z[i*d+j]
			}
			c.m[j], c.c[j], c.a[j], c.b[j] = fitScaleLine(t, v, w)
		}
	}
	return c, g, true
}

// scaleGate holds the gate's numbers: the test statistic, its threshold
// and the predicted gain (see scaleChoice); when the candidate passed its
// own test, for the tests that measure the gate, its own held-out gain and
// the margin by which the whole flow with it beat (or lost to) the flow
// without it.
type scaleGate struct {
	stat, limit, gain float64
	own, margin       float64
}

// pass reports whether the dependence is beyond chance.
func (g scaleGate) pass() bool { return g.stat > g.limit }

// scaleChoice returns the scale coordinate k of the n×d rows z (weights
// w, nil for equal), the one whose value best predicts the others' log
// squares (the summed R² of the least-squares lines of log(z_j² + ε) in
// z_k over the first scaleSelectRows rows; the training rows are in
// random order), and the gate's numbers there. The statistic is m Σ_j R²
// over those m rows (Kish's effective number with weights): for
// coordinates independent of z_k each m R² is about χ²₁, so the sum is
// about χ²_{d-1}, and the limit is that law's upper quantile at
// scaleGateAlpha/d (the best of d coordinates). The predicted gain is
// Σ_j b_j² Var(z_k) with b_j half the slope of z_j's line: for z_j ~
// N(0, e^{2(a_j + b_j z_k)}) with Gaussian z_k, E log(z_j²) = 2(a_j +
// b_j z_k) + const, and b_j² Var(z_k) = ½ log E e^{2 b_j z_k} - E b_j z_k
// is what the scale's line gains per point over a constant scale in
// expected log-likelihood (reported by the tests that measure the gate).
// k is -1 when no coordinate predicts any log square.
func scaleChoice(z []float64, n, d int, w []float64) (int, scaleGate) {
	weight := func(i int) float64 {
		if w == nil {
			return 1
		}
		return w[i]
	}
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
	// cov[k*d+j] = Σ w (z_k - mz_k)(u_j - mu_j), one matrix product.
	zw := make([]float64, m*d)
	var sw, sw2 float64
	for i := 0; i < m; i++ {
		wi := weight(i)
		sw += wi
		sw2 += wi * wi
		for k := 0; k < d; k++ {
			dz := z[i*d+k] - mz[k]
			du := u[i*d+k] - mu[k]
			zw[i*d+k] = wi * dz
			u[i*d+k] = du
			vz[k] += wi * dz * dz
			vu[k] += wi * du * du
		}
	}
	var cm mat.Dense
	cm.Mul(mat.NewDense(m, d, zw).T(), mat.NewDense(m, d, u))
	cov := cm.RawMatrix().Data
	best, k := 0.0, -1
	for c := 0; c < d; c++ {
		var r2 float64
		for j := 0; j < d; j++ {
			if j != c && vz[c] > 0 && vu[j] > 0 {
				r2 += cov[c*d+j] * cov[c*d+j] / (vz[c] * vu[j])
			}
		}
		if r2 > best {
			best, k = r2, c
		}
	}
	if k < 0 {
		return -1, scaleGate{gain: math.NaN()}
	}
	g := scaleGate{stat: sw * sw / sw2 * best, limit: chiSquareUpper(d-1, scaleGateAlpha/float64(d))}
	for j := 0; j < d; j++ {
		if j != k {
			g.gain += cov[k*d+j] * cov[k*d+j] / (4 * vz[k] * sw)
		}
	}
	return k, g
}

// chiSquareUpper is the χ²_ν quantile with upper tail p, by the
// Wilson-Hilferty approximation (a few per cent from the exact one for
// ν >= 1 and the small p of the gate).
func chiSquareUpper(nu int, p float64) float64 {
	v := float64(nu)
	a := 2 / (9 * v)
	t := 1 - a + normQuantile(1-p)*math.Sqrt(a)
	return v * t * t * t
}

// fitScaleLine fits v_i ~ N(m + c t_i, e^{2(a + b t_i)}) by maximum
// likelihood (weights w, nil for equal), alternating weighted least
// squares for the centre with the convex fit of the log-scale to the
// residuals. The centre matters where the scale is small: whitening
// leaves each coordinate's mean linear in z_k, and in a funnel's neck
// an offset of a few hundredths is many standard deviations.
func fitScaleLine(t, v, w []float64) (m, c, a, b float64) {
	n := len(t)
	r := make([]float64, n)
	copy(r, v)
	for range scaleAlternations {
		a, b = fitLogScale(t, r, w, a, b)
		// Weighted least squares with weights w_i e^{-2(a + b t_i)}.
		var s0, s1, s2, sv, stv float64
		for i := range n {
			wi := math.Exp(-2 * (a + b*t[i]))
			if w != nil {
				wi *= w[i]
			}
			s0 += wi
			s1 += wi * t[i]
			s2 += wi * t[i] * t[i]
			sv += wi * v[i]
			stv += wi * t[i] * v[i]
		}
		det := s0*s2 - s1*s1
		if !(det > 0) {
			return 0, 0, 0, 0
		}
		m, c = (s2*sv-s1*stv)/det, (s0*stv-s1*sv)/det
		for i := range n {
			r[i] = v[i] - m - c*t[i]
		}
	}
	a, b = fitLogScale(t, r, w, a, b)
	return m, c, a, b
}

// scaleAlternations is the number of centre-and-scale rounds of
// fitScaleLine.
const scaleAlternations = 4

// fitLogScale returns the (a, b) that minimize the weighted negative
// log-likelihood Σ w_i [v_i² e^{-2(a + b t_i)}/2 + a + b t_i], starting at
// (a, b), by Newton's method with step halving; (0, 0) if it fails.
func fitLogScale(t, v, w []float64, a, b float64) (float64, float64) {
	weight := func(i int) float64 {
		if w == nil {
			return 1
		}
		return w[i]
	}
	nll := func(a, b float64) float64 {
		var s float64
		for i := range t {
			s += weight(i) * (v[i]*v[i]*math.Exp(-2*(a+b*t[i]))/2 + a + b*t[i])
		}
		return s
	}
	f := nll(a, b)
	for range 50 {
		var ga, gb, haa, hab, hbb float64
		for i := range t {
			wi := weight(i)
			e := wi * v[i] * v[i] * math.Exp(-2*(a+b*t[i]))
			ga += wi - e
			gb += (wi - e) * t[i]
			haa += 2 * e
			hab += 2 * e * t[i]
			hbb += 2 * e * t[i] * t[i]
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
