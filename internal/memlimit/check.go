package memlimit

import (
	"fmt"
	"math"
	"math/bits"
)

// Fraction is the share of the available memory that one planned
// allocation may take: the estimate counts the main arrays only, and the
// process needs room for everything else.
const Fraction = 0.8

// unchecked is the size below which the available memory is not read:
// such allocations are not what takes a process down, and reading
// /proc on every small call would cost more than the check saves.
const unchecked = 64 << 20

// Error reports an allocation that cannot fit.
type Error struct {
	// What names the size that drives the allocation, with its value.
	What string
	// Need is the planned allocation in bytes; Overflow is set when the
	// product of the sizes does not fit in 63 bits.
	Need     uint64
	Overflow bool
	// Available is the memory the process may still allocate.
	Available uint64
}

func (e *Error) Error() string {
	if e.Overflow {
		return fmt.Sprintf("%s need more than %s (the size overflows a 64-bit integer)", e.What, Format(math.MaxInt64))
	}
	return fmt.Sprintf("%s need %s; %s are available", e.What, Format(e.Need), Format(e.Available))
}

// Bytes returns elem × the product of the factors, and false if a factor
// is negative or the product exceeds the largest int.
func Bytes(elem int, factors ...int) (uint64, bool) {
	if elem < 0 {
		return 0, false
	}
	n := uint64(elem)
	for _, f := range factors {
		if f < 0 {
			return 0, false
		}
		hi, lo := bits.Mul64(n, uint64(f))
		if hi != 0 || lo > math.MaxInt {
			return 0, false
		}
		n = lo
	}
	return n, true
}

// Check returns an *Error if elem × factors bytes overflow or do not fit
// in Fraction of the memory available. what names the sizes, as in
// "n_q = 1000 proposal draws of dimension 6" (the message continues with
// "need 48.0 kB; ...").
func Check(what string, elem int, factors ...int) error {
	need, ok := Bytes(elem, factors...)
	if !ok {
		return &Error{What: what, Overflow: true}
	}
	return CheckBytes(what, need)
}

// CheckBytes is Check for a size already in bytes.
func CheckBytes(what string, need uint64) error {
	if need < unchecked {
		return nil
	}
	avail, ok := Available()
	if !ok {
		return nil
	}
	return check(what, need, avail)
}

func check(what string, need, avail uint64) error {
	if float64(need) > Fraction*float64(avail) {
		return &Error{What: what, Need: need, Available: avail}
	}
	return nil
}

// Format writes a byte count in decimal units (kB, MB, GB, TB, PB, EB).
func Format(b uint64) string {
	const units = "kMGTPE"
	if b < 1000 {
		return fmt.Sprintf("%d B", b)
	}
	v := float64(b)
	i := -1
	for v >= 1000 && i < len(units)-1 {
		v /= 1000
		i++
	}
	return fmt.Sprintf("%.1f %cB", v, units[i])
}
