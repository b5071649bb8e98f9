package gbs

import (
	"fmt"
	"math"

	"github.com/gbs-evidence/gbs/internal/mcmc"
)

// layoutCorrelation is the lag-1 correlation of neighbouring chains'
// means, in standard errors, above which the order of the chains is not
// arbitrary.
const layoutCorrelation = 5

// Layout: samples whose chain and draw axes were exchanged. emcee's
// get_chain() returns (draws, walkers, d); read as (chains, draws, d) it
// gives thousands of "chains" of a few draws each, whose autocorrelation
// runs across chains where the estimator cannot see it, and the error bar
// comes back far too small. Real runs have more draws per chain than
// chains, so the opposite is a warning.

// diagnoseLayout warns when the chain and draw axes look exchanged.
func (e *estimation) diagnoseLayout() {
	if w := layoutWarning(e.s); w != "" {
		e.found(finding(CheckLayout, 0, WhereNone, math.NaN(), math.NaN(), "%s", w))
	}
}

// layoutWarning returns a warning when s has more chains than draws per
// chain and consecutive chains are correlated, or "" when the layout looks
// right. Independent draws may come in any layout, and so may many short
// independent chains (an ensemble's walkers thinned to one draw per
// autocorrelation time): their order is arbitrary, so the means of
// neighbouring chains are uncorrelated. Exchanged axes make each "chain"
// one step of the ensemble, and neighbouring steps are strongly
// correlated.
func layoutWarning(s *Samples) string {
	nc, m := len(s.Chains), s.Draws()
	if s.Kind == IndependentDraws || nc <= m || nc < 8 {
		return ""
	}
	// Lag-1 correlation of the chain means along the chain index, averaged
	// over the coordinates: about N(0, 1/(nc d)) for chains in arbitrary
	// order, near 1 for exchanged axes.
	d := s.Dim
	var r float64
	means := make([]float64, nc)
	for k := 0; k < d; k++ {
		for c, ch := range s.Chains {
			var sum float64
			for t := 0; t < m; t++ {
				sum += ch[t*d+k]
			}
			means[c] = sum / float64(m)
		}
		mu, v := mcmc.MeanVar(means)
		if v == 0 {
			continue
		}
		var cov float64
		for c := 1; c < nc; c++ {
			cov += (means[c] - mu) * (means[c-1] - mu)
		}
		r += cov / (float64(nc) * v)
	}
	r /= float64(d)
	if r < layoutCorrelation/math.Sqrt(float64(nc*d)) {
		return ""
	}
	return fmt.Sprintf("the samples hold %d chains of only %d draws each, more chains than draws per chain, and neighbouring chains are correlated: "+
		"the chain and draw axes are probably exchanged (emcee's get_chain() is (draws, walkers, d): pass "+
		"chain_axis=1 in Python, or transpose to (chains, draws, d) in C and Go); read this way, the "+
		"autocorrelation along each real chain is invisible and the error bar is too small", nc, m)
}
