package gbs

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// mixModel is the posterior of a K-component normal mixture of 1-d data
// with equal weights 1/K: unknown means μ_k ~ N(0, 5²) and, when scales
// is set, unknown log scales ln σ_k ~ N(0, 1) (else σ_k = 1), laid out
// [μ_1..μ_K, ln σ_1..ln σ_K]. Data are values with counts (cheap
// quadrature for the tests' exact ln Z).
type mixModel struct {
	k      int
	scales bool
	y, n   []float64 // data values and their counts
}

func (m *mixModel) dim() int {
	if m.scales {
		return 2 * m.k
	}
	return m.k
}

func normLogPDF(x, mu, sd float64) float64 {
	z := (x - mu) / sd
	return -0.5*z*z - math.Log(sd) - 0.5*math.Log(2*math.Pi)
}

func (m *mixModel) logp1(x []float64) float64 {
	s := 0.0
	for k := 0; k < m.k; k++ {
		s += normLogPDF(x[k], 0, 5)
		if m.scales {
			s += normLogPDF(x[m.k+k], 0, 1)
		}
	}
	lw := -math.Log(float64(m.k))
	for i, y := range m.y {
		mx := math.Inf(-1)
		var terms [8]float64
		for k := 0; k < m.k; k++ {
			sd := 1.0
			if m.scales {
				sd = math.Exp(x[m.k+k])
			}
			terms[k] = lw + normLogPDF(y, x[k], sd)
			mx = math.Max(mx, terms[k])
		}
		sum := 0.0
		for k := 0; k < m.k; k++ {
			sum += math.Exp(terms[k] - mx)
		}
		s += m.n[i] * (mx + math.Log(sum))
	}
	return s
}

func (m *mixModel) logp(dst, x []float64) error {
	d := m.dim()
	for i := range dst {
		dst[i] = m.logp1(x[i*d : (i+1)*d])
	}
	return nil
}

// quadLogZ integrates p on the grid lo + (i + 1/2) h, n points a side
// (the midpoint rule, spectrally accurate for a smooth p that vanishes at
// the box's edges), every coordinate alike.
func (m *mixModel) quadLogZ(lo, hi []float64, h float64) float64 {
	d := m.dim()
	ns := make([]int, d)
	total := 1
	for j := range d {
		ns[j] = int(math.Round((hi[j] - lo[j]) / h))
		total *= ns[j]
	}
	x := make([]float64, d)
	vals := make([]float64, 0, 1<<16)
	mx := math.Inf(-1)
	acc := 0.0
	flush := func() {
		for _, v := range vals {
			acc += math.Exp(v - mx)
		}
		vals = vals[:0]
	}
	for idx := 0; idx < total; idx++ {
		r := idx
		for j := d - 1; j >= 0; j-- {
			x[j] = lo[j] + (float64(r%ns[j])+0.5)*h
			r /= ns[j]
		}
		v := m.logp1(x)
		if v > mx {
			flush()
			acc *= math.Exp(mx - v)
			mx = v
		}
		vals = append(vals, v)
		if len(vals) == cap(vals) {
			flush()
		}
	}
	flush()
	return mx + math.Log(acc) + float64(d)*math.Log(h)
}

// metropolis runs nc random-walk Metropolis chains of n draws (after n/4
// warm-up) from x0, step sd per coordinate.
func (m *mixModel) metropolis(x0 []float64, step float64, nc, n int, rng *rand.Rand) [][]float64 {
	d := m.dim()
	chains := make([][]float64, nc)
	for c := range chains {
		x := slices.Clone(x0)
		for j := range x {
			x[j] += 0.05 * rng.NormFloat64()
		}
		lp := m.logp1(x)
		y := make([]float64, d)
		for t := -n / 4; t < n; t++ {
			for j := range y {
				y[j] = x[j] + step*rng.NormFloat64()
			}
			if ly := m.logp1(y); math.Log(rng.Float64()) < ly-lp {
				copy(x, y)
				lp = ly
			}
			if t >= 0 {
				chains[c] = append(chains[c], x...)
			}
		}
	}
	return chains
}

// sortLabels puts every draw into the labeling μ_1 < … < μ_K, moving
// each component's scale with its mean.
func (m *mixModel) sortLabels(chains [][]float64) {
	d, k := m.dim(), m.k
	for _, ch := range chains {
		for r := 0; r+d <= len(ch); r += d {
			row := ch[r : r+d]
			idx := make([]int, k)
			for a := range idx {
				idx[a] = a
			}
			slices.SortFunc(idx, func(a, b int) int { return cmpFloat(row[a], row[b]) })
			old := slices.Clone(row)
			for a, src := range idx {
				row[a] = old[src]
				if m.scales {
					row[k+a] = old[k+src]
				}
			}
		}
	}
}

// quantiles returns n points of N(mu, sd²) at the quantiles (i+½)/n.
func quantiles(n int, mu, sd float64) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = mu + sd*math.Sqrt2*math.Erfinv(2*(float64(i)+0.5)/float64(n)-1)
	}
	return out
}

