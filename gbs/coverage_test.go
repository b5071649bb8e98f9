package gbs_test

import (
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/gbs-evidence/gbs/gbs"
	"github.com/gbs-evidence/gbs/problems"
)

// necklessFunnel returns n exact draws of the funnel with its neck cut
// away (x1 < -1.5, about 7% of the mass): draws that miss a region in the
// same way in every chain.
func necklessFunnel(p *problems.Problem, n int, seed uint64) []float64 {
	rng := rand.New(rand.NewPCG(seed, 0))
	x := make([]float64, 0, n*p.Dim)
	buf := make([]float64, p.Dim)
	for len(x) < n*p.Dim {
		p.Sample(buf, rng)
		if buf[0] >= -1.5 {
			x = append(x, buf...)
		}
	}
	return x
}

// truncatedT returns n exact draws of p with the fraction cut of the
// largest |x| removed (the tails cut away), or all draws when cut is 0.
func truncatedT(p *problems.Problem, n int, cut float64, seed uint64) []float64 {
	rng := rand.New(rand.NewPCG(seed, 0))
	d := p.Dim
	r2 := func(x []float64) float64 {
		var s float64
		for _, v := range x {
			s += v * v
		}
		return s
	}
	limit := math.Inf(1)
	if cut > 0 {
		ref := make([]float64, 100000*d)
		p.Sample(ref, rng)
		rs := make([]float64, 100000)
		for i := range rs {
			rs[i] = r2(ref[i*d : (i+1)*d])
		}
		slices.Sort(rs)
		limit = rs[int((1-cut)*float64(len(rs)))]
	}
	x := make([]float64, 0, n*d)
	buf := make([]float64, d)
	for len(x) < n*d {
		p.Sample(buf, rng)
		if r2(buf) < limit {
			x = append(x, buf...)
		}
	}
	return x
}

func coverageWarned(r *gbs.Result) bool { return r.Warns(gbs.CheckCoverage) }

// The funnel's neck cut away: the bridge's ln Z comes back many σ low and
// no other check can see it (every draw misses the same region); the
// coverage check flags it, at coordinate 0 below the draws' range, for a
// tenth of n_q in log-density calls. The exact draws of the same seed
// raise no warning.
func TestCoverageNecklessFunnel(t *testing.T) {
	if testing.Short() {
		t.Skip("slow (evidence calls on 10000 funnel draws): make test runs it")
	}
	p := problems.Funnel()
	const n = 10000
	for _, cut := range []bool{true, false} {
		var x []float64
		if cut {
			x = necklessFunnel(p, n, 1)
		} else {
			x = make([]float64, n*p.Dim)
			p.Sample(x, rand.New(rand.NewPCG(1, 0)))
		}
		s := &gbs.Samples{Dim: p.Dim, Chains: [][]float64{x}, Kind: gbs.IndependentDraws}
		res, err := gbs.Evidence(context.Background(), p.LogProbBatch, s, &gbs.Settings{Seed: 1, Lower: p.Lower, Upper: p.Upper})
		if err != nil {
			t.Fatal(err)
		}
		dg := res.Diagnostics
		t.Logf("neck cut %v: ln Z %+.4f ± %.4f off (%.1f σ); coverage fraction %.3g, limit %.3g, where %d side %d, %d calls of %d",
			cut, res.LogZ-p.LogZ, res.LogZErr, (res.LogZ-p.LogZ)/res.LogZErr, dg.CoverageFrac, dg.CoverageLimit,
			dg.CoverageWhere, dg.CoverageSide, dg.CoverageCalls, res.NCall)
		// The cost: one tenth of the proposal draws, counted in NCall
		// (log p evaluated at the n draws, n_q proposal draws, and the
		// check's).
		if want := int(math.Ceil(0.1*float64(res.NQ/2))) * 2; dg.CoverageCalls > want+2 || dg.CoverageCalls < want-2 {
			t.Errorf("the check spent %d log-density calls, want about n_q/10 = %d", dg.CoverageCalls, want)
		}
		if want := int64(n + res.NQ + dg.CoverageCalls + dg.CensusCalls); res.NCall != want {
			t.Errorf("NCall = %d, want n + n_q + the check's and the mode census's calls = %d", res.NCall, want)
		}
		if !cut {
			if coverageWarned(res) || !(dg.CoverageFrac <= dg.CoverageLimit) {
				t.Errorf("exact draws: coverage fraction %.3g, limit %.3g, warnings %q", dg.CoverageFrac, dg.CoverageLimit, res.Warnings())
			}
			continue
		}
		if !coverageWarned(res) || !(dg.CoverageFrac > dg.CoverageLimit) {
			t.Fatalf("neck-less draws not flagged: coverage fraction %.3g, limit %.3g, warnings %q", dg.CoverageFrac, dg.CoverageLimit, res.Warnings())
		}
		if dg.CoverageWhere != 0 || dg.CoverageSide != -1 {
			t.Errorf("flagged at quantity %d side %d, want coordinate 0 below the range", dg.CoverageWhere, dg.CoverageSide)
		}
		// The flow reaches the neck only thinly: the bridge function
		// there is far below its mean, and ln Z is low.
		if c := res.Diagnostics.CoverageCovered; !(c < 0.5) {
			t.Errorf("bridge function beyond the range %.3g of its mean, want below 0.5", c)
		}
	}
}

