package main

// Fuzz tests of the argument checks of the C entry points. Each exported
// function checks all its arguments in one function (evidenceCallArgs,
// nutsCallArgs, ...) before any work; these targets call exactly those
// functions with arbitrary sizes, enumeration values, struct sizes and
// NULL or non-NULL pointers. The checks must never panic, must report
// every refusal as GBS_ERR_ARGUMENT with a message, and what they accept
// must be consistent with the arguments. Pointers to arrays the checks
// only view (samples, output buffers) point to a small buffer whatever
// the declared size: the checks must not read them. Arrays they copy
// (bounds, starting points) are passed only when the buffer holds them.

import (
	"math"
	"runtime"
	"strings"
	"testing"
	"unsafe"

	"github.com/gbs-evidence/gbs/capi/internal/ctest"
	"github.com/gbs-evidence/gbs/ensemble"
)

// fuzzBuf is the number of doubles behind every array pointer of the
// fuzz targets, in C memory (ctest.Buffer), so that the views past it
// that the checks create (and must not read) never point into the Go
// heap; maxView is the largest array, in doubles, declared behind a
// pointer: above what the checks accept, so that their bound is tested.
const (
	fuzzBuf = 4096
	maxView = 1 << 47
)

// fuzzBuffer returns the C memory behind the fuzz targets' arrays.
func fuzzBuffer() []float64 {
	return unsafe.Slice((*float64)(ctest.Buffer(8*fuzzBuf)), fuzzBuf)
}

// sized places v at the start of a zeroed buffer and sets its size field
// (the first, size_t) from delta: sizeof(T) + delta, at least 0, or far
// more than any struct when huge is set. dirty puts a non-zero byte just
// past the known fields.
func sized[T any](v T, delta int8, huge, dirty bool) *T {
	known := int(unsafe.Sizeof(v))
	buf := make([]uint64, (known+128+7)/8)
	p := (*T)(unsafe.Pointer(&buf[0]))
	*p = v
	size := max(known+int(delta), 0)
	if huge {
		size = 1 << 40
	}
	*(*cSize)(unsafe.Pointer(p)) = cSize(size)
	if dirty {
		*(*byte)(unsafe.Add(unsafe.Pointer(p), known)) = 1
	}
	return p
}

// prod is the product of the sizes, or -1 if one is negative or the
// product overflows.
func prod(sizes ...int64) int64 {
	p := int64(1)
	for _, v := range sizes {
		if v < 0 || (v > 0 && p > math.MaxInt64/v) {
			return -1
		}
		p *= v
	}
	return p
}

// checkRefusal asserts that a refusal is an argument error with a message.
func checkRefusal(t *testing.T, fn string, err error) {
	t.Helper()
	if st := statusOf(err); st != statusArgument {
		t.Fatalf("%s: status %d for %v, want GBS_ERR_ARGUMENT", fn, st, err)
	}
	if strings.TrimSpace(err.Error()) == "" {
		t.Fatalf("%s: empty message", fn)
	}
}

// arrays returns the pointers the flags select: bit b set gives a
// pointer into buf for array b, else NULL. Arrays the checks copy are
// given only when their n doubles fit in buf, the others only when n is at
// most maxView (a NULL pointer is an error, so larger sizes still reach
// the checks).
func arrays(buf []float64, flags uint16, copied, viewed map[int]int64) []*cDouble {
	out := make([]*cDouble, 8)
	for b := range out {
		if flags&(1<<b) == 0 {
			continue
		}
		if n, ok := copied[b]; ok && (n < 0 || n > int64(len(buf))) {
			continue
		}
		if n, ok := viewed[b]; ok && (n < 0 || n > maxView) {
			continue
		}
		out[b] = (*cDouble)(unsafe.Pointer(&buf[0]))
	}
	return out
}