func ones(n int) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = 1
	}
	return out
}

// Mixtures with exchangeable components, from one labeling (random-walk
// Metropolis chains that never switch labels, or draws sorted into
// μ_1 < μ_2 where the components overlap): within 3σ of ln Z by
// quadrature, with the finding saying what was found. The first is the
// setup of the label-switching report: 25 points at −2 and 25 at +2.
func TestSymmetryMixtures(t *testing.T) {
	if testing.Short() {
		t.Skip("quadrature and Metropolis chains")
	}
	two := &mixModel{k: 2, y: []float64{-2, 2}, n: []float64{25, 25}}
	three := &mixModel{k: 3, y: []float64{-3, 0, 3}, n: []float64{20, 20, 20}}
	scaled := &mixModel{k: 2, scales: true, y: append(quantiles(20, -2, 0.6), quantiles(20, 2, 1.2)...), n: ones(40)}
	close := &mixModel{k: 2, y: []float64{-0.7, 0.7}, n: []float64{25, 25}}
	box := func(d int, lo, hi float64) ([]float64, []float64) {
		l, h := make([]float64, d), make([]float64, d)
		for j := range l {
			l[j], h[j] = lo, hi
		}
		return l, h
	}
	for _, tc := range []struct {
		name   string
		m      *mixModel
		x0     []float64
		step   float64
		sorted bool
		exact  func() float64
		maxErr float64
	}{
		{"K=2 means", two, []float64{-2, 2}, 0.3, false, func() float64 { l, h := box(2, -14, 14); return two.quadLogZ(l, h, 0.05) }, 0.01},
		{"K=3 means", three, []float64{-3, 0, 3}, 0.25, false, func() float64 { l, h := box(3, -7, 7); return three.quadLogZ(l, h, 0.1) }, 0.01},
		// Two copies apart by far more than their width: ln Z is that
		// of one labeling's box plus ln 2.
		{"K=2 means and scales", scaled, []float64{-2, 2, math.Log(0.6), math.Log(1.2)}, 0.12, false, func() float64 {
			return scaled.quadLogZ([]float64{-3, 0, -1.72, -1.04}, []float64{-1, 4, 0.68, 1.36}, 0.1) + math.Ln2
		}, 0.02},
		{"K=2 overlapping", close, []float64{-0.7, 0.7}, 0.4, true, func() float64 { l, h := box(2, -14, 14); return close.quadLogZ(l, h, 0.05) }, 0.01},
	} {
		exact := tc.exact()
		chains := tc.m.metropolis(tc.x0, tc.step, 8, 4000, rand.New(rand.NewPCG(17, 2)))
		if tc.sorted {
			tc.m.sortLabels(chains)
		}
		s := &Samples{Dim: tc.m.dim(), Chains: chains}
		r, err := Evidence(nil, tc.m.logp, s, &Settings{Seed: 4})
		if err != nil {
			t.Fatal(err)
		}
		z := (r.LogZ - exact) / r.LogZErr
		t.Logf("%s: ln Z = %.4f ± %.4f, quadrature %.4f (z = %.2f)", tc.name, r.LogZ, r.LogZErr, exact, z)
		for _, f := range r.Findings {
			t.Logf("  %s: %s", f.Check, f.Message)
		}
		checkSymmetryEstimate(t, tc.name, r, exact, tc.maxErr)
	}
}

// With a box the mode census runs too: the relabeled copy of the mode,
// which no draw visited, is covered by the symmetrized proposal and is
// no missed mode.
func TestSymmetryWithBox(t *testing.T) {
	if testing.Short() {
		t.Skip("quadrature and Metropolis chains")
	}
	m := &mixModel{k: 2, y: []float64{-2, 2}, n: []float64{25, 25}}
	lo, hi := []float64{-14, -14}, []float64{14, 14}
	exact := m.quadLogZ(lo, hi, 0.05)
	chains := m.metropolis([]float64{-2, 2}, 0.3, 8, 4000, rand.New(rand.NewPCG(17, 2)))
	r, err := Evidence(nil, m.logp, &Samples{Dim: 2, Chains: chains}, &Settings{Seed: 4, Lower: lo, Upper: hi})
	if err != nil {
		t.Fatal(err)
	}
	z := (r.LogZ - exact) / r.LogZErr
	t.Logf("ln Z = %.4f ± %.4f, quadrature %.4f (z = %.2f)", r.LogZ, r.LogZErr, exact, z)
	if math.Abs(z) > 3 {
		t.Errorf("ln Z %.2f σ from quadrature", z)
	}
	if len(r.Found(CheckSymmetry)) != 1 || len(r.Found(CheckMissedMode)) != 0 || r.Diagnostics.CensusCalls == 0 {
		t.Errorf("findings %v, census calls %d: want symmetry, a census and no missed mode", r.Findings, r.Diagnostics.CensusCalls)
	}
}
