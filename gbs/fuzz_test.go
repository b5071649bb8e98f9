package gbs

import (
	"encoding/binary"
	"math"
	"testing"
)

// fuzzFloats reads float64s from b, 8 bytes each.
func fuzzFloats(b []byte) []float64 {
	out := make([]float64, len(b)/8)
	for i := range out {
		out[i] = math.Float64frombits(binary.LittleEndian.Uint64(b[8*i:]))
	}
	return out
}

// fuzzSamples builds samples of dimension d whose chain c holds shape[c]
// values (ragged when the entries differ), taken in turn from values (or
// small integers when there are none); logpShape, if not empty, gives the
// log p lengths of len(logpShape)-1 chains the same way.
func fuzzSamples(d int8, shape, logpShape, values []byte) *Samples {
	v := fuzzFloats(values)
	next := 0
	take := func() float64 {
		next++
		if len(v) == 0 {
			return float64(next % 7)
		}
		return v[next%len(v)]
	}
	s := &Samples{Dim: int(d)}
	for c := 0; c < len(shape) && c < 8; c++ {
		ch := make([]float64, shape[c])
		for i := range ch {
			ch[i] = take()
		}
		s.Chains = append(s.Chains, ch)
	}
	if len(logpShape) > 0 {
		s.LogP = [][]float64{}
		for c := 1; c < len(logpShape) && c < 9; c++ {
			lp := make([]float64, logpShape[c])
			for i := range lp {
				lp[i] = -take() * take()
			}
			s.LogP = append(s.LogP, lp)
		}
	}
	return s
}

// FuzzSamplesLayout checks the layout checks of Evidence (Samples.validate
// and checkBounds) against arbitrary shapes, values and bounds: they must
// not panic, and what they accept must be what the estimators assume:
// equal chains of whole draws, finite values strictly inside the bounds,
// log p of matching shape, and a split whose halves hold every draw.
func FuzzSamplesLayout(f *testing.F) {
	f.Add(int8(2), []byte{8, 8}, []byte{}, []byte{}, []byte{}, []byte{})
	f.Add(int8(1), []byte{10}, []byte{0, 10}, []byte{}, []byte{}, []byte{})
	f.Add(int8(3), []byte{9, 6}, []byte{0, 3}, []byte{}, []byte{}, []byte{})
	f.Add(int8(0), []byte{0}, []byte{}, []byte{}, []byte{}, []byte{})
	nan := binary.LittleEndian.AppendUint64(nil, math.Float64bits(math.NaN()))
	inf := binary.LittleEndian.AppendUint64(nil, math.Float64bits(math.Inf(1)))
	f.Add(int8(1), []byte{4}, []byte{}, nan, []byte{}, []byte{})
	f.Add(int8(2), []byte{8}, []byte{}, []byte{}, append(nan, nan...), inf)
	f.Add(int8(1), []byte{6}, []byte{}, []byte{}, binary.LittleEndian.AppendUint64(nil, math.Float64bits(2)), []byte{})
	f.Fuzz(func(t *testing.T, d int8, shape, logpShape, values, lower, upper []byte) {
		s := fuzzSamples(d, shape, logpShape, values)
		var lo, hi []float64
		if len(lower) > 0 {
			lo = fuzzFloats(lower)
		}
		if len(upper) > 0 {
			hi = fuzzFloats(upper)
		}
		if s.validate() != nil || checkBounds(lo, hi, s) != nil {
			return
		}
		dim, m := s.Dim, s.Draws()
		for c, ch := range s.Chains {
			if len(ch) != m*dim {
				t.Fatalf("accepted chain %d of %d values for %d draws of dimension %d", c, len(ch), m, dim)
			}
			for i, v := range ch {
				j := i % dim
				if math.IsNaN(v) || math.IsInf(v, 0) || (lo != nil && !(v > lo[j])) || (hi != nil && !(v < hi[j])) {
					t.Fatalf("accepted value %v at coordinate %d, bounds %v %v", v, j, lo, hi)
				}
			}
		}
		if s.LogP != nil {
			if len(s.LogP) != len(s.Chains) {
				t.Fatalf("accepted log p of %d chains for %d", len(s.LogP), len(s.Chains))
			}
			for _, lp := range s.LogP {
				if len(lp) != m {
					t.Fatalf("accepted log p of %d values for %d draws", len(lp), m)
				}
			}
		}
		h, err := splitHalves(s)
		if err != nil {
			return
		}
		if len(h.fit)%dim != 0 || len(h.use)%dim != 0 || len(h.fit)+len(h.use) != len(s.Chains)*m*dim {
			t.Fatalf("split of %d chains × %d draws into %d and %d values", len(s.Chains), m, len(h.fit), len(h.use))
		}
		if s.LogP != nil && (len(h.fitLogP)*dim != len(h.fit) || len(h.useLogP)*dim != len(h.use)) {
			t.Fatalf("split log p of %d and %d for %d and %d values", len(h.fitLogP), len(h.useLogP), len(h.fit), len(h.use))
		}
	})
}
