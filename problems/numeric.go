package problems

import (
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/integrate/quad"
	"gonum.org/v1/gonum/mat"
)

const halfLog2Pi = 0.91893853320467274178032973640562 // ln(2π)/2

// compositeGL returns the nodes and weights of a composite Gauss–Legendre
// rule: (lo, hi) split into panels equal parts, order nodes in each. Panels
// keep the per-panel order within gonum's tabulated range (<= 100), where
// nodes are accurate to a few ulps, while the total count can be large.
func compositeGL(lo, hi float64, panels, order int) (x, w []float64) {
	x = make([]float64, panels*order)
	w = make([]float64, panels*order)
	h := (hi - lo) / float64(panels)
	for p := 0; p < panels; p++ {
		a := lo + float64(p)*h
		b := a + h
		if p == panels-1 {
			b = hi
		}
		quad.Legendre{}.FixedLocations(x[p*order:(p+1)*order], w[p*order:(p+1)*order], a, b)
	}
	return x, w
}

// logSumExp returns log Σ exp(s_i) without overflow; -Inf for an empty or
// all -Inf input.
func logSumExp(s []float64) float64 {
	m := math.Inf(-1)
	for _, v := range s {
		if v > m {
			m = v
		}
	}
	if math.IsInf(m, 0) {
		return m
	}
	var t float64
	for _, v := range s {
		t += math.Exp(v - m)
	}
	return m + math.Log(t)
}

// erfDiff returns erf(a) - erf(b) for a >= b, using erfc on the side where
// both values are close to ±1 so the difference keeps its relative
// precision in the tails.
func erfDiff(a, b float64) float64 {
	switch {
	case b >= 0:
		return math.Erfc(b) - math.Erfc(a)
	case a <= 0:
		return math.Erfc(-a) - math.Erfc(-b)
	default:
		return math.Erf(a) - math.Erf(b)
	}
}

// randomRotation returns a d×d rotation (orthogonal, det +1), row-major,
// drawn from the Haar measure: Gram–Schmidt on the rows of a matrix of
// standard normal draws is a QR decomposition with a positive diagonal of
// R, which is what makes Q Haar-distributed; the sign of one row is then
// flipped if needed to make the determinant +1. Gram–Schmidt is done twice
// per row so that the rows are orthonormal to machine precision, and by
// hand so that the matrix depends only on the generator's stream, not on
// the internals of a LAPACK routine.
func randomRotation(d int, rng *rand.Rand) []float64 {
	a := make([]float64, d*d)
	for i := range a {
		a[i] = rng.NormFloat64()
	}
	for i := 0; i < d; i++ {
		ri := a[i*d : (i+1)*d]
		for pass := 0; pass < 2; pass++ {
			for j := 0; j < i; j++ {
				rj := a[j*d : (j+1)*d]
				var dot float64
				for k := range ri {
					dot += ri[k] * rj[k]
				}
				for k := range ri {
					ri[k] -= dot * rj[k]
				}
			}
		}
		var nrm float64
		for _, v := range ri {
			nrm += v * v
		}
		nrm = math.Sqrt(nrm)
		for k := range ri {
			ri[k] /= nrm
		}
	}
	if mat.Det(mat.NewDense(d, d, append([]float64(nil), a...))) < 0 {
		for k := 0; k < d; k++ {
			a[k] = -a[k]
		}
	}
	return a
}

// newRand returns the generator used for every seeded construction in this
// package (rotations, random covariances and means): PCG with the given
// seed and a fixed, per-purpose stream.
func newRand(seed, stream uint64) *rand.Rand {
	return rand.New(rand.NewPCG(seed, stream))
}

// Streams of newRand, one per purpose, so that two constructions with the
// same seed do not share draws.
const (
	streamBanana     uint64 = 0xba1a1a
	streamCorrelated uint64 = 0xc0aa
)
