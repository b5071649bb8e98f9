package flow

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"math/rand/v2"
	"testing"
)

// FuzzDecode decodes arbitrary bodies, sealed with a valid checksum so
// that the fuzzer reaches past it (the checksum itself is tested in
// TestUnmarshalGarbage). Decoding must never panic, must allocate at most
// maxAllocRatio times the file's size, and a flow it accepts must encode
// back to the same bytes (version 2) and evaluate and sample without
// panicking.
func FuzzDecode(f *testing.F) {
	rng := rand.New(rand.NewPCG(5, 5))
	x := make([]float64, 300*2)
	for i := range x {
		x[i] = rng.NormFloat64()
		if i%2 == 1 {
			x[i] = x[i-1]*x[i-1] + 0.3*x[i] // a banana: conditional layers help
		}
	}
	for _, s := range []*Settings{
		{Seed: 1},
		{Seed: 2, Layers: 2, Directions: 1},
		{Seed: 3, Lower: []float64{-10, -10}, Upper: []float64{10, 20}},
	} {
		fl, err := Fit(x, 2, nil, s)
		if err != nil {
			f.Fatal(err)
		}
		b, err := fl.MarshalBinary()
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b[:len(b)-4])
	}
	for _, b := range [][]byte{minimalLayers(3), conditionalLayers(3, 2), manyWarnings(3, "w")} {
		f.Add(b[:len(b)-4])
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		data := binary.LittleEndian.AppendUint32(bytes.Clone(body), crc32.ChecksumIEEE(body))
		err, alloc := decodeAlloc(data, maxAllocRatio*uint64(len(data))+allocFloor)
		if alloc > maxAllocRatio*uint64(len(data))+allocFloor {
			t.Fatalf("decoding %d bytes allocated %d (%.1f×)", len(data), alloc, float64(alloc)/float64(len(data)))
		}
		if err != nil {
			return
		}
		var fl Flow
		if err := fl.UnmarshalBinary(data); err != nil {
			t.Fatalf("decode accepted what UnmarshalBinary refuses: %v", err)
		}
		if binary.LittleEndian.Uint32(data[len(formatMagic):]) == formatVersion {
			again, err := fl.MarshalBinary()
			if err != nil || !bytes.Equal(again, data) {
				t.Fatalf("re-encoding differs (err %v)", err)
			}
		}
		d := fl.Dim()
		if d > 64 {
			return // evaluating is slow, and no different
		}
		pts := make([]float64, 4*d)
		lq := make([]float64, 4)
		fl.Sample(pts, lq, rand.New(rand.NewPCG(1, 1)))
		fl.LogProb(lq, pts)
		z, ld := make([]float64, 4*d), make([]float64, 4)
		fl.Forward(z, ld, pts)
		fl.Inverse(pts, ld, z)
	})
}
