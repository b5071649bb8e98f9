package flow

import (
	"cmp"
	"math/rand/v2"
	"slices"
	"testing"
)

// sortDistinctPoints is distinctPoints as it was before hashing: the rows
// sorted, equal neighbours merged.
func sortDistinctPoints(x []float64, n, d int, weights []float64) ([]float64, []float64, int) {
	idx := make([]int, 0, n)
	for i := 0; i < n; i++ {
		if weights == nil || weights[i] > 0 {
			idx = append(idx, i)
		}
	}
	row := func(i int) []float64 { return x[i*d : (i+1)*d] }
	sorted := slices.Clone(idx)
	slices.SortFunc(sorted, func(a, b int) int {
		if c := slices.Compare(row(a), row(b)); c != 0 {
			return c
		}
		return cmp.Compare(a, b)
	})
	rep := make([]bool, n)
	merged := make(map[int]float64)
	dup := 0
	for g := 0; g < len(sorted); {
		h := g + 1
		for h < len(sorted) && slices.Equal(row(sorted[g]), row(sorted[h])) {
			h++
		}
		first := sorted[g] // the smallest index of the group
		rep[first] = true
		if h-g > 1 {
			dup += h - g - 1
			var sum float64
			for _, i := range sorted[g:h] {
				if weights == nil {
					sum++
				} else {
					sum += weights[i]
				}
			}
			merged[first] = sum
		}
		g = h
	}
	out := make([]float64, 0, (len(idx)-dup)*d)
	var w []float64
	if weights != nil || dup > 0 {
		w = make([]float64, 0, len(idx)-dup)
	}
	for _, i := range idx {
		if !rep[i] {
			continue
		}
		out = append(out, row(i)...)
		if w == nil {
			continue
		}
		switch v, ok := merged[i]; {
		case ok:
			w = append(w, v)
		case weights == nil:
			w = append(w, 1)
		default:
			w = append(w, weights[i])
		}
	}
	return out, w, dup
}

// distinctPoints finds the same groups of equal rows as a sort does, with
// the same order and the same summed weights: rows repeated as MCMC
// repeats them, -0 against 0, hash collisions forced by rows that differ
// in one coordinate, zero weights.
func TestDistinctPointsMatchesSort(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 8))
	const n, d = 3000, 5
	x := make([]float64, n*d)
	for i := 0; i < n; i++ {
		switch {
		case i > 0 && rng.IntN(3) == 0: // a rejected move: the previous row again
			copy(x[i*d:(i+1)*d], x[(i-1)*d:i*d])
		case i > 10 && rng.IntN(10) == 0: // an older row, one coordinate's sign of zero flipped
			j := rng.IntN(i)
			copy(x[i*d:(i+1)*d], x[j*d:(j+1)*d])
			x[i*d] = -x[i*d] * 0
		default:
			for k := 0; k < d; k++ {
				x[i*d+k] = float64(rng.IntN(3)) // few values: many equal rows by chance
			}
		}
	}
	for _, weighted := range []bool{false, true} {
		var w []float64
		if weighted {
			w = make([]float64, n)
			for i := range w {
				if rng.IntN(7) > 0 {
					w[i] = rng.Float64()
				}
			}
		}
		got, gw, gd := distinctPoints(x, n, d, w)
		want, ww, wd := sortDistinctPoints(x, n, d, w)
		if gd != wd || !slices.Equal(got, want) || !slices.Equal(gw, ww) {
			t.Fatalf("weighted %v: %d rows, %d merged; the sort gives %d rows, %d merged", weighted, len(got)/d, gd, len(want)/d, wd)
		}
		t.Logf("weighted %v: %d distinct rows of %d", weighted, len(got)/d, n)
	}
}
