package nuts

import (
	"context"
	"math"
	"math/rand/v2"
	"sort"
	"testing"

	"github.com/gbs-evidence/gbs/problems"
)

// A 100-d Gaussian with marginal variances spread log-uniformly over
// 1..100 (condition number 100) and nonzero means: the diagonal metric
// must learn the scales, and every coordinate's mean and variance must
// agree with the truth within 4 Monte Carlo standard errors.
func TestGaussian100Diag(t *testing.T) {
	const d = 100
	g := &gaussian{d: d, mu: make([]float64, d), prec: make([]float64, d)}
	vari := make([]float64, d)
	for i := range vari {
		vari[i] = math.Pow(100, float64(i)/(d-1))
		g.prec[i] = 1 / vari[i]
		g.mu[i] = math.Sin(float64(i))
	}
	r, err := Sample(context.Background(), g.logp, d, &Settings{Seed: 42})
	if err != nil {
		t.Fatal(err)
	}
	zm, zv := checkMoments(t, r, g.mu, vari, 4)
	// Over 100 coordinates the standardized errors should scatter like
	// N(0, 1): an RMS far from 1 means the MCSEs (the ESS) are wrong.
	if zm < 0.7 || zm > 1.4 || zv < 0.7 || zv > 1.4 {
		t.Errorf("RMS standardized error: mean %.2f, variance %.2f; want about 1", zm, zv)
	}
	for c, st := range r.Chains {
		if st.Divergences > 0 {
			t.Errorf("chain %d: %d divergences", c, st.Divergences)
		}
		if st.MeanAccept < 0.7 || st.MeanAccept > 0.97 {
			t.Errorf("chain %d: mean accept %.3f far from the 0.8 target", c, st.MeanAccept)
		}
		// The adapted inverse metric should track the variances.
		for j := range vari {
			if ratio := st.InvMetric[j] / vari[j]; ratio < 0.5 || ratio > 2 {
				t.Errorf("chain %d: inverse metric[%d] = %.3g, variance %.3g", c, j, st.InvMetric[j], vari[j])
				break
			}
		}
	}
	t.Logf("grad calls %d, step sizes %.3f %.3f, mean depth %.2f", r.GradCalls, r.Chains[0].StepSize, r.Chains[1].StepSize, r.Chains[0].MeanTreeDepth)
}

// A rotated 20-d Gaussian with condition number 100: strongly correlated,
// which the dense metric must learn.
func TestGaussianDenseRotated(t *testing.T) {
	const d = 20
	rng := rand.New(rand.NewPCG(7, 8))
	q := randomRotation(d, rng)
	lam := make([]float64, d) // covariance eigenvalues 1..100
	for i := range lam {
		lam[i] = math.Pow(100, float64(i)/(d-1))
	}
	cov := make([]float64, d*d)
	prec := make([]float64, d*d)
	for i := 0; i < d; i++ {
		for j := 0; j < d; j++ {
			for k := 0; k < d; k++ {
				cov[i*d+j] += q[i*d+k] * lam[k] * q[j*d+k]
				prec[i*d+j] += q[i*d+k] / lam[k] * q[j*d+k]
			}
		}
	}
	g := &gaussian{d: d, mu: make([]float64, d), prec: prec}
	for i := range g.mu {
		g.mu[i] = float64(i%3) - 1
	}
	r, err := Sample(context.Background(), g.logp, d, &Settings{Seed: 3, Metric: DenseMetric})
	if err != nil {
		t.Fatal(err)
	}
	vari := make([]float64, d)
	for i := range vari {
		vari[i] = cov[i*d+i]
	}
	checkMoments(t, r, g.mu, vari, 4)
	for c, st := range r.Chains {
		var num, den float64
		for i, v := range st.InvMetricDense {
			num += (v - cov[i]) * (v - cov[i])
			den += cov[i] * cov[i]
		}
		if rel := math.Sqrt(num / den); rel > 0.3 {
			t.Errorf("chain %d: dense inverse metric off the covariance by %.2f (relative Frobenius)", c, rel)
		}
		if st.MeanTreeDepth > 4 {
			t.Errorf("chain %d: mean tree depth %.2f: metric did not whiten the target", c, st.MeanTreeDepth)
		}
	}
}

