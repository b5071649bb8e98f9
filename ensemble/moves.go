package ensemble

import (
	"math"
	"math/rand/v2"
)

// proposer builds one proposal for each walker of the active half from
// the walkers of the complementary half.
type proposer interface {
	// propose writes the proposal for walker active[i] into
	// dst[i*d:(i+1)*d] and the log of its Hastings factor into lnq[i].
	// x holds the current walkers×d positions; only walkers in comp may
	// be used to build the proposals, which keeps the proposals of a half
	// independent of each other and the update a valid Gibbs-like sweep.
	propose(dst, lnq, x []float64, active, comp []int, d int, rng *rand.Rand)
}

// stretch is the Goodman & Weare stretch move with scale a.
type stretch struct {
	a float64
}

func (m stretch) propose(dst, lnq, x []float64, active, comp []int, d int, rng *rand.Rand) {
	dm1 := float64(d - 1)
	for i, k := range active {
		j := comp[rng.IntN(len(comp))]
		// Inverse-CDF draw from g(z) ∝ 1/√z on [1/a, a]; the density
		// satisfies g(1/z) = z g(z), which makes the move symmetric up to
		// the factor z^(d-1) from the Jacobian of the one-dimensional
		// stretch along the line through X and Xj.
		t := (m.a-1)*rng.Float64() + 1
		z := t * t / m.a
		xk, xj, y := x[k*d:(k+1)*d], x[j*d:(j+1)*d], dst[i*d:(i+1)*d]
		for c := range y {
			y[c] = xj[c] + z*(xk[c]-xj[c])
		}
		lnq[i] = dm1 * math.Log(z)
	}
}

// diffEvolution is the differential-evolution move: X + γ(Xj − Xk) with
// γ = gamma(1 + jitter ξ), ξ standard normal.
type diffEvolution struct {
	gamma, jitter float64
}

func (m diffEvolution) propose(dst, lnq, x []float64, active, comp []int, d int, rng *rand.Rand) {
	n := len(comp)
	for i, k := range active {
		// An ordered pair of distinct complementary walkers, uniformly:
		// the pair (j, l) and its swap (l, j) are equally likely, which
		// makes the proposal symmetric whatever the distribution of γ.
		a := rng.IntN(n)
		b := rng.IntN(n - 1)
		if b >= a {
			b++
		}
		g := m.gamma * (1 + m.jitter*rng.NormFloat64())
		xk, xa, xb, y := x[k*d:(k+1)*d], x[comp[a]*d:(comp[a]+1)*d], x[comp[b]*d:(comp[b]+1)*d], dst[i*d:(i+1)*d]
		for c := range y {
			y[c] = xk[c] + g*(xa[c]-xb[c])
		}
		lnq[i] = 0
	}
}
