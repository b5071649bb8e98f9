package gbs

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// selectNth puts in place the order statistics the pile-up check reads,
// the values a sort puts there, on columns with ties, runs and NaN-free
// extremes.
func TestSelectNthMatchesSort(t *testing.T) {
	rng := rand.New(rand.NewPCG(6, 6))
	for _, n := range []int{400, 401, 1000, 4096, 100000} {
		for kind := 0; kind < 4; kind++ {
			a := make([]float64, n)
			for i := range a {
				switch kind {
				case 0:
					a[i] = rng.NormFloat64()
				case 1:
					a[i] = float64(rng.IntN(5)) // many ties
				case 2:
					a[i] = float64(i) // sorted already
				case 3:
					a[i] = float64(n - i) // reversed
				}
			}
			want := slices.Clone(a)
			slices.Sort(want)
			k := max(n/100, pileUpMinK)
			lo := 0
			for _, p := range [...]int{0, k - 1, 2*k - 1, n - 2*k, n - k, n - 1} {
				selectNth(a, lo, n, p)
				if a[p] != want[p] {
					t.Fatalf("n %d kind %d: position %d holds %v, sorted %v", n, kind, p, a[p], want[p])
				}
				lo = p + 1
			}
		}
	}
}
