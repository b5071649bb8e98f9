package flow

import (
	"math"
	"math/bits"
	"slices"
)

// Sorting is the inner loop of both the direction search (every
// evaluation sorts k projections) and the 1-D fits. A least-significant-
// digit radix sort on the top bits of an order-preserving integer image of
// the values is several times faster than a comparison sort at these sizes
// and, being stable, deterministic.

// radixSortTop sorts keys by their top 32 (short slices) or 33 bits,
// stably; keys equal in those bits keep their relative order (values
// within ~1e-6 of each other relatively, which the callers either
// tolerate or fix up). buf is scratch of the same length. Short slices
// use 8-bit digits, whose counting arrays are cheap to clear; long ones
// 11-bit digits, one pass fewer.
func radixSortTop(keys, buf []uint64) {
	if len(keys) < 3000 {
		radixSort(keys, buf, 8, 32)
	} else {
		radixSort(keys, buf, 11, 31)
	}
}

// radixSortRanks sorts keys by their top 22 bits in two passes of 11-bit
// digits, stably. With keys from rankKey these are the sign, exponent and
// 13 mantissa bits of a float32: enough to rank projections for the
// sliced Wasserstein distance, where an exchange of two points within a
// relative 1e-4 of each other changes nothing that matters, at two thirds
// of the cost of a finer sort.
func radixSortRanks(keys, buf []uint64) {
	radixSort(keys, buf, 11, 42)
}

// radixSort sorts keys stably on bits [low, 64) in passes of digit bits
// (at most 11) from the least significant; buf is scratch.
func radixSort(keys, buf []uint64, digit, low uint) {
	n := len(keys)
	var counts [1 << 11]int
	count := counts[:1<<digit]
	mask := uint64(1)<<digit - 1
	src, dst := keys, buf
	for shift := low; shift < 64; shift += digit {
		clear(count)
		for _, k := range src {
			count[(k>>shift)&mask]++
		}
		if count[(src[0]>>shift)&mask] == n {
			continue // one bucket: the pass would not move anything
		}
		sum := 0
		for i, c := range count {
			count[i] = sum
			sum += c
		}
		for _, k := range src {
			b := (k >> shift) & mask
			dst[count[b]] = k
			count[b]++
		}
		src, dst = dst, src
	}
	if &src[0] != &keys[0] {
		copy(keys, src)
	}
}

// rankKey packs a float32 value, as an order-preserving integer, above
// the index i of its point.
func rankKey(v float32, i int) uint64 {
	b := math.Float32bits(v)
	if b>>31 == 1 {
		b = ^b
	} else {
		b |= 1 << 31
	}
	return uint64(b)<<32 | uint64(i)
}

// maxPackedIndexBits bounds the index part of packed keys: beyond it the
// value part would keep too few bits to order values usefully.
const maxPackedIndexBits = 20

// sortValues sorts v increasingly (exactly), carrying w along when w is
// not nil.
func sortValues(v, w []float64) {
	n := len(v)
	ib := uint(bits.Len(uint(n)))
	if n < 256 || ib > maxPackedIndexBits {
		if w == nil {
			slices.Sort(v)
		} else {
			sortWeighted(v, w)
		}
		return
	}
	mask := uint64(1)<<ib - 1
	keys := make([]uint64, n)
	for i, x := range v {
		keys[i] = orderedBits(x)&^mask | uint64(i)
	}
	radixSortTop(keys, make([]uint64, n))
	sv := make([]float64, n)
	var sw []float64
	if w != nil {
		sw = make([]float64, n)
	}
	for r, k := range keys {
		i := int(k & mask)
		sv[r] = v[i]
		if w != nil {
			sw[r] = w[i]
		}
	}
	// The radix passes ordered the values to ~1e-6 relative precision; an
	// insertion sort, linear on such nearly sorted data, makes it exact.
	for i := 1; i < n; i++ {
		x := sv[i]
		if sv[i-1] <= x {
			continue
		}
		var wx float64
		if w != nil {
			wx = sw[i]
		}
		j := i
		for j > 0 && sv[j-1] > x {
			sv[j] = sv[j-1]
			if w != nil {
				sw[j] = sw[j-1]
			}
			j--
		}
		sv[j] = x
		if w != nil {
			sw[j] = wx
		}
	}
	copy(v, sv)
	if w != nil {
		copy(w, sw)
	}
}

// orderedBits maps v to an unsigned integer of the same order.
func orderedBits(v float64) uint64 {
	b := math.Float64bits(v)
	if b>>63 == 1 {
		return ^b
	}
	return b | 1<<63
}
