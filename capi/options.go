package main

/*
#include <stddef.h>
#include <stdint.h>
#include "gbs.h"
*/
import "C"

import (
	"math"
	"slices"
	"unsafe"
)

// maxStructSize bounds a struct's size field: a larger value is taken for
// an uninitialized field rather than a struct from a future header.
const maxStructSize = 1 << 16

// abiVersion is the ABI version of the structs below.
const abiVersion = C.GBS_ABI_VERSION

// readOptions returns a copy of the options struct at p, whose first
// field is its size_t size, or the zero value (all defaults) if p is nil.
// name is the struct's C name, for messages. A size smaller than this
// ABI's struct is an error; a larger one is accepted when the bytes past
// the known fields are zero.
func readOptions[T any](p *T, name string) (T, error) {
	var v T
	if p == nil {
		return v, nil
	}
	if err := checkSize(unsafe.Pointer(p), unsafe.Sizeof(v), name, true); err != nil {
		return v, err
	}
	return *p, nil
}

// readOptionsFrom is readOptions for a struct that has grown: a size down
// to old (the size of the struct in an older header, whose fields are a
// prefix of the current ones) is accepted too, and the fields past it
// take their zero value (their defaults).
func readOptionsFrom[T any](p *T, name string, old uintptr) (T, error) {
	var v T
	if p == nil {
		return v, nil
	}
	size := uintptr(*(*C.size_t)(unsafe.Pointer(p)))
	if size >= old && size < unsafe.Sizeof(v) {
		copy(unsafe.Slice((*byte)(unsafe.Pointer(&v)), size), unsafe.Slice((*byte)(unsafe.Pointer(p)), size))
		return v, nil
	}
	return readOptions(p, name)
}

// checkOut checks the size field of the caller-allocated output struct at
// p, of which this library writes the first known bytes.
func checkOut[T any](p *T, name string) error {
	if p == nil {
		return argError("%s is NULL", name)
	}
	var v T
	return checkSize(unsafe.Pointer(p), unsafe.Sizeof(v), name, false)
}

func checkSize(p unsafe.Pointer, known uintptr, name string, zeroTail bool) error {
	size := uintptr(*(*C.size_t)(p))
	switch {
	case size == 0:
		return argError("%s.size is 0: set it to sizeof(%s)", name, name)
	case size < known:
		return argError("%s.size = %d is smaller than sizeof(%s) = %d of ABI version %d: set size = sizeof(%s)", name, size, name, known, abiVersion, name)
	case size > maxStructSize:
		return argError("%s.size = %d is not a struct size: set it to sizeof(%s)", name, size, name)
	}
	if zeroTail {
		for i, b := range unsafe.Slice((*byte)(p), size)[known:] {
			if b != 0 {
				return argError("%s of %d bytes has a non-zero byte at offset %d, past the %d bytes of ABI version %d: it sets an option this library does not have", name, size, known+uintptr(i), known, abiVersion)
			}
		}
	}
	return nil
}

// maxElems bounds the length of a C array: 2^44 doubles are 128 TiB, the
// whole user address space of x86-64.
const maxElems = 1 << 44

// codeIndex returns the index of code in codes, the table of a C enum's
// values in the order of the Go type's, or an error naming the field and
// the macros it takes.
func codeIndex(codes []C.int32_t, code C.int32_t, field, macros string) (int, error) {
	if i := slices.Index(codes, code); i >= 0 {
		return i, nil
	}
	return 0, argError("%s = %d is not a %s value", field, int32(code), macros)
}

// count checks that the sizes are positive and that their product fits,
// and returns the product. names name the sizes in messages.
func count(names []string, sizes ...C.int64_t) (int, error) {
	n := int64(1)
	for i, s := range sizes {
		if s <= 0 {
			return 0, argError("%s = %d, want at least 1", names[i], int64(s))
		}
		if int64(s) > maxElems/n {
			return 0, argError("%s = %d makes the array too large", names[i], int64(s))
		}
		n *= int64(s)
	}
	return int(n), nil
}

// doubles views the n doubles at p as a Go slice, without copying; p must
// not be NULL unless n is 0. name names the array in messages.
func doubles(p *C.double, n int, name string) ([]float64, error) {
	if n == 0 {
		return nil, nil
	}
	if p == nil {
		return nil, argError("%s is NULL", name)
	}
	return unsafe.Slice((*float64)(unsafe.Pointer(p)), n), nil
}

// optionalDoubles is doubles for an array that may be NULL (nil result).
func optionalDoubles(p *C.double, n int, name string) ([]float64, error) {
	if p == nil {
		return nil, nil
	}
	return doubles(p, n, name)
}

// copyBounds returns copies of the optional bound arrays of d entries.
func copyBounds(lower, upper *C.double, d int, name string) (lo, hi []float64, err error) {
	l, err := optionalDoubles(lower, d, name+".lower")
	if err != nil {
		return nil, nil, err
	}
	u, err := optionalDoubles(upper, d, name+".upper")
	if err != nil {
		return nil, nil, err
	}
	return clone(l), clone(u), nil
}

func clone(x []float64) []float64 {
	if x == nil {
		return nil
	}
	return append([]float64(nil), x...)
}

// splitRows cuts x into k equal consecutive parts.
func splitRows(x []float64, k int) [][]float64 {
	n := len(x) / k
	out := make([][]float64, k)
	for i := range out {
		out[i] = x[i*n : (i+1)*n : (i+1)*n]
	}
	return out
}

// flag converts a C boolean.
func flag(v C.int32_t) bool { return v != 0 }

// finiteOrZero rejects NaN in a double option (zero means default).
func checkFinite(v C.double, name string) error {
	if math.IsNaN(float64(v)) {
		return argError("%s is NaN", name)
	}
	return nil
}
