package gbs

import (
	"math"
	"math/bits"
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
// (negative values have all bits flipped, positive ones the sign bit).
func orderKey(v float64) uint64 {
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

// sortedPairs returns the values of x (not NaN) with their positions, in
// increasing order of value, by a stable least-significant-digit radix
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
