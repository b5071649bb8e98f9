package flow

import (
	"bytes"
	"hash/crc32"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestMarshalRoundTrip checks that LogProb, Forward and Sample are
// bitwise identical after a round trip, with and without bounds and for
// flows with partial frames (Directions < d) and with a scale layer.
func TestMarshalRoundTrip(t *testing.T) {
	tg := funnelTarget(5)
	scaled := 0
	for _, s := range []*Settings{
		{Seed: 1},
		{Seed: 2, Directions: 3},
		{Seed: 3, Lower: []float64{-4, -30, -30, -30, math.Inf(-1)}, Upper: []float64{4, 30, 30, math.Inf(1), 30}},
		{Seed: 4, Scale: Off},
	} {
		f, rng := fitTarget(t, tg, 3000, s)
		if len(f.layers) > 0 && f.layers[0].scale != nil {
			scaled++
		}
		data, err := f.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		var g Flow
		if err := g.UnmarshalBinary(data); err != nil {
			t.Fatal(err)
		}
		if g.Dim() != f.Dim() || g.Layers() != f.Layers() || !slices.Equal(g.Warnings(), f.Warnings()) {
			t.Fatalf("round trip changed dim/layers/warnings: %d/%d/%v vs %d/%d/%v", g.Dim(), g.Layers(), g.Warnings(), f.Dim(), f.Layers(), f.Warnings())
		}
		again, err := g.MarshalBinary()
		if err != nil || !bytes.Equal(again, data) {
			t.Fatal("re-marshalled bytes differ")
		}
		n := 2000
		x := tg.sample(rng, n)
		x[3] = 1e6 // far in a tail
		a, b := make([]float64, n), make([]float64, n)
		f.LogProb(a, x)
		g.LogProb(b, x)
		for i := range a {
			if math.Float64bits(a[i]) != math.Float64bits(b[i]) {
				t.Fatalf("settings %+v: LogProb differs at %d: %v vs %v", *s, i, a[i], b[i])
			}
		}
		sa, sb := make([]float64, n*5), make([]float64, n*5)
		f.Sample(sa, a, rand.New(rand.NewPCG(9, 9)))
		g.Sample(sb, b, rand.New(rand.NewPCG(9, 9)))
		if !slices.Equal(sa, sb) || !slices.Equal(a, b) {
			t.Fatal("Sample differs after a round trip")
		}
	}
	if scaled == 0 {
		t.Error("no flow with a scale layer to round-trip")
	}
}

// TestUnmarshalGarbage checks that corrupt or foreign data give errors,
// never a panic or a silently wrong flow.
func TestUnmarshalGarbage(t *testing.T) {
	f, _ := fitTarget(t, funnelTarget(3), 2000, &Settings{Seed: 1})
	data, err := f.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(3, 3))
	random := make([]byte, 500)
	for i := range random {
		random[i] = byte(rng.Uint32())
	}
	cases := map[string][]byte{
		"empty":     nil,
		"random":    random,
		"magic":     []byte("GBSFLOW\x00 and then nonsense"),
		"truncated": data[:len(data)/2],
		"no crc":    data[:len(data)-4],
	}
	flipped := slices.Clone(data)
	flipped[len(flipped)/3] ^= 0x10
	cases["flipped byte"] = flipped
	future := slices.Clone(data[:len(data)-4])
	future[8] = formatVersion + 1
	cases["future version"] = append(future, crcBytes(future)...)
	for name, b := range cases {
		var g Flow
		if err := g.UnmarshalBinary(b); err == nil {
			t.Errorf("%s: no error", name)
		} else {
			t.Logf("%s: %v", name, err)
		}
	}
	// Every truncation fails cleanly.
	for n := 0; n < len(data); n += 1 + n/7 {
		var g Flow
		if g.UnmarshalBinary(data[:n]) == nil {
			t.Fatalf("truncation to %d bytes accepted", n)
		}
	}
	// A valid checksum over invalid content is caught by validation.
	var w writer
	w.b = append(w.b, formatMagic...)
	w.u32(formatVersion)
	w.u32(2)
	w.u8(0)
	w.f64s([]float64{0, 0, 1, 0, 0, 1, 1, 0, 0, 1})
	w.u32(1) // one layer with a non-orthonormal frame
	w.u8(0)
	w.u32(2)
	w.f64s([]float64{1, 1, 0, 1})
	w.u8(0)
	w.u8(0)
	w.u32(0)
	var g Flow
	if err := g.UnmarshalBinary(append(w.b, crcBytes(w.b)...)); err == nil {
		t.Error("non-orthonormal frame accepted")
	} else {
		t.Logf("bad frame: %v", err)
	}
	var zero Flow
	if _, err := zero.MarshalBinary(); err == nil {
		t.Error("MarshalBinary of an unfitted flow: no error")
	}
}

func crcBytes(b []byte) []byte {
	var w writer
	w.u32(crc32.ChecksumIEEE(b))
	return w.b
}
