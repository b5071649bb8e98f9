package problems

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"strconv"
	"strings"
)

// Problem is a target density with a known normalizing constant.
type Problem struct {
	// Name identifies the problem; for the built-in families ByName(Name)
	// builds it again.
	Name string

	// Dim is the dimension of the parameter space.
	Dim int

	// LogZ is the exact natural log of ∫ p(x) dx.
	LogZ float64

	// Lower and Upper are the bounds of the flat, normalized prior box.
	// Both are nil for unbounded problems such as the Gaussians. The
	// density functions use their own copy, so changing these slices does
	// not change the problem.
	Lower, Upper []float64

	// LogProb returns log p(x), the unnormalized target (likelihood times
	// the normalized prior). It is -Inf outside the box. It panics if
	// len(x) != Dim.
	LogProb func(x []float64) float64

	// LogProbGrad writes the gradient of log p at x into grad (len Dim) and
	// returns log p(x). Outside the box it returns -Inf and zeroes grad.
	LogProbGrad func(grad, x []float64) float64

	// Sample fills dst (row-major, len(dst) = n*Dim) with n exact,
	// independent draws from p/Z, using only rng. It is nil if the problem
	// has no exact sampler. It panics if len(dst) is not a multiple of Dim.
	Sample func(dst []float64, rng *rand.Rand)
}

// LogProbBatch evaluates log p at the len(dst) row-major points of x, so
// that the method value p.LogProbBatch can serve as a batch log-density
// callback (gbs.LogDensityFunc). It returns an error only if
// len(x) != len(dst)*Dim.
func (p *Problem) LogProbBatch(dst, x []float64) error {
	if len(x) != len(dst)*p.Dim {
		return fmt.Errorf("problems: %s: len(x) = %d, want len(dst)*Dim = %d*%d", p.Name, len(x), len(dst), p.Dim)
	}
	for i := range dst {
		dst[i] = p.LogProb(x[i*p.Dim : (i+1)*p.Dim])
	}
	return nil
}

// LogProbGradBatch is the gradient counterpart of LogProbBatch: it writes
// log p of the len(dst) row-major points of x into dst and their gradients,
// row-major, into grad. It returns an error only for inconsistent lengths.
func (p *Problem) LogProbGradBatch(dst, grad, x []float64) error {
	n := len(dst) * p.Dim
	if len(x) != n || len(grad) != n {
		return fmt.Errorf("problems: %s: len(x) = %d, len(grad) = %d, want len(dst)*Dim = %d*%d", p.Name, len(x), len(grad), len(dst), p.Dim)
	}
	for i := range dst {
		dst[i] = p.LogProbGrad(grad[i*p.Dim:(i+1)*p.Dim], x[i*p.Dim:(i+1)*p.Dim])
	}
	return nil
}

// Inside reports whether x lies strictly inside the prior box. It is true
// for every finite x of an unbounded problem.
func (p *Problem) Inside(x []float64) bool {
	if len(x) != p.Dim {
		return false
	}
	if p.Lower == nil {
		for _, v := range x {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return false
			}
		}
		return true
	}
	for i, v := range x {
		if !(v > p.Lower[i] && v < p.Upper[i]) {
			return false
		}
	}
	return true
}

// All returns new instances of the four problems of the paper, in its
// order: funnel (d=16), banana (d=32), Cauchy (d=48) and ring (d=64).
func All() []*Problem {
	return []*Problem{Funnel(), Banana(), Cauchy(), Ring()}
}

// Seeds and constants of the problems that ByName builds by name.
const (
	// CorrelatedSeed is the seed of the "correlated-gaussian-<d>" problems.
	CorrelatedSeed uint64 = 1
)

