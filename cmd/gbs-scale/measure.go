package main

import (
	"context"
	"math"
	"math/rand/v2"
	"os"
	"runtime/pprof"
	"syscall"
	"time"

	"github.com/gbs-evidence/gbs/flow"
	"github.com/gbs-evidence/gbs/gbs"
	"gonum.org/v1/gonum/mat"
)

// corrGaussian is N(mu, Σ) with Σ = Q diag(λ) Qᵀ, Q a Haar-random rotation
// and λ log-spaced from 0.1 to 10 (condition number 100), mu_i ~ N(0, 1):
// the same family as problems.CorrelatedGaussian, here with the factors
// kept so that draws and log densities are matrix products. ln Z = 0.
type corrGaussian struct {
	d      int
	mu     []float64
	white  *mat.Dense // Wᵀ with W = diag(λ^-1/2) Qᵀ: (x - mu) Wᵀ is standard normal
	color  *mat.Dense // Cᵀ with C = Q diag(λ^1/2): z Cᵀ + mu ~ N(mu, Σ)
	logNrm float64    // -(d/2) ln 2π - (1/2) ln det Σ
}

func newCorrGaussian(d int, rng *rand.Rand) *corrGaussian {
	g := mat.NewDense(d, d, nil)
	for i := 0; i < d; i++ {
		for j := 0; j < d; j++ {
			g.Set(i, j, rng.NormFloat64())
		}
	}
	var qr mat.QR
	qr.Factorize(g)
	var q, r mat.Dense
	qr.QTo(&q)
	qr.RTo(&r)
	// Haar measure: make R's diagonal positive.
	for j := 0; j < d; j++ {
		if r.At(j, j) < 0 {
			for i := 0; i < d; i++ {
				q.Set(i, j, -q.At(i, j))
			}
		}
	}
	c := &corrGaussian{d: d, mu: make([]float64, d), white: mat.NewDense(d, d, nil), color: mat.NewDense(d, d, nil)}
	for i := range c.mu {
		c.mu[i] = rng.NormFloat64()
	}
	c.logNrm = -float64(d) / 2 * math.Log(2*math.Pi)
	for k := 0; k < d; k++ {
		lambda := 1.0
		if d > 1 {
			lambda = math.Pow(10, -1+2*float64(k)/float64(d-1))
		}
		c.logNrm -= 0.5 * math.Log(lambda)
		s := math.Sqrt(lambda)
		for i := 0; i < d; i++ {
			c.white.Set(i, k, q.At(i, k)/s) // Wᵀ[i][k] = Q[i][k] λ_k^-1/2
			c.color.Set(k, i, q.At(i, k)*s) // Cᵀ[k][i] = Q[i][k] λ_k^1/2
		}
	}
	return c
}

// draw returns n exact draws, row-major.
func (c *corrGaussian) draw(n int, rng *rand.Rand) []float64 {
	z := make([]float64, n*c.d)
	for i := range z {
		z[i] = rng.NormFloat64()
	}
	x := make([]float64, n*c.d)
	xm := mat.NewDense(n, c.d, x)
	xm.Mul(mat.NewDense(n, c.d, z), c.color)
	for i := 0; i < n; i++ {
		row := x[i*c.d : (i+1)*c.d]
		for j := range row {
			row[j] += c.mu[j]
		}
	}
	return x
}

// logProb is a batched log density: one matrix product per batch, as a
// vectorized numpy log density would do it. It runs on a goroutine of its
// own labelled "log p" for the CPU profiler, so that the matrix product's
// workers are not counted with the stage that asked for the batch.
func (c *corrGaussian) logProb(dst, x []float64) error {
	done := make(chan struct{})
	go func() {
		defer close(done)
		pprof.SetGoroutineLabels(pprof.WithLabels(context.Background(), pprof.Labels("stage", "log p")))
		c.logProbHere(dst, x)
	}()
	<-done
	return nil
}

func (c *corrGaussian) logProbHere(dst, x []float64) {
	m := len(dst)
	y := make([]float64, len(x))
	for i := 0; i < m; i++ {
		for j := 0; j < c.d; j++ {
			y[i*c.d+j] = x[i*c.d+j] - c.mu[j]
		}
	}
	z := mat.NewDense(m, c.d, nil)
	z.Mul(mat.NewDense(m, c.d, y), c.white)
	raw := z.RawMatrix()
	for i := range dst {
		var s float64
		for _, v := range raw.Data[i*raw.Stride : i*raw.Stride+c.d] {
			s += v * v
		}
		dst[i] = c.logNrm - 0.5*s
	}
}

// timedProposal adds the time spent in q's methods to *t.
type timedProposal struct {
	q gbs.Proposal
	t *float64
}

func (p timedProposal) Dim() int { return p.q.Dim() }

func (p timedProposal) LogProb(dst, x []float64) {
	t0 := time.Now()
	p.q.LogProb(dst, x)
	*p.t += since(t0)
}

func (p timedProposal) Sample(dst, logq []float64, rng *rand.Rand) {
	t0 := time.Now()
	p.q.Sample(dst, logq, rng)
	*p.t += since(t0)
}

