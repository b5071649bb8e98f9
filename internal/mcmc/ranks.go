package mcmc

import (
	"math"
	"math/bits"
	"slices"
)

// Ranks for the rank-normalized diagnostics. Every coordinate of every
// chain is ranked, twice (values and folded values); at d = 256 and 10^5
// draws a comparison sort took 3 s of CPU, a radix sort a fraction of it.
// The flow's sort (flow/radix.go) keys on the top 33 bits and finishes by
// insertion, which suits whitened values but turns quadratic on raw
// coordinates that agree in those bits (10^6 ± 10^-3); these keys keep all
// 64.

// valueIndex is a value with its position among the draws.
type valueIndex struct {
	v float64
	i int32
}

// keyIndex is a value's order-preserving integer image with its position.
type keyIndex struct {
	k uint64
	i int32
}

// orderKey maps float64 to uint64 so that integer order is value order
// (negative values have all bits flipped, positive ones the sign bit);
// NaN maps to 0, below every number.
func orderKey(v float64) uint64 {
	if v != v {
		return 0
	}
	b := math.Float64bits(v)
	if b>>63 == 1 {
		return ^b
	}
	return b | 1<<63
}

// fromOrderKey inverts orderKey.
func fromOrderKey(k uint64) float64 {
	if k>>63 == 1 {
		return math.Float64frombits(k &^ (1 << 63))
	}
	return math.Float64frombits(^k)
}

// sortedPairs returns the values of x with their positions, in increasing
// order of value (NaN first), by a stable least-significant-digit radix
// sort of their order keys. -0 sorts just before +0; the callers compare
// values with ==, which takes them as tied.
func sortedPairs(x []float64) []valueIndex {
	const digit = 11
	n := len(x)
	src, dst := make([]keyIndex, n), make([]keyIndex, n)
	var or, and uint64 = 0, math.MaxUint64
	for i, v := range x {
		k := orderKey(v)
		src[i] = keyIndex{k, int32(i)}
		or |= k
		and &= k
	}
	// Bits equal in every key do not order anything: skip the digits
	// below the lowest differing bit and above the highest.
	var count [1 << digit]int
	if diff := or ^ and; diff != 0 {
		lo, hi := uint(bits.TrailingZeros64(diff)), uint(64-bits.LeadingZeros64(diff))
		for shift := lo; shift < hi; shift += digit {
			clear(count[:])
			for _, p := range src {
				count[(p.k>>shift)&(1<<digit-1)]++
			}
			sum := 0
			for b, c := range count {
				count[b] = sum
				sum += c
			}
			for _, p := range src {
				b := (p.k >> shift) & (1<<digit - 1)
				dst[count[b]] = p
				count[b]++
			}
			src, dst = dst, src
		}
	}
	out := make([]valueIndex, n)
	for j, p := range src {
		out[j] = valueIndex{fromOrderKey(p.k), p.i}
	}
	return out
}

// foldedPairs returns |x - med| with positions in increasing order, from
// x sorted: the values below med, read backwards, and those above are
// both increasing in |x - med|, so one merge sorts them.
func foldedPairs(sorted []valueIndex, med float64) []valueIndex {
	k, _ := slices.BinarySearchFunc(sorted, med, func(a valueIndex, m float64) int {
		if a.v < m {
			return -1
		}
		return 1
	})
	out := make([]valueIndex, 0, len(sorted))
	l, r := k-1, k
	for l >= 0 || r < len(sorted) {
		if r >= len(sorted) || (l >= 0 && med-sorted[l].v <= sorted[r].v-med) {
			out = append(out, valueIndex{med - sorted[l].v, sorted[l].i})
			l--
		} else {
			out = append(out, valueIndex{sorted[r].v - med, sorted[r].i})
			r++
		}
	}
	return out
}

// RankNormal replaces each value by the normal score of its rank among
// all values, Φ⁻¹((r - 3/8)/(S + 1/4)) (Blom's offset, as ArviZ), ties
// getting their average rank.
func RankNormal(x []float64) []float64 { return normalScores(sortedPairs(x), nil) }

// AverageRanks returns the 1-based ranks of x, tied values (==) sharing
// their average rank; NaN ranks below every number, NaNs by position.
func AverageRanks(x []float64) []float64 {
	sorted := sortedPairs(x)
	r := make([]float64, len(x))
	for i := 0; i < len(sorted); {
		j := i + 1
		for j < len(sorted) && sorted[j].v == sorted[i].v {
			j++
		}
		mean := float64(i+j+1) / 2
		for k := i; k < j; k++ {
			r[sorted[k].i] = mean
		}
		i = j
	}
	return r
}

// rankScores returns the normal scores of the ranks 1..s.
func rankScores(s int) []float64 {
	t := make([]float64, s)
	for i := range t {
		t[i] = NormalQuantile((float64(i+1) - 0.375) / (float64(s) + 0.25))
	}
	return t
}

// normalScores returns the normal scores of the ranks of the sorted
// values, at their positions; table, if not nil, is rankScores(len(sorted)).
func normalScores(sorted []valueIndex, table []float64) []float64 {
	s := len(sorted)
	z := make([]float64, s)
	for i := 0; i < s; {
		j := i + 1
		for j < s && sorted[j].v == sorted[i].v {
			j++
		}
		var v float64
		if j == i+1 && table != nil {
			v = table[i]
		} else {
			r := 0.5*float64(i+j-1) + 1 // average 1-based rank
			v = NormalQuantile((r - 0.375) / (float64(s) + 0.25))
		}
		for k := i; k < j; k++ {
			z[sorted[k].i] = v
		}
		i = j
	}
	return z
}

// NormalQuantile is Φ⁻¹(p), the standard normal quantile.
func NormalQuantile(p float64) float64 { return math.Sqrt2 * math.Erfinv(2*p-1) }

// Quantile returns the p-quantile of the sorted values s by linear
// interpolation between order statistics (R's type 7).
func Quantile(s []float64, p float64) float64 {
	h := p * float64(len(s)-1)
	lo := int(math.Floor(h))
	if lo+1 >= len(s) {
		return s[len(s)-1]
	}
	return s[lo] + (h-float64(lo))*(s[lo+1]-s[lo])
}
