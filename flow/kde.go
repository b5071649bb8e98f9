package flow

import "math"

// The 1-D maps target Φ⁻¹(F_KDE(x)), the Gaussian quantile of a kernel
// estimate of the distribution function. The kernel is Epanechnikov's
// 3/4 (1-u²) on [-1, 1], scaled to the standard deviation of the Gaussian
// bandwidth: its support is finite and its distribution function a cubic,
// so a knot needs no erfc, only the points within √5 bandwidths, and
// (through the segment moments below) only a few operations per 32 of
// them. It is the kernel of highest asymptotic efficiency (the Gaussian's
// is 95% of it), so nothing is lost in accuracy.

// kernelHalfWidth is the support half-width of an Epanechnikov kernel
// with unit standard deviation (its variance is 1/5 on [-1, 1]).
var kernelHalfWidth = math.Sqrt(5)

// kernelOdd is the odd part of the kernel's distribution function:
// C(u) = 1/2 + kernelOdd(u) for u in [-1, 1].
func kernelOdd(u float64) float64 {
	return 0.75 * u * (1 - u*u*(1.0/3))
}

// kdeSegment is the number of sorted points per segment of the moment
// summaries used by kdeCDF.
const kdeSegment = 32

// kdeMoments summarizes the sorted points in segments of kdeSegment: for
// segment s with centre c[s], m[4s+l] = Σ w (v-c)^l, l = 0..3. Because the
// kernel's distribution function is a cubic, a segment lying wholly inside
// a kernel window contributes a closed form in these four moments, and a
// knot costs O(window/kdeSegment + kdeSegment) instead of O(window).
type kdeMoments struct {
	c, m []float64
}

func newKDEMoments(v, w []float64) *kdeMoments {
	ns := len(v) / kdeSegment
	km := &kdeMoments{c: make([]float64, ns), m: make([]float64, 4*ns)}
	for s := 0; s < ns; s++ {
		seg := v[s*kdeSegment : (s+1)*kdeSegment]
		c := seg[kdeSegment/2]
		km.c[s] = c
		var m0, m1, m2, m3 float64
		for i, x := range seg {
			wi := w[s*kdeSegment+i]
			r := x - c
			m0 += wi
			m1 += wi * r
			m2 += wi * r * r
			m3 += wi * r * r * r
		}
		km.m[4*s], km.m[4*s+1], km.m[4*s+2], km.m[4*s+3] = m0, m1, m2, m3
	}
	return km
}

// kdeCDF evaluates the kernel estimate of the distribution function of
// the sorted points v with weights w (summing to one) at the increasing
// knots t. It writes the lower mass F(t) into lower and the upper mass
// 1-F(t) into upper, each summed directly so that both keep their
// relative precision in their own tail. cw[i] is the total weight of
// v[:i] and cu[i] that of v[i:]. a is the kernel support half-width.
func kdeCDF(lower, upper, v, w, cw, cu []float64, km *kdeMoments, t []float64, a float64) {
	n := len(v)
	lo, hi := 0, 0
	inv := 1 / a
	direct := func(tj float64, from, to int) (sl, su float64) {
		for i := from; i < to; i++ {
			u := (tj - v[i]) * inv
			u = min(max(u, -1), 1)
			o := kernelOdd(u)
			sl += w[i] * (0.5 + o)
			su += w[i] * (0.5 - o)
		}
		return sl, su
	}
	for j, tj := range t {
		// Points below tj-a count fully in the lower mass, points above
		// tj+a fully in the upper mass; only the window between needs
		// the kernel. Knots increase, so both ends only move forward.
		for lo < n && v[lo] < tj-a {
			lo++
		}
		hi = max(hi, lo)
		for hi < n && v[hi] <= tj+a {
			hi++
		}
		s0 := (lo + kdeSegment - 1) / kdeSegment // first segment wholly inside
		s1 := hi / kdeSegment                    // one past the last
		var sl, su float64
		if km == nil || s1 <= s0 {
			sl, su = direct(tj, lo, hi)
		} else {
			l1, u1 := direct(tj, lo, s0*kdeSegment)
			l2, u2 := direct(tj, s1*kdeSegment, hi)
			sl, su = l1+l2, u1+u2
			// C(u) = 1/2 + 3/4 u - 1/4 u³ with u = (δ - r)/a, δ = tj - c,
			// r = v - c: expand in the moments of r.
			for s := s0; s < s1; s++ {
				d := tj - km.c[s]
				m := km.m[4*s : 4*s+4]
				su1 := (d*m[0] - m[1]) * inv
				su3 := (((d*m[0]-3*m[1])*d+3*m[2])*d - m[3]) * (inv * inv * inv)
				o := 0.75*su1 - 0.25*su3
				sl += 0.5*m[0] + o
				su += 0.5*m[0] - o
			}
		}
		lower[j] = cw[lo] + sl
		upper[j] = cu[hi] + su
	}
}

// scottBandwidth is Scott's rule for a Gaussian kernel, 1.06 σ n^(-1/5),
// with σ the smaller of the standard deviation and IQR/1.349 (Silverman's
// robust variant: heavy tails must not inflate the bandwidth of the core).
func scottBandwidth(sd, iqr, neff float64) float64 {
	sig := sd
	if r := iqr / 1.349; r > 0 && r < sig {
		sig = r
	}
	return 1.06 * sig * math.Pow(neff, -0.2)
}
