package gbs

import (
	"fmt"
	"math"
	"strings"

	"gonum.org/v1/gonum/floats"
)

// Copied chains. Parallel chains started with the same seed take the same
// random numbers: they are the same chain (an exact copy when they also
// start at the same point), or, from different starting points, chains
// whose moves are driven by the same noise, so that their steps agree.
// Either way they count as independent information that is not there,
// and the error bar is too small by the square root of the number of
// copies. The generic checks see this only by accident (identical chains
// agree perfectly, so R-hat is fine).
//
// The check compares the chains' steps x_{t+1} - x_t: the steps of
// independent chains are uncorrelated whatever the target, even when the
// chains drift alike through burn-in from similar starts, while copies
// share them. Exact copies are found by comparing the draws.

// copyCorrelation is the correlation of two chains' steps above which
// they count as near copies. Independent chains of m draws give about
// N(0, 1/(m d)) (steps are nearly uncorrelated in time): 0.5 is over ten
// standard errors for the shortest chains checked.
const copyCorrelation = 0.5

// copyMinDraws is the chain length below which steps are too few to
// compare; copyMaxChains bounds the pairs compared for near copies (a
// quadratic cost); exact copies are found for any number of chains.
const (
	copyMinDraws  = 50
	copyMaxChains = 256
)

// copyGroups returns groups of chains that are exact or near copies of
// each other (each group in increasing order, groups by their first
// chain), whether all of them are exact, and the largest correlation of
// steps between two chains.
func copyGroups(s *Samples) (groups [][]int, exact bool, maxCorr float64) {
	nc, m := len(s.Chains), s.Draws()
	maxCorr = math.NaN()
	if nc < 2 || m < 2 {
		return nil, false, maxCorr
	}
	parent := make([]int, nc)
	for i := range parent {
		parent[i] = i
	}
	find := func(i int) int {
		for parent[i] != i {
			i = parent[i]
		}
		return i
	}
	union := func(i, j int) {
		a, b := find(i), find(j)
		if a > b {
			a, b = b, a
		}
		parent[b] = a
	}
	exact = true
	// Exact copies: equal draws (a hash first, then the values).
	byHash := map[uint64][]int{}
	for c, ch := range s.Chains {
		h := uint64(14695981039346656037)
		for _, v := range ch {
			h ^= math.Float64bits(v)
			h *= 1099511628211
		}
		for _, o := range byHash[h] {
			if equalPoints(s.Chains[o], ch) {
				union(o, c)
				break
			}
		}
		byHash[h] = append(byHash[h], c)
	}
	if m >= copyMinDraws && nc <= copyMaxChains && s.Kind != IndependentDraws {
		steps := chainSteps(s)
		maxCorr = math.Inf(-1)
		for i := 0; i < nc; i++ {
			for j := i + 1; j < nc; j++ {
				r := floats.Dot(steps[i], steps[j])
				maxCorr = math.Max(maxCorr, r)
				if r > copyCorrelation && find(i) != find(j) {
					union(i, j)
					exact = false
				}
			}
		}
	}
	members := map[int][]int{}
	var roots []int
	for c := 0; c < nc; c++ {
		r := find(c)
		if len(members[r]) == 0 {
			roots = append(roots, r)
		}
		members[r] = append(members[r], c)
	}
	for _, r := range roots {
		if len(members[r]) > 1 {
			groups = append(groups, members[r])
		}
	}
	if len(groups) == 0 {
		exact = false
	}
	return groups, exact, maxCorr
}

// chainSteps returns each chain's steps x_{t+1} - x_t, each coordinate
// scaled by the pooled standard deviation of its steps, and each chain's
// vector scaled to unit length, so that the dot product of two chains'
// is the correlation of their steps pooled over the coordinates. A chain
// that never moves has zero steps (correlation 0 with every other).
func chainSteps(s *Samples) [][]float64 {
	nc, m, d := len(s.Chains), s.Draws(), s.Dim
	scale := make([]float64, d)
	for _, ch := range s.Chains {
		for t := 1; t < m; t++ {
			for k := 0; k < d; k++ {
				v := ch[t*d+k] - ch[(t-1)*d+k]
				scale[k] += v * v
			}
		}
	}
	for k := range scale {
		if scale[k] > 0 {
			scale[k] = 1 / math.Sqrt(scale[k])
		}
	}
	out := make([][]float64, nc)
	for c, ch := range s.Chains {
		v := make([]float64, (m-1)*d)
		var norm float64
		for t := 1; t < m; t++ {
			for k := 0; k < d; k++ {
				x := (ch[t*d+k] - ch[(t-1)*d+k]) * scale[k]
				v[(t-1)*d+k] = x
				norm += x * x
			}
		}
		if norm > 0 {
			inv := 1 / math.Sqrt(norm)
			for i := range v {
				v[i] *= inv
			}
		}
		out[c] = v
	}
	return out
}

// diagnoseCopies warns about chains that are copies of each other.
func (e *estimation) diagnoseCopies() {
	groups, exact, corr := copyGroups(e.s)
	e.diag.CopiedChains, e.diag.StepCorrMax = groups, corr
	if w := copiesWarning(groups, exact); w != "" {
		e.found(finding(CheckCopiedChains, 0, WhereNone, corr, math.NaN(), "%s", w))
		e.explain("copied chains (see above), which make the error bar too small")
	}
}

// copiesWarning returns the warning for copied chains, or "".
func copiesWarning(groups [][]int, exact bool) string {
	if len(groups) == 0 {
		return ""
	}
	names := make([]string, len(groups))
	for i, g := range groups {
		names[i] = fmt.Sprint(g)
	}
	kind := "exact copies of each other (the same draws)"
	if !exact {
		kind = "copies or near copies of each other (their steps agree: the same moves from the same random numbers)"
	}
	return fmt.Sprintf("chains %s are %s: parallel chains started with the same seed? "+
		"Copies add no information but count as independent chains, so the error bar is too small "+
		"(by about the square root of the number of copies) and the convergence checks cannot see "+
		"whether the chains mixed; give every chain its own seed (or random stream) and starting point, "+
		"or keep one chain of each group", strings.Join(names, " and "), kind)
}
