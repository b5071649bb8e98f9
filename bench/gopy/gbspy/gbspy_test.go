package gbspy

import (
	"math"
	"math/rand/v2"
	"testing"
)

func draws(n, d int) []float64 {
	rng := rand.New(rand.NewPCG(1, 2))
	x := make([]float64, n*d)
	for i := range x {
		x[i] = rng.NormFloat64()
	}
	return x
}

// The callback path (through Batch, as Python sees it) gives the same ln Z
// as the Go density, and the standard normal's ln Z = 0.
func TestEvidenceCallback(t *testing.T) {
	const n, d = 2000, 4
	x := draws(n, d)
	o := &Options{Method: "warp3", NQ: 2000, BatchSize: 100, Seed: 1, Independent: true}
	ref, err := EvidenceGaussian(x, 1, d, o)
	if err != nil {
		t.Fatal(err)
	}
	calls := 0
	cb := func(b *Batch) int {
		calls++
		pts := Float64s(b.Points())
		out := make([]float64, b.N)
		for i := range out {
			v := -0.5 * float64(b.D) * math.Log(2*math.Pi)
			for k := 0; k < b.D; k++ {
				v -= 0.5 * pts[i*b.D+k] * pts[i*b.D+k]
			}
			out[i] = v
		}
		b.SetLogP(Bytes(out))
		return 0
	}
	r, err := Evidence(cb, x, 1, d, o)
	if err != nil {
		t.Fatal(err)
	}
	if r.LogZ != ref.LogZ || r.NCall != ref.NCall || calls != (ref.NCall+99)/100 {
		t.Errorf("callback: ln Z %v, %d points in %d calls; Go: ln Z %v, %d points", r.LogZ, r.NCall, calls, ref.LogZ, ref.NCall)
	}
	if math.Abs(r.LogZ) > 5*r.LogZErr+0.02 {
		t.Errorf("ln Z = %v ± %v, want 0", r.LogZ, r.LogZErr)
	}
	if _, err := Evidence(func(*Batch) int { return 3 }, x, 1, d, o); err == nil {
		t.Error("a failing callback did not fail the call")
	}
}

func TestFlowBytes(t *testing.T) {
	const n, d = 1000, 3
	x := draws(n, d)
	if got := Float64s(Bytes(x)); &got[0] != &x[0] || len(got) != len(x) {
		t.Fatal("Bytes/Float64s copied or changed the length")
	}
	f, err := FitFlow(x, d, 1, 1)
	if err != nil {
		t.Fatal(err)
	}
	data, err := f.f.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	g, err := LoadFlow(data)
	if err != nil {
		t.Fatal(err)
	}
	a, b := f.LogProb(x), g.LogProb(x)
	for i := range a {
		if a[i] != b[i] || math.IsNaN(a[i]) {
			t.Fatalf("log q %d: %v after a round trip, %v before", i, b[i], a[i])
		}
	}
	if s := Sum(x[:3]); s != x[0]+x[1]+x[2] {
		t.Errorf("Sum = %v", s)
	}
}
