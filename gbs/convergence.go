package gbs

import (
	"math"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"

	"gonum.org/v1/gonum/floats"

	"github.com/gbs-evidence/gbs/internal/acf"
)

// Convergence of the input chains: rank-normalized split-R̂ and bulk and
// tail effective sample sizes (Vehtari, Gelman, Simpson, Carpenter &
// Bürkner 2021, "Rank-normalization, folding, and localization: an
// improved R̂"), for every coordinate and for log p. Each chain is split
// in halves, so that a single chain is checked against itself and a drift
// within a chain counts as disagreement.

// quantityStats are the convergence statistics of one scalar quantity.
type quantityStats struct {
	rhat      float64 // max of bulk and folded rank-normalized split-R̂
	rhatCrit  float64 // R̂ that chance alone exceeds rarely for these chains
	essBulk   float64
	essTail   float64
	tauWithin float64 // autocorrelation time within the split chains
	// chainMeans are the means of the rank-normalized draws per (unsplit)
	// chain, with the standard error of one such mean.
	chainMeans []float64
	chainSE    float64
	burnInZ    float64 // see burnInZScore
}

// tauMargin multiplies the within-chain autocorrelation time wherever it
// sets what chance can do: Geyer's truncated estimate from chains only a
// few tens of tau long is biased low (a healthy emcee run of 32 walkers ×
// 1500 draws, tau ≈ 40, reached R̂ 1.051 against 1.049 without it).
const tauMargin = 2

// rhatFalseAlarm is the probability, shared by all the quantities checked,
// that chance alone pushes one R̂ past its critical value on converged
// chains.
const rhatFalseAlarm = 1e-3

// convergenceStats computes the statistics of a quantity observed along
// nchains chains of m draws each, stored chain after chain in x; nq is the
// number of quantities checked together (for the false-alarm budget);
// scores, if not nil, is rankScores(len(x)).
func convergenceStats(x []float64, nchains, nq int, scores []float64) quantityStats {
	m := len(x) / nchains
	half := m / 2
	// Split chains: the first and last half of each chain (the middle draw
	// of an odd length is dropped).
	split := make([][]float64, 0, 2*nchains)
	for c := 0; c < nchains; c++ {
		ch := x[c*m : (c+1)*m]
		split = append(split, ch[:half], ch[m-half:])
	}
	order := sortedPairs(x)
	z := normalScores(order, scores)
	zs := make([][]float64, 0, 2*nchains)
	for c := 0; c < nchains; c++ {
		ch := z[c*m : (c+1)*m]
		zs = append(zs, ch[:half], ch[m-half:])
	}
	var st quantityStats
	bulk, w, tauW := splitRHatESS(zs)
	st.essBulk, st.tauWithin = bulk.ess, tauW
	// Folded about the median: chains that agree on location but not on
	// scale.
	sorted := make([]float64, len(order))
	for i, p := range order {
		sorted[i] = p.v
	}
	med := sortedQuantile(sorted, 0.5)
	fz := normalScores(foldedPairs(order, med), scores)
	fs := make([][]float64, 0, 2*nchains)
	for c := 0; c < nchains; c++ {
		ch := fz[c*m : (c+1)*m]
		fs = append(fs, ch[:half], ch[m-half:])
	}
	fold, _, tauFold := splitRHatESS(fs)
	// Tail ESS: the smaller ESS of the indicators of the 5% and 95%
	// quantiles.
	q05, q95 := sortedQuantile(sorted, 0.05), sortedQuantile(sorted, 0.95)
	st.essTail = math.Inf(1)
	for _, q := range []float64{q05, q95} {
		ind := make([][]float64, len(split))
		for i, ch := range split {
			ind[i] = make([]float64, len(ch))
			for t, v := range ch {
				if (q == q05 && v <= q) || (q == q95 && v >= q) {
					ind[i][t] = 1
				}
			}
		}
		r, _, _ := splitRHatESS(ind)
		st.essTail = math.Min(st.essTail, r.ess)
	}
	// The bulk and the folded R̂ each get the critical value of their own
	// autocorrelation time: the scale of a funnel's coordinates follows its
	// slowly mixing neck, so their folded values mix far more slowly than
	// the values themselves. R̂ is the one further beyond its critical
	// value.
	critB := rhatCritical(len(zs), half, tauW, nq)
	critF := rhatCritical(len(zs), half, tauFold, nq)
	st.rhat, st.rhatCrit = bulk.rhat, critB
	if fold.rhat/math.Max(critF, rhatMin) > bulk.rhat/math.Max(critB, rhatMin) {
		st.rhat, st.rhatCrit = fold.rhat, critF
	}
	st.chainMeans = make([]float64, nchains)
	for c := range st.chainMeans {
		var s float64
		for _, v := range z[c*m : (c+1)*m] {
			s += v
		}
		st.chainMeans[c] = s / float64(m)
	}
	st.chainSE = math.Sqrt(w * math.Max(tauW, 1) / float64(m))
	st.burnInZ = burnInZScore(z, nchains, tauW)
	return st
}

