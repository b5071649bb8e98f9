package mcmc

import (
	"math"
	"slices"

	"gonum.org/v1/gonum/floats"

	"github.com/gbs-evidence/gbs/internal/acf"
)

// Stats are the convergence statistics of one scalar quantity observed
// along several chains, as ArviZ 0.23 computes them (rhat with method
// "rank", ess with methods "bulk" and "tail").
type Stats struct {
	// RHatBulk is the split R̂ of the rank-normalized draws, RHatFold
	// that of the rank-normalized |x - median|: chains that agree on
	// location but not on scale. ArviZ's R̂ is the larger of the two.
	RHatBulk, RHatFold float64
	// ESSBulk is the effective sample size of the rank-normalized split
	// chains, ESSTail the smaller of those of the indicators of the 5%
	// and 95% quantiles.
	ESSBulk, ESSTail float64
	// TauBulk and TauFold are the autocorrelation times within the
	// split chains of the normal scores and of the folded normal scores
	// (the chains' averaged autocovariance over W, without the
	// between-chain part that ESSBulk includes).
	TauBulk, TauFold float64
	// W is the mean within-chain variance of the normal scores of the
	// split chains.
	W float64
	// Z holds the normal scores of the split draws, chain after chain:
	// chain c's first and last halves are Z[2c·h : (2c+1)·h] and
	// Z[(2c+1)·h : (2c+2)·h], h = m/2 (the middle draw of an odd length
	// m is dropped, as ArviZ does).
	Z []float64
}

// RHat returns max(RHatBulk, RHatFold), ArviZ's rank-normalized R̂.
func (s Stats) RHat() float64 { return math.Max(s.RHatBulk, s.RHatFold) }

// ScoreTable returns the normal scores of the ranks 1..S of the S split
// draws of nchains chains of m draws, which Chains looks up instead of
// computing Φ⁻¹ for every value of every quantity of that shape.
func ScoreTable(nchains, m int) []float64 { return rankScores(2 * nchains * (m / 2)) }

// Chains computes the statistics of a quantity observed along nchains
// chains of m draws each, stored chain after chain in x (no NaN); scores,
// if not nil, is ScoreTable(nchains, m). With fewer than 4 draws per
// chain the statistics are NaN.
func Chains(x []float64, nchains int, scores []float64) Stats {
	m := len(x) / nchains
	half := m / 2
	// The split draws, chain after chain: first and last half.
	xs := x
	if 2*half != m {
		xs = make([]float64, 0, 2*half*nchains)
		for c := range nchains {
			ch := x[c*m : (c+1)*m]
			xs = append(xs, ch[:half]...)
			xs = append(xs, ch[m-half:]...)
		}
	}
	split := func(v []float64) [][]float64 {
		out := make([][]float64, 2*nchains)
		for i := range out {
			out[i] = v[i*half : (i+1)*half]
		}
		return out
	}
	order := sortedPairs(xs)
	z := normalScores(order, scores)
	st := Stats{Z: z}
	var bulk, fold rhatESS
	bulk, st.W, st.TauBulk = splitRHatESS(split(z))
	st.RHatBulk, st.ESSBulk = bulk.rhat, bulk.ess
	sorted := make([]float64, len(order))
	for i, p := range order {
		sorted[i] = p.v
	}
	// Folded about the median of the split draws (ArviZ), ranked by one
	// merge of the sorted values.
	med := Quantile(sorted, 0.5)
	fold, _, st.TauFold = splitRHatESS(split(normalScores(foldedPairs(order, med), scores)))
	st.RHatFold = fold.rhat
	// Tail ESS: the smaller ESS of the indicators x <= q of the 5% and
	// 95% quantiles of all draws (R's type 7, as ArviZ).
	all := sorted
	if len(xs) != len(x) {
		all = slices.Clone(x)
		slices.Sort(all)
	}
	st.ESSTail = math.Inf(1)
	ind := make([]float64, len(xs))
	for _, p := range []float64{0.05, 0.95} {
		q := Quantile(all, p)
		for i, v := range xs {
			ind[i] = 0
			if v <= q {
				ind[i] = 1
			}
		}
		r, _, _ := splitRHatESS(split(ind))
		st.ESSTail = math.Min(st.ESSTail, r.ess)
	}
	if half < 2 {
		st.ESSTail = math.NaN()
	}
	return st
}

// RHat returns ArviZ's rank-normalized split R̂ of equal-length chains
// (at least 4 draws each, no NaN).
func RHat(chains [][]float64) float64 {
	return Chains(slices.Concat(chains...), len(chains), nil).RHat()
}

// ESS returns the effective sample size of the mean of a quantity
// observed along equal-length chains (at least 4 draws each, no NaN),
// taken as they are: not split, not ranked (ArviZ's _ess, Stan's
// ess_basic without the split).
func ESS(chains [][]float64) float64 {
	r, _, _ := splitRHatESS(chains)
	return r.ess
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
		mean, v := MeanVar(ch)
		means[c] = mean
		w += v * float64(n) / float64(n-1)
	}
	w /= float64(mc)
	var b float64
	if mc > 1 {
		_, vm := MeanVar(means)
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
			acov = meanAutocov(centered)
		} else {
			acov = appendAutocov(acov, centered, lags)
		}
		var done, doneW bool
		tau, done = acf.GeyerTime(autocorr(acov, w, varPlus, false), n)
		tauW, doneW = acf.GeyerTime(autocorr(acov, w, varPlus, true), n)
		if (done && doneW) || len(acov) == n {
			break
		}
	}
	// A strongly antithetic chain can give tau below 1/log10(S); Vehtari
	// et al. bound it there, which caps the ESS at S log10(S).
	s := float64(mc * n)
	floor := 1 / math.Log10(s)
	tau, tauW = math.Max(tau, floor), math.Max(tauW, floor)
	out.ess = s / tau
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

// meanAutocov returns the autocovariance at every lag (1/n normalization)
// of the centered chains, averaged over them, by FFT.
func meanAutocov(centered [][]float64) []float64 {
	n := len(centered[0])
	s := acf.NewSums(n, n)
	for _, x := range centered {
		s.Add(x, 0, 1, 0)
	}
	acc, _ := s.Lags()
	for t := range acc {
		acc[t] /= float64(n * len(centered))
	}
	return acc
}

// MeanVar returns the mean and the (biased, 1/n) variance of v.
func MeanVar(v []float64) (mean, variance float64) {
	for _, x := range v {
		mean += x
	}
	mean /= float64(len(v))
	for _, x := range v {
		variance += (x - mean) * (x - mean)
	}
	return mean, variance / float64(len(v))
}