// timedLatent is a timedProposal of a proposal with a latent space, so
// that the annealed bridge can run on it.
type timedLatent struct {
	timedProposal
	l gbs.LatentProposal
}

func (p timedLatent) Forward(z, logdet, x []float64) {
	t0 := time.Now()
	p.l.Forward(z, logdet, x)
	*p.t += since(t0)
}

func (p timedLatent) Inverse(x, logdet, z []float64) {
	t0 := time.Now()
	p.l.Inverse(x, logdet, z)
	*p.t += since(t0)
}

// cpuSeconds is the user + system time of this process so far.
func cpuSeconds() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return math.NaN()
	}
	return tv(ru.Utime) + tv(ru.Stime)
}

// measure runs one evidence call in this process; prof, if not nil,
// receives a CPU profile of it.
func measure(d, n int, seed uint64, prof *os.File) Run {
	r := Run{D: d, N: n, Seed: seed, Exact: 0}
	t0 := time.Now()
	rng := rand.New(rand.NewPCG(seed, 17))
	g := newCorrGaussian(d, rng)
	x := g.draw(n, rng)
	r.Draw = since(t0)

	fs := &flow.Settings{}
	if noShrink {
		fs.Shrinkage = flow.Off
	}
	fitFlow := gbs.FlowProposal(fs)
	var flows []*flow.Flow
	set := &gbs.Settings{Seed: seed, Anneal: annealMode}
	if timers || noShrink || klDraws > 0 {
		set.Proposal = timedFitter(fitFlow, &r, &flows)
	}
	logp := func(dst, x []float64) error {
		t := time.Now()
		err := g.logProb(dst, x)
		r.LogP += since(t)
		return err
	}
	s := &gbs.Samples{Dim: d, Chains: [][]float64{x}, Kind: gbs.IndependentDraws}
	if prof != nil {
		if err := pprof.StartCPUProfile(prof); err != nil {
			fail(err)
		}
	}
	c1 := cpuSeconds()
	t1 := time.Now()
	res, err := gbs.Evidence(context.Background(), logp, s, set)
	r.Evidence = since(t1)
	r.EvidenceCPU = cpuSeconds() - c1
	if prof != nil {
		pprof.StopCPUProfile()
		prof.Close()
	}
	r.Load = loadAverage()
	if err != nil {
		r.Error = err.Error()
		return r
	}
	r.LogZ, r.LogZErr, r.NQ, r.NCall = res.LogZ, res.LogZErr, res.NQ, res.NCall
	r.Sigmas = (r.LogZ - r.Exact) / r.LogZErr
	r.Bridge = r.Evidence - r.Fit - r.Proposal - r.LogP
	r.Warnings = res.Warnings()
	r.ParetoKQ, r.ParetoKP = res.Diagnostics.ParetoKQ, res.Diagnostics.ParetoKP
	r.AnnealSteps, r.AnnealCalls, r.Info = res.AnnealSteps, res.AnnealCalls, res.Info()
	if klDraws > 0 {
		krng := rand.New(rand.NewPCG(seed, 18))
		for _, f := range flows {
			pq, qp := klBoth(g, f, klDraws, krng)
			r.KLPQ = append(r.KLPQ, pq)
			r.KLQP = append(r.KLQP, qp)
		}
	}
	return r
}

// timedFitter is fitFlow timed into r (its fits, its proposals' methods),
// the fitted flows appended to flows.
func timedFitter(fitFlow gbs.ProposalFitter, r *Run, flows *[]*flow.Flow) gbs.ProposalFitter {
	return func(x []float64, d int, w []float64, seed uint64) (gbs.Proposal, []string, error) {
		t := time.Now()
		q, warns, err := fitFlow(x, d, w, seed)
		r.Fit += since(t)
		if err != nil {
			return nil, nil, err
		}
		if f, ok := q.(*flow.Flow); ok {
			r.Layers = append(r.Layers, f.Layers())
			r.CondLayers = append(r.CondLayers, f.ConditionalLayers())
			r.Shrunk = append(r.Shrunk, f.ShrunkCovariance())
			*flows = append(*flows, f)
		}
		tp := timedProposal{q: q, t: &r.Proposal}
		if lq, ok := q.(gbs.LatentProposal); ok {
			return timedLatent{timedProposal: tp, l: lq}, warns, nil
		}
		return tp, warns, nil
	}
}

// klBoth estimates KL(p‖q) on m fresh exact draws of p and KL(q‖p) on m
// draws of q (ln Z = 0, so log p is normalized).
func klBoth(g *corrGaussian, f *flow.Flow, m int, rng *rand.Rand) (pq, qp float64) {
	lp, lq := make([]float64, m), make([]float64, m)
	x := g.draw(m, rng)
	g.logProb(lp, x)
	f.LogProb(lq, x)
	for i := range lp {
		pq += (lp[i] - lq[i]) / float64(m)
	}
	f.Sample(x, lq, rng)
	g.logProb(lp, x)
	for i := range lp {
		qp += (lq[i] - lp[i]) / float64(m)
	}
	return pq, qp
}
