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

// AverageRanks gives the ranks a comparison sort gives (NaN below every
// number, NaNs by position), ties sharing their mean rank.
func TestAverageRanks(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 4))
	x := make([]float64, 5000)
	for i := range x {
		switch i % 4 {
		case 0:
			x[i] = rng.NormFloat64()
		case 1:
			x[i] = math.Round(3 * rng.NormFloat64()) // ties, ±0
		case 2:
			x[i] = math.NaN()
		default:
			x[i] = math.Inf(2*rng.IntN(2) - 1)
		}
	}
	idx := make([]int, len(x))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int {
		switch na, nb := math.IsNaN(x[a]), math.IsNaN(x[b]); {
		case na && nb:
			return 0
		case na:
			return -1
		case nb:
			return 1
		}
		switch {
		case x[a] < x[b]:
			return -1
		case x[a] > x[b]:
			return 1
		}
		return 0
	})
	want := make([]float64, len(x))
	for i := 0; i < len(idx); {
		j := i + 1
		for j < len(idx) && x[idx[j]] == x[idx[i]] {
			j++
		}
		for k := i; k < j; k++ {
			want[idx[k]] = float64(i+j+1) / 2
		}
		i = j
	}
	if got := AverageRanks(x); !slices.Equal(got, want) {
		t.Errorf("AverageRanks differs from the comparison sort's ranks")
	}
}
