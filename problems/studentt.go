package problems

import (
	"fmt"
	"math"
	"math/rand/v2"
)

// StudentT returns the standard multivariate Student-t density with nu
// degrees of freedom in d dimensions, normalized (ln Z = 0), unbounded:
//
//	p(x) = Γ((ν+d)/2) / (Γ(ν/2) (νπ)^(d/2)) · (1 + |x|²/ν)^(-(ν+d)/2).
//
// Its tails are polynomial: a test of estimators and checks on heavier
// tails than a Gaussian's. Sample draws z/√(g/ν), z standard normal and g
// a χ² with ν degrees of freedom (a sum of ν squared normals). StudentT
// panics if d < 1 or nu < 1.
func StudentT(d, nu int) *Problem {
	if d < 1 || nu < 1 {
		panic(fmt.Sprintf("problems: StudentT: d = %d and nu = %d, want both >= 1", d, nu))
	}
	t := &studentT{d: d, nu: float64(nu), name: fmt.Sprintf("student-t-%d-nu%d", d, nu)}
	a, _ := math.Lgamma((t.nu + float64(d)) / 2)
	b, _ := math.Lgamma(t.nu / 2)
	t.logNorm = a - b - float64(d)/2*math.Log(t.nu*math.Pi)
	return &Problem{
		Name:        t.name,
		Dim:         d,
		LogZ:        0,
		LogProb:     t.logProb,
		LogProbGrad: t.logProbGrad,
		Sample:      t.sample,
	}
}

type studentT struct {
	name    string
	d       int
	nu      float64
	logNorm float64
}

func (t *studentT) logProb(x []float64) float64 {
	checkLen(t.name, x, t.d)
	var ss float64
	for _, v := range x {
		ss += v * v
	}
	return t.logNorm - (t.nu+float64(t.d))/2*math.Log1p(ss/t.nu)
}

func (t *studentT) logProbGrad(grad, x []float64) float64 {
	checkGradLen(t.name, grad, x, t.d)
	var ss float64
	for _, v := range x {
		ss += v * v
	}
	f := -(t.nu + float64(t.d)) / (t.nu + ss)
	for i, v := range x {
		grad[i] = f * v
	}
	return t.logNorm - (t.nu+float64(t.d))/2*math.Log1p(ss/t.nu)
}

func (t *studentT) sample(dst []float64, rng *rand.Rand) {
	n := checkSampleLen(t.name, dst, t.d)
	for s := range n {
		var g float64
		for range int(t.nu) {
			z := rng.NormFloat64()
			g += z * z
		}
		f := 1 / math.Sqrt(g/t.nu)
		for i := range t.d {
			dst[s*t.d+i] = f * rng.NormFloat64()
		}
	}
}
