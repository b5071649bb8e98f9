package problems

import (
	"math"
	"math/rand/v2"
)

// Constants of the two-mode target: modes at ±twoModesA·1 with weights
// twoModesMinor (the minus mode) and 1 - twoModesMinor, prior box
// (-twoModesBound, twoModesBound)^d.
const (
	twoModesA     = 4.0
	twoModesMinor = 0.2
	twoModesBound = 10.0
)

// TwoModes returns the two-mode target in d = 8 dimensions.
func TwoModes() *Problem { return TwoModesN(8) }

// TwoModesN returns a two-mode target in d >= 1 dimensions: the likelihood
//
//	L(x) = 0.2 N(x; -4·1, I) + 0.8 N(x; +4·1, I)
//
// under the flat prior on the box (-10, 10)^d. The modes are 8√d apart
// (22.6 at d = 8), so no gradient-based chain crosses between them: chains
// keep the proportions they start in. Both components lose the same mass
// outside the box, so the posterior weights of the modes are exactly 0.2
// and 0.8, and
//
//	ln Z = d ln m - d ln 20,  m = Φ(14) - Φ(-6),
//
// the one-dimensional mass of N(±4, 1) in (-10, 10). TwoModesMinorWeight
// is 0.2 and TwoModesMinor tells which mode a point is in. Sample picks a
// mode by weight and draws from it, redrawing the whole vector when a
// coordinate leaves the box.
func TwoModesN(d int) *Problem {
	if d < 1 {
		panic("problems: TwoModesN: d < 1")
	}
	mix := GaussianMixture(d, []float64{twoModesMinor, 1 - twoModesMinor},
		[][]float64{filled(d, -twoModesA), filled(d, twoModesA)}, []float64{1, 1}, 0)
	name := suffixName("two-modes", d, 8)
	logPrior := -float64(d) * math.Log(2*twoModesBound)
	m := 0.5 * erfDiff((twoModesBound+twoModesA)/math.Sqrt2, -(twoModesBound-twoModesA)/math.Sqrt2)
	// A NaN coordinate is not outside: it propagates as NaN, as in the
	// other problems.
	outside := func(x []float64) bool {
		for _, v := range x {
			if v <= -twoModesBound || v >= twoModesBound {
				return true
			}
		}
		return false
	}
	return &Problem{
		Name:  name,
		Dim:   d,
		LogZ:  float64(d)*math.Log(m) + logPrior,
		Lower: filled(d, -twoModesBound),
		Upper: filled(d, twoModesBound),
		LogProb: func(x []float64) float64 {
			checkLen(name, x, d)
			if outside(x) {
				return math.Inf(-1)
			}
			return mix.LogProb(x) + logPrior
		},
		LogProbGrad: func(grad, x []float64) float64 {
			checkGradLen(name, grad, x, d)
			if outside(x) {
				zero(grad)
				return math.Inf(-1)
			}
			return mix.LogProbGrad(grad, x) + logPrior
		},
		Sample: func(dst []float64, rng *rand.Rand) {
			n := checkSampleLen(name, dst, d)
			for i := 0; i < n; i++ {
				x := dst[i*d : (i+1)*d]
				for {
					mix.Sample(x, rng)
					if !outside(x) { // draws are never NaN
						break
					}
				}
			}
		},
	}
}

// TwoModesMinorWeight is the posterior weight of the minus mode of
// TwoModesN.
const TwoModesMinorWeight = twoModesMinor

// TwoModesMinor reports whether x lies in the minus (minor) mode of
// TwoModesN: the sum of its coordinates is negative, which the modes'
// midpoint hyperplane separates up to a mass of Φ(-4√d), below 1e-28 at
// d = 8.
func TwoModesMinor(x []float64) bool {
	var s float64
	for _, v := range x {
		s += v
	}
	return s < 0
}

// TwoModesMinorFraction returns the fraction of the draws that lie in the
// minor mode; chains[c] holds chain c's draws row-major, d values each.
func TwoModesMinorFraction(chains [][]float64, d int) float64 {
	var k, n int
	for _, ch := range chains {
		for i := 0; i+d <= len(ch); i += d {
			if TwoModesMinor(ch[i : i+d]) {
				k++
			}
			n++
		}
	}
	return float64(k) / float64(n)
}

// TwoModesWrongStarts returns starting points in the wrong proportions:
// every chain but the last in the minor mode's centre (-4·1), the last in
// the major mode's (+4·1), 7:1 for 8 chains where the weights are 1:4.
func TwoModesWrongStarts(chains, d int) [][]float64 {
	init := make([][]float64, chains)
	for c := range init {
		init[c] = make([]float64, d)
		for j := range init[c] {
			init[c][j] = -4
			if c == chains-1 {
				init[c][j] = 4
			}
		}
	}
	return init
}
