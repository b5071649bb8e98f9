package problems

import (
	"fmt"
	"math"
	"math/rand/v2"
)

// streamHierarchical is the newRand stream of HierarchicalNormal's data.
const streamHierarchical uint64 = 0x41e7a

// HierarchicalNormal returns the non-centred normal hierarchical model of
// groups groups with the group-level scale fixed (an "eight schools"
// with many schools, the realistic case):
//
//	μ ~ N(0, 5²),  η_j ~ N(0, 1),  y_j ~ N(μ + τ η_j, σ_j²),  j = 1..groups,
//
// with τ = 1. The parameters are x = (μ, η_1, ..., η_groups), so Dim is
// groups + 1, and p(x) is the prior times the likelihood of the data y, σ,
// which are simulated from the model with seed (μ = 1, σ_j uniform on
// [0.5, 2]). With τ fixed the model is linear and Gaussian, so
// Z = N(y; 0, D + 5² 1 1ᵀ) with D = diag(σ_j² + τ²) is exact (determinant
// lemma and Sherman-Morrison), and the posterior (μ | y Gaussian, then the
// η_j | μ, y independent Gaussians) has an exact sampler. In the
// non-centred form every η_j is coupled to μ, so the posterior covariance
// is a diagonal plus a rank-one term: far from the sample-rich regime
// once groups is large against the draws.
//
// HierarchicalNormal panics if groups < 1.
func HierarchicalNormal(groups int, seed uint64) *Problem {
	if groups < 1 {
		panic(fmt.Sprintf("problems: HierarchicalNormal: %d groups, want at least 1", groups))
	}
	const (
		sMu   = 5.0
		tau   = 1.0
		trueM = 1.0
	)
	rng := newRand(seed, streamHierarchical)
	y := make([]float64, groups)
	sig := make([]float64, groups)
	for j := range y {
		sig[j] = 0.5 + 1.5*rng.Float64()
		y[j] = trueM + tau*rng.NormFloat64() + sig[j]*rng.NormFloat64()
	}
	// ln Z = log N(y; 0, D + s² 1 1ᵀ).
	var sumInv, sumY, quad, logDet float64
	for j := range y {
		dj := sig[j]*sig[j] + tau*tau
		sumInv += 1 / dj
		sumY += y[j] / dj
		quad += y[j] * y[j] / dj
		logDet += math.Log(dj)
	}
	c := 1 + sMu*sMu*sumInv
	logDet += math.Log(c)
	quad -= sMu * sMu * sumY * sumY / c
	logZ := -0.5*float64(groups)*math.Log(2*math.Pi) - 0.5*logDet - 0.5*quad
	// Posterior of μ: precision 1/s² + Σ 1/D_j, mean v Σ y_j/D_j.
	vMu := 1 / (1/(sMu*sMu) + sumInv)
	mMu := vMu * sumY

	d := groups + 1
	lpConst := -0.5*float64(d)*math.Log(2*math.Pi) - math.Log(sMu)
	for j := range sig {
		lpConst -= 0.5*math.Log(2*math.Pi) + math.Log(sig[j])
	}
	logProbGrad := func(grad, x []float64) float64 {
		checkLen("HierarchicalNormal", x, d)
		mu := x[0]
		lp := lpConst - 0.5*mu*mu/(sMu*sMu)
		gmu := -mu / (sMu * sMu)
		for j := 0; j < groups; j++ {
			eta := x[j+1]
			r := (y[j] - mu - tau*eta) / sig[j]
			lp -= 0.5 * (eta*eta + r*r)
			if grad != nil {
				g := r / sig[j] // ∂/∂(mu + τη) of -r²/2
				gmu += g
				grad[j+1] = -eta + tau*g
			}
		}
		if grad != nil {
			grad[0] = gmu
		}
		return lp
	}
	return &Problem{
		Name:        fmt.Sprintf("hierarchical-normal-%d-seed%d", groups, seed),
		Dim:         d,
		LogZ:        logZ,
		LogProb:     func(x []float64) float64 { return logProbGrad(nil, x) },
		LogProbGrad: logProbGrad,
		Sample: func(dst []float64, rng *rand.Rand) {
			if len(dst)%d != 0 {
				panic(fmt.Sprintf("problems: HierarchicalNormal: len(dst) = %d is not a multiple of %d", len(dst), d))
			}
			for i := 0; i < len(dst); i += d {
				mu := mMu + math.Sqrt(vMu)*rng.NormFloat64()
				dst[i] = mu
				for j := 0; j < groups; j++ {
					// y_j - μ = τη_j + σ_j ε: η_j | μ, y ~ N(τ(y_j-μ)/D_j, σ_j²/D_j).
					dj := sig[j]*sig[j] + tau*tau
					dst[i+1+j] = tau*(y[j]-mu)/dj + sig[j]/math.Sqrt(dj)*rng.NormFloat64()
				}
			}
		},
	}
}
