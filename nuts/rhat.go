package nuts

import (
	"errors"
	"fmt"
	"math"
	"slices"
)

// RHat returns the potential scale reduction factor of a scalar quantity
// observed along several chains (one series per chain, all of the same
// length), as Stan and ArviZ compute it (Vehtari, Gelman, Simpson,
// Carpenter & Bürkner 2021, "Rank-normalization, folding, and
// localization"): each chain is split in halves, so that a drift within a
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
	// Split each chain in halves, dropping the middle draw of an odd
	// length.
	half := n / 2
	split := make([][]float64, 0, 2*m)
	for _, x := range chains {
		split = append(split, x[:half], x[n-half:])
	}
	bulk, okBulk := splitRHat(rankNormalize(split))
	// Fold about the median of all draws (as ArviZ does, before the
	// split, so with an odd length the middle draws count too).
	all := make([]float64, 0, m*n)
	for _, x := range chains {
		all = append(all, x...)
	}
	slices.Sort(all)
	med := median(all)
	folded := make([][]float64, len(split))
	for c, x := range split {
		folded[c] = make([]float64, half)
		for i, v := range x {
			folded[c][i] = math.Abs(v - med)
		}
	}
	tail, okTail := splitRHat(rankNormalize(folded))
	switch {
	case okBulk && okTail:
		return math.Max(bulk, tail), nil
	case okBulk:
		return bulk, nil
	case okTail:
		return tail, nil
	}
	return 0, errors.New("nuts: R-hat of a constant quantity is undefined")
}

// splitRHat is the classical R-hat of already split chains:
// sqrt(var⁺/W) with W the mean within-chain variance and var⁺ the pooled
// variance estimate (n-1)/n W + B/n (Gelman et al., BDA3 eq. 11.3-11.4).
// It reports false when every chain is constant.
func splitRHat(chains [][]float64) (float64, bool) {
	n := float64(len(chains[0]))
	means := make([]float64, len(chains))
	var w float64
	for c, x := range chains {
		var mean float64
		for _, v := range x {
			mean += v
		}
		mean /= n
		means[c] = mean
		var s float64
		for _, v := range x {
			s += (v - mean) * (v - mean)
		}
		w += s / (n - 1)
	}
	w /= float64(len(chains))
	if !(w > 0) {
		return 0, false
	}
	varPlus := (n-1)/n*w + variance(means)
	return math.Sqrt(varPlus / w), true
}

// rankNormalize replaces every draw by the normal score of its rank among
// all draws, Φ⁻¹((r - 3/8)/(S + 1/4)) (Blom's offset), with tied draws
// sharing their average rank.
func rankNormalize(chains [][]float64) [][]float64 {
	sorted := make([]float64, 0, len(chains)*len(chains[0]))
	for _, x := range chains {
		sorted = append(sorted, x...)
	}
	// Sorting the bare values is several times faster than sorting them
	// together with their positions, and Sample ranks all kept draws on
	// every run; each draw then finds its rank by binary search.
	slices.Sort(sorted)
	s := float64(len(sorted))
	// z[lo] is the normal score of the tied draws sorted[lo:hi].
	z := make([]float64, len(sorted))
	for lo := 0; lo < len(sorted); {
		hi := lo + 1
		for hi < len(sorted) && sorted[hi] == sorted[lo] {
			hi++
		}
		// Ranks lo+1..hi share their mean.
		r := 0.5 * float64(lo+1+hi)
		z[lo] = math.Sqrt2 * math.Erfinv(2*(r-0.375)/(s+0.25)-1)
		lo = hi
	}
	out := make([][]float64, len(chains))
	for c, x := range chains {
		out[c] = make([]float64, len(x))
		for i, v := range x {
			lo, _ := slices.BinarySearch(sorted, v)
			out[c][i] = z[lo]
		}
	}
	return out
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
