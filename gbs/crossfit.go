package gbs

import (
	"math"

	"github.com/gbs-evidence/gbs/internal/mcmc"
)

// Cross-fitting's two passes are not independent when q is close to p.
// Pass a fits q₁ on the first half H₁ and averages over the second half
// H₂; pass b does the opposite. Write log q_k = log q∞ + δ_k, where δ_k is
// what fitting on the finite half H_k adds. Each pass's posterior-side
// error has a part linear in the draws it averages over (log p - log q∞
// at them; independent between the passes) and a part from δ: pass a
// averages δ₁ over H₂, pass b averages δ₂ over H₁. For a maximum-likelihood
// fit δ_k(x) ≈ s(x)ᵀ I⁻¹ s̄_k (s the score, s̄_k its mean over H_k), so both
// δ parts are the same bilinear form s̄₁ᵀ I⁻¹ s̄₂: they are one random
// number counted twice. When q∞ = p (a Gaussian p, a flow that fits it)
// the δ part is all of the posterior term, the passes' posterior errors
// are fully correlated, and taking them as independent halves the
// posterior term (emcee on a 4-d Gaussian: σ 12-14 % below the spread,
// 2σ coverage 91-93 %; docs/benchmarks.md).
//
// The δ part is measured in the run: D = log q₁ - log q₂ = δ₁ - δ₂ has
// twice the variance of one δ (the fits' fluctuations are independent),
// and the pass's sensitivity to log q at a posterior draw is the bridge
// function's derivative. The covariance of the passes' ln Z is the
// variance of the shared bilinear term, estimated from each pass and
// combined as their geometric mean, at most the posterior terms'
// geometric mean (correlation 1).

// crossFitCov returns the covariance of the two cross-fitting passes'
// squared relative errors' posterior parts: pass a used the draws h.use
// (q fitted on h.fit), pass b the draws h.fit.
func crossFitCov(a, b bridgePass, h halves, iid bool) float64 {
	ca := sharedTerm(a, b.q, h.use, h.nchains, iid)
	cb := sharedTerm(b, a.q, h.fit, h.fitChains, iid)
	c := math.Sqrt(ca * cb)
	if lim := math.Sqrt(a.est.re2P * b.est.re2P); !(c <= lim) {
		c = lim
	}
	if math.IsNaN(c) {
		return 0
	}
	return c
}

// sharedTerm is the variance of the part of pass r's posterior-side
// relative error that comes from its proposal's fit, at r's posterior
// draws x (nchains chains), with other the other pass's proposal.
func sharedTerm(r bridgePass, other Proposal, x []float64, nchains int, iid bool) float64 {
	n := len(r.data.a)
	if n < 2 {
		return 0
	}
	lo := make([]float64, n)
	other.LogProb(lo, x)
	ne := float64(n) / math.Max(r.tauP, 1)
	nq := float64(r.nq)
	sp, sq := ne/(ne+nq), nq/(ne+nq)
	l := r.est.logZ
	f := make([]float64, n) // the bridge function at the posterior draws, as in bridgeError
	u := make([]float64, n) // its derivative in log q times D/√2
	for i, ai := range r.data.a {
		f[i] = 1 / (sp*math.Exp(-l-ai) + sq)
		// log q_r - log q_other at x_i: a = log q_r - log p.
		d := ai + r.useLogP[i] - lo[i]
		u[i] = f[i] * (1 - sq*f[i]) * d / math.Sqrt2
		if math.IsNaN(u[i]) || math.IsInf(u[i], 0) {
			return 0 // the other q misses this draw: no measure of δ here
		}
	}
	m, _ := mcmc.MeanVar(f)
	_, v := mcmc.MeanVar(u)
	tau := 1.0
	if !iid {
		tau, _ = integratedTime(u, nchains)
		tau = math.Max(tau, 1)
	}
	return tau * v / (float64(n) * m * m)
}
