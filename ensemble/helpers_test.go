package ensemble

import (
	"math"
	"math/rand/v2"
)

// gaussian is a d-dimensional normal target N(mu, cov).
type gaussian struct {
	d         int
	mu        []float64
	cov, prec []float64 // d×d row-major
}

// randomGaussian returns a normal target with a random mean and a random
// SPD covariance Q diag(λ) Qᵀ: Q a random orthogonal matrix and λ spread
// log-uniformly over [1/√cond, √cond], so the target is both rotated
// (strongly correlated) and badly scaled.
func randomGaussian(rng *rand.Rand, d int, cond float64) *gaussian {
	q := randomOrthogonal(rng, d)
	lambda := make([]float64, d)
	for i := range lambda {
		t := 0.5
		if d > 1 {
			t = float64(i) / float64(d-1)
		}
		lambda[i] = math.Pow(cond, t-0.5)
	}
	g := &gaussian{d: d, mu: make([]float64, d), cov: make([]float64, d*d), prec: make([]float64, d*d)}
	for i := range d {
		g.mu[i] = 3 * rng.NormFloat64()
		for j := range d {
			var c, p float64
			for k := range d {
				c += q[i*d+k] * lambda[k] * q[j*d+k]
				p += q[i*d+k] / lambda[k] * q[j*d+k]
			}
			g.cov[i*d+j], g.prec[i*d+j] = c, p
		}
	}
	return g
}

// randomOrthogonal returns a random d×d orthogonal matrix (row-major) by
// Gram–Schmidt on Gaussian vectors.
func randomOrthogonal(rng *rand.Rand, d int) []float64 {
	q := make([]float64, d*d)
	for i := range d {
		row := q[i*d : (i+1)*d]
		for {
			for k := range row {
				row[k] = rng.NormFloat64()
			}
			for j := range i {
				prev := q[j*d : (j+1)*d]
				var dot float64
				for k := range row {
					dot += row[k] * prev[k]
				}
				for k := range row {
					row[k] -= dot * prev[k]
				}
			}
			var norm float64
			for _, v := range row {
				norm += v * v
			}
			if norm > 1e-6 {
				norm = math.Sqrt(norm)
				for k := range row {
					row[k] /= norm
				}
				break
			}
		}
	}
	return q
}

// logDensity is the LogDensityFunc of g.
func (g *gaussian) logDensity(dst, x []float64) error {
	d := g.d
	r := make([]float64, d)
	for n := range dst {
		p := x[n*d : (n+1)*d]
		for i := range r {
			r[i] = p[i] - g.mu[i]
		}
		var quad float64
		for i := range d {
			var s float64
			row := g.prec[i*d : (i+1)*d]
			for j := range d {
				s += row[j] * r[j]
			}
			quad += r[i] * s
		}
		dst[n] = -0.5 * quad
	}
	return nil
}

// moments returns the pooled mean and covariance (d×d row-major) of all
// kept draws.
func moments(r *Result) (mean, cov []float64) {
	d := r.Dim
	mean = make([]float64, d)
	cov = make([]float64, d*d)
	var n float64
	for _, ch := range r.Chain {
		for s := 0; s < len(ch); s += d {
			n++
			for i := range d {
				mean[i] += ch[s+i]
			}
		}
	}
	for i := range mean {
		mean[i] /= n
	}
	for _, ch := range r.Chain {
		for s := 0; s < len(ch); s += d {
			for i := range d {
				for j := range d {
					cov[i*d+j] += (ch[s+i] - mean[i]) * (ch[s+j] - mean[j])
				}
			}
		}
	}
	for i := range cov {
		cov[i] /= n - 1
	}
	return mean, cov
}

// ess returns the effective sample size of coordinate i: the number of
// post-burn-in ensemble states, Walkers × (Steps − Burn), over τ_i.
func ess(r *Result, steps, i int) float64 {
	return float64(r.Walkers*(steps-r.Burn)) / r.Tau[i]
}

// column returns coordinate i of all kept draws.
func column(r *Result, i int) []float64 {
	var out []float64
	for _, ch := range r.Chain {
		for s := i; s < len(ch); s += r.Dim {
			out = append(out, ch[s])
		}
	}
	return out
}

func normalCDF(x float64) float64 { return 0.5 * math.Erfc(-x/math.Sqrt2) }
