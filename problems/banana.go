package problems

import (
	"fmt"
	"math"
	"math/rand/v2"
)

// BananaSeed is the seed of the rotation of Banana and of the "banana-<d>"
// problems of ByName. BananaRotation builds the rotation from the generator
// rand.New(rand.NewPCG(seed, 0xba1a1a)) (math/rand/v2): Gram–Schmidt on the
// rows of a d×d matrix of NormFloat64 draws taken row by row, then the first
// row negated if the determinant is -1. LogZ does not depend on the
// rotation (see BananaN).
const BananaSeed uint64 = 20191212

const (
	bananaBound = 15.0
	// bananaCurv is the 0.01 of (y_{2i-1}^2 - y_{2i})^2 / 0.01.
	bananaCurv = 0.01
)

// Banana returns the paper's rotated banana in d = 32 dimensions,
// BananaN(32, BananaSeed).
func Banana() *Problem { return BananaN(32, BananaSeed) }

// BananaN returns the banana (Rosenbrock-like) target in even dimension d
// with a fixed random rotation A (det +1) drawn from seed:
//
//	log L = -Σ_{i=1}^{d/2} [ (y_{2i-1}^2 - y_{2i})^2 / 0.01 + (y_{2i-1} - 1)^2 ],  y = A x,
//
// with the flat prior on (-15, 15)^d.
//
// Without the box each pair integrates to π·√0.01, so
// ln Z = (d/2) ln(0.1 π) - d ln 30. For d = 2 LogZ also accounts for the
// small mass (about 1e-5) that the box cuts off, by a 1-D quadrature over
// y1 of the exact y2 integral on the interval the rotated box leaves. For
// d > 2 the box is a rotated cube in y and LogZ is the untruncated value;
// a random rotation spreads each y over all x coordinates, so the cut is far
// smaller (the paper's reference for d = 32 quotes below 5e-7, and the
// tests bound it for BananaSeed).
//
// Sample draws each pair exactly, y_{2i-1} ~ N(1, 1/2) and
// y_{2i} | y_{2i-1} ~ N(y_{2i-1}^2, 0.005), sets x = A^T y and redraws the
// whole vector in the rare case that x leaves the box.
func BananaN(d int, seed uint64) *Problem {
	checkBananaDim(d)
	a := BananaRotation(d, seed)
	name := fmt.Sprintf("banana-%d-seed%d", d, seed)
	if seed == BananaSeed {
		name = suffixName("banana", d, 32)
	}
	return newBanana(name, d, a)
}

// BananaRotation returns the d×d rotation A (row-major, orthogonal,
// det +1) of BananaN(d, seed), for callers that need y = A x themselves.
func BananaRotation(d int, seed uint64) []float64 {
	return randomRotation(d, newRand(seed, streamBanana))
}

// BananaIdentity returns the banana in even dimension d with A = I, whose
// pairs are independent. LogZ is exact including the box truncation, which
// removes about 2.4e-5 of the mass of each pair (where y2 ≈ y1^2 exceeds 15).
func BananaIdentity(d int) *Problem {
	checkBananaDim(d)
	return newBanana(fmt.Sprintf("banana-%d-identity", d), d, nil)
}

func checkBananaDim(d int) {
	if d < 2 || d%2 != 0 {
		panic(fmt.Sprintf("problems: banana: dimension %d is not even and positive", d))
	}
}

func newBanana(name string, d int, a []float64) *Problem {
	b := &banana{name: name, d: d, a: a, logPrior: -float64(d) * math.Log(2*bananaBound)}
	var logZ float64
	switch {
	case a == nil:
		logZ = float64(d/2)*bananaPairLogZ([4]float64{1, 0, 0, 1}) + b.logPrior
	case d == 2:
		logZ = bananaPairLogZ([4]float64{a[0], a[1], a[2], a[3]}) + b.logPrior
	default:
		logZ = float64(d/2)*math.Log(math.Pi*math.Sqrt(bananaCurv)) + b.logPrior
	}
	return &Problem{
		Name:        name,
		Dim:         d,
		LogZ:        logZ,
		Lower:       filled(d, -bananaBound),
		Upper:       filled(d, bananaBound),
		LogProb:     b.logProb,
		LogProbGrad: b.logProbGrad,
		Sample:      b.sample,
	}
}

type banana struct {
	name     string
	d        int
	a        []float64 // row-major rotation; nil means the identity
	logPrior float64
}

