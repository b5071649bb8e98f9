package gbs

import (
	"math"
	"sync"

	"github.com/gbs-evidence/gbs/internal/acf"
)

// autocorrWindow is the constant c of the automatic window M >= c tau(M)
// (Sokal 1989; emcee uses the same).
const autocorrWindow = 5

// shortChainFactor: fewer draws than this many autocorrelation times give
// an unreliable tau (emcee's default tolerance). Averaging the
// autocorrelation over chains reduces its noise, so the draws of all
// chains count, as long as each chain holds twice the window.
const shortChainFactor = 50

// IntegratedTime returns the integrated autocorrelation time of a series
// stored as nchains chains of equal length one after the other in x.
//
// It computes tau twice and returns the larger: from the autocorrelation
// function averaged over chains (each chain about its own mean), and from
// the chains taken as one series about the overall mean, which also sees
// differences between the chains' means that the first cannot. short
// reports fewer than 50 tau draws in all, or chains shorter than twice the
// window 5 tau: there tau itself is unreliable.
func IntegratedTime(x []float64, nchains int) (tau float64, short bool) {
	if nchains < 1 || len(x)%nchains != 0 {
		panic("gbs: IntegratedTime: length not a multiple of the number of chains")
	}
	m := len(x) / nchains
	if m < 2 {
		return 1, true
	}
	// Zero padding of L beyond the chain gives exact lags below L. The
	// window is usually short, so a padding of m/32 often halves the transforms;
	// when the window reaches past it, the full padding of m follows.
	for _, pad := range []int{max(m/32, 256), m} {
		var ok bool
		if tau, ok = integratedTime(x, nchains, pad); ok || pad >= m {
			break
		}
	}
	return tau, float64(len(x)) < shortChainFactor*tau || float64(m) < 2*autocorrWindow*tau
}

// integratedTime estimates tau from lags below the padding; ok is false
// when the window did not close within them.
func integratedTime(x []float64, nchains, pad int) (tau float64, ok bool) {
	sums := chainAutocov(x, nchains, pad)
	tau, ok = 1, true
	if sums.used > 0 {
		rho := sums.rho
		for t := range rho {
			rho[t] /= float64(sums.used)
		}
		tau, ok = windowedTime(rho)
	}
	if nchains > 1 && sums.global[0] > 0 {
		g := sums.global
		g0 := g[0]
		for t := range g {
			g[t] /= g0
		}
		tg, okg := windowedTime(g)
		tau, ok = math.Max(tau, tg), ok && okg
	}
	return tau, ok
}

// windowedTime is acf.SokalTime with the constant of this package, kept
// positive for the division it feeds.
func windowedTime(rho []float64) (tau float64, ok bool) {
	tau, ok = acf.SokalTime(rho, autocorrWindow)
	return math.Max(tau, 1e-12), ok
}

// autocovSums are autocorrelation functions summed over chains.
type autocovSums struct {
	rho    []float64 // Σ_c of each chain's autocorrelation about its mean
	used   int       // chains with non-zero variance in rho
	global []float64 // Σ_c of each chain's autocovariance about the overall mean
}

// chainAutocov computes the autocorrelation of every chain by FFT
// (acf.Sums): the normalized autocorrelations summed in the first sum, the
// plain autocovariances in the second. The chains are padded with at least
// pad zeros; lags below min(m, size-m) are exact, and only those are
// returned.
func chainAutocov(x []float64, nchains, pad int) autocovSums {
	m := len(x) / nchains
	mean := make([]float64, nchains)
	c0 := make([]float64, nchains)
	var all float64
	for c := range mean {
		ch := x[c*m : (c+1)*m]
		for _, v := range ch {
			mean[c] += v
		}
		all += mean[c]
		mean[c] /= float64(m)
		for _, v := range ch {
			c0[c] += (v - mean[c]) * (v - mean[c])
		}
	}
	all /= float64(len(x))

	// A number of partial sums fixed by nchains alone, each taking pairs
	// of chains (one transform per pair) and merged in a fixed order,
	// keeps the result independent of GOMAXPROCS.
	npairs := (nchains + 1) / 2
	nparts := min(parts, npairs)
	sums := make([]*acf.Sums, nparts)
	var wg sync.WaitGroup
	for p := range sums {
		sums[p] = acf.NewSums(m, pad)
		wg.Add(1)
		go func(s *acf.Sums) {
			defer wg.Done()
			for pair := p; pair < npairs; pair += nparts {
				for c := 2 * pair; c < min(2*pair+2, nchains); c++ {
					s.Add(x[c*m:(c+1)*m], mean[c], invOrZero(c0[c]), 1)
				}
			}
		}(sums[p])
	}
	wg.Wait()
	for _, s := range sums[1:] {
		sums[0].Merge(s)
	}
	out := autocovSums{}
	out.rho, out.global = sums[0].Lags()
	lags := len(out.rho)
	for c := range c0 {
		if c0[c] > 0 {
			out.used++
		}
	}
	// About the overall mean, chain c's autocovariance at lag t gains
	// δ (S_head + S_tail) + (m - t) δ², δ = mean_c - overall mean, where
	// S_head and S_tail sum the centred chain over its first and last
	// m - t draws; prefix sums give both for every t.
	prefix := make([]float64, m+1)
	for c := 0; c < nchains; c++ {
		delta := mean[c] - all
		for i := 0; i < m; i++ {
			prefix[i+1] = prefix[i] + x[c*m+i] - mean[c]
		}
		for t := 0; t < lags; t++ {
			head, tail := prefix[m-t], prefix[m]-prefix[t]
			out.global[t] += delta*(head+tail) + float64(m-t)*delta*delta
		}
	}
	return out
}

func invOrZero(v float64) float64 {
	if v > 0 {
		return 1 / v
	}
	return 0
}
