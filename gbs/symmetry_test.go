package gbs

import (
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// symMixture is a density invariant under relabeling K blocks of L
// coordinates: p(x) = e^c Σ_σ Π_a N(x_{B_a}; m_σ(a), diag s_σ(a)²), times
// N(0, 1) for extra coordinates after the blocks. Each of the K! terms is
// a normalized Gaussian, so ln Z = c + ln K! exactly, whether the terms
// are far apart or overlap. The blocks are laid out variable by variable,
// [v_1(K) … v_L(K)], as a mixture's [μ_1..μ_K, σ_1..σ_K].
type symMixture struct {
	k, l, extra int
	m, s        [][]float64 // per component, L entries
	c           float64
	perms       [][]int
}

func newSymMixture(m, s [][]float64, extra int, c float64) *symMixture {
	return &symMixture{k: len(m), l: len(m[0]), extra: extra, m: m, s: s, c: c, perms: permutations(len(m))}
}

func (p *symMixture) dim() int { return p.k*p.l + p.extra }

func (p *symMixture) coord(a, v int) int { return v*p.k + a }

func (p *symMixture) logZ() float64 {
	lf := 0.0
	for i := 2; i <= p.k; i++ {
		lf += math.Log(float64(i))
	}
	return p.c + lf
}

func (p *symMixture) logp(dst, x []float64) error {
	d := p.dim()
	terms := make([]float64, len(p.perms))
	for i := range dst {
		row := x[i*d : (i+1)*d]
		for t, sigma := range p.perms {
			s := 0.0
			for a, src := range sigma {
				for v := 0; v < p.l; v++ {
					z := (row[p.coord(a, v)] - p.m[src][v]) / p.s[src][v]
					s -= 0.5*z*z + math.Log(p.s[src][v]) + 0.5*math.Log(2*math.Pi)
				}
			}
			terms[t] = s
		}
		mx := slices.Max(terms)
		sum := 0.0
		for _, v := range terms {
			sum += math.Exp(v - mx)
		}
		s := p.c + mx + math.Log(sum)
		for j := p.k * p.l; j < d; j++ {
			s -= 0.5*row[j]*row[j] + 0.5*math.Log(2*math.Pi)
		}
		dst[i] = s
	}
	return nil
}

// draws returns n exact draws of p put into one labeling: component a
// in block a when sorted, else a random relabeling then the blocks
// sorted by their first coordinate (the labeling v_1 ascending, as an
// ordering constraint or a relabeling algorithm leaves them).
func (p *symMixture) draws(n int, sorted bool, rng *rand.Rand) []float64 {
	d := p.dim()
	x := make([]float64, n*d)
	for i := 0; i < n; i++ {
		row := x[i*d : (i+1)*d]
		sigma := make([]int, p.k)
		for a := range sigma {
			sigma[a] = a
		}
		if sorted {
			sigma = rng.Perm(p.k)
		}
		for a, src := range sigma {
			for v := 0; v < p.l; v++ {
				row[p.coord(a, v)] = p.m[src][v] + p.s[src][v]*rng.NormFloat64()
			}
		}
		if sorted {
			idx := make([]int, p.k)
			for a := range idx {
				idx[a] = a
			}
			slices.SortFunc(idx, func(a, b int) int { return cmpFloat(row[p.coord(a, 0)], row[p.coord(b, 0)]) })
			old := slices.Clone(row)
			for a, src := range idx {
				for v := 0; v < p.l; v++ {
					row[p.coord(a, v)] = old[p.coord(src, v)]
				}
			}
		}
		for j := p.k * p.l; j < d; j++ {
			row[j] = rng.NormFloat64()
		}
	}
	return x
}

func runSym(t *testing.T, p *symMixture, sorted bool, set *Settings, seed uint64) *Result {
	t.Helper()
	d := p.dim()
	x := p.draws(8000, sorted, rand.New(rand.NewPCG(seed, 1)))
	s := &Samples{Dim: d, Kind: IndependentDraws}
	for c := range 8 {
		s.Chains = append(s.Chains, x[c*1000*d:(c+1)*1000*d])
	}
	if set == nil {
		set = &Settings{}
	}
	set.Seed = seed
	r, err := Evidence(context.Background(), p.logp, s, set)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func column(k int, v ...float64) [][]float64 {
	out := make([][]float64, len(v))
	for a := range v {
		out[a] = []float64{v[a]}
	}
	return out
}

// Label switching planted from one labeling, K = 2 and 3 single
// coordinates, K = 2 blocks of two, and two overlapping components:
// within 3σ of the exact ln Z, with the finding naming the relabeling.
func TestSymmetryLabelSwitching(t *testing.T) {
	if testing.Short() {
		t.Skip("several evidence calls")
	}
	for _, tc := range []struct {
		name       string
		p          *symMixture
		sorted     bool
		wantBlocks int
		maxErr     float64
	}{
		{"K=2 means", newSymMixture(column(1, -3, 3), column(1, 0.5, 0.5), 1, -2), false, 2, 0.02},
		{"K=3 means", newSymMixture(column(1, -4, 0, 4), column(1, 0.6, 0.5, 0.7), 1, 3), false, 3, 0.02},
		{"K=2 means and scales", newSymMixture([][]float64{{-2, 0.3}, {2, -0.5}}, [][]float64{{0.4, 0.2}, {0.5, 0.25}}, 1, 0), false, 2, 0.02},
		{"K=2 overlapping", newSymMixture(column(1, -0.5, 0.5), column(1, 1, 1), 0, 1), true, 2, 0.02},
		{"K=5 means (a subset of relabelings)", newSymMixture(column(1, -8, -4, 0, 4, 8), column(1, 0.5, 0.5, 0.5, 0.5, 0.5), 0, 0), false, 5, 0.1},
	} {
		r := runSym(t, tc.p, tc.sorted, nil, 3)
		off := runSym(t, tc.p, tc.sorted, &Settings{Symmetry: Off}, 3)
		want := tc.p.logZ()
		z := (r.LogZ - want) / r.LogZErr
		t.Logf("%s: ln Z = %.4f ± %.4f, exact %.4f (z = %.2f); without: %.4f ± %.4f; calls %d", tc.name, r.LogZ, r.LogZErr, want, z, off.LogZ, off.LogZErr, r.NCall)
		checkSymmetryEstimate(t, tc.name, r, want, tc.maxErr)
		for _, f := range r.Findings {
			if f.Check == CheckSymmetry && !(f.Value < f.Limit) {
				t.Errorf("%s: overlap %.3g not below %.3g", tc.name, f.Value, f.Limit)
			}
		}
		// Overlapping copies: one labeling plus ln K! is not the answer.
		if tc.sorted {
			zk := (off.LogZ + math.Ln2 - want) / off.LogZErr
			t.Logf("%s: one labeling + ln 2 is %.2f σ off", tc.name, zk)
			if math.Abs(zk) < 4 {
				t.Errorf("%s: one labeling + ln 2 within %.2f σ: the copies do not overlap enough to show it", tc.name, zk)
			}
		}
		if len(off.Found(CheckSymmetry)) != 0 {
			t.Errorf("%s: Symmetry Off found a symmetry", tc.name)
		}
	}
}

// Groups given (as an adapter gives its variables of one length): only
// those log p is invariant under are used, the finest first; the
// unequal-weight mixture, whose components are not exchangeable, gets no
// correction; a malformed group is an error naming it.
func TestSymmetryGivenGroups(t *testing.T) {
	if testing.Short() {
		t.Skip("several evidence calls")
	}
	p := newSymMixture([][]float64{{-2, 0.3}, {2, -0.5}}, [][]float64{{0.4, 0.2}, {0.5, 0.25}}, 1, 0)
	// [μ1, μ2, s1, s2, extra]: μ alone, s alone, and both together.
	groups := []Blocks{{{0}, {1}}, {{2}, {3}}, {{0, 2}, {1, 3}}}
	r := runSym(t, p, false, &Settings{SymmetryGroups: groups}, 8)
	z := (r.LogZ - p.logZ()) / r.LogZErr
	t.Logf("given groups: ln Z = %.4f ± %.4f, exact %.4f (z = %.2f)", r.LogZ, r.LogZErr, p.logZ(), z)
	if math.Abs(z) > 3 || len(r.Found(CheckSymmetry)) != 1 {
		t.Errorf("given groups: z = %.2f, findings %v", z, r.Found(CheckSymmetry))
	}

	// Unequal weights: log p changes under relabeling.
	uneq := func(dst, x []float64) error {
		for i := range dst {
			a := math.Log(0.3) + normLogPDF(x[2*i], -3, 0.5) + normLogPDF(x[2*i+1], 3, 0.5)
			b := math.Log(0.7) + normLogPDF(x[2*i+1], -3, 0.5) + normLogPDF(x[2*i], 3, 0.5)
			dst[i] = logAddExp(a, b)
		}
		return nil
	}
	rng := rand.New(rand.NewPCG(9, 9))
	x := make([]float64, 2*4000)
	for i := 0; i < 4000; i++ {
		x[2*i], x[2*i+1] = -3+0.5*rng.NormFloat64(), 3+0.5*rng.NormFloat64()
	}
	ru, err := Evidence(context.Background(), uneq, iidSamples(x, 2), &Settings{Seed: 1, SymmetryGroups: []Blocks{{{0}, {1}}}})
	if err != nil {
		t.Fatal(err)
	}
	if len(ru.Found(CheckSymmetry)) != 0 {
		t.Errorf("unequal weights: a symmetry used: %v", ru.Found(CheckSymmetry))
	}
	if z := (ru.LogZ - math.Log(0.3)) / ru.LogZErr; math.Abs(z) > 4 {
		t.Errorf("unequal weights: ln Z %.4f ± %.4f, want ln 0.3 (one mode)", ru.LogZ, ru.LogZErr)
	}

	for _, bad := range []Blocks{{{0}}, {{0}, {0}}, {{0}, {1, 2}}, {{0}, {7}}} {
		if _, err := Evidence(context.Background(), p.logp, iidSamples(x[:2000], 5), &Settings{SymmetryGroups: []Blocks{bad}}); err == nil {
			t.Errorf("group %v accepted", bad)
		}
	}
}

// The relabelings: all K! for small groups, their inverses, and a
// symmetrized q that is normalized (its draws' log q is its LogProb).
func TestSymmetryGroupElements(t *testing.T) {
	s := newSymmetry(6, []symGroup{{blocks: Blocks{{0, 3}, {1, 4}, {2, 5}}}}, rand.New(rand.NewPCG(1, 1)))
	if len(s.terms) != 6 || s.order != 6 {
		t.Fatalf("%d terms of %v", len(s.terms), s.order)
	}
	big := newSymmetry(6, []symGroup{{blocks: Blocks{{0}, {1}, {2}, {3}, {4}, {5}}}}, rand.New(rand.NewPCG(1, 1)))
	if len(big.terms) != symmetryMaxTerms || big.order != 720 || !big.partial() {
		t.Fatalf("K=6: %d terms of %v", len(big.terms), big.order)
	}
	for i, p := range big.terms {
		for k, j := range p {
			if big.inv[i][j] != k {
				t.Fatalf("term %d: inverse wrong", i)
			}
		}
	}
}
