package gbs

import (
	"fmt"
	"math"
	"slices"

	"github.com/gbs-evidence/gbs/internal/mcmc"
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
// scores, if not nil, is mcmc.ScoreTable(nchains, m).
func convergenceStats(x []float64, nchains, nq int, scores []float64) quantityStats {
	ms := mcmc.Chains(x, nchains, scores)
	half := len(x) / nchains / 2
	st := quantityStats{essBulk: ms.ESSBulk, essTail: ms.ESSTail, tauWithin: ms.TauBulk}
	// The bulk and the folded R̂ each get the critical value of their own
	// autocorrelation time: the scale of a funnel's coordinates follows its
	// slowly mixing neck, so their folded values mix far more slowly than
	// the values themselves. R̂ is the one further beyond its critical
	// value.
	critB := rhatCritical(2*nchains, half, ms.TauBulk, nq)
	critF := rhatCritical(2*nchains, half, ms.TauFold, nq)
	st.rhat, st.rhatCrit = ms.RHatBulk, critB
	if ms.RHatFold/math.Max(critF, rhatMin) > ms.RHatBulk/math.Max(critB, rhatMin) {
		st.rhat, st.rhatCrit = ms.RHatFold, critF
	}
	// The normal scores of chain c's two halves are adjacent in ms.Z:
	// chain c is ms.Z[c·2h : (c+1)·2h].
	z, mz := ms.Z, 2*half
	st.chainMeans = make([]float64, nchains)
	for c := range st.chainMeans {
		var s float64
		for _, v := range z[c*mz : (c+1)*mz] {
			s += v
		}
		st.chainMeans[c] = s / float64(mz)
	}
	st.chainSE = math.Sqrt(ms.W * math.Max(ms.TauBulk, 1) / float64(mz))
	st.burnInZ = burnInZScore(z, nchains, ms.TauBulk)
	return st
}

// rhatExcess is R̂ over what chance gives for these chains (and over
// rhatMin): above 1, the chains have not mixed.
func (st quantityStats) rhatExcess() float64 {
	return st.rhat / math.Max(st.rhatCrit, rhatMin)
}

// diagnoseConvergence computes R̂, the ESS and the burn-in statistic of
// every coordinate and of log p (when known), and warns about chains that
// have not mixed, still carry burn-in, or hold too few effective draws.
func (e *estimation) diagnoseConvergence() {
	s := e.s
	if s.Draws() < 4 {
		return
	}
	lp := e.chainLogP()
	nq := s.Dim
	if lp != nil {
		nq++
	}
	var stats []quantityStats
	if ec := e.waitEarly(); ec != nil && ec.nq == nq && ec.coords != nil {
		stats = ec.coords
		if lp != nil {
			stats[0] = convergenceStats(lp, len(s.Chains), nq, mcmc.ScoreTable(len(s.Chains), s.Draws()))
		}
	} else {
		stats = coordinateStats(s, lp, nq)
	}
	var worstR, worstB = -1.0, -1.0
	var worstStats quantityStats
	worstRWhere := 0
	e.diag.ESSBulkMin, e.diag.ESSTailMin = math.Inf(1), math.Inf(1)
	for i, st := range stats {
		k := i - 1 // -1: log p
		if k < 0 && lp == nil {
			continue
		}
		if st.essBulk < e.diag.ESSBulkMin {
			e.diag.ESSBulkMin, e.diag.ESSBulkWhere = st.essBulk, k
		}
		if st.essTail < e.diag.ESSTailMin {
			e.diag.ESSTailMin, e.diag.ESSTailWhere = st.essTail, k
		}
		// The excess of R̂ over what chance gives decides which quantity
		// is worst.
		excess := st.rhatExcess()
		if math.IsNaN(e.diag.RHatMax) || st.rhat > e.diag.RHatMax {
			e.diag.RHatMax, e.diag.RHatCrit, e.diag.RHatWhere = st.rhat, st.rhatCrit, k
		}
		if excess > worstR {
			worstR, worstRWhere, worstStats = excess, k, st
		}
		if z := st.burnInZ; s.Kind != IndependentDraws && math.Abs(z) > worstB {
			worstB = math.Abs(z)
			e.diag.BurnInZ, e.diag.BurnInWhere = math.Abs(z), k
		}
	}
	if worstR > 1 {
		e.diag.RHatMax, e.diag.RHatCrit, e.diag.RHatWhere = worstStats.rhat, worstStats.rhatCrit, worstRWhere
		e.diag.OutlierChains = outlierChains(worstStats)
		limit := math.Max(rhatMin, worstStats.rhatCrit)
		msg := fmt.Sprintf("the chains have not mixed: R-hat of %s is %.3f (above %.2f and above %.3f, what chance gives for chains of this length)",
			e.name(worstRWhere), worstStats.rhat, rhatMin, worstStats.rhatCrit)
		if len(e.diag.OutlierChains) > 0 {
			msg += fmt.Sprintf("; chain(s) %v sit apart from the others (another mode, or stuck)", e.diag.OutlierChains)
		}
		e.found(finding(CheckRHat, 0, worstRWhere, worstStats.rhat, limit,
			"%s: the draws misrepresent p, so ln Z and its error bar may be off by more than the error bar; "+
				"likely causes: chains in different modes, which leaves the modes' weights wrong, chains too short, "+
				"or burn-in left in; run longer chains, start them from dispersed points, or use a sampler that moves between modes", msg))
	}
	// Interleaved chains' early steps are not burn-in of one chain: the
	// interleave warning says what to do.
	if e.diag.BurnInZ > burnInZ && e.diag.InterleavePeriod == 0 {
		e.found(finding(CheckBurnIn, 0, e.diag.BurnInWhere, e.diag.BurnInZ, burnInZ,
			"chains still carry burn-in: the first 10%% of the chains differ from their last 50%% by %.1f standard errors in %s; "+
				"the early draws come from the starting points, not from p, and bias ln Z; discard more draws as warm-up (discard= in Python)",
			e.diag.BurnInZ, e.name(e.diag.BurnInWhere)))
	}
	// The bulk ESS warns: the error bar rests on the bulk behaviour of a
	// bounded function of log p - log q. The tail ESS is reported only: a
	// funnel's neck has a tail ESS of a few tens under NUTS at the
	// paper's budget while ln Z stays within its error bar.
	if e.diag.ESSBulkMin < essMin {
		e.found(finding(CheckESS, 0, e.diag.ESSBulkWhere, e.diag.ESSBulkMin, essMin,
			"the effective sample size is only %.0f (bulk ESS of %s, below %d): the draws are so correlated that the "+
				"autocorrelation time, and so the error bar of ln Z, is itself uncertain by tens of per cent or more, "+
				"and the proposal is fitted on few independent points; run longer chains or thin less",
			e.diag.ESSBulkMin, e.name(e.diag.ESSBulkWhere), essMin))
	}
}

// outlierChains returns the chains whose mean (rank-normalized) sits more
// than 5 standard errors, and more than the spread of the other chains'
// means, away from their median.
func outlierChains(st quantityStats) []int {
	nc := len(st.chainMeans)
	if nc < 3 {
		return nil
	}
	med := medianOf(st.chainMeans)
	dev := make([]float64, nc)
	for c, v := range st.chainMeans {
		dev[c] = math.Abs(v - med)
	}
	mad := 1.4826 * medianOf(dev)
	var out []int
	for c, dv := range dev {
		if dv > 5*math.Hypot(mad, st.chainSE) {
			out = append(out, c)
		}
	}
	return out
}

func medianOf(x []float64) float64 {
	return mcmc.Quantile(slices.Sorted(slices.Values(x)), 0.5)
}

// Unmixed applies the convergence warnings' rule (CheckRHat, CheckESS)
// to chains before any estimate: it returns why they have not mixed, R̂
// beyond chance or a bulk ESS below 100, or "" when they have. names name
// the coordinates (nil: by number).
func Unmixed(s *Samples, names []string) string {
	if s.Draws() < 4 {
		return ""
	}
	var lp []float64
	for _, c := range s.LogP {
		lp = append(lp, c...)
	}
	nq := s.Dim
	if lp != nil {
		nq++
	}
	for i, st := range coordinateStats(s, lp, nq) {
		k := i - 1
		if k < 0 && lp == nil {
			continue
		}
		switch {
		case st.rhatExcess() > 1:
			return fmt.Sprintf("R-hat of %s %.3f, above %.3f", quantityName(names, k), st.rhat, math.Max(st.rhatCrit, rhatMin))
		case st.essBulk < essMin:
			return fmt.Sprintf("bulk ESS of %s %.0f, below %d", quantityName(names, k), st.essBulk, essMin)
		}
	}
	return ""
}

// coordinateStats returns the convergence statistics of log p (first; zero
// when lp is nil) and of every coordinate of the chains, computed
// concurrently: at d = 256 and 10^5 draws they are a few seconds of CPU.
func coordinateStats(s *Samples, lp []float64, nq int) []quantityStats {
	nc, m, d := len(s.Chains), s.Draws(), s.Dim
	stats := make([]quantityStats, d+1)
	scores := mcmc.ScoreTable(nc, m)
	forEach(d+1, func() []float64 { return make([]float64, nc*m) }, func(col []float64, i int) {
		k := i - 1
		if k < 0 {
			if lp == nil {
				return
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
	})
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

// chi2Quantile approximates the p-quantile of χ² with df degrees of
// freedom (Wilson & Hilferty 1931), accurate to a few percent for df >= 1
// at the upper tail used here.
func chi2Quantile(p, df float64) float64 {
	z := mcmc.NormalQuantile(p)
	a := 2 / (9 * df)
	v := 1 - a + z*math.Sqrt(a)
	return df * v * v * v
}
