package flow

import "math"

// The 1-D maps target Φ⁻¹(F_KDE(x)), the Gaussian quantile of a kernel
// estimate of the distribution function. The kernel is the triweight
// 35/32 (1-u²)³ on [-1, 1] scaled to the standard deviation of Scott's
// Gaussian bandwidth: its distribution function is a polynomial, so a
// knot costs a handful of multiplications per point within three
// bandwidths instead of an erfc per point within six; the asymptotic
// efficiency of the triweight is 99% of the Gaussian kernel's, so the
// estimate is as good.

// triweightHalfWidth is the support half-width of a triweight kernel with
// unit standard deviation (its variance is 1/9 on [-1, 1]).
const triweightHalfWidth = 3

// triweightOdd is the odd part of the triweight distribution function:
// C(u) = 1/2 + triweightOdd(u) for u in [-1, 1].
func triweightOdd(u float64) float64 {
	u2 := u * u
	return (35.0 / 32) * u * (1 + u2*(-1+u2*(3.0/5-u2*(1.0/7))))
}

// kdeCDF evaluates the kernel estimate of the distribution function of
// the sorted points v with weights w (summing to one) at the increasing
// knots t. It writes the lower mass F(t) into lower and the upper mass
// 1-F(t) into upper, each summed directly so that both keep their
// relative precision in their own tail. cw[i] is the total weight of
// v[:i] and cu[i] that of v[i:]. a is the kernel support half-width.
func kdeCDF(lower, upper, v, w, cw, cu, t []float64, a float64) {
	n := len(v)
	lo, hi := 0, 0
	inv := 1 / a
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
		var sl, su float64
		for i := lo; i < hi; i++ {
			u := (tj - v[i]) * inv
			u = min(max(u, -1), 1)
			o := triweightOdd(u)
			sl += w[i] * (0.5 + o)
			su += w[i] * (0.5 - o)
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
