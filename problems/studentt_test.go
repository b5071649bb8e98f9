package problems

import (
	"math"
	"math/rand/v2"
	"testing"
)

// StudentT is normalized (at d = 1, nu = 1 it is the standard Cauchy,
// whose density at 0 is 1/π; at nu = 2, d = 2 its density at 0 is 1/(2π)),
// its gradient matches finite differences, and its draws have the
// covariance nu/(nu-2) I.
func TestStudentT(t *testing.T) {
	if got := StudentT(1, 1).LogProb([]float64{0}); math.Abs(got+math.Log(math.Pi)) > 1e-13 {
		t.Errorf("Cauchy log density at 0 = %v, want %v", got, -math.Log(math.Pi))
	}
	if got := StudentT(2, 2).LogProb([]float64{0, 0}); math.Abs(got+math.Log(2*math.Pi)) > 1e-13 {
		t.Errorf("d = 2, nu = 2: log density at 0 = %v, want %v", got, -math.Log(2*math.Pi))
	}
	p := StudentT(3, 5)
	x := []float64{0.3, -1.2, 2.5}
	g := make([]float64, 3)
	p.LogProbGrad(g, x)
	for i := range x {
		const h = 1e-6
		xp, xm := append([]float64(nil), x...), append([]float64(nil), x...)
		xp[i] += h
		xm[i] -= h
		fd := (p.LogProb(xp) - p.LogProb(xm)) / (2 * h)
		if math.Abs(fd-g[i]) > 1e-7 {
			t.Errorf("gradient %d = %v, finite difference %v", i, g[i], fd)
		}
	}
	const n = 100000
	s := make([]float64, n*3)
	p.Sample(s, rand.New(rand.NewPCG(1, 2)))
	// The draws' |x|^2/3 (one value per draw: the coordinates share
	// their scale) has mean nu/(nu-2) and a finite variance for nu = 5.
	var m2, v2 float64
	for i := range n {
		r := (s[3*i]*s[3*i] + s[3*i+1]*s[3*i+1] + s[3*i+2]*s[3*i+2]) / 3
		m2 += r
		v2 += r * r
	}
	m2 /= n
	se := math.Sqrt((v2/n - m2*m2) / n)
	if want := 5.0 / 3; math.Abs(m2-want) > 4*se {
		t.Errorf("E x^2 = %.4f ± %.4f, want %.4f", m2, se, want)
	}
}
