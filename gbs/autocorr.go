package gbs

import (
	"math"
	"sync"
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
		acf := sums.rho
		for t := range acf {
			acf[t] /= float64(sums.used)
		}
		tau, ok = windowedTime(acf)
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

// windowedTime sums the autocorrelation function up to the first lag M with
// M >= c tau(M); ok is false when no lag in acf satisfies that.
func windowedTime(acf []float64) (tau float64, ok bool) {
	sum := 1.0
	for t := 1; t < len(acf); t++ {
		sum += 2 * acf[t]
		if float64(t) >= autocorrWindow*sum {
			return math.Max(sum, 1e-12), true
		}
	}
	return math.Max(sum, 1e-12), false
}

// autocovSums are autocorrelation functions summed over chains.
type autocovSums struct {
	rho    []float64 // Σ_c of each chain's autocorrelation about its mean
	used   int       // chains with non-zero variance in rho
	global []float64 // Σ_c of each chain's autocovariance about the overall mean
}

// chainAutocov computes the autocorrelation of every chain by FFT. Two
// chains share one complex transform (one as the real part, one as the
// imaginary), and as the inverse transform is linear, the chains' power
// spectra are summed and transformed back once: the normalized sum in the
// real part, the plain sum in the imaginary part.
//
// The chains are padded with at least pad zeros; lags below
// min(m, size-m) are exact, and only those are returned.
func chainAutocov(x []float64, nchains, pad int) autocovSums {
	m := len(x) / nchains
	size := 2
	for size < m+pad {
		size <<= 1
	}
	lags := min(m, size-m)
	f := newFFT(size)
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

	// A number of partial spectra fixed by nchains alone, summed in a fixed
	// order, keeps the result independent of GOMAXPROCS.
	npairs := (nchains + 1) / 2
	nparts := min(parts, npairs)
	spec := make([][]complex128, nparts)
	var wg sync.WaitGroup
	for p := range spec {
		spec[p] = make([]complex128, size)
		wg.Add(1)
		go func(acc []complex128) {
			defer wg.Done()
			z := make([]complex128, size)
			for pair := p; pair < npairs; pair += nparts {
				a, b := 2*pair, 2*pair+1
				clear(z)
				for i := 0; i < m; i++ {
					re := x[a*m+i] - mean[a]
					im := 0.0
					if b < nchains {
						im = x[b*m+i] - mean[b]
					}
					z[i] = complex(re, im)
				}
				f.transform(z, false)
				wa, wb := invOrZero(c0[a]), 0.0
				if b < nchains {
					wb = invOrZero(c0[b])
				}
				for k := 0; k < size; k++ {
					zk, zn := z[k], z[(size-k)%size]
					// Spectra of the real and imaginary parts' series.
					ar, ai := 0.5*(real(zk)+real(zn)), 0.5*(imag(zk)-imag(zn))
					br, bi := 0.5*(imag(zk)+imag(zn)), -0.5*(real(zk)-real(zn))
					pa, pb := ar*ar+ai*ai, br*br+bi*bi
					acc[k] += complex(wa*pa+wb*pb, pa+pb)
				}
			}
		}(spec[p])
	}
	wg.Wait()
	total := spec[0]
	for _, sp := range spec[1:] {
		for k, v := range sp {
			total[k] += v
		}
	}
	f.transform(total, true)

	out := autocovSums{rho: make([]float64, lags), global: make([]float64, lags)}
	for c := range c0 {
		if c0[c] > 0 {
			out.used++
		}
	}
	inv := 1 / float64(size)
	for t := 0; t < lags; t++ {
		out.rho[t] = real(total[t]) * inv
		out.global[t] = imag(total[t]) * inv
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
