package flow

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestSortValues checks the radix-based sort (values and weights) against
// the standard library, including ties and wide ranges.
func TestSortValues(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	for _, n := range []int{10, 300, 5000} {
		v := make([]float64, n)
		w := make([]float64, n)
		for i := range v {
			v[i] = rng.NormFloat64() * math.Exp(3*rng.NormFloat64())
			if i%7 == 0 {
				v[i] = v[i/2]
			}
			w[i] = 2 * v[i]
		}
		want := slices.Clone(v)
		slices.Sort(want)
		sortValues(v, w)
		if !slices.Equal(v, want) {
			t.Fatalf("n %d: values not sorted", n)
		}
		for i := range v {
			if w[i] != 2*v[i] {
				t.Fatalf("n %d: weight %d not carried", n, i)
			}
		}
	}
}

// TestRankKeys checks that rank keys sort by value (to their 1e-4
// resolution) and give back the indices.
func TestRankKeys(t *testing.T) {
	rng := rand.New(rand.NewPCG(2, 2))
	for _, m := range []int{100, 1024, 5000} {
		vals := make([]float32, m)
		keys := make([]uint64, m)
		for i := range vals {
			vals[i] = float32(rng.NormFloat64() * math.Exp(rng.NormFloat64()))
			keys[i] = rankKey(vals[i], i)
		}
		sortKeys(keys, make([]uint64, m))
		seen := make([]bool, m)
		prev := math.Inf(-1)
		for _, k := range keys {
			i := int(k & (1<<32 - 1))
			if seen[i] {
				t.Fatalf("m %d: index %d twice", m, i)
			}
			seen[i] = true
			v := float64(vals[i])
			if v < prev-2e-4*math.Abs(prev) {
				t.Fatalf("m %d: out of order: %g after %g", m, v, prev)
			}
			prev = max(prev, v)
		}
	}
}
