package flow

import (
	"hash/crc32"
	"math"
	"runtime"
	"strings"
	"testing"
)

// craftHeader writes the header and an identity whitening of a
// d-dimensional unbounded flow, the start of a crafted file.
func craftHeader(d int) *writer {
	var w writer
	w.b = append(w.b, formatMagic...)
	w.u32(formatVersion)
	w.u32(uint32(d))
	w.u8(0) // unbounded
	eye := make([]float64, d*d)
	for i := 0; i < d; i++ {
		eye[i*d+i] = 1
	}
	w.f64s(make([]float64, d))
	w.f64s(eye)
	w.f64s(eye)
	return &w
}

// seal appends the checksum.
func (w *writer) seal() []byte {
	w.u32(crc32.ChecksumIEEE(w.b))
	return w.b
}

// minimalLayers is a valid d = 1 flow of n sliced layers of the least
// size a layer takes (one direction, a two-knot identity spline).
func minimalLayers(n int) []byte {
	w := craftHeader(1)
	w.u32(uint32(n))
	for i := 0; i < n; i++ {
		w.u8(0) // sliced
		w.u32(1)
		w.f64(1)
		w.u8(1)
		w.spline(&spline{x: []float64{-1, 1}, y: []float64{-1, 1}, d: []float64{1, 1}})
	}
	w.u32(0)
	return w.seal()
}

// manyWarnings is a flow with n warnings of the given text.
func manyWarnings(n int, text string) []byte {
	w := craftHeader(2)
	w.u32(0) // no layers
	w.u32(uint32(n))
	for i := 0; i < n; i++ {
		w.u32(uint32(len(text)))
		w.b = append(w.b, text...)
	}
	return w.seal()
}

// conditionalLayers is a d-dimensional flow of n conditional layers, each
// mapping coordinate 1 given coordinate 0 with one bin.
func conditionalLayers(d, n int) []byte {
	w := craftHeader(d)
	w.u32(uint32(n))
	for i := 0; i < n; i++ {
		w.u8(1)
		w.indices([]int{0})
		w.indices([]int{1})
		w.f64s([]float64{0, 0, 0})
		w.u32(1)
		w.f64(0)
		w.spline(&spline{x: []float64{-1, 1}, y: []float64{-1, 1}, d: []float64{1, 1}})
	}
	w.u32(0)
	return w.seal()
}

// decodeAlloc decodes data and returns the error and the bytes allocated.
// MemStats.TotalAlloc counts every goroutine's allocations, and other
// goroutines (the runtime's, or a test's left running) can only add to
// it: a measurement above limit is repeated, up to allocTries decodes,
// and the least is returned, which bounds decode's own allocation from
// above and is exact unless every try was disturbed.
func decodeAlloc(data []byte, limit uint64) (error, uint64) {
	var err error
	least := uint64(math.MaxUint64)
	for try := 0; try < allocTries && least > limit; try++ {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		_, err = decode(data)
		runtime.ReadMemStats(&after)
		least = min(least, after.TotalAlloc-before.TotalAlloc)
	}
	return err, least
}

// allocTries is the number of decodes decodeAlloc measures.
const allocTries = 3

// maxAllocRatio bounds the bytes a decode allocates per byte of the file
// (plus allocFloor). Decoded items are larger than their encoding: a
// spline's knots take 24 bytes in the file and about 110 decoded (x, y,
// d, four derived arrays, two bin lookups), and a minimal layer's 66
// bytes become about 700 with its slice headers, derived matrices and
// chain links. Measured: 10.5× for a file of minimal sliced layers, 8.1×
// for minimal conditional layers.
const (
	maxAllocRatio = 12
	allocFloor    = 1 << 16
)

// TestDecodeBoundedByFileSize crafts checksum-valid files that declare
// many items and checks that decoding them either fails or allocates at
// most maxAllocRatio times the file's size.
func TestDecodeBoundedByFileSize(t *testing.T) {
	for _, tc := range []struct {
		name    string
		data    []byte
		wantErr string
	}{
		{"5e6 empty warnings", manyWarnings(5e6, ""), "5000000 warnings"},
		{"1000 one-byte warnings", manyWarnings(1000, "w"), ""},
		{"1025 warnings", manyWarnings(1025, "w"), "1025 warnings"},
		{"2e5 minimal layers", minimalLayers(2e5), ""},
		{"5e4 conditional layers, d = 256", conditionalLayers(256, 5e4), ""},
	} {
		err, alloc := decodeAlloc(tc.data, maxAllocRatio*uint64(len(tc.data))+allocFloor)
		switch {
		case tc.wantErr == "" && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
			t.Errorf("%s: got error %v, want one containing %q", tc.name, err, tc.wantErr)
		}
		ratio := float64(alloc) / float64(len(tc.data))
		t.Logf("%s: %d bytes, %d allocated (%.1f×)", tc.name, len(tc.data), alloc, ratio)
		if alloc > maxAllocRatio*uint64(len(tc.data))+allocFloor {
			t.Errorf("%s: decoding %d bytes allocated %d (%.1f×, want at most %d×)", tc.name, len(tc.data), alloc, ratio, maxAllocRatio)
		}
	}
}

// Counts past what the file holds fail before any allocation for them.
func TestDecodeDeclaredCounts(t *testing.T) {
	w := craftHeader(1)
	w.u32(1 << 30) // layers
	w.u32(0)
	err, alloc := decodeAlloc(w.seal(), allocFloor)
	if err == nil || !strings.Contains(err.Error(), "layers exceed") {
		t.Errorf("2^30 layers: got %v", err)
	}
	if alloc > allocFloor {
		t.Errorf("2^30 layers: %d bytes allocated", alloc)
	}
}
