package gbs

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// Tests of the messages themselves: what a finding's text says. Every
// other test branches on a finding's Check and numbers, never on its text.

// The overlap warning names the most likely cause, and never the user's
// log density on the strength of a thin overlap alone: few draws per
// dimension when d²/(4n) explains the distance between q and p, the
// flow's fit otherwise.
func TestMessageOverlapNamesCause(t *testing.T) {
	pass := func(kl float64) passData {
		a := make([]float64, 100)
		for i := range a {
			a[i] = -kl + 0.5*float64(i%3-1) // mean -kl: KL(p‖q) = kl at ln Z = 0
		}
		return passData{a: a, logZ: 0}
	}
	for _, tc := range []struct {
		name  string
		d, n  int
		kl    float64
		cause string
	}{
		{"d=1000, 2e4 draws", 1000, 20000, 28, "few draws for the dimension"},
		{"d=32, 16000 draws", 32, 16000, 5, "does not capture the shape of p"},
		{"negative KL", 6, 4000, -0.5, "cannot happen when the draws come from the log density"},
	} {
		e := &estimation{s: &Samples{Dim: tc.d, Chains: [][]float64{make([]float64, tc.n*tc.d)}}, passes: []passData{pass(tc.kl)}}
		w := e.overlapWarning(2.7, 3.2)
		t.Logf("%s: %s", tc.name, w)
		if !strings.Contains(w, tc.cause) {
			t.Errorf("%s: want the cause %q in %q", tc.name, tc.cause, w)
		}
		if tc.kl < 0 {
			// Evidence against the log density: then it is named.
			if !strings.Contains(w, causesMismatch) {
				t.Errorf("%s: a negative KL estimate does not name the log density: %q", tc.name, w)
			}
			continue
		}
		if !strings.Contains(w, fmt.Sprintf("about %.1f nats of KL divergence", tc.kl)) {
			t.Errorf("%s: want the distance %.1f nats in %q", tc.name, tc.kl, w)
		}
		if strings.Contains(w, causesMismatch) || strings.Contains(w, "check that the log density") {
			t.Errorf("%s: the overlap warning blames the log density: %q", tc.name, w)
		}
	}
}

// The copies' warning names the groups, tells exact from near copies and
// suggests the likely mistake.
func TestMessageCopies(t *testing.T) {
	for _, tc := range []struct {
		exact bool
		want  string
	}{{true, "exact copies"}, {false, "near copies"}} {
		w := copiesWarning([][]int{{0, 1, 2}, {4, 5}}, tc.exact)
		for _, part := range []string{"chains [0 1 2] and [4 5] are", tc.want, "same seed?"} {
			if !strings.Contains(w, part) {
				t.Errorf("exact %v: %q lacks %q", tc.exact, w, part)
			}
		}
	}
}

// The interleave warning says how to reshape the draws.
func TestMessageInterleave(t *testing.T) {
	w := interleaveWarning(32, 0.9, 0.1, 48000)
	for _, part := range []string{"looks like 32 chains interleaved", "get_chain(flat=True)", "(1500, 32, d)"} {
		if !strings.Contains(w, part) {
			t.Errorf("%q lacks %q", w, part)
		}
	}
}

// A flipped sign makes the other checks fail too; the generic warning
// then names the sign as the cause instead of its list of usual causes.
func TestMessageConsistencyNamesCause(t *testing.T) {
	e := &estimation{s: &Samples{Dim: 1}, diag: newDiagnostics(), passes: []passData{{}}}
	e.diag.TiltZ = 2 * consistencyZ
	e.explain("the sign of the log density (see above)")
	e.diagnoseConsistency()
	if len(e.findings) != 1 || !strings.Contains(e.findings[0].Message, "likely cause: the sign") ||
		strings.Contains(e.findings[0].Message, causesMismatch) {
		t.Errorf("findings %+v: want the sign named as the cause", e.findings)
	}
}

// The pile-up note names the coordinate (by its name when given) and says
// to pass the bounds.
func TestMessagePileUp(t *testing.T) {
	ps := []pileUp{{Coord: 1, Edge: 0, Ratio: 9}}
	for _, tc := range []struct {
		names []string
		want  string
	}{{nil, "coordinate 1 ends abruptly at 0"}, {[]string{"mu", "sigma"}, "sigma ends abruptly at 0"}} {
		w := pileUpAdvice(ps, tc.names)
		if !strings.Contains(w, tc.want) || !strings.Contains(w, "pass the bounds") {
			t.Errorf("names %v: %q", tc.names, w)
		}
	}
}

