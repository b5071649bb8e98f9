package gbs

import (
	"fmt"
	"math"
	"slices"
)

// Draws piled against a boundary. A posterior truncated by a hard edge of
// its support (a half-normal scale, a uniform prior's end where the
// likelihood is still high) has its largest density at the edge, and the
// draws end abruptly there. Without Settings.Lower/Upper the proposal
// cannot know it: it spreads mass beyond the edge, where log p = -inf.
// The bridge and importance sampling stay right (those proposal draws
// weigh zero) at some loss of efficiency; reciprocal importance sampling
// does not (E_p[q/p] is q's mass inside the support over Z), which the
// consistency check corrects for (see hmZ).
//
// The check looks at each coordinate's extreme draws on each side that has
// no bound: below the edge density that does not vanish makes the lowest
// k draws as spread as the next k (the quantile function is linear there),
// while a tail that fades, even a short one, makes them far more spread
// (for a Gaussian and k = 1% of n, 4 times at n = 4000, 9 times at 10^6).

// pileUpRatio is the ratio of the spread of the k most extreme draws to
// that of the next k below which a side counts as an abrupt edge: a
// constant density gives 1 (within the noise of k spacings, about
// 1 ± 2/sqrt(k)), a Gaussian tail 3.6 or more at any n >= 400.
const pileUpRatio = 1.6

// pileUpMinDraws is the number of draws below which the extremes are too
// few to judge; k is 1% of the draws, at least pileUpMinK.
const (
	pileUpMinDraws = 400
	pileUpMinK     = 30
)

// pileUp is an abrupt edge of the draws: coordinate Coord ends at Edge,
// below (Upper false) or above (Upper true), with spread ratio Ratio.
type pileUp struct {
	Coord int
	Upper bool
	Edge  float64
	Ratio float64
}

// pileUps returns the sides of the coordinates of s without a finite bound
// where the draws end abruptly, most abrupt first.
func pileUps(s *Samples, lower, upper []float64) []pileUp {
	d := s.Dim
	n := len(s.Chains) * s.Draws()
	if n < pileUpMinDraws {
		return nil
	}
	k := max(n/100, pileUpMinK)
	// Each coordinate's sides on its own, the coordinates concurrently;
	// gathered in coordinate order, so the result does not depend on the
	// goroutines.
	sides := make([][]pileUp, d)
	forEach(d, func() []float64 { return make([]float64, n) }, func(col []float64, j int) {
		sides[j] = coordinatePileUps(col, s, j, k, lower, upper)
	})
	var out []pileUp
	for _, sd := range sides {
		out = append(out, sd...)
	}
	slices.SortStableFunc(out, func(a, b pileUp) int {
		switch {
		case a.Ratio < b.Ratio:
			return -1
		case a.Ratio > b.Ratio:
			return 1
		}
		return 0
	})
	return out
}

// coordinatePileUps returns the abrupt sides of coordinate j (k extreme
// draws per side), using col (one value per draw) as scratch.
func coordinatePileUps(col []float64, s *Samples, j, k int, lower, upper []float64) []pileUp {
	free := func(b []float64, inf int) bool { return b == nil || math.IsInf(b[j], inf) }
	if !free(lower, -1) && !free(upper, 1) {
		return nil // bounded on both sides: nothing to judge
	}
	d, n := s.Dim, len(col)
	i := 0
	for _, ch := range s.Chains {
		for t := j; t < len(ch); t += d {
			col[i] = ch[t]
			i++
		}
	}
	// The check reads six order statistics: they are put in place, in
	// increasing position, each selected among the values above the
	// last (linear time; sorting the column was most of the checks'
	// cost at d = 256).
	lo := 0
	for _, p := range [...]int{0, k - 1, 2*k - 1, n - 2*k, n - k, n - 1} {
		selectNth(col, lo, n, p)
		lo = p + 1
	}
	if col[0] == col[n-1] {
		return nil
	}
	var out []pileUp
	if free(lower, -1) {
		if r := (col[k-1] - col[0]) / (col[2*k-1] - col[k-1]); r < pileUpRatio {
			out = append(out, pileUp{Coord: j, Edge: col[0], Ratio: r})
		}
	}
	if free(upper, 1) {
		if r := (col[n-1] - col[n-k]) / (col[n-k] - col[n-2*k]); r < pileUpRatio {
			out = append(out, pileUp{Coord: j, Upper: true, Edge: col[n-1], Ratio: r})
		}
	}
	return out
}

