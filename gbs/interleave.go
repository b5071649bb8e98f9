package gbs

import (
	"fmt"
	"math"

	"github.com/gbs-evidence/gbs/internal/mcmc"

	"github.com/gbs-evidence/gbs/internal/acf"
)

// Interleaved chains. emcee's get_chain(flat=True) (and any reshape of a
// (draws, walkers, d) array to (draws·walkers, d)) gives one sequence in
// which consecutive rows belong to different walkers: row t·W + w is
// walker w at step t. Read as one chain, its autocorrelation at lag 1 is
// that between walkers, near zero, while at lag W it is each walker's own
// lag-1 autocorrelation, near one for an ensemble sampler. The estimator
// then sees an autocorrelation time of about 1 and an error bar too small
// by the square root of the walkers' real one, and the burn-in check sees
// the early steps of every walker at the start of the sequence.
//
// The check: on a single chain, the autocorrelation averaged over the
// coordinates peaks at some lag L >= 2 far above its value at lag 1. A
// Markov chain's autocorrelation does not do that (it decays, or for
// antithetic samplers alternates in sign around a decay).

// interleaveMinRho is the autocorrelation at the peak lag above which the
// sequence counts as interleaved chains, provided it also exceeds the
// lag-1 value by interleaveMinGap. emcee walkers have a lag-1
// autocorrelation of 0.9 and more at the default stretch move; chance
// gives a few standard errors of 1/sqrt(n) (n >= interleaveMinDraws).
const (
	interleaveMinRho   = 0.5
	interleaveMinGap   = 0.3
	interleaveMaxLag   = 1024
	interleaveMinDraws = 200
)

// interleavePeriod returns the lag L >= 2 at which the single chain of s
// looks like L interleaved chains (0 if it does not, or s has several
// chains), with the autocorrelation at lags L and 1.
func interleavePeriod(s *Samples) (period int, rhoL, rho1 float64) {
	if len(s.Chains) != 1 || s.Draws() < interleaveMinDraws {
		return 0, math.NaN(), math.NaN()
	}
	m, d := s.Draws(), s.Dim
	maxLag := min(interleaveMaxLag, m/8)
	sums := acf.NewSums(m, maxLag+1)
	col := make([]float64, m)
	used := 0
	for k := 0; k < d; k++ {
		for t := range col {
			col[t] = s.Chains[0][t*d+k]
		}
		mu, _ := mcmc.MeanVar(col)
		var ss float64
		for _, v := range col {
			ss += (v - mu) * (v - mu)
		}
		if !(ss > 0) {
			continue
		}
		sums.Add(col, mu, 1/ss, 0)
		used++
	}
	if used == 0 {
		return 0, math.NaN(), math.NaN()
	}
	rho, _ := sums.Lags()
	for t := range rho {
		rho[t] /= float64(used)
	}
	rho1 = rho[1]
	best := 0
	for t := 2; t <= maxLag && t < len(rho); t++ {
		if best == 0 || rho[t] > rho[best] {
			best = t
		}
	}
	if best == 0 {
		return 0, math.NaN(), rho1
	}
	rhoL = rho[best]
	if rhoL > interleaveMinRho && rhoL > rho1+interleaveMinGap {
		// The first peak: a multiple of the period peaks too.
		for p := 2; p < best; p++ {
			if best%p == 0 && rho[p] > interleaveMinRho && rho[p] > rho1+interleaveMinGap {
				return p, rho[p], rho1
			}
		}
		return best, rhoL, rho1
	}
	return 0, rhoL, rho1
}

// diagnoseInterleave warns about a single chain that looks like several
// chains interleaved draw by draw.
func (e *estimation) diagnoseInterleave() {
	var period int
	var rhoL, rho1 float64
	if ec := e.waitEarly(); ec != nil {
		period, rhoL, rho1 = ec.period, ec.rhoL, ec.rho1
	} else {
		period, rhoL, rho1 = interleavePeriod(e.s)
	}
	e.diag.InterleavePeriod, e.diag.InterleaveRho = period, rhoL
	if period > 0 {
		e.found(finding(CheckInterleavedChains, 0, WhereNone, rhoL, math.NaN(), "%s", interleaveWarning(period, rhoL, rho1, e.s.Draws())))
		e.explain("interleaved chains read as one (see above), which make the error bar too small")
	}
}

// interleaveWarning is the warning for a sequence of period interleaved
// chains.
func interleaveWarning(period int, rhoL, rho1 float64, m int) string {
	return fmt.Sprintf("the single chain looks like %d chains interleaved draw by draw (a flattened ensemble chain, "+
		"such as emcee's get_chain(flat=True)): its autocorrelation is %.2f at lag %d but %.2f at lag 1, so "+
		"consecutive draws come from different walkers; read as one chain, the autocorrelation time, and so "+
		"the error bar, is far too small, and the early steps of every walker look like burn-in; pass the "+
		"chains unflattened (get_chain() with chain_axis=1 in Python, or the sampler itself), or reshape "+
		"the %d draws to (%d, %d, d) (draws, walkers, d)", period, rhoL, period, rho1, m, m/period, period)
}
