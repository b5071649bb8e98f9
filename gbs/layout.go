package gbs

import "fmt"

// Layout: samples whose chain and draw axes were exchanged. emcee's
// get_chain() returns (draws, walkers, d); read as (chains, draws, d) it
// gives thousands of "chains" of a few draws each, whose autocorrelation
// runs across chains where the estimator cannot see it, and the error bar
// comes back far too small. Real runs have more draws per chain than
// chains, so the opposite is a warning.

// layoutWarning returns a warning when s has more chains than draws per
// chain, or "" when the layout looks right. Independent draws may come in
// any layout.
func layoutWarning(s *Samples) string {
	nc, m := len(s.Chains), s.Draws()
	if s.Independent || nc <= m || nc < 4 {
		return ""
	}
	return fmt.Sprintf("the samples hold %d chains of only %d draws each, more chains than draws per chain: "+
		"the chain and draw axes are probably exchanged (emcee's get_chain() is (draws, walkers, d): pass "+
		"chain_axis=1 in Python, or transpose to (chains, draws, d) in C and Go); read this way, the "+
		"autocorrelation along each real chain is invisible and the error bar is too small", nc, m)
}
