package main

// Go tests of the exported functions, with C callbacks from
// internal/ctest. Run them with GOEXPERIMENT=cgocheck2 too (make
// test-cgocheck): the library hands Go memory to the C callbacks, which
// the cgo pointer rules allow only for memory without Go pointers and
// only for the duration of the call.

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"unsafe"

	"github.com/gbs-evidence/gbs/capi/internal/ctest"
	"github.com/gbs-evidence/gbs/gbs"
)

// goString copies a NUL-terminated C string.
func goString(p *cChar) string {
	if p == nil {
		return ""
	}
	n := 0
	for *(*byte)(unsafe.Add(unsafe.Pointer(p), n)) != 0 {
		n++
	}
	return string(unsafe.Slice((*byte)(unsafe.Pointer(p)), n))
}

// message returns the text of an error message and frees it.
func message(p *cChar) string {
	s := goString(p)
	gbsgo_free_error(p)
	return s
}

func ptr(x []float64) *cDouble {
	if len(x) == 0 {
		return nil
	}
	return (*cDouble)(unsafe.Pointer(&x[0]))
}

func normalDraws(n, d int, seed uint64) []float64 {
	rng := rand.New(rand.NewPCG(seed, 0))
	x := make([]float64, n*d)
	for i := range x {
		x[i] = rng.NormFloat64()
	}
	return x
}

// checkLive fails the test if objects handed to C are still live.
func checkLive(t *testing.T) {
	t.Helper()
	if n := gbsgo_debug_live_allocations(); n != 0 {
		t.Errorf("%d objects from the library still live", n)
	}
}

func evidenceOptions() *cEvidenceOptions {
	o := &cEvidenceOptions{independent: 1, seed: 5}
	o.size = cSize(unsafe.Sizeof(*o))
	return o
}

func TestEvidence(t *testing.T) {
	const chains, draws, d = 2, 1000, 3
	x := normalDraws(chains*draws, d, 1)
	fn := cLogDensityFn(ctest.NormalLogP())
	var logz float64
	for _, concurrent := range []cInt32{0, 1} {
		opt := evidenceOptions()
		opt.concurrent = concurrent
		res := cResult{}
		res.size = cSize(unsafe.Sizeof(res))
		trace := make([]cTracePoint, 8)
		var msg *cChar
		st := gbsgo_evidence(fn, nil, ptr(x), chains, draws, d, nil, opt, &res, &trace[0], cInt64(len(trace)), &msg)
		if st != statusOK {
			t.Fatalf("status %d: %s", st, message(msg))
		}
		if msg != nil {
			t.Errorf("message set on success: %s", message(msg))
		}
		if math.Abs(float64(res.logz)) > 4*float64(res.logzerr) || !(res.logzerr > 0) {
			t.Errorf("ln Z = %g ± %g, exact 0", res.logz, res.logzerr)
		}
		if res.n_trace < 1 || res.n_trace > 8 || trace[res.n_trace-1].logz != res.logz {
			t.Errorf("trace of %d points does not end at the result", res.n_trace)
		}
		if concurrent == 1 && float64(res.logz) != logz {
			t.Errorf("concurrent callback changed ln Z: %g, serial %g", res.logz, logz)
		}
		logz = float64(res.logz)
		gbsgo_result_free(&res)
	}
	checkLive(t)
}

func TestCallbackErrors(t *testing.T) {
	x := normalDraws(400, 2, 2)
	for _, c := range []struct {
		name string
		fn   unsafe.Pointer
		want string
	}{
		{"failing", ctest.FailingLogP(), "log-density callback returned error code 7"},
		{"NaN", ctest.NaNLogP(), "log-density callback returned log p = NaN"},
	} {
		for _, concurrent := range []cInt32{0, 1} {
			opt := evidenceOptions()
			opt.concurrent, opt.batch_size = concurrent, 16
			res := cResult{}
			res.size = cSize(unsafe.Sizeof(res))
			var msg *cChar
			st := gbsgo_evidence(cLogDensityFn(c.fn), nil, ptr(x), 1, 400, 2, nil, opt, &res, nil, 0, &msg)
			if m := message(msg); st != statusCallback || !strings.Contains(m, c.want) {
				t.Errorf("%s callback: status %d, message %q; want %d and %q", c.name, st, m, statusCallback, c.want)
			}
			if res.warnings != nil || res.logz != 0 {
				t.Errorf("%s callback: result not zeroed", c.name)
			}
		}
	}
	checkLive(t)
}