// A Student-t with its tails cut away (the 15% of the mass at the largest
// radii): flagged, in log p below the draws' range; the full Student-t
// is not; the setting turns the check off.
func TestCoverageTruncatedStudentT(t *testing.T) {
	p := problems.StudentT(6, 4)
	const n = 8000
	for _, tc := range []struct {
		cut  float64
		off  bool
		want bool
	}{{0.15, false, true}, {0, false, false}, {0.15, true, false}} {
		s := &gbs.Samples{Dim: p.Dim, Chains: [][]float64{truncatedT(p, n, tc.cut, 2)}, Kind: gbs.IndependentDraws}
		res, err := gbs.Evidence(context.Background(), p.LogProbBatch, s, &gbs.Settings{Seed: 2, CoverageCheck: map[bool]gbs.Switch{false: gbs.Auto, true: gbs.Off}[tc.off]})
		if err != nil {
			t.Fatal(err)
		}
		dg := res.Diagnostics
		t.Logf("cut %.2f off %v: ln Z %+.4f ± %.4f; coverage fraction %.3g, limit %.3g, where %d side %d, %d calls",
			tc.cut, tc.off, res.LogZ-p.LogZ, res.LogZErr, dg.CoverageFrac, dg.CoverageLimit, dg.CoverageWhere, dg.CoverageSide, dg.CoverageCalls)
		if got := coverageWarned(res); got != tc.want {
			t.Errorf("cut %.2f, check off %v: warned %v, want %v (warnings %q)", tc.cut, tc.off, got, tc.want, res.Warnings())
		}
		switch {
		case tc.off:
			if dg.CoverageCalls != 0 || !math.IsNaN(dg.CoverageFrac) || res.NCall != int64(n+res.NQ) {
				t.Errorf("check off: %d calls, fraction %v, NCall %d", dg.CoverageCalls, dg.CoverageFrac, res.NCall)
			}
		case tc.want:
			if dg.CoverageWhere != -1 || dg.CoverageSide != -1 {
				t.Errorf("flagged at quantity %d side %d, want log p below the range", dg.CoverageWhere, dg.CoverageSide)
			}
			// The independence chains find about the missed mass.
			if !(dg.CoverageFrac > 0.05) {
				t.Errorf("coverage fraction %.3g, want about the 0.15 cut away", dg.CoverageFrac)
			}
		}
	}
}