// coordinateStats returns the convergence statistics of log p (first; zero
// when lp is nil) and of every coordinate of the chains, computed
// concurrently: at d = 256 and 10^5 draws they are a few seconds of CPU.
func coordinateStats(s *Samples, lp []float64, nq int) []quantityStats {
	nc, m, d := len(s.Chains), s.Draws(), s.Dim
	stats := make([]quantityStats, d+1)
	scores := rankScores(nc * m)
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), d+1) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			col := make([]float64, nc*m)
			for {
				i := int(next.Add(1)) - 1
				if i > d {
					return
				}
				k := i - 1
				if k < 0 {
					if lp == nil {
						continue
					}
					copy(col, lp)
				} else {
					for c, ch := range s.Chains {
						for t := range m {
							col[c*m+t] = ch[t*d+k]
						}
					}
				}
				stats[i] = convergenceStats(col, nc, nq, scores)
			}
		}()
	}
	wg.Wait()
	return stats
}

// rhatCritical is the R̂ that chance exceeds with probability
// rhatFalseAlarm/nq on nsplit converged split chains of n draws with
// within-chain autocorrelation time tau: B/W ≈ τ χ²_{M-1}/(M-1) and
// R̂² = (n-1)/n + (B/W)/n, with tau inflated by tauMargin.
func rhatCritical(nsplit, n int, tau float64, nq int) float64 {
	if nsplit < 2 || n < 2 {
		return math.Inf(1)
	}
	df, fn := float64(nsplit-1), float64(n)
	c := chi2Quantile(1-rhatFalseAlarm/float64(2*nq), df) / df
	return math.Sqrt((fn-1)/fn + tauMargin*math.Max(tau, 1)*c/fn)
}

type rhatESS struct{ rhat, ess float64 }