func TestBadArguments(t *testing.T) {
	x := normalDraws(100, 2, 3)
	fn := cLogDensityFn(ctest.NormalLogP())
	res := cResult{}
	res.size = cSize(unsafe.Sizeof(res))
	small := evidenceOptions()
	small.size = 8
	for _, c := range []struct {
		name                string
		fn                  cLogDensityFn
		x                   []float64
		chains, draws, d    cInt64
		opt                 *cEvidenceOptions
		res                 *cResult
		wantStatus          int
		wantMessageContains string
	}{
		{"nil callback", nil, x, 1, 100, 2, nil, &res, statusArgument, "logp (the log-density callback) is NULL"},
		{"nil samples", fn, nil, 1, 100, 2, nil, &res, statusArgument, "samples is NULL"},
		{"d = 0", fn, x, 1, 100, 0, nil, &res, statusArgument, "d = 0"},
		{"negative draws", fn, x, 1, -1, 2, nil, &res, statusArgument, "n_draws = -1"},
		{"nil result", fn, x, 1, 100, 2, nil, nil, statusArgument, "gbs_result is NULL"},
		{"small options", fn, x, 1, 100, 2, small, &res, statusArgument, "smaller than sizeof(gbs_evidence_options)"},
	} {
		var msg *cChar
		st := gbsgo_evidence(c.fn, nil, ptr(c.x), c.chains, c.draws, c.d, nil, c.opt, c.res, nil, 0, &msg)
		if m := message(msg); int(st) != c.wantStatus || !strings.Contains(m, c.wantMessageContains) {
			t.Errorf("%s: status %d, message %q; want %d and %q", c.name, st, m, c.wantStatus, c.wantMessageContains)
		}
	}
	checkLive(t)
}

func TestNUTS(t *testing.T) {
	const chains, draws, d = 2, 300, 2
	opt := &cNutsOptions{warmup: 300, seed: 1, concurrent: 1}
	opt.size = cSize(unsafe.Sizeof(*opt))
	out := make([]float64, chains*draws*d)
	lp := make([]float64, chains*draws)
	var msg *cChar
	fn := cLogDensityGradFn(ctest.NormalLogPGrad())
	if st := gbsgo_nuts_sample(fn, nil, d, chains, draws, opt, ptr(out), ptr(lp), nil, &msg); st != statusOK {
		t.Fatalf("gbs_nuts_sample: status %d: %s", st, message(msg))
	}
	var m, v float64
	for i := 0; i < chains*draws; i++ {
		m += out[i*d]
		v += out[i*d] * out[i*d]
	}
	m /= chains * draws
	v = v/(chains*draws) - m*m
	if math.Abs(m) > 0.2 || math.Abs(v-1) > 0.3 {
		t.Errorf("x1: mean %g, variance %g; want 0 and 1", m, v)
	}

	res := cResult{}
	res.size = cSize(unsafe.Sizeof(res))
	if st := gbsgo_nuts_evidence(fn, nil, d, chains, draws, opt, nil, &res, nil, 0, nil, nil, nil, &msg); st != statusOK {
		t.Fatalf("gbs_nuts_evidence: status %d: %s", st, message(msg))
	}
	if math.Abs(float64(res.logz)) > 4*float64(res.logzerr) {
		t.Errorf("pipeline ln Z = %g ± %g, exact 0", res.logz, res.logzerr)
	}
	gbsgo_result_free(&res)
	checkLive(t)
}

