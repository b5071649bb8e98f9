package main

import (
	"math"
	"strings"
	"testing"
	"unsafe"

	"github.com/gbs-evidence/gbs/capi/internal/ctest"
	"github.com/gbs-evidence/gbs/problems"
)

func newProblem(t *testing.T, name string) *cProblem {
	t.Helper()
	var p *cProblem
	var msg *cChar
	cs := append([]byte(name), 0)
	if st := gbsgo_problem_new((*cChar)(unsafe.Pointer(&cs[0])), &p, &msg); st != statusOK {
		t.Fatalf("gbs_problem_new(%q): status %d: %s", name, st, message(msg))
	}
	return p
}

func TestProblemAccessors(t *testing.T) {
	want := problems.FunnelN(3)
	p := newProblem(t, "funnel-3")
	var msg *cChar
	var d cInt64
	var logZ cDouble
	var bounded cInt32
	lo, hi := make([]float64, 3), make([]float64, 3)
	if gbsgo_problem_dim(p, &d, &msg) != statusOK || gbsgo_problem_log_z(p, &logZ, &msg) != statusOK ||
		gbsgo_problem_bounds(p, ptr(lo), ptr(hi), &bounded, &msg) != statusOK {
		t.Fatalf("accessors: %s", message(msg))
	}
	if d != 3 || float64(logZ) != want.LogZ || bounded != 1 || lo[0] != want.Lower[0] || hi[2] != want.Upper[2] {
		t.Errorf("dim %d, ln Z %g, bounded %d, box %v %v; want 3, %g, 1, %v %v", d, logZ, bounded, lo, hi, want.LogZ, want.Lower, want.Upper)
	}

	// Both density functions, called as a C program calls them, give the
	// problem's values.
	x := []float64{0.4, -1, 2}
	g, wg := make([]float64, 3), make([]float64, 3)
	var lp, lpb cDouble
	if st := gbsgo_problem_log_density_grad(ptr(x), 3, &lp, ptr(g), unsafe.Pointer(p)); st != statusOK {
		t.Fatalf("log density with gradient: status %d", st)
	}
	if st := gbsgo_problem_log_density(ptr(x), 1, 3, &lpb, unsafe.Pointer(p)); st != statusOK {
		t.Fatalf("batch log density: status %d", st)
	}
	wlp := want.LogProbGrad(wg, x)
	if float64(lp) != wlp || float64(lpb) != wlp || g[1] != wg[1] {
		t.Errorf("log p %g (batch %g), gradient %v; want %g, %v", lp, lpb, g, wlp, wg)
	}
	if st := gbsgo_problem_log_density_grad(ptr(x), 2, &lp, ptr(g), unsafe.Pointer(p)); st != statusArgument {
		t.Errorf("wrong d: status %d, want %d", st, statusArgument)
	}

	// Unbounded problems say so.
	q := newProblem(t, "gaussian-2")
	if st := gbsgo_problem_bounds(q, ptr(lo), nil, &bounded, &msg); st != statusOK || bounded != 0 || !math.IsInf(lo[0], -1) {
		t.Errorf("gaussian-2 bounds: status %d, bounded %d, lower %v", st, bounded, lo[:2])
	}
	for _, h := range []*cProblem{p, q} {
		if st := gbsgo_problem_free(h, &msg); st != statusOK {
			t.Fatalf("gbs_problem_free: %s", message(msg))
		}
	}
	if st := gbsgo_problem_log_density_grad(ptr(x), 3, &lp, ptr(g), unsafe.Pointer(p)); st != statusHandle {
		t.Errorf("freed problem: status %d, want %d", st, statusHandle)
	}
	if st := gbsgo_problem_dim(p, &d, &msg); st != statusHandle {
		t.Errorf("freed problem's dim: status %d, want %d", st, statusHandle)
	} else {
		message(msg)
	}
	checkLive(t)
}

func TestProblemUnknownName(t *testing.T) {
	var p *cProblem
	var msg *cChar
	cs := append([]byte("funnel-0"), 0)
	st := gbsgo_problem_new((*cChar)(unsafe.Pointer(&cs[0])), &p, &msg)
	m := message(msg)
	if st != statusArgument || p != nil || !strings.Contains(m, "funnel") {
		t.Errorf("funnel-0: status %d, handle %v, message %q", st, p, m)
	}
	if st := gbsgo_problem_new(nil, &p, &msg); st != statusArgument {
		t.Errorf("NULL name: status %d", st)
	}
	message(msg)
	checkLive(t)
}

// The library recognizes its own density functions and only those.
func TestProblemRecognized(t *testing.T) {
	if !isProblemGrad(problemGradFn()) || !isProblemDensity(problemDensityFn()) {
		t.Error("the problem's own functions are not recognized")
	}
	if isProblemGrad(cLogDensityGradFn(ctest.NormalLogPGrad())) {
		t.Error("a user callback is taken for the problem's")
	}
}

// The pipeline on a native problem: ln Z within 4 sigma of the exact
// value, and a dimension that is not the problem's fails the call.
func TestProblemPipeline(t *testing.T) {
	if testing.Short() {
		t.Skip("a pipeline run")
	}
	p := newProblem(t, "funnel-4")
	want := problems.FunnelN(4)
	opt := &cNutsOptions{}
	opt.size = cSize(unsafe.Sizeof(*opt))
	opt.seed = 3
	opt.warmup = 500
	opt.concurrent = 1
	opt.lower, opt.upper = ptr(want.Lower), ptr(want.Upper)
	res := cResult{}
	res.size = cSize(unsafe.Sizeof(res))
	var msg *cChar
	if st := gbsgo_nuts_evidence(problemGradFn(), unsafe.Pointer(p), 4, 4, 1000, opt, nil, &res, nil, 0, nil, nil, nil, &msg); st != statusOK {
		t.Fatalf("gbs_nuts_evidence: status %d: %s", st, message(msg))
	}
	if z := (float64(res.logz) - want.LogZ) / float64(res.logzerr); math.Abs(z) > 4 || res.logzerr > 0.05 {
		t.Errorf("ln Z = %g ± %g, exact %g", res.logz, res.logzerr, want.LogZ)
	}
	gbsgo_result_free(&res)

	opt.lower, opt.upper = nil, nil
	res = cResult{}
	res.size = cSize(unsafe.Sizeof(res))
	st := gbsgo_nuts_evidence(problemGradFn(), unsafe.Pointer(p), 5, 2, 50, opt, nil, &res, nil, 0, nil, nil, nil, &msg)
	if m := message(msg); st != statusCallback || !strings.Contains(m, "dimension 4") {
		t.Errorf("d = 5: status %d, message %q", st, m)
	}
	gbsgo_result_free(&res)
	gbsgo_problem_free(p, nil)
	checkLive(t)
}
