package gbs

import "fmt"

// halves is the sample split of bridge sampling and the harmonic mean: the
// proposal is fitted on one half and the estimator uses the other, so that
// q does not overfit the very draws it is compared with.
type halves struct {
	fit       []float64 // row-major draws for fitting q, chain after chain
	fitLogP   []float64 // known log p of the fit half; nil if unknown
	fitChains int       // chains in the fit half
	use       []float64 // row-major draws for the estimator, chain after chain
	useLogP   []float64 // known log p of the use half; nil if unknown
	nchains   int       // chains in the use half
	// fitRaw and useRaw are the halves before a symmetry's random
	// relabeling (nil: not relabeled): q is fitted on draws as the
	// chains gave them, one labeling, which it fits best.
	fitRaw, useRaw []float64
}

// fitQ returns the draws q is fitted on.
func (h halves) fitQ() []float64 {
	if h.fitRaw != nil {
		return h.fitRaw
	}
	return h.fit
}

// swapped returns the split with the roles of the halves exchanged.
func (h halves) swapped() halves {
	return halves{fit: h.use, fitLogP: h.useLogP, fitChains: h.nchains,
		use: h.fit, useLogP: h.fitLogP, nchains: h.fitChains, fitRaw: h.useRaw, useRaw: h.fitRaw}
}

// splitHalves splits by chains when there are several (the first half of
// the chains fits q) and by draws within the chain otherwise.
func splitHalves(s *Samples) (halves, error) {
	d, m, nc := s.Dim, s.Draws(), len(s.Chains)
	var h halves
	if nc >= 2 {
		k := nc / 2
		for c := 0; c < nc; c++ {
			if c < k {
				h.fit = append(h.fit, s.Chains[c]...)
				if s.LogP != nil {
					h.fitLogP = append(h.fitLogP, s.LogP[c]...)
				}
				continue
			}
			h.use = append(h.use, s.Chains[c]...)
			if s.LogP != nil {
				h.useLogP = append(h.useLogP, s.LogP[c]...)
			}
		}
		h.fitChains, h.nchains = k, nc-k
	} else {
		k := m / 2
		h.fit = s.Chains[0][:k*d]
		h.use = s.Chains[0][k*d:]
		if s.LogP != nil {
			h.fitLogP, h.useLogP = s.LogP[0][:k], s.LogP[0][k:]
		}
		h.fitChains, h.nchains = 1, 1
	}
	nFit, nUse := len(h.fit)/d, len(h.use)/d
	if nFit < 2 || nUse < 2 {
		return h, fmt.Errorf("gbs: too few draws to split in two halves (%d chains × %d draws gives %d and %d; need at least 2 in each)", nc, m, nFit, nUse)
	}
	return h, nil
}

// allDraws returns every draw, chain after chain, with their known log p.
func allDraws(s *Samples) (x, logp []float64) {
	for c, ch := range s.Chains {
		x = append(x, ch...)
		if s.LogP != nil {
			logp = append(logp, s.LogP[c]...)
		}
	}
	return x, logp
}
