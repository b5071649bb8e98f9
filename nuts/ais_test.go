package nuts

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// annealProblem is a 10-d Gaussian prior N(0, s0² I) times the
// unnormalized likelihood exp(-|x - mu|²/(2 s²)); Z is a Gaussian
// convolution in closed form and the posterior is Gaussian.
type annealProblem struct {
	d      int
	s0, s  float64
	mu     []float64
	logZ   float64
	postMu []float64
	postSD float64
}

func newAnnealProblem() *annealProblem {
	p := &annealProblem{d: 10, s0: 3, s: 0.5}
	p.mu = make([]float64, p.d)
	p.postMu = make([]float64, p.d)
	v := p.s0*p.s0 + p.s*p.s
	postVar := 1 / (1/(p.s0*p.s0) + 1/(p.s*p.s))
	p.postSD = math.Sqrt(postVar)
	for i := range p.mu {
		p.mu[i] = 1 + 0.2*float64(i)
		// ∫ N(x; 0, s0²) exp(-(x-m)²/(2s²)) dx = sqrt(2π s²) N(m; 0, s0² + s²).
		p.logZ += 0.5*math.Log(p.s*p.s/v) - 0.5*p.mu[i]*p.mu[i]/v
		p.postMu[i] = postVar * p.mu[i] / (p.s * p.s)
	}
	return p
}

func (p *annealProblem) logPrior(grad, x []float64) (float64, error) {
	lp := -0.5 * float64(p.d) * math.Log(2*math.Pi*p.s0*p.s0)
	for i, v := range x {
		grad[i] = -v / (p.s0 * p.s0)
		lp -= 0.5 * v * v / (p.s0 * p.s0)
	}
	return lp, nil
}

func (p *annealProblem) logLike(grad, x []float64) (float64, error) {
	var ll float64
	for i, v := range x {
		r := (v - p.mu[i]) / p.s
		grad[i] = -r / p.s
		ll -= 0.5 * r * r
	}
	return ll, nil
}

func (p *annealProblem) samplePrior(dst []float64, rng *rand.Rand) {
	for i := range dst {
		dst[i] = p.s0 * rng.NormFloat64()
	}
}

func (p *annealProblem) posteriorDraws(n int, seed uint64) [][]float64 {
	rng := rand.New(rand.NewPCG(seed, 0))
	out := make([][]float64, n)
	for k := range out {
		out[k] = make([]float64, p.d)
		for i := range out[k] {
			out[k][i] = p.postMu[i] + p.postSD*rng.NormFloat64()
		}
	}
	return out
}

// AIS is biased low and RAIS biased high; with a short schedule the gap is
// visible, with a longer one both close in on the exact ln Z.
func TestAISRAISSandwich(t *testing.T) {
	p := newAnnealProblem()
	ctx := context.Background()
	post := p.posteriorDraws(32, 5)
	for _, steps := range []int{10, 1000} {
		s := &AISSettings{Steps: steps, Chains: 32, Seed: 1}
		fwd, err := AIS(ctx, p.logPrior, p.logLike, p.samplePrior, p.d, s)
		if err != nil {
			t.Fatal(err)
		}
		rev, err := RAIS(ctx, p.logPrior, p.logLike, post, p.d, s)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("T=%d: exact %.4f; AIS %.4f ± %.4f (mean log w %.4f, ESS %.1f, %d grads); RAIS %.4f ± %.4f (mean %.4f, ESS %.1f, %d grads)",
			steps, p.logZ, fwd.LogZ, fwd.LogZErr, fwd.MeanLogZ, fwd.ESS, fwd.GradCalls, rev.LogZ, rev.LogZErr, rev.MeanLogZ, rev.ESS, rev.GradCalls)
		const tol = 0.05
		if fwd.LogZ > p.logZ+3*fwd.LogZErr+tol || fwd.MeanLogZ > p.logZ+tol {
			t.Errorf("T=%d: AIS %.4f (mean %.4f) above the exact %.4f", steps, fwd.LogZ, fwd.MeanLogZ, p.logZ)
		}
		if rev.LogZ < p.logZ-3*rev.LogZErr-tol || rev.MeanLogZ < p.logZ-tol {
			t.Errorf("T=%d: RAIS %.4f (mean %.4f) below the exact %.4f", steps, rev.LogZ, rev.MeanLogZ, p.logZ)
		}
		if fwd.MeanLogZ > rev.MeanLogZ {
			t.Errorf("T=%d: bounds cross: AIS mean %.4f > RAIS mean %.4f", steps, fwd.MeanLogZ, rev.MeanLogZ)
		}
		if steps == 1000 {
			if gap := rev.MeanLogZ - fwd.MeanLogZ; gap > 0.5 {
				t.Errorf("T=%d: sandwich gap %.3f, want < 0.5", steps, gap)
			}
			if math.Abs(fwd.LogZ-p.logZ) > 0.2 || math.Abs(rev.LogZ-p.logZ) > 0.2 {
				t.Errorf("T=%d: AIS %.4f, RAIS %.4f, exact %.4f", steps, fwd.LogZ, rev.LogZ, p.logZ)
			}
		}
	}
}

