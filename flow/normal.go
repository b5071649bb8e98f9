package flow

import (
	"math"

	"gonum.org/v1/gonum/mathext"
)

// logSqrt2Pi is log(sqrt(2 pi)), the normalizer of the standard normal.
const logSqrt2Pi = 0.91893853320467274178032973640561763986139747363778

// logPhi is the log density of the standard normal.
func logPhi(z float64) float64 { return -0.5*z*z - logSqrt2Pi }

// normQuantile is the standard normal quantile function. It uses Wichura's
// AS241 through gonum, which keeps full relative precision in the lower
// tail; callers ask for the upper tail as -normQuantile(1-p) with 1-p
// computed directly, never as 1 - (1-p).
func normQuantile(p float64) float64 { return mathext.NormalQuantile(p) }

// softplus is log(1+exp(y)) without overflow or loss of precision.
func softplus(y float64) float64 {
	if y > 0 {
		return y + math.Log1p(math.Exp(-y))
	}
	return math.Log1p(math.Exp(y))
}

// softplusInv is the inverse of softplus for u > 0: log(exp(u)-1).
func softplusInv(u float64) float64 {
	if u > 30 {
		// exp(-u) < 1e-13: log1p keeps the tiny correction exact.
		return u + math.Log1p(-math.Exp(-u))
	}
	return math.Log(math.Expm1(u))
}
