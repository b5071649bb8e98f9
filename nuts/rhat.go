package nuts

import (
	"errors"
	"fmt"
	"slices"

	"github.com/gbs-evidence/gbs/internal/mcmc"
)

// RHat returns the potential scale reduction factor of a scalar quantity
// observed along several chains (one series per chain, all of the same
// length), as Stan and ArviZ compute it (Vehtari, Gelman, Simpson,
// Carpenter & Bürkner 2021, "Rank-normalization, folding, and
// localization"; internal/mcmc, held to ArviZ's values): each chain is split in halves, so that a drift within a
// chain counts as disagreement too; the draws are replaced by the normal
// scores of their ranks among all draws, which makes the statistic
// insensitive to heavy tails and to monotone transforms; and the result is
// the larger of this bulk R-hat and the tail R-hat of the same statistic
// on |x - median|, which detects chains that agree on location but not on
// scale.
//
// R-hat is 1 for chains that sample the same distribution and grows when
// they disagree; values above 1.01 (Stan's current advice) or 1.05 (a
// looser, older threshold) mean the chains have not mixed. A single chain
// is split in two, so it is checked against itself.
func RHat(chains [][]float64) (float64, error) {
	m := len(chains)
	if m == 0 {
		return 0, errors.New("nuts: R-hat of no chains")
	}
	n := len(chains[0])
	if n < 4 {
		return 0, fmt.Errorf("nuts: R-hat needs at least 4 draws per chain, have %d", n)
	}
	for c, x := range chains {
		if len(x) != n {
			return 0, fmt.Errorf("nuts: R-hat: chain %d has %d draws, chain 0 has %d", c, len(x), n)
		}
		for i, v := range x {
			if !isFinite(v) {
				return 0, fmt.Errorf("nuts: R-hat: chain %d draw %d is %v", c, i, v)
			}
		}
	}
	if allEqual(chains) {
		return 0, errors.New("nuts: R-hat of a constant quantity is undefined")
	}
	return mcmc.RHat(chains), nil
}

// allEqual reports whether every draw of every chain is the same value.
func allEqual(chains [][]float64) bool {
	for _, x := range chains {
		for _, v := range x {
			if v != chains[0][0] {
				return false
			}
		}
	}
	return true
}

// median of sorted values.
func median(sorted []float64) float64 {
	n := len(sorted)
	if n%2 == 1 {
		return sorted[n/2]
	}
	return 0.5 * (sorted[n/2-1] + sorted[n/2])
}

// LowChains returns the chains whose log p sits mostly below what the
// other chains visit: those whose median log p is under the 1% quantile of
// the pooled draws of all other chains. Such a chain is stuck (against a
// wall, in a corner of a funnel, in a minor mode) or still far out in the
// tails; its draws do not represent the target. With fewer than three
// chains nothing is compared and the result is nil.
func (r *Result) LowChains() []int {
	m := len(r.LogP)
	if m < 3 {
		return nil
	}
	medians := make([]float64, m)
	for c, lp := range r.LogP {
		if len(lp) == 0 {
			return nil
		}
		s := append([]float64(nil), lp...)
		slices.Sort(s)
		medians[c] = median(s)
	}
	var low []int
	for c := range r.LogP {
		var others []float64
		for k, lp := range r.LogP {
			if k != c {
				others = append(others, lp...)
			}
		}
		slices.Sort(others)
		q := others[int(0.01*float64(len(others)-1))]
		if medians[c] < q {
			low = append(low, c)
		}
	}
	return low
}
