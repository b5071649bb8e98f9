package flow

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/gbs-evidence/gbs/problems"
)

// klPQ estimates KL(p‖q) on the m draws x of the normalized p.
func klPQ(f *Flow, p *problems.Problem, x []float64, m int) float64 {
	lq := make([]float64, m)
	f.LogProb(lq, x)
	var kl float64
	for i := 0; i < m; i++ {
		kl += (p.LogProb(x[i*p.Dim:(i+1)*p.Dim]) - p.LogZ - lq[i]) / float64(m)
	}
	return kl
}

// TestShrinkageFewPointsPerDimension fits a Gaussian (whitening only) to
// 1500 draws of a 100-d correlated Gaussian (condition number 100): the
// sample covariance's excess KL is about d²/(4n) = 2 nats, above
// shrinkMinKL, so shrinkage is tried; it must be chosen and bring q
// measurably closer to p than the sample covariance of the same points.
func TestShrinkageFewPointsPerDimension(t *testing.T) {
	const d, n = 100, 1500
	p := problems.CorrelatedGaussian(d, problems.CorrelatedSeed, 0)
	x := make([]float64, n*d)
	p.Sample(x, rand.New(rand.NewPCG(3, 4)))
	shrunk, err := Fit(x, d, nil, &Settings{MaxLayers: 1, Seed: 5})
	if err != nil {
		t.Fatal(err)
	}
	if !shrunk.ShrunkCovariance() {
		t.Fatalf("shrinkage not chosen at d = %d with %d points", d, n)
	}
	// On the same training rows, the shrunk and the sample covariance.
	r, _ := (&Settings{Seed: 5}).resolve(d)
	fd, err := prepareFitData(x, d, nil, nil, r)
	if err != nil {
		t.Fatal(err)
	}
	gauss := func(cc covChoice) *Flow {
		wt, err := fitWhitening(slices.Clone(fd.zt), fd.nt, d, nil, cc, WhitenCholesky, 1)
		if err != nil {
			t.Fatal(err)
		}
		g := &Flow{d: d, wt: wt}
		g.init()
		return g
	}
	if gauss(covChoice{}).wt.shrunk {
		t.Fatal("shrinkage without held-out points")
	}
	g, s := gauss(covChoice{decided: true}), gauss(covChoice{decided: true, shrink: true})
	const m = 4000
	fresh := make([]float64, m*d)
	p.Sample(fresh, rand.New(rand.NewPCG(6, 7)))
	klShrunk := klPQ(s, p, fresh, m)
	klPlain := klPQ(g, p, fresh, m)
	klFit := klPQ(shrunk, p, fresh, m)
	t.Logf("KL(p‖q): sample covariance %.3f, shrunk %.3f (d²/(4n) = %.2f); Fit (%d layers, refitted on all points when none) %.3f",
		klPlain, klShrunk, float64(d*d)/(4*float64(fd.nt)), shrunk.Layers(), klFit)
	// Expected gain about a fifth of d²/(4n); the Monte Carlo error of the
	// paired difference on the same 4000 draws is a few hundredths.
	if !(klShrunk < klPlain-0.15) {
		t.Errorf("shrinkage did not help: KL %.3f against %.3f", klShrunk, klPlain)
	}
	// No layer on Gaussian data: Fit refits the Gaussian on all 1500
	// points (a fifth more than the 1200 training points), expected to
	// lower the excess KL by about a fifth.
	if shrunk.Layers() == 0 && !(klFit < klShrunk-0.15) {
		t.Errorf("refitting on all points did not help: KL %.3f against %.3f", klFit, klShrunk)
	}
}

// TestShrinkageNotTriedWithManyPoints: with many points per dimension
// the sample covariance is kept (and with it every estimate at low d).
func TestShrinkageNotTriedWithManyPoints(t *testing.T) {
	const d, n = 8, 2000
	p := problems.CorrelatedGaussian(d, problems.CorrelatedSeed, 0)
	x := make([]float64, n*d)
	p.Sample(x, rand.New(rand.NewPCG(3, 4)))
	f, err := Fit(x, d, nil, &Settings{Seed: 5})
	if err != nil {
		t.Fatal(err)
	}
	if f.ShrunkCovariance() {
		t.Error("shrinkage chosen at d = 8 with 2000 points")
	}
}

// TestShrinkEigenvaluesOracle checks the closed-form estimates against
// their oracle values u_iᵀΣu_i and 1/(u_iᵀΣ⁻¹u_i) on a covariance whose
// eigenvectors are the axes, so that both are cheap to compute.
func TestShrinkEigenvaluesOracle(t *testing.T) {
	const d, n = 200, 1600
	rng := rand.New(rand.NewPCG(8, 9))
	sd := make([]float64, d)
	for j := range sd {
		sd[j] = math.Pow(10, -0.5+float64(j)/float64(d-1)) // variances 0.1 .. 10
	}
	x := make([]float64, n*d)
	for i := range x {
		x[i] = rng.NormFloat64() * sd[i%d]
	}
	mean, total := columnMeans(x, n, d, nil)
	scale := make([]float64, d)
	for j := range scale {
		scale[j] = 1
	}
	cov := scaledCovariance(x, n, d, nil, mean, scale, total, 1)
	var eig mat.EigenSym
	if !eig.Factorize(cov, true) {
		t.Fatal("eigendecomposition failed")
	}
	lambda := eig.Values(nil)
	delta, ok := shrinkEigenvalues(lambda, n)
	if !ok {
		t.Fatal("shrinkage formula refused")
	}
	var u mat.Dense
	eig.VectorsTo(&u)
	var worst float64
	for k := 0; k < d; k++ {
		var a, b float64
		for j := 0; j < d; j++ {
			v := u.At(j, k)
			a += v * v * sd[j] * sd[j]
			b += v * v / (sd[j] * sd[j])
		}
		oracle := math.Sqrt(a / b)
		worst = math.Max(worst, math.Abs(math.Log(delta[k]/oracle)))
	}
	// The estimates are consistent as d, n grow with d/n fixed; at d = 200
	// they are within a few per cent of the oracle (the sample
	// eigenvalues themselves are off by up to a factor of 2 here).
	t.Logf("largest |log(estimate/oracle)| %.3f; sample eigenvalues %.3g .. %.3g", worst, lambda[0], lambda[d-1])
	if worst > 0.2 {
		t.Errorf("shrunk eigenvalues differ from the oracle by up to a factor %.3f", math.Exp(worst))
	}
}
