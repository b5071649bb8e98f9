package flow

import (
	"math/rand/v2"

	"gonum.org/v1/gonum/mat"

	"github.com/gbs-evidence/gbs/problems"
)

// The reference targets of docs/problems.md, from package problems (a test
// file may import it: problems imports nothing of ours, so flow itself
// still depends on nothing of the project).

// target is an exact sampler with its normalized log density.
type target struct {
	name    string
	d       int
	sample  func(rng *rand.Rand, n int) []float64
	logProb func(x []float64) float64 // normalized on the box: ln ∫ exp(logProb) = 0; -Inf outside
	lower   []float64                 // the prior box of docs/problems.md
	upper   []float64
}

// fromProblem is the target of a problem with an exact sampler, its log
// density normalized by the exact ln Z.
func fromProblem(p *problems.Problem) target {
	return target{
		name:  p.Name,
		d:     p.Dim,
		lower: p.Lower,
		upper: p.Upper,
		sample: func(rng *rand.Rand, n int) []float64 {
			x := make([]float64, n*p.Dim)
			p.Sample(x, rng)
			return x
		},
		logProb: func(x []float64) float64 { return p.LogProb(x) - p.LogZ },
	}
}

// funnelTarget: x1 ~ N(0, 1) on (-4, 4), x_i ~ N(0, sd = exp(x1)) on
// (-30, 30) for i >= 2 (problems.FunnelN).
func funnelTarget(d int) target { return fromProblem(problems.FunnelN(d)) }

// bananaTarget: y_{2i-1} ~ N(1, 1/2), y_{2i} ~ N(y_{2i-1}², 0.005), y = A x
// with the random rotation A of seed rotSeed, on (-15, 15)^d
// (problems.BananaN).
func bananaTarget(d int, rotSeed uint64) target { return fromProblem(problems.BananaN(d, rotSeed)) }

// cauchyTarget: every coordinate independently from the mixture
// ½ Cauchy(5, 1) + ½ Cauchy(-5, 1) truncated to (-100, 100)
// (problems.CauchyN).
func cauchyTarget(d int) target { return fromProblem(problems.CauchyN(d)) }

// gaussianLogLik fits a Gaussian (sample mean and covariance) to train and
// returns its mean log-likelihood on test.
func gaussianLogLik(train, test []float64, d int) float64 {
	n := len(train) / d
	mean := make([]float64, d)
	for i := 0; i < n; i++ {
		for j := 0; j < d; j++ {
			mean[j] += train[i*d+j] / float64(n)
		}
	}
	cov := mat.NewSymDense(d, nil)
	for i := 0; i < n; i++ {
		for j := 0; j < d; j++ {
			for l := 0; l <= j; l++ {
				cov.SetSym(j, l, cov.At(j, l)+(train[i*d+j]-mean[j])*(train[i*d+l]-mean[l])/float64(n))
			}
		}
	}
	var ch mat.Cholesky
	if !ch.Factorize(cov) {
		panic("singular covariance")
	}
	logDet := ch.LogDet()
	nt := len(test) / d
	r := mat.NewVecDense(d, nil)
	var sol mat.VecDense
	var sum float64
	for i := 0; i < nt; i++ {
		for j := 0; j < d; j++ {
			r.SetVec(j, test[i*d+j]-mean[j])
		}
		if err := ch.SolveVecTo(&sol, r); err != nil {
			panic(err)
		}
		sum += -0.5*mat.Dot(r, &sol) - 0.5*logDet - float64(d)*logSqrt2Pi
	}
	return sum / float64(nt)
}

// flowLogLik is the mean log q of the flow on test.
func flowLogLik(f *Flow, test []float64) float64 {
	n := len(test) / f.Dim()
	lq := make([]float64, n)
	f.LogProb(lq, test)
	var s float64
	for _, v := range lq {
		s += v
	}
	return s / float64(n)
}