func TestFlow(t *testing.T) {
	const n, d = 500, 2
	x := normalDraws(n, d, 4)
	opt := &cFlowOptions{layers: 2, seed: 3}
	opt.size = cSize(unsafe.Sizeof(*opt))
	var f *cFlow
	var msg *cChar
	if st := gbsgo_flow_fit(ptr(x), n, d, nil, opt, &f, &msg); st != statusOK {
		t.Fatalf("gbs_flow_fit: status %d: %s", st, message(msg))
	}
	lq := make([]float64, n)
	if st := gbsgo_flow_log_prob(f, ptr(x), n, ptr(lq), &msg); st != statusOK {
		t.Fatalf("gbs_flow_log_prob: status %d: %s", st, message(msg))
	}
	y := make([]float64, 10*d)
	ly := make([]float64, 10)
	if st := gbsgo_flow_sample(f, 10, 9, ptr(y), ptr(ly), &msg); st != statusOK {
		t.Fatalf("gbs_flow_sample: status %d: %s", st, message(msg))
	}
	var size cInt64
	if st := gbsgo_flow_to_buffer(f, nil, 0, &size, &msg); st != statusOK || size <= 0 {
		t.Fatalf("gbs_flow_to_buffer: status %d, size %d: %s", st, size, message(msg))
	}
	buf := make([]byte, size)
	if st := gbsgo_flow_to_buffer(f, unsafe.Pointer(&buf[0]), size, &size, &msg); st != statusOK {
		t.Fatalf("gbs_flow_to_buffer: status %d: %s", st, message(msg))
	}
	var g *cFlow
	if st := gbsgo_flow_from_buffer(unsafe.Pointer(&buf[0]), size, &g, &msg); st != statusOK {
		t.Fatalf("gbs_flow_from_buffer: status %d: %s", st, message(msg))
	}
	lg := make([]float64, n)
	if st := gbsgo_flow_log_prob(g, ptr(x), n, ptr(lg), &msg); st != statusOK {
		t.Fatalf("gbs_flow_log_prob after load: status %d: %s", st, message(msg))
	}
	for i := range lq {
		if lq[i] != lg[i] || math.IsNaN(lq[i]) || math.IsInf(lq[i], 0) {
			t.Fatalf("log q at point %d: %g before, %g after the round trip", i, lq[i], lg[i])
		}
	}
	for _, h := range []*cFlow{f, g} {
		if st := gbsgo_flow_free(h, &msg); st != statusOK {
			t.Fatalf("gbs_flow_free: status %d: %s", st, message(msg))
		}
	}
	st := gbsgo_flow_log_prob(f, ptr(x), n, ptr(lq), &msg)
	if m := message(msg); st != statusHandle || !strings.Contains(m, "already freed") {
		t.Errorf("freed flow: status %d, message %q", st, m)
	}
	checkLive(t)
}

func TestLogCallback(t *testing.T) {
	var msg *cChar
	if st := gbsgo_set_log_callback(cLogFn(ctest.CountLog()), nil, &msg); st != statusOK {
		t.Fatalf("gbs_set_log_callback: status %d: %s", st, message(msg))
	}
	defer gbsgo_set_log_callback(nil, nil, nil)
	before := ctest.LogCalls()
	x := normalDraws(400, 2, 5)
	opt := evidenceOptions()
	opt.verbose = 1
	res := cResult{}
	res.size = cSize(unsafe.Sizeof(res))
	if st := gbsgo_evidence(cLogDensityFn(ctest.NormalLogP()), nil, ptr(x), 1, 400, 2, nil, opt, &res, nil, 0, &msg); st != statusOK {
		t.Fatalf("gbs_evidence: status %d: %s", st, message(msg))
	}
	gbsgo_result_free(&res)
	if ctest.LogCalls() == before {
		t.Error("no message reached the log callback")
	}
	checkLive(t)
}

func TestCanceledToken(t *testing.T) {
	var tok *cCancelToken
	var msg *cChar
	if st := gbsgo_cancel_token_new(&tok, &msg); st != statusOK {
		t.Fatalf("gbs_cancel_token_new: status %d: %s", st, message(msg))
	}
	gbsgo_cancel(tok, nil)
	x := normalDraws(400, 2, 6)
	opt := evidenceOptions()
	opt.cancel = tok
	res := cResult{}
	res.size = cSize(unsafe.Sizeof(res))
	st := gbsgo_evidence(cLogDensityFn(ctest.NormalLogP()), nil, ptr(x), 1, 400, 2, nil, opt, &res, nil, 0, &msg)
	if m := message(msg); st != statusCanceled || !strings.Contains(m, "canceled") {
		t.Errorf("status %d, message %q; want %d", st, m, statusCanceled)
	}
	gbsgo_cancel_token_free(tok, nil)
	if st := gbsgo_cancel(tok, &msg); st != statusHandle {
		t.Errorf("freed token: status %d", st)
	}
	gbsgo_free_error(msg)
	checkLive(t)
}

func TestPanicBecomesStatus(t *testing.T) {
	var msg *cChar
	st := call("gbs_test", &msg, func() error { panic("boom") })
	if m := message(msg); st != statusInternal || !strings.Contains(m, "gbs_test: internal error") || !strings.Contains(m, "boom") {
		t.Errorf("status %d, message %q", st, m)
	}
	var nilSlice []float64
	st = call("gbs_test", &msg, func() error { _ = nilSlice[3]; return nil })
	if m := message(msg); st != statusInternal || !strings.Contains(m, "index out of range") {
		t.Errorf("status %d, message %q", st, m)
	}
	checkLive(t)
}

// TestVersion checks that the header's version macros, which gbs_version
// (in C, forkguard.c) spells out, agree with the Go constant gbs.Version;
// tests/c/test_version.c checks gbs_version against the same macros.
func TestVersion(t *testing.T) {
	if got := headerVersion(); got != gbs.Version {
		t.Errorf("GBS_VERSION_* = %q, gbs.Version = %q", got, gbs.Version)
	}
}
