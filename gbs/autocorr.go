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

// meanTime returns the autocorrelation time that gives the variance of
// the mean of x over all its nchains chains, tau·Var(x)/n, and whether
// the chains are too short to trust it.
//
// The chains of an ensemble sampler (emcee's walkers) are not
// independent: each walker moves along lines through the others, so the
// walkers' averaged autocorrelation (integratedTime) misses the
// correlation between walkers, and from chains a few tau long it is
// biased low besides (emcee on a curved 2-d target gave z-scores with sd
// 2.2). The series of the chains' mean at each step, y_t, holds
// every correlation: Var(mean x) = Var(ȳ), estimated as Var(y)·tau_y/m.
// tau is the larger of the two estimates, so chains that are independent
// keep the averaged estimate (less noisy) up to noise, and coupled chains
// get the one that sees their coupling.
//
// short is integratedTime's (fewer than 50 tau_w draws in all, or chains
// shorter than 10 tau_w), or the window of the walker-mean series did not
// close (tau is then an underestimate). Stricter rules flag the example
// notebook's healthy emcee run.
func meanTime(x []float64, nchains int) (tau float64, short bool) {
	tauW, shortW := integratedTime(x, nchains)
	m := len(x) / nchains
	if nchains < 2 || m < 2 {
		return tauW, shortW
	}
	y := make([]float64, m)
	for c := range nchains {
		for t, v := range x[c*m : (c+1)*m] {
			y[t] += v
		}
	}
	for t := range y {
		y[t] /= float64(nchains)
	}
	_, vy := mcmc.MeanVar(y)
	_, vx := mcmc.MeanVar(x)
	tau = tauW
	okY := true
	if vx > 0 && vy > 0 {
		var tauY float64
		tauY, okY = mcmc.IntegratedTime(y, 1, mcmc.TimeOptions{})
		tau = math.Max(tauW, float64(nchains)*vy/vx*math.Max(tauY, 0))
	}
	return tau, shortW || !okY
}

// walkerTime returns the largest integrated autocorrelation time over the
// coordinates of the chains, with emcee's estimator (mcmc.IntegratedTime:
// the walkers' autocorrelation functions averaged, Sokal's window), and
// the coordinate it belongs to. It is the τ of emcee's rule for the
// walkers of an ensemble sampler, which asks for walkers of at least 50 τ
// (shortChainFactor).
//
// It reads the coordinates, not the estimator's summands, on purpose: on
// emcee's walkers of a curved target the summands' τ from walkers a few τ
// long is noisy between runs (a factor 6 to 12) and lowest on the very
// runs whose estimate is off, where the error bar is too small. The
// coordinates' τ varies far less between runs and is what emcee's own
// check reads.
func walkerTime(s *Samples) (tau float64, where int) {
	nc, m, d := len(s.Chains), s.Draws(), s.Dim
	col := make([]float64, nc*m)
	tau, where = 0, -1
	for k := range d {
		for c, ch := range s.Chains {
			for t := range m {
				col[c*m+t] = ch[t*d+k]
			}
		}
		if t, _ := mcmc.IntegratedTime(col, nc, mcmc.TimeOptions{}); t > tau && !math.IsInf(t, 1) {
			tau, where = t, k
		}
	}
	return tau, where
}

// walkersShort says whether walkers of m draws are shorter than emcee's
// rule asks for, given their coordinates' τ.
func walkersShort(m int, tau float64) bool {
	return float64(m) < shortChainFactor*tau
}

// diagnoseWalkers applies emcee's rule to an ensemble's walkers: each
// at least 50 τ of every coordinate.
func (e *estimation) diagnoseWalkers() {
	s := e.s
	if s.Kind != EnsembleWalkers || s.Draws() < 2 {
		return
	}
	if tau, k := walkerTime(s); walkersShort(s.Draws(), tau) {
		e.found(e.walkerFinding(tau, k, s.Draws()))
	}
}

// walkerFinding is the warning for an ensemble's walkers of m draws,
// shorter than 50 τ of coordinate k.
func (e *estimation) walkerFinding(tau float64, k, m int) Finding {
	return finding(CheckEnsembleWalkers, 0, k, tau, float64(m)/shortChainFactor, "the ensemble's walkers are too short: %d draws per walker, and %s has an autocorrelation time "+
		"of %.3g draws (estimated as emcee does, and biased low from walkers this short); emcee's rule asks for walkers "+
		"of at least 50 tau (%.0f draws here after burn-in and thinning): the walkers move together, and from shorter "+
		"walkers tau, and so the error bar of ln Z, is likely underestimated; run the sampler longer",
		m, e.name(k), tau, math.Ceil(shortChainFactor*tau))
}