// randomRotation returns a Haar-random orthogonal d×d matrix (row-major)
// by Gram-Schmidt on Gaussian columns.
func randomRotation(d int, rng *rand.Rand) []float64 {
	q := make([]float64, d*d)
	for k := 0; k < d; k++ {
		v := make([]float64, d)
		for i := range v {
			v[i] = rng.NormFloat64()
		}
		for j := 0; j < k; j++ {
			var s float64
			for i := range v {
				s += v[i] * q[i*d+j]
			}
			for i := range v {
				v[i] -= s * q[i*d+j]
			}
		}
		var n float64
		for _, x := range v {
			n += x * x
		}
		n = math.Sqrt(n)
		for i := range v {
			q[i*d+k] = v[i] / n
		}
	}
	return q
}

// banana is the 2-d banana of problems (A = I): log p = -((y1² - y2)²/0.01
// + (y1 - 1)²) on (-15, 15)², whose exact law is y1 ~ N(1, 1/2), y2 | y1 ~
// N(y1², 0.005) (truncated to the box, which holds all but 2.4e-5 of it).
var bananaProblem = problems.BananaIdentity(2)

func banana(grad, y []float64) (float64, error) { return bananaProblem.LogProbGrad(grad, y), nil }

// The 2-d banana: the fraction of NUTS draws below each exact quantile
// (5, 25, 50, 75, 95%) of each marginal must match the level within 4
// standard errors, the NUTS side's from the ESS of the indicator.
func TestBananaQuantiles(t *testing.T) {
	r, err := Sample(context.Background(), banana, 2, &Settings{Seed: 11, Draws: 2000, TargetAccept: 0.9})
	if err != nil {
		t.Fatal(err)
	}
	// Exact draws of the problem.
	const nExact = 400000
	draws := make([]float64, 2*nExact)
	bananaProblem.Sample(draws, rand.New(rand.NewPCG(1, 2)))
	exact := [2][]float64{make([]float64, nExact), make([]float64, nExact)}
	for i := 0; i < nExact; i++ {
		exact[0][i], exact[1][i] = draws[2*i], draws[2*i+1]
	}
	for j := 0; j < 2; j++ {
		sort.Float64s(exact[j])
		tr := r.Trace(j)
		for _, p := range []float64{0.05, 0.25, 0.5, 0.75, 0.95} {
			qx := exact[j][int(p*nExact)]
			ind := make([][]float64, len(tr))
			var below, n float64
			for c, s := range tr {
				ind[c] = make([]float64, len(s))
				for i, v := range s {
					if v <= qx {
						ind[c][i] = 1
						below++
					}
					n++
				}
			}
			ess, err := ESS(ind)
			if err != nil {
				t.Fatal(err)
			}
			frac := below / n
			se := math.Sqrt(p*(1-p)/ess + p*(1-p)/nExact)
			if math.Abs(frac-p) > 4*se {
				t.Errorf("y%d: %.4f of the draws below the exact %.0f%% quantile %.4f (se %.4f, ESS %.0f)", j+1, frac, 100*p, qx, se, ess)
			}
		}
	}
	if n := r.Divergences(); n > 0 {
		t.Logf("%d divergences", n)
	}
}