// A two-component mixture (widths 0.5 and 1, weights 0.3 and 0.7) drawn
// in equal proportion: every draw lies where p has mass, so the edge
// statistic cannot see it, but the distribution of log p differs; the
// two-sample test flags it, and the draws in the right proportion are
// not flagged.
func TestCoverageMisweightedMixture(t *testing.T) {
	p := problems.StandardMixture(4)
	means := [][]float64{{-1, -1, -1, -1}, {1, 1, 1, 1}}
	for _, w := range []float64{0.3, 0.5} {
		src := problems.GaussianMixture(4, []float64{w, 1 - w}, means, []float64{0.5, 1}, 0)
		x := make([]float64, 8000*p.Dim)
		src.Sample(x, rand.New(rand.NewPCG(1, 0)))
		s := &gbs.Samples{Dim: p.Dim, Chains: [][]float64{x}, Kind: gbs.IndependentDraws}
		res, err := gbs.Evidence(context.Background(), p.LogProbBatch, s, &gbs.Settings{Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		dg := res.Diagnostics
		warned := res.Warns(gbs.CheckCoverageKS)
		t.Logf("weight %.1f: ln Z %+.4f ± %.4f off; KS %.3g, limit %.3g at log p %.3g; warnings %q",
			w, res.LogZ-p.LogZ, res.LogZErr, dg.CoverageKS, dg.CoverageKSLimit, dg.CoverageKSAt, res.Warnings())
		if right := w == 0.3; right == warned || right != (dg.CoverageKS <= dg.CoverageKSLimit) {
			t.Errorf("weight %.1f: KS %.3g, limit %.3g, warned %v", w, dg.CoverageKS, dg.CoverageKSLimit, warned)
		}
	}
}

// normalProposal is N(0, sd² I) in d dimensions as a fixed proposal; with
// sd 1 it is q = p/Z exactly for the standard normal p.
type normalProposal struct {
	d  int
	sd float64
}

func (g normalProposal) Dim() int { return g.d }

func (g normalProposal) LogProb(dst, x []float64) {
	for i := range dst {
		var s float64
		for _, v := range x[i*g.d : (i+1)*g.d] {
			s += v * v
		}
		dst[i] = -s/(2*g.sd*g.sd) - float64(g.d)*(math.Log(g.sd)+math.Log(2*math.Pi)/2)
	}
}

func (g normalProposal) Sample(dst, logq []float64, rng *rand.Rand) {
	for i := range dst {
		dst[i] = g.sd * rng.NormFloat64()
	}
	g.LogProb(logq, dst)
}

// truncatedNormal runs Evidence on n draws of the d-dimensional standard
// normal (ln Z = c) with x[0] < cut removed, the proposal N(0, sd² I).
func truncatedNormal(t *testing.T, d, n int, cut, sd, c float64) *gbs.Result {
	t.Helper()
	rng := rand.New(rand.NewPCG(5, 0))
	x := make([]float64, 0, n*d)
	for len(x) < n*d {
		v := make([]float64, d)
		for j := range v {
			v[j] = rng.NormFloat64()
		}
		if v[0] >= cut {
			x = append(x, v...)
		}
	}
	logp := func(dst, x []float64) error {
		normalProposal{d, 1}.LogProb(dst, x)
		for i := range dst {
			dst[i] += c
		}
		return nil
	}
	fixed := func(x []float64, d int, w []float64, seed uint64) (gbs.Proposal, []string, error) {
		return normalProposal{d, sd}, nil, nil
	}
	s := &gbs.Samples{Dim: d, Chains: [][]float64{x}, Kind: gbs.IndependentDraws}
	res, err := gbs.Evidence(context.Background(), logp, s, &gbs.Settings{Seed: 1, Proposal: fixed})
	if err != nil {
		t.Fatal(err)
	}
	dg := res.Diagnostics
	t.Logf("cut %g, q's sd %g: ln Z %+.4f ± %.4f off; coverage %.3g (limit %.3g) at %d side %d, bridge function there %.3g of its mean",
		cut, sd, res.LogZ-c, res.LogZErr, dg.CoverageFrac, dg.CoverageLimit, dg.CoverageWhere, dg.CoverageSide, dg.CoverageCovered)
	if math.Abs(res.LogZ-c) > 4*res.LogZErr+1e-9 {
		t.Errorf("ln Z %.4f ± %.4f, want %.1f", res.LogZ, res.LogZErr, c)
	}
	if dg.CoverageWhere != 0 || dg.CoverageSide != -1 || !(dg.CoverageCovered > 0.9) {
		t.Errorf("coverage at %d side %d, bridge function there %.3g of its mean: want coordinate 0 below, near 1 or above",
			dg.CoverageWhere, dg.CoverageSide, dg.CoverageCovered)
	}
	return res
}

// Draws that miss a region q covers: exact normal draws with x[0] < -1.5
// cut away (6.7 % of the mass), with q the exact normal. The check warns
// (the draws miss mass), but the bridge function is the same everywhere
// (q = p/Z), so ln Z is right (to round-off: the error bar is zero) and
// the warning says ln Z accounts for it: more than 2 % of p missing is a
// warning whatever ln Z.
func TestCoverageCoveredByProposal(t *testing.T) {
	res := truncatedNormal(t, 4, 8000, -1.5, 1, -3)
	if dg := res.Diagnostics; !res.Warns(gbs.CheckCoverage) || !(dg.CoverageCovered >= 0.5) || !(dg.CoverageFrac > 0.02) {
		t.Errorf("covered %.3g, fraction %.3g: want a warning for more than 2 %% of p missing where q covers it: %q",
			dg.CoverageCovered, dg.CoverageFrac, res.Warnings())
	}
}

// A small region missed and covered, as NUTS's draws of the funnel's neck
// with a scale layer: x[0] < -2.5 cut away (0.6 % of the mass), q the
// normal with sd 1.2 (the bridge function there about 1.5 times its mean
// at the draws: ln Z high by about 0.003 to first order, within its error
// bar of 0.004). The finding is a note in Info, not a warning.
func TestCoverageCoveredNote(t *testing.T) {
	res := truncatedNormal(t, 4, 8000, -2.5, 1.2, -3)
	if len(res.Warnings()) > 0 {
		t.Errorf("warnings: %q", res.Warnings())
	}
	f := res.Found(gbs.CheckCoverage)
	if len(f) != 1 || f[0].Kind != gbs.KindInfo || !(res.Diagnostics.CoverageFrac > res.Diagnostics.CoverageLimit) {
		t.Errorf("no coverage note (frac %.3g, limit %.3g): %q",
			res.Diagnostics.CoverageFrac, res.Diagnostics.CoverageLimit, res.Info())
	}
	// With q's sd 1.05 and 32000 draws the error bar (0.0005) is smaller
	// than the shift (about 0.0009): a warning that says so.
	res = truncatedNormal(t, 4, 32000, -2.5, 1.05, -3)
	if !res.Warns(gbs.CheckCoverage) || !(res.Diagnostics.CoverageCovered > 1) {
		t.Errorf("q's sd 1.05: covered %.3g, warnings %q: want the shift (ln Z high) beyond the error bar", res.Diagnostics.CoverageCovered, res.Warnings())
	}
}

// Exact standard normal draws in d = 100 (20000, as 8 chains of 2500 of
// the default kind): the check's 202 counts beyond the draws' range stay
// below their limits and nothing is found. The heaviest count (x[88]
// above, 5 points, one holding 80 % of the steps, its proposals' weights
// 2.3 times the pool's) was 0.86 of the limit that counted trials; the
// limit in clusters puts every count below 0.7 of its own.
func TestCoverageQuietHighDim(t *testing.T) {
	if testing.Short() {
		t.Skip("d = 100: a few seconds")
	}
	const d, n, chains = 100, 20000, 8
	p := problems.Gaussian(make([]float64, d), nil, 0)
	x := make([]float64, n*d)
	p.Sample(x, rand.New(rand.NewPCG(1002, 0xc0)))
	s := &gbs.Samples{Dim: d}
	for c := range chains {
		s.Chains = append(s.Chains, x[c*n/chains*d:(c+1)*n/chains*d])
	}
	res, err := gbs.Evidence(context.Background(), p.LogProbBatch, s, &gbs.Settings{Seed: 1002})
	if err != nil {
		t.Fatal(err)
	}
	dg := res.Diagnostics
	if len(res.Found(gbs.CheckCoverage)) > 0 || len(res.Found(gbs.CheckCoverageKS)) > 0 || !(dg.CoverageFrac < 0.7*dg.CoverageLimit) {
		t.Errorf("exact draws: coverage fraction %.3g, limit %.3g, findings %v", dg.CoverageFrac, dg.CoverageLimit, res.Findings)
	}
	if z := (res.LogZ - p.LogZ) / res.LogZErr; math.Abs(z) > 4 {
		t.Errorf("ln Z off by %.1f σ", z)
	}
}

// The 48-d Cauchy mixture without its 15 % most extreme draws (by the
// largest |x_k| over the coordinates): ln Z about 13 σ low. The mass
// missed is spread over the 96 coordinates' edges, each below its own
// limit; the largest standardized deviation gathers it: flagged above
// its range. The full draws of the same seed are not.
func TestCoverageCutCauchy(t *testing.T) {
	if testing.Short() {
		t.Skip("d = 48, two runs: a few seconds")
	}
	p := problems.Cauchy()
	d := p.Dim
	const n, chains, cut = 16000, 8, 0.15
	ext := func(x []float64) float64 {
		var m float64
		for _, v := range x {
			m = math.Max(m, math.Abs(v))
		}
		return m
	}
	ref := make([]float64, 100000*d)
	p.Sample(ref, rand.New(rand.NewPCG(0, 0xc1)))
	es := make([]float64, 100000)
	for i := range es {
		es[i] = ext(ref[i*d : (i+1)*d])
	}
	slices.Sort(es)
	limit := es[int((1-cut)*float64(len(es)))]
	for _, cutAway := range []bool{true, false} {
		rng := rand.New(rand.NewPCG(1, 0xc0))
		x := make([]float64, 0, n*d)
		buf := make([]float64, d)
		for len(x) < n*d {
			p.Sample(buf, rng)
			if !cutAway || ext(buf) < limit {
				x = append(x, buf...)
			}
		}
		s := &gbs.Samples{Dim: d, Kind: gbs.IndependentDraws}
		for c := range chains {
			s.Chains = append(s.Chains, x[c*n/chains*d:(c+1)*n/chains*d])
		}
		res, err := gbs.Evidence(context.Background(), p.LogProbBatch, s, &gbs.Settings{Seed: 1, Lower: p.Lower, Upper: p.Upper})
		if err != nil {
			t.Fatal(err)
		}
		dg := res.Diagnostics
		t.Logf("cut %v: ln Z %.1f σ off; coverage %.3g of the limit at %d side %d", cutAway, (res.LogZ-p.LogZ)/res.LogZErr, dg.CoverageFrac/dg.CoverageLimit, dg.CoverageWhere, dg.CoverageSide)
		switch {
		case cutAway && (!res.Warns(gbs.CheckCoverage) || dg.CoverageWhere != -2 || dg.CoverageSide != 1):
			t.Errorf("extremes cut away: want a warning above the largest deviation's range, got where %d side %d, warnings %q", dg.CoverageWhere, dg.CoverageSide, res.Warnings())
		case !cutAway && len(res.Found(gbs.CheckCoverage)) > 0:
			t.Errorf("full draws: %v", res.Found(gbs.CheckCoverage))
		}
	}
}
