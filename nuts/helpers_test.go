package nuts

import (
	"math"
	"testing"
)

// gaussian is N(mu, Σ) with precision matrix prec (row-major d×d), or a
// diagonal precision when prec has length d. It is safe for concurrent use.
type gaussian struct {
	mu, prec []float64
	d        int
}

func (g *gaussian) logp(grad, x []float64) (float64, error) {
	d := g.d
	var lp float64
	if len(g.prec) == d {
		for i, v := range x {
			v -= g.mu[i]
			grad[i] = -g.prec[i] * v
			lp -= 0.5 * g.prec[i] * v * v
		}
		return lp, nil
	}
	for i := 0; i < d; i++ {
		var s float64
		for j := 0; j < d; j++ {
			s += g.prec[i*d+j] * (x[j] - g.mu[j])
		}
		grad[i] = -s
		lp -= 0.5 * (x[i] - g.mu[i]) * s
	}
	return lp, nil
}

// moments holds the pooled mean and variance of one scalar series over all
// chains with their Monte Carlo standard errors from ESS.
type moments struct {
	mean, meanSE float64
	vari, variSE float64
}

func traceMoments(t *testing.T, tr [][]float64) moments {
	t.Helper()
	var n int
	var mean float64
	for _, c := range tr {
		for _, v := range c {
			mean += v
			n++
		}
	}
	mean /= float64(n)
	sq := make([][]float64, len(tr))
	var vari float64
	for c, s := range tr {
		sq[c] = make([]float64, len(s))
		for i, v := range s {
			sq[c][i] = (v - mean) * (v - mean)
			vari += sq[c][i]
		}
	}
	vari /= float64(n)
	ess, err := ESS(tr)
	if err != nil {
		t.Fatal(err)
	}
	essSq, err := ESS(sq)
	if err != nil {
		t.Fatal(err)
	}
	var v2 float64
	for _, s := range sq {
		for _, v := range s {
			v2 += (v - vari) * (v - vari)
		}
	}
	v2 /= float64(n - 1)
	return moments{
		mean: mean, meanSE: math.Sqrt(vari / ess),
		vari: vari, variSE: math.Sqrt(v2 / essSq),
	}
}

// checkMoments asserts that every coordinate's mean and variance are within
// k Monte Carlo standard errors of the truth, and returns the root mean
// square of the standardized errors (about 1 when the MCSEs are honest).
func checkMoments(t *testing.T, r *Result, mu, vari []float64, k float64) (rmsMean, rmsVar float64) {
	t.Helper()
	for j := range mu {
		m := traceMoments(t, r.Trace(j))
		zm := (m.mean - mu[j]) / m.meanSE
		zv := (m.vari - vari[j]) / m.variSE
		if math.Abs(zm) > k {
			t.Errorf("coordinate %d: mean %.4g, want %.4g (%.1f MCSE off, MCSE %.3g)", j, m.mean, mu[j], zm, m.meanSE)
		}
		if math.Abs(zv) > k {
			t.Errorf("coordinate %d: variance %.4g, want %.4g (%.1f MCSE off, MCSE %.3g)", j, m.vari, vari[j], zv, m.variSE)
		}
		rmsMean += zm * zm
		rmsVar += zv * zv
	}
	n := float64(len(mu))
	return math.Sqrt(rmsMean / n), math.Sqrt(rmsVar / n)
}
