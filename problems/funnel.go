package problems

import (
	"math"
	"math/rand/v2"
)

// Box of the funnel prior: x1 in (-funnelX1Bound, funnelX1Bound), the other
// coordinates in (-funnelBound, funnelBound).
const (
	funnelX1Bound = 4.0
	funnelBound   = 30.0
)

// Funnel returns Neal's funnel of the paper in d = 16 dimensions.
func Funnel() *Problem { return FunnelN(16) }

// FunnelN returns Neal's funnel in d >= 1 dimensions:
//
//	log L = log N(x1; 0, 1) + Σ_{i>=2} log N(x_i; 0, sd = exp(x1)),
//
// with the flat prior x1 in (-4, 4), x_2..x_d in (-30, 30). Note the
// standard deviation exp(x1) (variance exp(2 x1)): that is what the paper's
// reference value -63.498811 (d = 16) corresponds to.
//
// LogZ is a 1-D Gauss–Legendre integral over x1 of N(x1; 0, 1) times the
// mass of N(0, exp(2 x1)) on (-30, 30) to the power d-1.
//
// Sample draws x1 from N(0, 1) and then x_i given x1, rejecting and
// redrawing the whole vector when any coordinate leaves the box: redrawing
// only the offending coordinate would sample a different density.
func FunnelN(d int) *Problem {
	if d < 1 {
		panic("problems: FunnelN: d < 1")
	}
	lo := filled(d, -funnelBound)
	hi := filled(d, funnelBound)
	lo[0], hi[0] = -funnelX1Bound, funnelX1Bound
	f := &funnel{
		name:     suffixName("funnel", d, 16),
		d:        d,
		logPrior: -math.Log(2*funnelX1Bound) - float64(d-1)*math.Log(2*funnelBound),
	}
	return &Problem{
		Name:        f.name,
		Dim:         d,
		LogZ:        funnelLogZ(d),
		Lower:       lo,
		Upper:       hi,
		LogProb:     f.logProb,
		LogProbGrad: f.logProbGrad,
		Sample:      f.sample,
	}
}

type funnel struct {
	name     string
	d        int
	logPrior float64
}

func (f *funnel) outside(x []float64) bool {
	return x[0] <= -funnelX1Bound || x[0] >= funnelX1Bound || outsideSym(x[1:], funnelBound)
}

func (f *funnel) logProb(x []float64) float64 {
	checkLen(f.name, x, f.d)
	if f.outside(x) {
		return math.Inf(-1)
	}
	x1 := x[0]
	var ss float64
	for _, v := range x[1:] {
		ss += v * v
	}
	m := float64(f.d - 1)
	return f.logPrior - float64(f.d)*halfLog2Pi - 0.5*x1*x1 - m*x1 - 0.5*ss*math.Exp(-2*x1)
}

func (f *funnel) logProbGrad(grad, x []float64) float64 {
	checkGradLen(f.name, grad, x, f.d)
	if f.outside(x) {
		zero(grad)
		return math.Inf(-1)
	}
	x1 := x[0]
	prec := math.Exp(-2 * x1)
	var ss float64
	for i, v := range x[1:] {
		ss += v * v
		grad[i+1] = -v * prec
	}
	m := float64(f.d - 1)
	grad[0] = -x1 - m + ss*prec
	return f.logPrior - float64(f.d)*halfLog2Pi - 0.5*x1*x1 - m*x1 - 0.5*ss*prec
}

func (f *funnel) sample(dst []float64, rng *rand.Rand) {
	n := checkSampleLen(f.name, dst, f.d)
	for s := 0; s < n; s++ {
		x := dst[s*f.d : (s+1)*f.d]
		for !f.draw(x, rng) {
		}
	}
}

// draw makes one attempt at an exact draw into x and reports whether it
// stayed inside the box.
func (f *funnel) draw(x []float64, rng *rand.Rand) bool {
	x[0] = rng.NormFloat64()
	if x[0] <= -funnelX1Bound || x[0] >= funnelX1Bound {
		return false
	}
	sd := math.Exp(x[0])
	for i := 1; i < f.d; i++ {
		x[i] = sd * rng.NormFloat64()
		if x[i] <= -funnelBound || x[i] >= funnelBound {
			return false
		}
	}
	return true
}

// funnelLogZ integrates over x1 in closed form for the other coordinates:
//
//	Z = 1/8 · 60^-(d-1) ∫_{-4}^{4} N(t; 0, 1) erf(30 e^-t / √2)^(d-1) dt.
//
// The integrand is smooth (entire), so 64 panels of 20 nodes converge to
// rounding error; the sum is done in log space so large d cannot underflow.
func funnelLogZ(d int) float64 {
	t, w := compositeGL(-funnelX1Bound, funnelX1Bound, 64, 20)
	terms := make([]float64, len(t))
	for i, ti := range t {
		mass := math.Erf(funnelBound * math.Exp(-ti) / math.Sqrt2)
		terms[i] = math.Log(w[i]) - halfLog2Pi - 0.5*ti*ti + float64(d-1)*math.Log(mass)
	}
	return logSumExp(terms) - math.Log(2*funnelX1Bound) - float64(d-1)*math.Log(2*funnelBound)
}