// Identical results for any Threads.
func TestAISDeterministic(t *testing.T) {
	p := newAnnealProblem()
	var ref *AISResult
	for _, threads := range []int{1, 2, 3} {
		r, err := AIS(context.Background(), p.logPrior, p.logLike, p.samplePrior, p.d, &AISSettings{Steps: 30, Chains: 5, Seed: 3, Threads: threads})
		if err != nil {
			t.Fatal(err)
		}
		if ref == nil {
			ref = r
			continue
		}
		if r.LogZ != ref.LogZ || r.GradCalls != ref.GradCalls {
			t.Errorf("Threads=%d: LogZ %v (%d grads), want %v (%d)", threads, r.LogZ, r.GradCalls, ref.LogZ, ref.GradCalls)
		}
	}
}

func TestSigmoidSchedule(t *testing.T) {
	for _, T := range []int{2, 3, 10, 1000} {
		b := SigmoidSchedule(T, 4)
		if b[0] != 0 || b[T-1] != 1 {
			t.Errorf("T=%d: ends %v, %v", T, b[0], b[T-1])
		}
		for i := 1; i < T; i++ {
			if !(b[i] > b[i-1]) {
				t.Fatalf("T=%d: not increasing at %d", T, i)
			}
		}
		if T%2 == 1 && math.Abs(b[T/2]-0.5) > 1e-12 {
			t.Errorf("T=%d: midpoint %v, want 0.5", T, b[T/2])
		}
	}
}

func TestAISErrors(t *testing.T) {
	p := newAnnealProblem()
	ctx := context.Background()
	if _, err := AIS(ctx, p.logPrior, p.logLike, nil, p.d, nil); err == nil {
		t.Error("nil prior sampler accepted")
	}
	if _, err := AIS(ctx, p.logPrior, p.logLike, p.samplePrior, 0, nil); err == nil {
		t.Error("d = 0 accepted")
	}
	if _, err := AIS(ctx, p.logPrior, p.logLike, p.samplePrior, p.d, &AISSettings{Steps: 1}); err == nil {
		t.Error("Steps = 1 accepted")
	}
	if _, err := RAIS(ctx, p.logPrior, p.logLike, [][]float64{{1, 2}}, p.d, nil); err == nil || !strings.Contains(err.Error(), "length 2") {
		t.Errorf("short posterior draw: %v", err)
	}
	if _, err := RAIS(ctx, p.logPrior, p.logLike, nil, p.d, nil); err == nil {
		t.Error("no posterior draws accepted")
	}
	failing := func(grad, x []float64) (float64, error) { return 0, errBoom }
	_, err := AIS(ctx, p.logPrior, failing, p.samplePrior, p.d, &AISSettings{Steps: 20, Chains: 3})
	if !errors.Is(err, errBoom) {
		t.Errorf("failing likelihood: %v", err)
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := AIS(cctx, p.logPrior, p.logLike, p.samplePrior, p.d, nil); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
}

// A flat normalized box prior, as in the reference problems: the prior's
// gradient is zero and leaving the box is a divergence at small β. Both
// estimates must still land near the exact ln Z with a long schedule.
func TestAISBoxPrior(t *testing.T) {
	const d, s, half = 5, 0.3, 10.0
	logPrior := func(grad, x []float64) (float64, error) {
		for i, v := range x {
			if v <= -half || v >= half {
				return math.Inf(-1), nil
			}
			grad[i] = 0
		}
		return -d * math.Log(2*half), nil
	}
	logLike := func(grad, x []float64) (float64, error) {
		var ll float64
		for i, v := range x {
			grad[i] = -v / (s * s)
			ll -= 0.5 * v * v / (s * s)
		}
		return ll, nil
	}
	samplePrior := func(dst []float64, rng *rand.Rand) {
		for i := range dst {
			dst[i] = half * (2*rng.Float64() - 1)
		}
	}
	// The box holds all but ~1e-200 of the likelihood's mass.
	exact := d * math.Log(math.Sqrt(2*math.Pi)*s/(2*half))
	rng := rand.New(rand.NewPCG(4, 4))
	post := make([][]float64, 32)
	for i := range post {
		post[i] = make([]float64, d)
		for j := range post[i] {
			post[i][j] = s * rng.NormFloat64()
		}
	}
	set := &AISSettings{Steps: 1000, Chains: 32, Seed: 2}
	fwd, err := AIS(context.Background(), logPrior, logLike, samplePrior, d, set)
	if err != nil {
		t.Fatal(err)
	}
	rev, err := RAIS(context.Background(), logPrior, logLike, post, d, set)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("exact %.4f; AIS %.4f ± %.4f (%d divergences); RAIS %.4f ± %.4f (%d divergences)", exact, fwd.LogZ, fwd.LogZErr, fwd.Divergences, rev.LogZ, rev.LogZErr, rev.Divergences)
	// σ̂ is bounded too, or a wide error bar would pass anything: 32
	// chains of 1000 steps give 0.14 (AIS) and 0.12 (RAIS).
	for _, r := range []*AISResult{fwd, rev} {
		if !(math.Abs(r.LogZ-exact) < 4*r.LogZErr) || !(r.LogZErr > 0 && r.LogZErr < 0.3) {
			t.Errorf("ln Z %.4f ± %.4f, exact %.4f: want within 4 sigma and sigma in (0, 0.3)", r.LogZ, r.LogZErr, exact)
		}
	}
}