// pair returns (y_{2k}, y_{2k+1}) (0-based) of y = A x, computed row by row
// so that no scratch vector has to be allocated or shared between goroutines.
func (b *banana) pair(x []float64, k int) (ya, yb float64) {
	if b.a == nil {
		return x[2*k], x[2*k+1]
	}
	ra := b.a[2*k*b.d : (2*k+1)*b.d]
	rb := b.a[(2*k+1)*b.d : (2*k+2)*b.d]
	for j, v := range x {
		ya += ra[j] * v
		yb += rb[j] * v
	}
	return ya, yb
}

func (b *banana) logProb(x []float64) float64 {
	checkLen(b.name, x, b.d)
	if outsideSym(x, bananaBound) {
		return math.Inf(-1)
	}
	var s float64
	for k := 0; k < b.d/2; k++ {
		ya, yb := b.pair(x, k)
		r := ya*ya - yb
		s += r*r/bananaCurv + (ya-1)*(ya-1)
	}
	return b.logPrior - s
}

func (b *banana) logProbGrad(grad, x []float64) float64 {
	checkGradLen(b.name, grad, x, b.d)
	zero(grad)
	if outsideSym(x, bananaBound) {
		return math.Inf(-1)
	}
	var s float64
	for k := 0; k < b.d/2; k++ {
		ya, yb := b.pair(x, k)
		r := ya*ya - yb
		s += r*r/bananaCurv + (ya-1)*(ya-1)
		ga := -4*ya*r/bananaCurv - 2*(ya-1)
		gb := 2 * r / bananaCurv
		if b.a == nil {
			grad[2*k] = ga
			grad[2*k+1] = gb
			continue
		}
		// grad_x = A^T grad_y, accumulated one pair of rows at a time.
		ra := b.a[2*k*b.d : (2*k+1)*b.d]
		rb := b.a[(2*k+1)*b.d : (2*k+2)*b.d]
		for j := range grad {
			grad[j] += ga*ra[j] + gb*rb[j]
		}
	}
	return b.logPrior - s
}

func (b *banana) sample(dst []float64, rng *rand.Rand) {
	n := checkSampleLen(b.name, dst, b.d)
	var y []float64
	if b.a != nil {
		y = make([]float64, b.d)
	}
	for s := 0; s < n; s++ {
		x := dst[s*b.d : (s+1)*b.d]
		for {
			b.drawUnbounded(x, y, rng)
			if !outsideSym(x, bananaBound) {
				break
			}
		}
	}
}

// drawUnbounded draws x = A^T y from the banana without the box; y is
// scratch of length d (unused for the identity).
func (b *banana) drawUnbounded(x, y []float64, rng *rand.Rand) {
	if b.a == nil {
		y = x
	}
	for k := 0; k < b.d/2; k++ {
		ya := 1 + math.Sqrt(0.5)*rng.NormFloat64()
		y[2*k] = ya
		y[2*k+1] = ya*ya + math.Sqrt(bananaCurv/2)*rng.NormFloat64()
	}
	if b.a == nil {
		return
	}
	zero(x)
	for i, yi := range y {
		row := b.a[i*b.d : (i+1)*b.d]
		for j := range x {
			x[j] += row[j] * yi
		}
	}
}

// bananaPairLogZ returns ln ∫∫ exp(-(y1^2-y2)^2/0.01 - (y1-1)^2) dx over
// x in (-15, 15)^2 with y = A x for the 2×2 rotation a (row-major). For each
// y1 the box leaves an interval of y2, on which the Gaussian in y2 integrates
// to erf differences; the outer integral over y1 is done by composite
// Gauss–Legendre with panels (0.005) narrow enough to resolve the erf step
// where y1^2 crosses the interval's end (width about 0.05/|y1|). Beyond
// |y1 - 1| > 8 the weight exp(-(y1-1)^2) is below 1e-27 and is dropped.
func bananaPairLogZ(a [4]float64) float64 {
	y1, w := compositeGL(-7, 9, 3200, 10)
	var z float64
	for i, t := range y1 {
		lo, hi := math.Inf(-1), math.Inf(1)
		for j := 0; j < 2; j++ {
			// x_j = A_0j y1 + A_1j y2 must lie in (-15, 15).
			c0, c1 := a[j]*t, a[2+j]
			if math.Abs(c1) < 1e-300 {
				if math.Abs(c0) >= bananaBound {
					lo, hi = 0, 0
				}
				continue
			}
			l, h := (-bananaBound-c0)/c1, (bananaBound-c0)/c1
			if l > h {
				l, h = h, l
			}
			lo, hi = math.Max(lo, l), math.Min(hi, h)
		}
		if hi <= lo {
			continue
		}
		s := math.Sqrt(bananaCurv)
		inner := 0.5 * math.Sqrt(math.Pi) * s * erfDiff((hi-t*t)/s, (lo-t*t)/s)
		z += w[i] * math.Exp(-(t-1)*(t-1)) * inner
	}
	return math.Log(z)
}