// splitRHatESS returns R̂ and the effective sample size of equal-length
// chains (Vehtari et al. 2021, eqs. 3-4 and 10), the mean within-chain
// variance W, and the autocorrelation time within the chains (their
// averaged autocovariance over W, without the between-chain part).
func splitRHatESS(chains [][]float64) (rhatESS, float64, float64) {
	mc, n := len(chains), len(chains[0])
	if n < 2 {
		return rhatESS{rhat: math.NaN(), ess: math.NaN()}, 0, 1
	}
	means := make([]float64, mc)
	var w float64
	for c, ch := range chains {
		mean, v := meanVar(ch)
		means[c] = mean
		w += v * float64(n) / float64(n-1)
	}
	w /= float64(mc)
	var b float64
	if mc > 1 {
		_, vm := meanVar(means)
		b = float64(n) * vm * float64(mc) / float64(mc-1)
	}
	if w == 0 {
		// Every chain constant: equal chains have converged trivially,
		// different ones cannot be compared by variance.
		if b == 0 {
			return rhatESS{rhat: 1, ess: float64(mc * n)}, 0, 1
		}
		return rhatESS{rhat: math.Inf(1), ess: 1}, 0, 1
	}
	varPlus := float64(n-1)/float64(n)*w + b/float64(n)
	out := rhatESS{rhat: math.Sqrt(varPlus / w)}
	// Autocovariances lag by lag while Geyer's sequences may still need
	// more lags, the whole of them by FFT once that costs less.
	centered := make([][]float64, mc)
	for c, ch := range chains {
		centered[c] = make([]float64, n)
		for i, v := range ch {
			centered[c][i] = v - means[c]
		}
	}
	var acov []float64
	var tau, tauW float64
	for lags := min(n, 8); ; lags = min(n, 2*lags) {
		if lags > maxDirectLags && lags < n {
			acov = meanAutocov(chains, means)
		} else {
			acov = appendAutocov(acov, centered, lags)
		}
		var done, doneW bool
		tau, done = geyerTime(autocorr(acov, w, varPlus, false))
		tauW, doneW = geyerTime(autocorr(acov, w, varPlus, true))
		if (done && doneW) || len(acov) == n {
			break
		}
	}
	// A strongly antithetic chain can give tau below 1/log10(S); Vehtari
	// et al. bound it there.
	floor := 1 / math.Log10(math.Max(float64(n), 10))
	tau, tauW = math.Max(tau, floor), math.Max(tauW, floor)
	out.ess = float64(mc*n) / tau
	// Vehtari et al. cap the ESS at S log10(S).
	s := float64(mc * n)
	out.ess = math.Min(out.ess, s*math.Log10(s))
	return out, w, tauW
}

// maxDirectLags is the number of lags up to which the autocovariance is
// summed directly: Geyer's sequence of well-mixed chains ends within a few
// lags, where a few dot products cost far less than the transforms of long
// chains (at d = 256 and 10^5 draws the transforms took a third of the
// evidence call). Slower chains fall back to the FFT.
const maxDirectLags = 64

// autocorr turns the mean autocovariance into the combined autocorrelation
// ρ_t = 1 - (W - acov_t)/var⁺ of Vehtari et al. (eq. 10), or with within
// set, into the within-chain autocorrelation acov_t/acov_0.
func autocorr(acov []float64, w, varPlus float64, within bool) []float64 {
	rho := make([]float64, len(acov))
	for t, a := range acov {
		if within && acov[0] != 0 {
			rho[t] = a / acov[0]
		} else {
			rho[t] = 1 - (w-a)/varPlus
		}
	}
	rho[0] = 1
	return rho
}

// appendAutocov extends acov, the autocovariance averaged over the
// centered chains (1/n normalization), to the first lags lags.
func appendAutocov(acov []float64, centered [][]float64, lags int) []float64 {
	n := len(centered[0])
	for t := len(acov); t < lags; t++ {
		var s float64
		for _, x := range centered {
			s += floats.Dot(x[:n-t], x[t:])
		}
		acov = append(acov, s/float64(n*len(centered)))
	}
	return acov
}

// meanAutocov returns the autocovariance (1/n normalization, each chain
// about its own mean, as in Vehtari et al.) averaged over the chains, by
// FFT.
func meanAutocov(chains [][]float64, means []float64) []float64 {
	n := len(chains[0])
	size := 2
	for size < 2*n {
		size <<= 1
	}
	f := acf.NewFFT(size)
	acc := make([]float64, n)
	z := make([]complex128, size)
	power := make([]complex128, size)
	for c := 0; c < len(chains); c += 2 {
		clear(z)
		for i := 0; i < n; i++ {
			re := chains[c][i] - means[c]
			im := 0.0
			if c+1 < len(chains) {
				im = chains[c+1][i] - means[c+1]
			}
			z[i] = complex(re, im)
		}
		f.Transform(z, false)
		// |Z_a|² + |Z_b|² from the combined transform.
		for k := 0; k < size; k++ {
			zk, zn := z[k], z[(size-k)%size]
			ar, ai := 0.5*(real(zk)+real(zn)), 0.5*(imag(zk)-imag(zn))
			br, bi := 0.5*(imag(zk)+imag(zn)), -0.5*(real(zk)-real(zn))
			power[k] = complex(ar*ar+ai*ai+br*br+bi*bi, 0)
		}
		f.Transform(power, true)
		for t := 0; t < n; t++ {
			acc[t] += real(power[t]) / float64(size)
		}
	}
	for t := range acc {
		acc[t] /= float64(n * len(chains))
	}
	return acc
}

