// Package numtest holds what several packages' tests need to compare
// floating-point results recorded on one machine with another's.
package numtest

import (
	"math"
	"testing"
)

// FusesMultiplyAdd reports whether this build computes x*y + z with one
// rounding: 1 - 2^-60 is x*y exactly, which rounds to 1 alone. Where the
// compiler fuses it (arm64, amd64 at GOAMD64=v3) every flow fit and NUTS
// trajectory rounds differently, and iterated fits and chaotic
// trajectories carry that to other draws.
func FusesMultiplyAdd() bool {
	return mulAdd(1+0x1p-30, 1-0x1p-30, -1) != 0
}

//go:noinline
func mulAdd(x, y, z float64) float64 { return x*y + z }

// CheckUnchanged fails t unless ln Z got (error bar sigma) is the value
// want recorded for the same seed. The same operations in the same order
// give the same bits (the parallel sums are cut in parts fixed by the
// data, not by GOMAXPROCS); allowed is twice the bridge root finder's
// stopping tolerance, 1e-11 relative, by which an input changed in its
// last bits can move the root. A change of draws or streams moves ln Z by
// about its error bar, >= 1e-3: far above this. Where multiply-add is
// fused the values were recorded with other roundings, and only the
// estimate's accuracy can be compared (within 4 sigma).
func CheckUnchanged(t *testing.T, name string, got, sigma, want float64) {
	t.Helper()
	if FusesMultiplyAdd() {
		if !(math.Abs(got-want) < 4*sigma) {
			t.Errorf("%s: ln Z = %.17g ± %.3g, recorded %.17g (fused multiply-add: compared within 4 sigma)", name, got, sigma, want)
		}
		return
	}
	if d := math.Abs(got - want); !(d <= 2e-11*math.Max(1, math.Abs(want))) {
		t.Errorf("%s: ln Z = %.17g, recorded %.17g (differs by %.3g)", name, got, want, d)
	}
}
