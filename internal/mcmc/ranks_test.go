package mcmc

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// The radix sort orders values as a comparison sort does, keeps equal
// values in their original order and returns the values bit for bit.
func TestSortedPairs(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 3))
	cases := [][]float64{
		{},
		{2.5},
		{1, 1, 1},
		{math.Inf(1), -0.0, 0, math.Inf(-1), -math.SmallestNonzeroFloat64, math.SmallestNonzeroFloat64, -1e308, 1e308},
	}
	for _, n := range []int{10, 1000, 50000} {
		x := make([]float64, n)
		for i := range x {
			switch i % 3 {
			case 0:
				x[i] = rng.NormFloat64() * math.Exp(20*rng.NormFloat64())
			case 1:
				x[i] = math.Round(4 * rng.NormFloat64()) // ties, ±0
			default:
				x[i] = 1 + 1e-15*float64(rng.IntN(5)) // keys differing in low bits only
			}
		}
		cases = append(cases, x)
	}
	for _, x := range cases {
		got := sortedPairs(x)
		want := make([]valueIndex, len(x))
		for i, v := range x {
			want[i] = valueIndex{v, int32(i)}
		}
		slices.SortStableFunc(want, func(a, b valueIndex) int {
			switch ka, kb := orderKey(a.v), orderKey(b.v); {
			case ka < kb:
				return -1
			case ka > kb:
				return 1
			}
			return 0
		})
		for j := range want {
			if math.Float64bits(got[j].v) != math.Float64bits(want[j].v) || got[j].i != want[j].i {
				t.Fatalf("n=%d position %d: %v, want %v", len(x), j, got[j], want[j])
			}
			if j > 0 && got[j].v < got[j-1].v {
				t.Fatalf("n=%d: %v before %v", len(x), got[j-1].v, got[j].v)
			}
		}
	}
}