func FuzzEvidenceArgs(f *testing.F) {
	f.Add(int64(2), int64(100), int64(3), uint16(0x1f), int32(0), int64(0), int64(0), int64(0), int32(0), int64(8), int8(0), int8(0), uint8(0))
	f.Add(int64(1), int64(10), int64(1), uint16(0x01), int32(3), int64(1000), int64(16), int64(5), int32(1), int64(0), int8(0), int8(0), uint8(0))
	f.Add(int64(1), int64(1)<<40, int64(1)<<20, uint16(0x01), int32(9), int64(-1), int64(-1), int64(-1), int32(7), int64(-1), int8(-8), int8(8), uint8(7))
	f.Add(int64(4), int64(1000), int64(2), uint16(0x01), int32(0), int64(1)<<62, int64(0), int64(0), int32(0), int64(0), int8(0), int8(0), uint8(0))
	buf := fuzzBuffer()
	trace := unsafe.Slice((*cTracePoint)(ctest.Buffer(16*int(unsafe.Sizeof(cTracePoint{})))), 16)
	fn := cLogDensityFn(ctest.NormalLogP())
	f.Fuzz(func(t *testing.T, nChains, nDraws, d int64, flags uint16, method int32, nq, batch, ncall int64,
		crossFit int32, traceCap int64, optDelta, resDelta int8, bits uint8) {
		p := arrays(buf, flags, map[int]int64{3: d, 4: d}, map[int]int64{0: prod(nChains, nDraws, d), 1: prod(nChains, nDraws)})
		o := cEvidenceOptions{method: cInt32(method), n_q: cInt64(nq), batch_size: cInt64(batch), ncall: cInt64(ncall),
			cross_fit: cInt32(crossFit), lower: p[3], upper: p[4]}
		var opt *cEvidenceOptions
		if flags&(1<<5) != 0 {
			opt = sized(o, optDelta, bits&1 != 0, bits&2 != 0)
		}
		var res *cResult
		if flags&(1<<6) != 0 {
			res = sized(cResult{}, resDelta, bits&4 != 0, false)
		}
		var tr *cTracePoint
		if flags&(1<<7) != 0 {
			tr = &trace[0]
		}
		logp := fn
		if flags&(1<<8) != 0 {
			logp = nil
		}
		a, err := evidenceCallArgs(logp, p[0], cInt64(nChains), cInt64(nDraws), cInt64(d), p[1], opt, res, tr, cInt64(traceCap))
		runtime.KeepAlive(buf)
		if err != nil {
			checkRefusal(t, "gbs_evidence", err)
			return
		}
		if opt == nil {
			o = cEvidenceOptions{} // the defaults
		}
		s := a.samples
		if len(s.Chains) != int(nChains) || s.Dim != int(d) || s.Draws() != int(nDraws) || a.set.NQ != int(o.n_q) ||
			a.set.BatchSize != int(o.batch_size) || s.NCall != int64(o.ncall) || (s.LogP != nil) != (p[1] != nil) {
			t.Fatalf("accepted arguments changed: %d chains × %d draws × d %d, options %+v -> samples %d × %d × %d, settings %+v",
				nChains, nDraws, d, o, len(s.Chains), s.Draws(), s.Dim, a.set)
		}
		if len(a.trace) != int(traceCap) {
			t.Fatalf("trace of %d points for trace_cap %d", len(a.trace), traceCap)
		}
	})
}

func FuzzNutsArgs(f *testing.F) {
	f.Add(int64(3), int64(2), int64(100), uint16(0x0f), int64(100), int32(10), int32(0), false, int8(0), uint8(0))
	f.Add(int64(1), int64(1), int64(1)<<40, uint16(0x01), int64(-1), int32(31), int32(5), true, int8(-3), uint8(3))
	f.Add(int64(4), int64(4), int64(1000000000000), uint16(0x01), int64(0), int32(0), int32(0), true, int8(0), uint8(0))
	buf := fuzzBuffer()
	stats := make([]cNutsChainStats, 8)
	for i := range stats {
		stats[i].size = cSize(unsafe.Sizeof(stats[0]))
	}
	fn := cLogDensityGradFn(ctest.NormalLogPGrad())
	f.Fuzz(func(t *testing.T, d, nChains, nDraws int64, flags uint16, warmup int64, maxDepth, metric int32,
		evidence bool, optDelta int8, bits uint8) {
		p := arrays(buf, flags, map[int]int64{2: prod(nChains, d), 3: d, 4: d}, map[int]int64{0: prod(nChains, nDraws, d), 1: prod(nChains, nDraws)})
		o := cNutsOptions{warmup: cInt64(warmup), max_depth: cInt32(maxDepth), metric: cInt32(metric), init: p[2], lower: p[3], upper: p[4]}
		var opt *cNutsOptions
		if flags&(1<<5) != 0 {
			opt = sized(o, optDelta, bits&1 != 0, bits&2 != 0)
		}
		var st *cNutsChainStats
		if flags&(1<<6) != 0 && nChains <= int64(len(stats)) {
			st = &stats[0]
		}
		grad := fn
		if flags&(1<<8) != 0 {
			grad = nil
		}
		var err error
		var a *nutsCall
		name := "gbs_nuts_sample"
		if evidence {
			name = "gbs_nuts_evidence"
			res := sized(cResult{}, 0, false, false)
			a, _, _, _, err = nutsEvidenceArgs(unsafe.Pointer(grad), gradKind, cInt64(d), cInt64(nChains), cInt64(nDraws), opt, nil, res, nil, 0, p[0], p[1], st)
		} else {
			a, err = nutsCallArgs(unsafe.Pointer(grad), gradKind, cInt64(d), cInt64(nChains), cInt64(nDraws), opt, p[0], p[1], st, true)
		}
		runtime.KeepAlive(buf)
		if err != nil {
			checkRefusal(t, name, err)
			return
		}
		if a.set.Chains != int(nChains) || a.set.Draws != int(nDraws) || (a.set.Init != nil) != (opt != nil && p[2] != nil) {
			t.Fatalf("%s: accepted %d chains × %d draws (init %v) as %+v", name, nChains, nDraws, p[2] != nil, a.set)
		}
		if a.set.Init != nil && (len(a.set.Init) != int(nChains) || len(a.set.Init[0]) != int(d)) {
			t.Fatalf("%s: Init of %d × %d for %d chains, d = %d", name, len(a.set.Init), len(a.set.Init[0]), nChains, d)
		}
	})
}

