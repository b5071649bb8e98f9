package mcmc

import (
	"math"
	"sync"

	"github.com/gbs-evidence/gbs/internal/acf"
)

// TimeOptions set how IntegratedTime reads the chains. The zero value is
// emcee's estimator with its window constant 5.
type TimeOptions struct {
	// Window is the constant c of Sokal's automatic window M >= c τ(M);
	// 0 selects 5 (Sokal 1989; emcee).
	Window float64
	// Pooled also estimates τ from the chains taken as one series about
	// the overall mean, which sees differences between the chains' means
	// that the per-chain autocorrelations cannot, and returns the larger
	// of the two times.
	Pooled bool
}

// DefaultWindow is Sokal's (and emcee's) window constant.
const DefaultWindow = 5

// IntegratedTime returns the integrated autocorrelation time
// τ = 1 + 2 Σ_{t≥1} ρ(t) of a quantity observed along nchains chains of
// equal length m, stored chain after chain in x, with emcee's estimator:
// the normalized autocorrelation function of each chain about its own
// mean (by FFT, denominator m), averaged over the chains, summed up to
// Sokal's automatic window. Averaging ρ rather than τ lets the short
// chains of an ensemble pool their information.
//
// Constant chains carry no information on ρ and are left out; when all
// are, τ is +Inf (1 when Pooled, where the pooled series decides). ok is
// false when the window did not close within the chains: τ is then the
// sum over every lag, an underestimate. Fewer than 2 draws per chain give
// τ = 1 and ok false.
func IntegratedTime(x []float64, nchains int, opt TimeOptions) (tau float64, ok bool) {
	if nchains < 1 || len(x)%nchains != 0 {
		panic("mcmc: IntegratedTime: length not a multiple of the number of chains")
	}
	c := opt.Window
	if c == 0 {
		c = DefaultWindow
	}
	m := len(x) / nchains
	if m < 2 {
		return 1, false
	}
	// Zero padding of L beyond the chain gives exact lags below L. The
	// window is usually short, so a padding of m/32 often halves the
	// transforms; when the window reaches past it, the full padding of m
	// follows.
	for _, pad := range []int{max(m/32, 256), m} {
		if tau, ok = windowedTime(x, nchains, pad, c, opt.Pooled); ok || pad >= m {
			break
		}
	}
	return tau, ok
}

// windowedTime estimates tau from lags below the padding; ok is false
// when the window did not close within them.
func windowedTime(x []float64, nchains, pad int, c float64, pooled bool) (tau float64, ok bool) {
	sums := chainAutocov(x, nchains, pad, pooled)
	tau, ok = math.Inf(1), true
	if pooled {
		tau = 1
	}
	if sums.used > 0 {
		rho := sums.rho
		for t := range rho {
			rho[t] /= float64(sums.used)
		}
		tau, ok = acf.SokalTime(rho, c)
	}
	if pooled && nchains > 1 && sums.global[0] > 0 {
		g := sums.global
		g0 := g[0]
		for t := range g {
			g[t] /= g0
		}
		tg, okg := acf.SokalTime(g, c)
		tau, ok = math.Max(tau, tg), ok && okg
	}
	return tau, ok
}

// autocovSums are autocorrelation functions summed over chains.
type autocovSums struct {
	rho    []float64 // Σ_c of each chain's autocorrelation about its mean
	used   int       // chains that are not constant, summed in rho
	global []float64 // Σ_c of each chain's autocovariance about the overall mean
}

// parts is the number of partial sums over pairs of chains: fixed, so
// that the order of the sums does not depend on GOMAXPROCS.
const parts = 4

// chainAutocov computes the autocorrelation of every chain by FFT
// (acf.Sums): the normalized autocorrelations summed in the first sum, and
// when pooled, the plain autocovariances in the second. The chains are
// padded with at least pad zeros; lags below min(m, size-m) are exact, and
// only those are returned.
func chainAutocov(x []float64, nchains, pad int, pooled bool) autocovSums {
	m := len(x) / nchains
	mean := make([]float64, nchains)
	inv := make([]float64, nchains)
	var all float64
	out := autocovSums{}
	for c := range mean {
		ch := x[c*m : (c+1)*m]
		for _, v := range ch {
			mean[c] += v
		}
		all += mean[c]
		mean[c] /= float64(m)
		// A constant chain (a stuck walker) has no autocorrelation; test
		// it exactly, since the rounding of its mean would leave a tiny
		// constant residual with spurious perfect correlation.
		constant := true
		for _, v := range ch[1:] {
			if v != ch[0] {
				constant = false
				break
			}
		}
		if constant {
			continue
		}
		var c0 float64
		for _, v := range ch {
			c0 += (v - mean[c]) * (v - mean[c])
		}
		if c0 > 0 {
			inv[c] = 1 / c0
			out.used++
		}
	}
	all /= float64(len(x))
	w2 := 0.0
	if pooled {
		w2 = 1
	}

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
					s.Add(x[c*m:(c+1)*m], mean[c], inv[c], w2)
				}
			}
		}(sums[p])
	}
	wg.Wait()
	for _, s := range sums[1:] {
		sums[0].Merge(s)
	}
	out.rho, out.global = sums[0].Lags()
	if !pooled {
		return out
	}
	lags := len(out.rho)
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