// The coverage finding says where the chains went, how much of it one
// point holds (mass found at several points or one heavy point of q's
// tail), and what it means for ln Z in each of its cases.
func TestMessageCoverage(t *testing.T) {
	st := coverageStat{frac: 0.05, limit: 0.01, points: 12, top: 0.25, code: 0, far: -3.1, edge: -2.5, neff: 2000}
	for _, tc := range []struct {
		covered, logZErr float64
		kind             Kind
		want             string
	}{
		{0.1, 0.01, KindEstimate, "ln Z is then low by about the mass the chains missed"},
		{1.5, 0.001, KindEstimate, "but not in proportion to p: to first order ln Z is high by about"},
		{0.99, 0.01, KindEstimate, "so ln Z accounts for it (to first order it is low by about 0.0005, within its error bar), but the draws miss more than 2 %"},
	} {
		st.covered = tc.covered
		f := coverageFinding(st, 0, "x1", tc.logZErr)
		if f.Kind != tc.kind || !strings.Contains(f.Message, tc.want) ||
			!strings.Contains(f.Message, "below the range of the posterior draws in x1") ||
			!strings.Contains(f.Message, "at 12 distinct points, 25 % of these steps at one of them)") {
			t.Errorf("covered %v: %s finding %q", tc.covered, f.Kind, f.Message)
		}
	}
	st.frac, st.covered = 0.015, 0.95
	if f := coverageFinding(st, 0, "x1", 0.01); f.Kind != KindInfo || !strings.Contains(f.Message, "under-represent a small part of p") {
		t.Errorf("accounted for: %s finding %q", f.Kind, f.Message)
	}
}

// The missed-mode finding names the mode's coordinates (by
// Settings.Names), its mass and what ln Z is low by; within censusZ error
// bars it is information.
func TestMessageMissedMode(t *testing.T) {
	for _, tc := range []struct {
		logZErr float64
		kind    Kind
	}{{0.001, KindEstimate}, {1, KindInfo}} {
		e := &estimation{s: &Samples{Dim: 2}, cfg: Settings{Names: []string{"mu", "sigma"}}, res: &Result{LogZErr: tc.logZErr}}
		e.diag.CensusModes = []MissedMode{{X: []float64{-5, 2.5}, LogMass: 0}}
		e.diag.CensusShortfall = math.Log(2)
		e.diagnoseCensus()
		if len(e.findings) != 1 || e.findings[0].Check != CheckMissedMode || e.findings[0].Kind != tc.kind {
			t.Fatalf("σ %g: findings %v, want one missed-mode of kind %v", tc.logZErr, e.findings, tc.kind)
		}
		m := e.findings[0].Message
		t.Log(m)
		for _, want := range []string{"mu = -5, sigma = 2.5", "mass about 1 Z", "ln(1 + m/Z) = 0.693"} {
			if !strings.Contains(m, want) {
				t.Errorf("want %q in %q", want, m)
			}
		}
	}
}

// The symmetry note names the relabeling by the coordinates' names, says
// how ln Z used it, and says when only a subset of relabelings was
// averaged over.
func TestMessageSymmetry(t *testing.T) {
	e := &estimation{cfg: Settings{Names: []string{"mu[0]", "mu[1]", "sigma[0]", "sigma[1]"}}}
	e.sym = newSymmetry(4, []symGroup{{blocks: Blocks{{0, 2}, {1, 3}}, overlap: 0.01}}, nil)
	m := e.symmetryNote().Message
	t.Log(m)
	for _, want := range []string{"(mu[0], sigma[0]) ↔ (mu[1], sigma[1])", "all 2 relabelings", "ln 2"} {
		if !strings.Contains(m, want) {
			t.Errorf("want %q in %q", want, m)
		}
	}
	e = &estimation{}
	e.sym = newSymmetry(6, []symGroup{{blocks: Blocks{{0}, {1}, {2}, {3}, {4}, {5}}, overlap: 0}}, rand.New(rand.NewPCG(1, 1)))
	m = e.symmetryNote().Message
	t.Log(m)
	for _, want := range []string{"coordinate 0 ↔ coordinate 1", "a random 24 of the 720 relabelings", "error bar"} {
		if !strings.Contains(m, want) {
			t.Errorf("want %q in %q", want, m)
		}
	}
}

// The coverage finding names the largest standardized deviation when
// that is the quantity whose range the chains left.
func TestMessageCoverageExtreme(t *testing.T) {
	st := coverageStat{frac: 0.05, limit: 0.01, points: 12, top: 0.25, code: 1, far: 9.1, edge: 7.5, neff: 2000, covered: 0.1}
	f := coverageFinding(st, coverageExtreme, quantityName(nil, coverageExtreme), 0.01)
	if !strings.Contains(f.Message, "above the range of the posterior draws in the largest standardized deviation max_k |x_k - median_k|/scale_k") {
		t.Errorf("%q", f.Message)
	}
}
