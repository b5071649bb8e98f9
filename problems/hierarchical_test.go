package problems

import (
	"math"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// TestHierarchicalLogZQuadrature: one group (d = 2) by direct quadrature.
func TestHierarchicalLogZQuadrature(t *testing.T) {
	p := HierarchicalNormal(1, 3)
	z := gl2(problem2(p), [2]float64{-40, -12}, [2]float64{40, 12}, 80, 20)
	if math.Abs(math.Log(z)-p.LogZ) > 1e-9 {
		t.Errorf("LogZ = %.12f, quadrature %.12f", p.LogZ, math.Log(z))
	}
}

// TestHierarchicalLogZLaplace: log p is exactly quadratic, so ln Z =
// log p(x*) + (d/2) ln 2π - ½ ln det H at the mode x*, with the Hessian H
// taken from differences of the gradient (exact up to rounding for a
// quadratic) and x* = H⁻¹ ∇log p(0). An independent route to the closed
// form at 60 groups.
func TestHierarchicalLogZLaplace(t *testing.T) {
	p := HierarchicalNormal(60, 7)
	d := p.Dim
	g0 := make([]float64, d)
	x := make([]float64, d)
	p.LogProbGrad(g0, x)
	h := mat.NewDense(d, d, nil) // -Hessian
	g := make([]float64, d)
	for k := 0; k < d; k++ {
		x[k] = 1
		p.LogProbGrad(g, x)
		x[k] = 0
		for i := range g {
			h.Set(i, k, g0[i]-g[i])
		}
	}
	var lu mat.LU
	lu.Factorize(h)
	var xs mat.VecDense
	if err := lu.SolveVecTo(&xs, false, mat.NewVecDense(d, g0)); err != nil {
		t.Fatal(err)
	}
	logDet, sign := lu.LogDet()
	if sign <= 0 {
		t.Fatal("Hessian not negative definite")
	}
	want := p.LogProb(xs.RawVector().Data) + 0.5*float64(d)*math.Log(2*math.Pi) - 0.5*logDet
	if math.Abs(want-p.LogZ) > 1e-8*math.Max(1, math.Abs(want)) {
		t.Errorf("LogZ = %.12f, Laplace (exact for a Gaussian) %.12f", p.LogZ, want)
	}
	// The exact sampler's draws have the mode as their mean.
	const n = 20000
	draws := make([]float64, n*d)
	p.Sample(draws, testRand(3))
	for k := 0; k < d; k += 17 {
		var m float64
		for i := 0; i < n; i++ {
			m += draws[i*d+k] / n
		}
		// Posterior sds are below 1 (η) and 5 (μ, far less with 60
		// groups): 6 standard errors of the mean are below 0.05.
		if math.Abs(m-xs.AtVec(k)) > 0.05 {
			t.Errorf("coordinate %d: mean of exact draws %.4f, posterior mean %.4f", k, m, xs.AtVec(k))
		}
	}
}
