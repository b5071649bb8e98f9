package gbs

import (
	"math"

	"github.com/gbs-evidence/gbs/internal/mcmc"
)

// The walkers of an ensemble sampler move together: emcee's stretch move
// moves each half of the walkers along lines through the other half, so
// when the ensemble lingers in one arm of a curved target, all its
// walkers do. Cross-fitting splits the walkers in two halves and each
// pass averages its bridge function over one of them. Each pass's error
// counts the coupling within its half (meanTime reads the half's
// walker-mean series), but the mean of the passes took their posterior
// terms as independent apart from what fitting q shares (crossfit.go):
// the halves' common excursions, a covariance up to the terms
// themselves, were left out, and with them up to half the variance.
//
// ensembleTerm measures the mean's posterior term from the series whose
// mean it is. Pass r's relative error is the mean over its walkers and
// steps of f_r/f̄_r - 1 (f_r its bridge function at the draws, f̄_r that
// function's mean), so the mean of the passes has the relative error of
// the mean of u_t = (ȳ_a(t)/f̄_a + ȳ_b(t)/f̄_b)/2 over the steps t, where
// ȳ_r(t) is the mean of f_r over pass r's walkers at step t. Its
// variance is Var(u)·τ_u/m; the cross-passes' covariance is in it.
//
// A single series' τ from Sokal's window misses slow, small components:
// on emcee's walkers of a curved target the batch-means estimate of the
// same variance keeps falling as its windows shorten (from 4 to 32
// windows), so the autocorrelation has a slow tail. Batch means over
// ensembleBatches long windows see it whatever its shape. The term is the larger of the two, and never below the
// passes' own (a, b), so only a coupling the passes missed widens the
// error bar.

// ensembleBatches is the number of windows of the batch-means estimate.
const ensembleBatches = 8

// ensembleTerm returns the posterior-side squared relative error of the
// mean of the cross-fitting passes a and b over an ensemble's walkers,
// without the part that fitting q shares (crossFitCov), or 0 when the
// passes do not share the steps of their walkers.
func ensembleTerm(a, b bridgePass) (term, tauU, batch float64) {
	ya, ok := walkerMeanSummands(a)
	if !ok {
		return 0, 0, 0
	}
	yb, ok := walkerMeanSummands(b)
	if !ok || len(ya) != len(yb) {
		return 0, 0, 0
	}
	m := len(ya)
	u := make([]float64, m)
	for t := range u {
		u[t] = (ya[t] + yb[t]) / 2
	}
	_, v := mcmc.MeanVar(u)
	if !(v > 0) {
		return 0, 0, 0
	}
	tauU, _ = mcmc.IntegratedTime(u, 1, mcmc.TimeOptions{})
	tauU = math.Max(tauU, 1)
	batch = batchMeansVar(u, ensembleBatches)
	return math.Max(v*tauU/float64(m), batch), tauU, batch
}

// walkerMeanSummands returns, at each step, the mean over pass r's
// walkers of its bridge function at their draws, relative to the
// function's mean; false when the pass has no steps to read.
func walkerMeanSummands(r bridgePass) ([]float64, bool) {
	nc := r.data.nchains
	n := len(r.data.a)
	if nc < 1 || n < 2*nc || n%nc != 0 {
		return nil, false
	}
	f, mean := bridgeSummands(r)
	if !(mean > 0) {
		return nil, false
	}
	m := n / nc
	y := make([]float64, m)
	for c := range nc {
		for t, v := range f[c*m : (c+1)*m] {
			y[t] += v
		}
	}
	for t := range y {
		y[t] /= float64(nc) * mean
	}
	return y, true
}

// bridgeSummands returns pass r's bridge function at its posterior draws,
// as bridgeError weighs them, and its mean.
func bridgeSummands(r bridgePass) (f []float64, mean float64) {
	ne := float64(len(r.data.a)) / math.Max(r.tauP, 1)
	nq := float64(r.nq)
	sp, sq := ne/(ne+nq), nq/(ne+nq)
	l := r.est.logZ
	f = make([]float64, len(r.data.a))
	for i, ai := range r.data.a {
		f[i] = 1 / (sp*math.Exp(-l-ai) + sq)
	}
	mean, _ = mcmc.MeanVar(f)
	return f, mean
}

// batchMeansVar is the variance of the mean of the series x estimated
// from the means of k consecutive windows of equal length (the last
// m mod k draws left out): their variance (unbiased) over k.
func batchMeansVar(x []float64, k int) float64 {
	l := len(x) / k
	if k < 2 || l < 1 {
		return 0
	}
	bm := make([]float64, k)
	for i := range bm {
		s := 0.0
		for _, v := range x[i*l : (i+1)*l] {
			s += v
		}
		bm[i] = s / float64(l)
	}
	_, v := mcmc.MeanVar(bm) // 1/k: v/(k-1) is the unbiased variance over k
	return v / float64(k-1)
}