// A half-normal (log p = -Inf for x < 0) in 3-d: leaving the support is a
// divergence, never a crash, and the draws follow the truncated density.
func TestBoundedSupport(t *testing.T) {
	f := func(grad, x []float64) (float64, error) {
		var lp float64
		for i, v := range x {
			if v < 0 {
				return math.Inf(-1), nil
			}
			grad[i] = -v
			lp -= 0.5 * v * v
		}
		return lp, nil
	}
	lower := []float64{0, 0, 0}
	r, err := Sample(context.Background(), f, 3, &Settings{Seed: 5, Lower: lower})
	if err != nil {
		t.Fatal(err)
	}
	mean := math.Sqrt(2 / math.Pi)
	vari := 1 - 2/math.Pi
	checkMoments(t, r, []float64{mean, mean, mean}, []float64{vari, vari, vari}, 4)
	for c, dr := range r.Draws {
		for _, v := range dr {
			if v < 0 {
				t.Fatalf("chain %d left the support: %v", c, v)
			}
		}
	}
}

// NaN log densities and NaN gradients reject the step like a divergence:
// here x0 > 2 gives log p = NaN and x0 < -2 a NaN gradient, so the chain
// samples a standard normal truncated to |x0| < 2.
func TestNaNIsDivergence(t *testing.T) {
	f := func(grad, x []float64) (float64, error) {
		var lp float64
		for i, v := range x {
			grad[i] = -v
			lp -= 0.5 * v * v
		}
		if x[0] > 2 {
			return math.NaN(), nil
		}
		if x[0] < -2 {
			grad[0] = math.NaN()
		}
		return lp, nil
	}
	r, err := Sample(context.Background(), f, 2, &Settings{Seed: 9})
	if err != nil {
		t.Fatal(err)
	}
	for c := range r.Draws {
		for i := range r.LogP[c] {
			if x := r.Draw(c, i)[0]; math.Abs(x) >= 2 {
				t.Fatalf("chain %d draw %d: x0 = %v outside (-2, 2)", c, i, x)
			}
		}
	}
	// Variance of N(0,1) truncated to (-2, 2).
	phi2 := math.Exp(-2) / math.Sqrt(2*math.Pi)
	v := 1 - 4*phi2/math.Erf(2/math.Sqrt2)
	checkMoments(t, r, []float64{0, 0}, []float64{v, 1}, 4)
}

