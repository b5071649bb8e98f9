package gbs

import (
	"fmt"
	"math"

	"github.com/gbs-evidence/gbs/internal/mcmc"
)

// A log density with its sign flipped: a potential energy U = -log p, or a
// negative log-likelihood as optimizers minimize, passed where log p is
// expected. The draws then sit where the function passed is lowest, not
// highest. The proposal q is fitted to the draws, so log q is high where
// the draws are dense: with the right log density, log p and log q rise
// and fall together over the draws (rank correlation near +1 when q fits,
// clearly positive when it fits badly); with a flipped sign they move in
// opposite directions (near -1).

// signCorrelation is the rank correlation of log p and log q at the
// posterior draws below which the sign of log p counts as flipped.
const signCorrelation = -0.5

// signMinDraws is the number of posterior draws below which the rank
// correlation is too noisy to judge.
const signMinDraws = 50

// rankCorrelation returns Spearman's rank correlation of x and y (NaN if
// either is constant or there are fewer than signMinDraws pairs).
// Infinite values rank at their end; NaN is not expected.
func rankCorrelation(x, y []float64) float64 {
	n := len(x)
	if n < signMinDraws || len(y) != n {
		return math.NaN()
	}
	rx, ry := mcmc.AverageRanks(x), mcmc.AverageRanks(y)
	mx, vx := mcmc.MeanVar(rx)
	my, vy := mcmc.MeanVar(ry)
	if !(vx > 0) || !(vy > 0) {
		return math.NaN()
	}
	var c float64
	for i := range rx {
		c += (rx[i] - mx) * (ry[i] - my)
	}
	return c / float64(n-1) / math.Sqrt(vx*vy)
}

// signZ is the rank correlation of log p (lp) and log q at the posterior
// draws of a pass, where a = log q - log p.
func signCorr(lp, a []float64) float64 {
	if len(lp) != len(a) {
		return math.NaN()
	}
	lq := make([]float64, len(a))
	for i, v := range a {
		lq[i] = v + lp[i]
	}
	return rankCorrelation(lp, lq)
}

// diagnoseSign checks that log p rises where the draws are dense.
func (e *estimation) diagnoseSign() {
	r := math.NaN()
	for _, p := range e.passes {
		if len(p.logp) == len(p.signA) && p.signA != nil {
			c := signCorr(p.logp, p.signA)
			if math.IsNaN(r) || c < r {
				r = c
			}
		}
	}
	e.diag.SignCorr = r
	if r < signCorrelation {
		e.found(finding(CheckSign, 0, WhereNone, r, signCorrelation, "%s", signWarning(r)))
		e.explain("the sign of the log density (see above)")
	}
}

// signWarning is the warning for a log density whose sign looks flipped.
func signWarning(r float64) string {
	return fmt.Sprintf("the log density is lowest where the draws are densest: over the posterior draws, log p falls "+
		"where the proposal fitted to them (log q) rises (rank correlation %.2f; a log density and its own draws "+
		"give a positive one); the function passed is probably minus the log density (a potential energy or a "+
		"negative log-likelihood, as optimizers minimize), or the draws come from another density; ln Z is "+
		"meaningless: pass log p itself", r)
}