// geyerTime is the autocorrelation time -1 + 2 Σ P_k from Geyer's initial
// positive and monotone sequence of paired autocorrelations
// P_k = ρ_{2k} + ρ_{2k+1}; done reports whether the sequence ended within
// the lags given (a negative pair), so that more lags cannot change it.
func geyerTime(rho []float64) (tau float64, done bool) {
	var sum float64
	prev := math.Inf(1)
	for k := 0; 2*k+1 < len(rho); k++ {
		p := rho[2*k] + rho[2*k+1]
		if p < 0 {
			done = true
			break
		}
		p = math.Min(p, prev)
		prev = p
		sum += p
	}
	return -1 + 2*sum, done
}

// foldedPairs returns |x - med| with positions in increasing order, from
// x sorted: the values below med, read backwards, and those above are
// both increasing in |x - med|, so one merge sorts them.
func foldedPairs(sorted []valueIndex, med float64) []valueIndex {
	k, _ := slices.BinarySearchFunc(sorted, med, func(a valueIndex, m float64) int {
		if a.v < m {
			return -1
		}
		return 1
	})
	out := make([]valueIndex, 0, len(sorted))
	l, r := k-1, k
	for l >= 0 || r < len(sorted) {
		if r >= len(sorted) || (l >= 0 && med-sorted[l].v <= sorted[r].v-med) {
			out = append(out, valueIndex{med - sorted[l].v, sorted[l].i})
			l--
		} else {
			out = append(out, valueIndex{sorted[r].v - med, sorted[r].i})
			r++
		}
	}
	return out
}

// rankNormal replaces each value by the normal score of its rank among
// all values, Φ⁻¹((r - 3/8)/(S + 1/4)), ties getting their average rank.
func rankNormal(x []float64) []float64 { return normalScores(sortedPairs(x), nil) }

// rankScores returns the normal scores of the ranks 1..s, which
// normalScores looks up instead of computing Φ⁻¹ for every value of every
// quantity.
func rankScores(s int) []float64 {
	t := make([]float64, s)
	for i := range t {
		t[i] = normalQuantile((float64(i+1) - 0.375) / (float64(s) + 0.25))
	}
	return t
}

// normalScores returns the normal scores of the ranks of the sorted
// values, at their positions; table, if not nil, is rankScores(len(sorted)).
func normalScores(sorted []valueIndex, table []float64) []float64 {
	s := len(sorted)
	z := make([]float64, s)
	for i := 0; i < s; {
		j := i + 1
		for j < s && sorted[j].v == sorted[i].v {
			j++
		}
		var v float64
		if j == i+1 && table != nil {
			v = table[i]
		} else {
			r := 0.5*float64(i+j-1) + 1 // average 1-based rank
			v = normalQuantile((r - 0.375) / (float64(s) + 0.25))
		}
		for k := i; k < j; k++ {
			z[sorted[k].i] = v
		}
		i = j
	}
	return z
}

func normalQuantile(p float64) float64 { return math.Sqrt2 * math.Erfinv(2*p-1) }

// chi2Quantile approximates the p-quantile of χ² with df degrees of
// freedom (Wilson & Hilferty 1931), accurate to a few percent for df >= 1
// at the upper tail used here.
func chi2Quantile(p, df float64) float64 {
	z := normalQuantile(p)
	a := 2 / (9 * df)
	v := 1 - a + z*math.Sqrt(a)
	return df * v * v * v
}

// sortedQuantile returns the p-quantile of the sorted values s by linear
// interpolation between order statistics.
func sortedQuantile(s []float64, p float64) float64 {
	h := p * float64(len(s)-1)
	lo := int(math.Floor(h))
	if lo+1 >= len(s) {
		return s[len(s)-1]
	}
	return s[lo] + (h-float64(lo))*(s[lo+1]-s[lo])
}