func FuzzEnsembleArgs(f *testing.F) {
	f.Add(int64(2), uint16(0x0f), int64(8), int64(100), int64(10), int64(1), int32(0), 2.0, false, int8(0), uint8(0))
	f.Add(int64(1), uint16(0x01), int64(0), int64(1)<<40, int64(-1), int64(-1), int32(2), -1.0, true, int8(5), uint8(2))
	f.Add(int64(3), uint16(0x21), int64(7), int64(0), int64(0), int64(0), int32(1), 0.0, true, int8(0), uint8(0))
	buf := fuzzBuffer()
	fn := cLogDensityFn(ctest.NormalLogP())
	f.Fuzz(func(t *testing.T, d int64, flags uint16, walkers, steps, burn, thin int64, move int32, a float64,
		evidence bool, optDelta int8, bits uint8) {
		p := arrays(buf, flags, map[int]int64{2: prod(walkers, d), 3: d, 4: d}, nil)
		o := cEnsembleOptions{walkers: cInt64(walkers), steps: cInt64(steps), burn: cInt64(burn), thin: cInt64(thin),
			move: cInt32(move), a: cDouble(a), init: p[2], lower: p[3], upper: p[4]}
		var opt *cEnsembleOptions
		if flags&(1<<5) != 0 {
			opt = sized(o, optDelta, bits&1 != 0, bits&2 != 0)
		}
		lf := fn
		if flags&(1<<8) != 0 {
			lf = nil
		}
		var err error
		var s ensemble.Settings
		name := "gbs_ensemble_sample"
		if evidence {
			name = "gbs_ensemble_evidence"
			res := sized(cResult{}, 0, false, false)
			s, _, _, _, _, err = ensembleEvidenceArgs(lf, cInt64(d), opt, nil, res, nil, 0)
		} else {
			s, _, err = ensembleArgs(lf, cInt64(d), opt)
		}
		runtime.KeepAlive(buf)
		if err != nil {
			checkRefusal(t, name, err)
			return
		}
		if opt != nil && (s.Walkers != int(walkers) || s.Steps != int(steps)) {
			t.Fatalf("%s: accepted walkers %d, steps %d as %+v", name, walkers, steps, s)
		}
		if s.Init != nil && len(s.Init) != s.Walkers*int(d) {
			t.Fatalf("%s: Init of %d values for %d walkers, d = %d", name, len(s.Init), s.Walkers, d)
		}
	})
}

func FuzzFlowFitArgs(f *testing.F) {
	f.Add(int64(100), int64(3), uint16(0x1f), int32(0), int32(0), int32(0), int32(0), int32(0), int32(0), 0.0, int8(0), uint8(0))
	f.Add(int64(1)<<40, int64(1)<<20, uint16(0x01), int32(-1), int32(9), int32(-2), int32(3), int32(5), int32(2), -1.0, int8(-9), uint8(1))
	buf := fuzzBuffer()
	f.Fuzz(func(t *testing.T, n, d int64, flags uint16, maxLayers, layers, knots, whiten, rotation, conditional int32,
		damping float64, optDelta int8, bits uint8) {
		p := arrays(buf, flags, map[int]int64{3: d, 4: d}, map[int]int64{0: prod(n, d), 1: n})
		o := cFlowOptions{max_layers: cInt32(maxLayers), layers: cInt32(layers), knots: cInt32(knots), whiten: cInt32(whiten), rotation: cInt32(rotation),
			conditional: cInt32(conditional), damping: cDouble(damping), lower: p[3], upper: p[4]}
		var opt *cFlowOptions
		if flags&(1<<5) != 0 {
			opt = sized(o, optDelta, bits&1 != 0, bits&2 != 0)
		}
		var out *cFlow
		outp := &out
		if flags&(1<<6) != 0 {
			outp = nil
		}
		pts, w, set, err := flowFitArgs(p[0], cInt64(n), cInt64(d), p[1], opt, outp)
		runtime.KeepAlive(buf)
		if err != nil {
			checkRefusal(t, "gbs_flow_fit", err)
			return
		}
		if len(pts) != int(n*d) || (w != nil && len(w) != int(n)) || out != nil {
			t.Fatalf("accepted n %d, d %d as %d points, %d weights", n, d, len(pts), len(w))
		}
		if opt != nil && (set.Layers != int(layers) || set.Knots != int(knots)) {
			t.Fatalf("accepted layers %d, knots %d as %+v", layers, knots, set)
		}
	})
}
