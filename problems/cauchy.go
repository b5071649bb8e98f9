package problems

import (
	"math"
	"math/rand/v2"
)

const (
	cauchyBound = 100.0
	cauchyLoc   = 5.0
)

// Cauchy returns the paper's Cauchy-mixture target in d = 48 dimensions.
func Cauchy() *Problem { return CauchyN(48) }

// CauchyN returns the product of d independent two-component Cauchy
// mixtures,
//
//	log L = Σ_i log( [Cauchy(x_i; 5, 1) + Cauchy(x_i; -5, 1)] / 2 ),
//
// with the flat prior on (-100, 100)^d. Each coordinate integrates in closed
// form from the Cauchy CDF: ∫_{-100}^{100} L_1 = (atan 95 + atan 105)/π.
//
// Sample draws each coordinate from the mixture truncated to (-100, 100) by
// inversion of the Cauchy CDF; both components lose the same mass to the
// box, so each is picked with probability 1/2.
func CauchyN(d int) *Problem {
	if d < 1 {
		panic("problems: CauchyN: d < 1")
	}
	c := &cauchy{
		name:  suffixName("cauchy", d, 48),
		d:     d,
		logC1: math.Log(0.5/math.Pi) - math.Log(2*cauchyBound),
	}
	return &Problem{
		Name:        c.name,
		Dim:         d,
		LogZ:        float64(d) * cauchyLogZ1(),
		Lower:       filled(d, -cauchyBound),
		Upper:       filled(d, cauchyBound),
		LogProb:     c.logProb,
		LogProbGrad: c.logProbGrad,
		Sample:      c.sample,
	}
}

type cauchy struct {
	name  string
	d     int
	logC1 float64 // log(1/(2π)) + log prior of one coordinate
}

func (c *cauchy) logProb(x []float64) float64 {
	checkLen(c.name, x, c.d)
	if outsideSym(x, cauchyBound) {
		return math.Inf(-1)
	}
	s := float64(c.d) * c.logC1
	for _, v := range x {
		a, b := v-cauchyLoc, v+cauchyLoc
		s += math.Log(1/(1+a*a) + 1/(1+b*b))
	}
	return s
}

func (c *cauchy) logProbGrad(grad, x []float64) float64 {
	checkGradLen(c.name, grad, x, c.d)
	if outsideSym(x, cauchyBound) {
		zero(grad)
		return math.Inf(-1)
	}
	s := float64(c.d) * c.logC1
	for i, v := range x {
		a, b := v-cauchyLoc, v+cauchyLoc
		u, w := 1/(1+a*a), 1/(1+b*b)
		s += math.Log(u + w)
		// d/dv 1/(1+a^2) = -2a/(1+a^2)^2 = -2a u^2.
		grad[i] = -2 * (a*u*u + b*w*w) / (u + w)
	}
	return s
}

func (c *cauchy) sample(dst []float64, rng *rand.Rand) {
	checkSampleLen(c.name, dst, c.d)
	for i := range dst {
		m := cauchyLoc
		if rng.IntN(2) == 0 {
			m = -cauchyLoc
		}
		// Inversion in angle space: x = m + tan θ with θ uniform between
		// the angles of the box ends keeps full precision in the tails,
		// where 1 - F is tiny. Rounding can land on an end; draw again.
		lo, hi := math.Atan(-cauchyBound-m), math.Atan(cauchyBound-m)
		for {
			v := m + math.Tan(lo+(hi-lo)*rng.Float64())
			if v > -cauchyBound && v < cauchyBound {
				dst[i] = v
				break
			}
		}
	}
}

// cauchyLogZ1 is ln Z of one coordinate: the prior 1/200 times the mass of
// the mixture on (-100, 100), (atan 95 + atan 105)/π by symmetry.
func cauchyLogZ1() float64 {
	mass := (math.Atan(cauchyBound-cauchyLoc) + math.Atan(cauchyBound+cauchyLoc)) / math.Pi
	return math.Log(mass) - math.Log(2*cauchyBound)
}