// selectNth rearranges a[lo:hi] so that a[p] holds the value a sorted
// a[lo:hi] would have there, the values before it no larger and those
// after it no smaller (quickselect with a median-of-three pivot; ranges
// of at most 16 values, and any range after 64 rounds, are sorted).
func selectNth(a []float64, lo, hi, p int) {
	for round := 0; hi-lo > 16 && round < 64; round++ {
		m := lo + (hi-lo)/2
		x, y, z := a[lo], a[m], a[hi-1]
		pivot := max(min(x, y), min(max(x, y), z))
		// Three-way partition: < pivot, == pivot, > pivot.
		lt, i, gt := lo, lo, hi
		for i < gt {
			switch v := a[i]; {
			case v < pivot:
				a[lt], a[i] = a[i], a[lt]
				lt++
				i++
			case v > pivot:
				gt--
				a[gt], a[i] = a[i], a[gt]
			default:
				i++
			}
		}
		switch {
		case p < lt:
			hi = lt
		case p >= gt:
			lo = gt
		default:
			return // a[p] == pivot, in place
		}
	}
	slices.Sort(a[lo:hi])
}

// diagnosePileUp looks for draws piled against a side without a bound.
// It never warns: the estimate stays right, and the consistency checks
// allow for the proposal's mass beyond the edge. It adds a note, and
// explains a failed consistency check.
func (e *estimation) diagnosePileUp() {
	out := math.NaN()
	for _, p := range e.passes {
		if p.b != nil {
			out = nanMax(out, outsideShare(p.b))
		}
	}
	e.diag.OutsideShare = out
	var ps []pileUp
	if ec := e.waitEarly(); ec != nil {
		ps = ec.piles
	} else {
		ps = pileUps(e.s, e.cfg.Lower, e.cfg.Upper)
	}
	if len(ps) == 0 {
		return
	}
	e.diag.PileUpWhere, e.diag.PileUpRatio = ps[0].Coord, ps[0].Ratio
	advice := pileUpAdvice(ps, e.cfg.Names)
	msg := advice
	if out > 0 {
		msg += fmt.Sprintf("; %.1f%% of the proposal draws fell where log p = -inf (the estimate allows for them, "+
			"at some cost in efficiency)", 100*out)
	}
	e.found(finding(CheckPileUp, KindInfo, ps[0].Coord, ps[0].Ratio, math.NaN(), "%s", msg))
	e.explain(advice + ", then run again")
}

// describe words the edge for messages, naming coordinates by names.
func (p pileUp) describe(names []string) string {
	side, ext := "below", "lowest"
	if p.Upper {
		side, ext = "above", "highest"
	}
	return fmt.Sprintf("%s ends abruptly at %.6g (its %s draw; nothing %s)", quantityName(names, p.Coord), p.Edge, ext, side)
}

// pileUpAdvice names the edges and what to do.
func pileUpAdvice(ps []pileUp, names []string) string {
	desc := ps[0].describe(names)
	if len(ps) > 1 {
		desc += fmt.Sprintf(" (and %d more side(s))", len(ps)-1)
	}
	return fmt.Sprintf("the draws pile up against a boundary: %s, as at a hard edge of the support, and no bound "+
		"was given there; if p is zero beyond, pass the bounds (bounds= in Python, Settings.Lower/Upper in Go, "+
		"lower/upper in C), so that the proposal puts no mass where log p = -inf", desc)
}