// ByName returns the problem with the given name. Known names:
//
//	funnel, banana, cauchy, ring      the paper's problems (d = 16, 32, 48, 64)
//	funnel-<d>                        FunnelN(d), d >= 1
//	banana-<d>                        BananaN(d, BananaSeed), d even
//	banana-<d>-identity               BananaIdentity(d), d even
//	cauchy-<d>                        CauchyN(d), d >= 1
//	ring-<d>                          RingN(d), d >= 1
//	gaussian-<d>                      standard normal N(0, I_d), ln Z = 0
//	correlated-gaussian-<d>           CorrelatedGaussian(d, CorrelatedSeed, 0)
//	mixture-<d>                       StandardMixture(d)
//	two-modes, two-modes-<d>          TwoModes(), TwoModesN(d)
//
// Names are case-insensitive. An unknown or malformed name gives an error
// that lists the known forms.
func ByName(name string) (*Problem, error) {
	n := strings.ToLower(strings.TrimSpace(name))
	switch n {
	case "funnel":
		return Funnel(), nil
	case "banana":
		return Banana(), nil
	case "cauchy":
		return Cauchy(), nil
	case "ring":
		return Ring(), nil
	case "two-modes":
		return TwoModes(), nil
	}
	type family struct {
		prefix, suffix string
		min            int
		even           bool
		make           func(d int) *Problem
	}
	families := []family{
		{"funnel-", "", 1, false, FunnelN},
		{"banana-", "-identity", 2, true, BananaIdentity},
		{"banana-", "", 2, true, func(d int) *Problem { return BananaN(d, BananaSeed) }},
		{"cauchy-", "", 1, false, CauchyN},
		{"ring-", "", 1, false, RingN},
		{"correlated-gaussian-", "", 1, false, func(d int) *Problem { return CorrelatedGaussian(d, CorrelatedSeed, 0) }},
		{"gaussian-", "", 1, false, func(d int) *Problem { return Gaussian(make([]float64, d), nil, 0) }},
		{"mixture-", "", 1, false, StandardMixture},
		{"two-modes-", "", 1, false, TwoModesN},
	}
	for _, f := range families {
		if !strings.HasPrefix(n, f.prefix) || !strings.HasSuffix(n, f.suffix) {
			continue
		}
		num := strings.TrimSuffix(strings.TrimPrefix(n, f.prefix), f.suffix)
		d, err := strconv.Atoi(num)
		if err != nil {
			continue
		}
		if d < f.min || (f.even && d%2 != 0) || d > maxByNameDim {
			return nil, fmt.Errorf("problems: %q: dimension %d out of range for this family (min %d, max %d, even: %t)", name, d, f.min, maxByNameDim, f.even)
		}
		return f.make(d), nil
	}
	return nil, fmt.Errorf("problems: unknown problem %q; known: %s", name, strings.Join(knownNames(), ", "))
}

// maxByNameDim keeps a typo such as "ring-6400000" from allocating gigabytes.
const maxByNameDim = 100000

func knownNames() []string {
	s := []string{"funnel", "banana", "cauchy", "ring", "funnel-<d>", "banana-<d>", "banana-<d>-identity",
		"cauchy-<d>", "ring-<d>", "gaussian-<d>", "correlated-gaussian-<d>", "mixture-<d>", "two-modes", "two-modes-<d>"}
	sort.Strings(s)
	return s
}

// checkLen panics with a clear message, gonum style, when a point has the
// wrong dimension; a silent short read would give a wrong density.
func checkLen(name string, x []float64, d int) {
	if len(x) != d {
		panic(fmt.Sprintf("problems: %s: len(x) = %d, want %d", name, len(x), d))
	}
}

func checkGradLen(name string, grad, x []float64, d int) {
	if len(x) != d || len(grad) != d {
		panic(fmt.Sprintf("problems: %s: len(x) = %d, len(grad) = %d, want %d", name, len(x), len(grad), d))
	}
}

func checkSampleLen(name string, dst []float64, d int) int {
	if len(dst)%d != 0 {
		panic(fmt.Sprintf("problems: %s: len(dst) = %d is not a multiple of Dim = %d", name, len(dst), d))
	}
	return len(dst) / d
}

// outside reports whether x is on or outside the box. NaN coordinates are
// not outside, so that NaN propagates to the result.
func outside(x, lo, hi []float64) bool {
	for i, v := range x {
		if v <= lo[i] || v >= hi[i] {
			return true
		}
	}
	return false
}

// outsideSym is outside for the symmetric box (-b, b)^d.
func outsideSym(x []float64, b float64) bool {
	for _, v := range x {
		if v <= -b || v >= b {
			return true
		}
	}
	return false
}

func zero(s []float64) {
	for i := range s {
		s[i] = 0
	}
}

func filled(d int, v float64) []float64 {
	s := make([]float64, d)
	for i := range s {
		s[i] = v
	}
	return s
}

func suffixName(base string, d, paperDim int) string {
	if d == paperDim {
		return base
	}
	return base + "-" + strconv.Itoa(d)
}
