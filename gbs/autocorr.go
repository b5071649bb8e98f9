package gbs

import (
	"math"

	"github.com/gbs-evidence/gbs/internal/mcmc"
)

// shortChainFactor: fewer draws than this many autocorrelation times give
// an unreliable tau (emcee's default tolerance). Averaging the
// autocorrelation over chains reduces its noise, so the draws of all
// chains count, as long as each chain holds twice the window.
const shortChainFactor = 50

// integratedTime returns the integrated autocorrelation time of a series
// stored as nchains chains of equal length one after the other in x
// (mcmc.IntegratedTime, pooled, emcee's window).
//
// It is the larger of the times from the autocorrelation function
// averaged over chains (each chain about its own mean) and from the
// chains taken as one series about the overall mean, which also sees
// differences between the chains' means that the first cannot. short
// reports fewer than 50 tau draws in all, or chains shorter than twice the
// window 5 tau: there tau itself is unreliable.
func integratedTime(x []float64, nchains int) (tau float64, short bool) {
	m := len(x) / nchains
	if m < 2 {
		return 1, true
	}
	tau, _ = mcmc.IntegratedTime(x, nchains, mcmc.TimeOptions{Pooled: true})
	// Kept positive for the divisions it feeds.
	tau = math.Max(tau, 1e-12)
	return tau, float64(len(x)) < shortChainFactor*tau || float64(m) < 2*mcmc.DefaultWindow*tau
}

// weightTime is the autocorrelation time of the weights exp(a - max a)
// of log ratios a along the chains, the quantity whose mean the
// importance-sampling and bridge estimates take.
func weightTime(a []float64, nchains int) (tau float64, short bool) {
	m := maxOf(a)
	w := make([]float64, len(a))
	for i, v := range a {
		w[i] = math.Exp(v - m)
	}
	return integratedTime(w, nchains)
}
