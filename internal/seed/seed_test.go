package seed

import "testing"

// Streams of one seed, and the same stream of neighbouring seeds, are
// unrelated: their first draws differ, and a stream repeats itself.
func TestStreams(t *testing.T) {
	seen := map[uint64]string{}
	for s := uint64(0); s < 4; s++ {
		for k := uint64(0); k < 4; k++ {
			v := New(s, k).Uint64()
			if v != New(s, k).Uint64() {
				t.Fatalf("seed %d stream %d is not reproducible", s, k)
			}
			if prev, ok := seen[v]; ok {
				t.Errorf("seed %d stream %d repeats %s", s, k, prev)
			}
			seen[v] = "another stream"
			if Derive(s, k) == Derive(s, k+1) || Derive(s, k) == Derive(s+1, k) {
				t.Errorf("derived seeds of %d, %d collide with a neighbour", s, k)
			}
		}
	}
}