// LogP must hold log p at each kept draw.
func TestLogPMatchesDraws(t *testing.T) {
	g := &gaussian{d: 3, mu: []float64{1, 2, 3}, prec: []float64{1, 2, 3}}
	r, err := Sample(context.Background(), g.logp, 3, &Settings{Chains: 2, Warmup: 100, Draws: 50, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	grad := make([]float64, 3)
	for c := range r.Draws {
		for i, lp := range r.LogP[c] {
			want, _ := g.logp(grad, r.Draw(c, i))
			if lp != want {
				t.Fatalf("chain %d draw %d: LogP %v, log p at the draw %v", c, i, lp, want)
			}
		}
	}
}

// Stan's window schedule for 1000 warmup iterations ends slow windows at
// iterations 99, 149, 249, 449 and 949; a short warmup is scaled down.
func TestWindowSchedule(t *testing.T) {
	for _, tc := range []struct {
		warmup int
		ends   []int
	}{
		{1000, []int{99, 149, 249, 449, 949}},
		{100, []int{89}},
		{150, []int{99}},
		{200, []int{99, 149}},
		{10, nil},
	} {
		w := newWindows(tc.warmup)
		var ends []int
		var inWindow int
		for i := 0; i < tc.warmup; i++ {
			if w.inWindow() {
				inWindow++
			}
			if w.windowEnds() {
				ends = append(ends, i)
				w.computeNext()
			}
			w.counter++
		}
		if len(ends) != len(tc.ends) {
			t.Errorf("warmup %d: windows end at %v, want %v", tc.warmup, ends, tc.ends)
			continue
		}
		for i := range ends {
			if ends[i] != tc.ends[i] {
				t.Errorf("warmup %d: windows end at %v, want %v", tc.warmup, ends, tc.ends)
				break
			}
		}
	}
}

// The heuristic and dual averaging must reach the target on a target whose
// scale is far from 1.
func TestStepSizeAdaptsToScale(t *testing.T) {
	for _, scale := range []float64{1e-4, 1e3} {
		g := &gaussian{d: 4, mu: make([]float64, 4), prec: []float64{1, 1, 1, 1}}
		for i := range g.prec {
			g.prec[i] = 1 / (scale * scale)
		}
		r, err := Sample(context.Background(), g.logp, 4, &Settings{Seed: 2, Chains: 1, Metric: UnitMetric, Warmup: 500, Draws: 200})
		if err != nil {
			t.Fatal(err)
		}
		st := r.Chains[0]
		if st.StepSize < 0.3*scale || st.StepSize > 3*scale {
			t.Errorf("scale %g: step size %g", scale, st.StepSize)
		}
		if st.MeanAccept < 0.65 {
			t.Errorf("scale %g: mean accept %.2f", scale, st.MeanAccept)
		}
	}
}

// Sampling in unconstrained coordinates: chains started in the corners of
// the box reach a narrow mode near the opposite corner, the reported draws
// are in x and LogP is log p(x) without the Jacobian, and starting points
// outside the box are refused. (The 32-d banana of the pipeline tests is
// the case where the default box mode matters: there a chain of the
// start-only mode stuck against a wall.)
func TestBoxTransform(t *testing.T) {
	f := func(grad, x []float64) (float64, error) {
		var lp float64
		for i, v := range x {
			if v <= -15 || v >= 15 {
				return math.Inf(-1), nil
			}
			grad[i] = -(v - 14) / 0.01
			lp -= 0.5 * (v - 14) * (v - 14) / 0.01
		}
		return lp, nil
	}
	lo, hi := []float64{-15, -15}, []float64{15, 15}
	init := [][]float64{{-14.9, -14.9}, {14.99, -14.99}}
	r, err := Sample(context.Background(), f, 2, &Settings{Chains: 2, Warmup: 300, Draws: 500, Seed: 2, Init: init, Lower: lo, Upper: hi})
	if err != nil {
		t.Fatal(err)
	}
	for c := range r.Draws {
		x := r.Draw(c, len(r.LogP[c])-1)
		if math.Abs(x[0]-14) > 0.5 || math.Abs(x[1]-14) > 0.5 {
			t.Errorf("chain %d ends at %v, far from the mass at (14, 14)", c, x)
		}
		// LogP is log p(x) without the Jacobian.
		g := make([]float64, 2)
		if lp, _ := f(g, x); lp != r.LogP[c][len(r.LogP[c])-1] {
			t.Errorf("chain %d: LogP %v, log p(x) %v", c, r.LogP[c][len(r.LogP[c])-1], lp)
		}
	}
	if _, err := Sample(context.Background(), f, 2, &Settings{Init: [][]float64{{20, 0}}, Lower: lo, Upper: hi}); err == nil {
		t.Error("a starting point outside the box was accepted")
	}
}

// A transition allocates nothing, with either form of metric and in a
// box's unconstrained coordinates: all scratch space belongs to the
// sampler.
func TestTransitionDoesNotAllocate(t *testing.T) {
	for _, kind := range []Metric{DiagMetric, DenseMetric} {
		for _, boxed := range []bool{false, true} {
			f := density(funnel)
			var raw *float64
			if boxed {
				f, raw = newBoxMap(funnelLower(), funnelUpper(), funnelDim).wrap(f, funnelDim)
			}
			smp := newSampler(funnelDim, f, newRNG(1, 0), newMetric(kind, funnelDim), 10, nil)
			smp.raw = raw
			if err := smp.start(nil, nil, nil); err != nil {
				t.Fatal(err)
			}
			smp.eps = 0.2
			allocs := testing.AllocsPerRun(200, func() {
				if _, err := smp.transition(); err != nil {
					t.Fatal(err)
				}
			})
			if allocs != 0 {
				t.Errorf("%v metric, box %v: %v allocations per transition", kind, boxed, allocs)
			}
		}
	}
}
