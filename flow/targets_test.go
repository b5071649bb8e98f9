package flow

import (
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/mat"
)

// Exact samplers and log densities of the reference targets of
// docs/problems.md, private to the tests (package problems is not
// imported: flow depends on nothing of the project).

// target is an exact sampler with its normalized log density.
type target struct {
	name    string
	d       int
	sample  func(rng *rand.Rand, n int) []float64
	logProb func(x []float64) float64 // normalized (funnel: see funnelTarget); -Inf outside the support
	lower   []float64                 // the prior box of docs/problems.md
	upper   []float64
}

// box returns d-vectors of the bounds lo and hi, with the first
// coordinate's bounds lo0 and hi0.
func box(d int, lo0, hi0, lo, hi float64) ([]float64, []float64) {
	l, u := make([]float64, d), make([]float64, d)
	for j := range l {
		l[j], u[j] = lo, hi
	}
	l[0], u[0] = lo0, hi0
	return l, u
}

// funnelTarget: x1 ~ N(0, 1), x_i ~ N(0, sd = exp(x1)) for i >= 2, on the
// box x1 in (-4, 4), x_i in (-30, 30); a vector leaving the box is
// rejected and drawn again as a whole.
// Its logProb is the untruncated density restricted to the box, so it
// integrates to the box mass (for d = 16, ln Z = -0.0042 by docs/problems.md).
func funnelTarget(d int) target {
	lower, upper := box(d, -4, 4, -30, 30)
	return target{
		name:  "funnel",
		d:     d,
		lower: lower,
		upper: upper,
		sample: func(rng *rand.Rand, n int) []float64 {
			x := make([]float64, 0, n*d)
			row := make([]float64, d)
			for len(x) < n*d {
				row[0] = rng.NormFloat64()
				sd := math.Exp(row[0])
				ok := row[0] > -4 && row[0] < 4
				for i := 1; i < d && ok; i++ {
					row[i] = sd * rng.NormFloat64()
					ok = row[i] > -30 && row[i] < 30
				}
				if ok {
					x = append(x, row...)
				}
			}
			return x
		},
		logProb: func(x []float64) float64 {
			if !(x[0] > -4 && x[0] < 4) {
				return math.Inf(-1)
			}
			lp := logPhi(x[0])
			for _, v := range x[1:] {
				if !(v > -30 && v < 30) {
					return math.Inf(-1)
				}
				lp += logPhi(v*math.Exp(-x[0])) - x[0]
			}
			return lp
		},
	}
}

// randomRotation returns a Haar random rotation (det +1), d×d row-major.
func randomRotation(d int, rng *rand.Rand) []float64 {
	a := randomFrame(d, d, rng)
	m := mat.NewDense(d, d, append([]float64(nil), a...))
	if mat.Det(m) < 0 {
		for i := 0; i < d; i++ {
			a[i*d] = -a[i*d]
		}
	}
	return a
}

// bananaTarget: y_{2i-1} ~ N(1, 1/2), y_{2i} ~ N(y_{2i-1}², 0.005), x = Aᵀy
// with a fixed random rotation A (y = A x).
func bananaTarget(d int, rotSeed uint64) target {
	a := randomRotation(d, rand.New(rand.NewPCG(rotSeed, 99)))
	lower, upper := box(d, -15, 15, -15, 15)
	return target{
		name:  "banana",
		d:     d,
		lower: lower,
		upper: upper,
		sample: func(rng *rand.Rand, n int) []float64 {
			x := make([]float64, n*d)
			y := make([]float64, d)
			for i := 0; i < n; i++ {
				for p := 0; p+1 < d; p += 2 {
					y[p] = 1 + math.Sqrt(0.5)*rng.NormFloat64()
					y[p+1] = y[p]*y[p] + math.Sqrt(0.005)*rng.NormFloat64()
				}
				row := x[i*d : (i+1)*d]
				for j := 0; j < d; j++ { // x = Aᵀy
					var s float64
					for l := 0; l < d; l++ {
						s += a[l*d+j] * y[l]
					}
					row[j] = s
				}
			}
			return x
		},
		logProb: func(x []float64) float64 {
			y := make([]float64, d)
			for l := 0; l < d; l++ {
				var s float64
				for j := 0; j < d; j++ {
					s += a[l*d+j] * x[j]
				}
				y[l] = s
			}
			var lp float64
			for p := 0; p+1 < d; p += 2 {
				e := y[p]*y[p] - y[p+1]
				lp += -e*e/0.01 - (y[p]-1)*(y[p]-1) - math.Log(math.Pi*math.Sqrt(0.01))
			}
			return lp
		},
	}
}

// cauchyTarget: every coordinate independently from the mixture
// ½ Cauchy(5, 1) + ½ Cauchy(-5, 1) truncated to (-100, 100).
func cauchyTarget(d int) target {
	cdf := func(x, loc float64) float64 { return 0.5 + math.Atan(x-loc)/math.Pi }
	// Mass of the mixture inside the box (equal for both components).
	mass := cdf(100, 5) - cdf(-100, 5)
	lower, upper := box(d, -100, 100, -100, 100)
	return target{
		name:  "cauchy",
		d:     d,
		lower: lower,
		upper: upper,
		sample: func(rng *rand.Rand, n int) []float64 {
			x := make([]float64, n*d)
			for i := range x {
				loc := 5.0
				if rng.IntN(2) == 0 {
					loc = -5
				}
				lo, hi := cdf(-100, loc), cdf(100, loc)
				u := lo + (hi-lo)*rng.Float64()
				x[i] = loc + math.Tan(math.Pi*(u-0.5))
			}
			return x
		},
		logProb: func(x []float64) float64 {
			var lp float64
			for _, v := range x {
				if !(v > -100 && v < 100) {
					return math.Inf(-1)
				}
				p := 0.5/(math.Pi*(1+(v-5)*(v-5))) + 0.5/(math.Pi*(1+(v+5)*(v+5)))
				lp += math.Log(p / mass)
			}
			return lp
		},
	}
}

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
