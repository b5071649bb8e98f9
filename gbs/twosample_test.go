package gbs

import (
	"math"
	"testing"
)

func TestKSDistance(t *testing.T) {
	// a's distribution function leads b's by 2/4 - 0/3 at 2, then trails.
	a := []float64{4, 1, 2, 3}
	b := []float64{5, 6, 3}
	dist, at, fa, fb := ksDistance(a, b)
	// At 3: F_a = 3/4, F_b = 1/3, distance 5/12; at 4: 1 - 1/3 = 2/3.
	if math.Abs(dist-2.0/3) > 1e-15 || at != 4 || fa != 1 || math.Abs(fb-1.0/3) > 1e-15 {
		t.Errorf("ksDistance = %v at %v (F %v, %v), want 2/3 at 4 (F 1, 1/3)", dist, at, fa, fb)
	}
	// Ties count on both sides at once: equal samples are at distance 0.
	if d, _, _, _ := ksDistance([]float64{1, 1, 2}, []float64{2, 1, 1}); d != 0 {
		t.Errorf("distance of equal samples = %v", d)
	}
	// NaNs are dropped (a NaN would stop the merge from advancing);
	// -Inf (outside the support) is a value.
	if d, _, _, _ := ksDistance([]float64{math.NaN(), math.Inf(-1), 1}, []float64{1, math.NaN(), math.Inf(-1)}); d != 0 {
		t.Errorf("distance with NaNs and -Inf = %v", d)
	}
}

func TestKSLimit(t *testing.T) {
	// 2 exp(-2 λ²) = alpha at λ = D √(n1 n2/(n1+n2)).
	for _, c := range []struct{ n1, n2, alpha float64 }{{1000, 1000, 1e-3}, {50, 5000, 0.05}} {
		d := ksLimit(c.n1, c.n2, c.alpha)
		lam := d * math.Sqrt(c.n1*c.n2/(c.n1+c.n2))
		if got := 2 * math.Exp(-2*lam*lam); math.Abs(got-c.alpha) > 1e-12*c.alpha {
			t.Errorf("ksLimit(%v, %v, %v) = %v: tail %v", c.n1, c.n2, c.alpha, d, got)
		}
	}
}
