package main

/*
#include "gbs.h"
*/
import "C"

import (
	"context"
	"fmt"
	"unsafe"

	"github.com/gbs-evidence/gbs/gbs"
	"github.com/gbs-evidence/gbs/internal/memlimit"
	"github.com/gbs-evidence/gbs/nuts"
	"github.com/gbs-evidence/gbs/pipeline"
)

// metricCodes lists the GBS_METRIC_* codes in the order of nuts.Metric.
var metricCodes = [...]C.int32_t{
	nuts.DiagMetric:  C.GBS_METRIC_DIAG,
	nuts.DenseMetric: C.GBS_METRIC_DENSE,
	nuts.UnitMetric:  C.GBS_METRIC_UNIT,
}

// Sizes of the structs in the header before the global moves' fields
// were added at their ends, which callers built against it still pass.
var (
	nutsOptionsOldSize = unsafe.Offsetof(C.gbs_nuts_options{}.global_moves)
	chainStatsOldSize  = unsafe.Offsetof(C.gbs_nuts_chain_stats{}.global_proposed)
)

// globalCodes maps the GBS_GLOBAL_* codes to gbs.Switch.
var globalCodes = map[C.int32_t]gbs.Switch{
	C.GBS_GLOBAL_DEFAULT: gbs.Auto,
	C.GBS_GLOBAL_ON:      gbs.On,
	C.GBS_GLOBAL_OFF:     gbs.Off,
}

// globalSettings converts the global-move options.
func globalSettings(o *C.gbs_nuts_options) (pipeline.GlobalSettings, error) {
	const name = "gbs_nuts_options"
	mode, ok := globalCodes[o.global_moves]
	switch {
	case !ok:
		return pipeline.GlobalSettings{}, argError("%s.global_moves = %d is not a GBS_GLOBAL_* value", name, int32(o.global_moves))
	case o.global_moves_per_iter < 0:
		return pipeline.GlobalSettings{}, argError("%s.global_moves_per_iter = %d is negative", name, int32(o.global_moves_per_iter))
	case o.global_stages < 0 || o.global_stages > 1<<20:
		return pipeline.GlobalSettings{}, argError("%s.global_stages = %d, want 0 (default) to 2^20", name, int64(o.global_stages))
	case o.global_stage_iters < 0 || o.global_stage_iters > 1<<30:
		return pipeline.GlobalSettings{}, argError("%s.global_stage_iters = %d, want 0 (default) to 2^30", name, int64(o.global_stage_iters))
	}
	return pipeline.GlobalSettings{Mode: mode, Moves: int(o.global_moves_per_iter),
		Stages: int(o.global_stages), StageIters: int(o.global_stage_iters)}, nil
}

// nutsSettings converts the NUTS options for the given shape.
func nutsSettings(o *C.gbs_nuts_options, d, chains, draws int) (nuts.Settings, error) {
	const name = "gbs_nuts_options"
	metric, err := codeIndex(metricCodes[:], o.metric, name+".metric", "GBS_METRIC_*")
	if err != nil {
		return nuts.Settings{}, err
	}
	init, err := optionalDoubles(o.init, chains*d, name+".init")
	if err != nil {
		return nuts.Settings{}, err
	}
	lo, hi, err := copyBounds(o.lower, o.upper, d, name)
	if err != nil {
		return nuts.Settings{}, err
	}
	s := nuts.Settings{
		Chains:       chains,
		Warmup:       int(o.warmup),
		Draws:        draws,
		MaxDepth:     int(o.max_depth),
		TargetAccept: float64(o.target_accept),
		Metric:       nuts.Metric(metric),
		StepSize:     float64(o.step_size),
		Lower:        lo,
		Upper:        hi,
		Seed:         uint64(o.seed),
		Threads:      1,
	}
	if init != nil {
		s.Init = splitRows(clone(init), chains)
	}
	if flag(o.concurrent) {
		s.Threads = 0
	}
	return s, nil
}

// outArray views the caller's array of n output structs of type T, each
// starting with its size_t size; the stride is the first element's size,
// so that structs from a newer header work too, and so do those from an
// older header down to old bytes (the caller then writes only the first
// size bytes of each). A nil p gives nil.
func outArray[T any](p *T, n int, name string, old uintptr) ([]*T, error) {
	if p == nil {
		return nil, nil
	}
	if size := uintptr(*(*C.size_t)(unsafe.Pointer(p))); size < old || size > unsafe.Sizeof(*p) {
		if err := checkOut(p, name); err != nil {
			return nil, err
		}
	}
	stride := uintptr(*(*C.size_t)(unsafe.Pointer(p)))
	if err := memlimit.Check(fmt.Sprintf("%d %s structs", n, name), 8, n); err != nil {
		return nil, err
	}
	out := make([]*T, n)
	for i := range out {
		e := unsafe.Add(unsafe.Pointer(p), uintptr(i)*stride)
		if s := uintptr(*(*C.size_t)(e)); s != stride {
			return nil, argError("%s[%d].size = %d differs from %s[0].size = %d", name, i, s, name, stride)
		}
		out[i] = (*T)(e)
	}
	return out, nil
}

// nutsOutputs are the caller's optional output buffers of a NUTS run.
type nutsOutputs struct {
	draws, logp []float64
	stats       []*C.gbs_nuts_chain_stats
}

func newNutsOutputs(draws, logp *C.double, stats *C.gbs_nuts_chain_stats, chains, n, d int) (*nutsOutputs, error) {
	var o nutsOutputs
	var err error
	if o.draws, err = optionalDoubles(draws, n*d, "draws"); err != nil {
		return nil, err
	}
	if o.logp, err = optionalDoubles(logp, n, "logp"); err != nil {
		return nil, err
	}
	if o.stats, err = outArray(stats, chains, "gbs_nuts_chain_stats", chainStatsOldSize); err != nil {
		return nil, err
	}
	return &o, nil
}

// write copies the sampler's result into the buffers that were given.
func (o *nutsOutputs) write(r *nuts.Result) {
	if o.draws != nil {
		off := 0
		for _, ch := range r.Draws {
			off += copy(o.draws[off:], ch)
		}
	}
	if o.logp != nil {
		off := 0
		for _, lp := range r.LogP {
			off += copy(o.logp[off:], lp)
		}
	}
	for c, p := range o.stats {
		s := &r.Chains[c]
		v := C.gbs_nuts_chain_stats{
			size:               p.size,
			step_size:          C.double(s.StepSize),
			mean_accept:        C.double(s.MeanAccept),
			mean_tree_depth:    C.double(s.MeanTreeDepth),
			divergences:        C.int64_t(s.Divergences),
			warmup_divergences: C.int64_t(s.WarmupDivergences),
			max_depth_hits:     C.int64_t(s.MaxDepthHits),
			leapfrogs:          C.int64_t(s.Leapfrogs),
			grad_calls:         C.int64_t(s.GradCalls),

			global_proposed:        C.int64_t(s.Global.Proposed),
			global_accepted:        C.int64_t(s.Global.Accepted),
			global_warmup_proposed: C.int64_t(s.Global.WarmupProposed),
			global_warmup_accepted: C.int64_t(s.Global.WarmupAccepted),
			global_calls:           C.int64_t(s.Global.Calls),
		}
		// A struct from an older header gets its own fields only.
		n := min(uintptr(p.size), unsafe.Sizeof(v))
		copy(unsafe.Slice((*byte)(unsafe.Pointer(p)), n), unsafe.Slice((*byte)(unsafe.Pointer(&v)), n))
	}
}

// nutsCall holds the checked arguments of gbs_nuts_sample(_batch) and of
// the sampling half of gbs_nuts_evidence(_batch).
type nutsCall struct {
	set    nuts.Settings
	global pipeline.GlobalSettings
	opt    C.gbs_nuts_options
	out    *nutsOutputs
}

// nutsCallArgs checks the arguments of gbs_nuts_sample(_batch)
// (drawsRequired) or of the sampling half of gbs_nuts_evidence(_batch),
// before any work: the function they all call, and the one their fuzz
// test calls. f is the callback, of the kind fKind.
func nutsCallArgs(f unsafe.Pointer, fKind string, d, nChains, nDraws C.int64_t, opt *C.gbs_nuts_options,
	draws, logp *C.double, stats *C.gbs_nuts_chain_stats, drawsRequired bool) (*nutsCall, error) {
	if f == nil {
		return nil, argError("f (the %s callback) is NULL", fKind)
	}
	n, err := count([]string{"n_chains", "n_draws", "d"}, nChains, nDraws, d)
	if err != nil {
		return nil, err
	}
	if drawsRequired && draws == nil {
		return nil, argError("draws is NULL")
	}
	out, err := newNutsOutputs(draws, logp, stats, int(nChains), n/int(d), int(d))
	if err != nil {
		return nil, err
	}
	o, err := readOptionsFrom(opt, "gbs_nuts_options", nutsOptionsOldSize)
	if err != nil {
		return nil, err
	}
	s, err := nutsSettings(&o, int(d), int(nChains), int(nDraws))
	if err != nil {
		return nil, err
	}
	g, err := globalSettings(&o)
	if err != nil {
		return nil, err
	}
	return &nutsCall{set: s, global: g, opt: o, out: out}, nil
}

// Kinds of NUTS callback, for messages.
const (
	gradKind      = "log-density-and-gradient"
	gradBatchKind = "batched log-density-and-gradient"
)

//export gbsgo_nuts_sample
func gbsgo_nuts_sample(f C.gbs_log_density_grad_fn, user unsafe.Pointer, d, nChains, nDraws C.int64_t,
	opt *C.gbs_nuts_options, draws, logp *C.double, stats *C.gbs_nuts_chain_stats, errOut **C.char) C.int {
	u := uintptr(user)
	return call("gbs_nuts_sample", errOut, func() error {
		return nutsSample(unsafe.Pointer(f), gradKind, d, nChains, nDraws, opt, draws, logp, stats, func(ctx context.Context, s *nuts.Settings) (*nuts.Result, error) {
			return nuts.Sample(ctx, gradDensity(f, u, int(d)), int(d), s)
		})
	})
}

//export gbsgo_nuts_sample_batch
func gbsgo_nuts_sample_batch(f C.gbs_log_density_grad_batch_fn, user unsafe.Pointer, d, nChains, nDraws C.int64_t,
	opt *C.gbs_nuts_options, draws, logp *C.double, stats *C.gbs_nuts_chain_stats, errOut **C.char) C.int {
	u := uintptr(user)
	return call("gbs_nuts_sample_batch", errOut, func() error {
		return nutsSample(unsafe.Pointer(f), gradBatchKind, d, nChains, nDraws, opt, draws, logp, stats, func(ctx context.Context, s *nuts.Settings) (*nuts.Result, error) {
			return nuts.SampleBatch(ctx, gradBatchDensity(f, u, int(d)), int(d), s)
		})
	})
}

// nutsSample is the body of gbs_nuts_sample and gbs_nuts_sample_batch:
// it checks the arguments, runs the sampler through run and writes the
// outputs.
func nutsSample(f unsafe.Pointer, fKind string, d, nChains, nDraws C.int64_t, opt *C.gbs_nuts_options, draws, logp *C.double,
	stats *C.gbs_nuts_chain_stats, run func(context.Context, *nuts.Settings) (*nuts.Result, error)) error {
	a, err := nutsCallArgs(f, fKind, d, nChains, nDraws, opt, draws, logp, stats, true)
	if err != nil {
		return err
	}
	ctx, cancel, err := callContext(a.opt.cancel)
	if err != nil {
		return err
	}
	defer cancel()
	s, _, err := pipeline.WithGlobalMoves(a.set, a.global, int(d))
	if err != nil {
		return err
	}
	r, err := run(ctx, &s)
	if err != nil {
		return err
	}
	a.out.write(r)
	return nil
}

//export gbsgo_nuts_evidence
func gbsgo_nuts_evidence(f C.gbs_log_density_grad_fn, user unsafe.Pointer, d, nChains, nDraws C.int64_t,
	nutsOpt *C.gbs_nuts_options, evOpt *C.gbs_evidence_options, result *C.gbs_result,
	trace *C.gbs_trace_point, traceCap C.int64_t, draws, logp *C.double,
	stats *C.gbs_nuts_chain_stats, errOut **C.char) C.int {
	u := uintptr(user)
	return call("gbs_nuts_evidence", errOut, func() error {
		return nutsEvidence(unsafe.Pointer(f), gradKind, d, nChains, nDraws, nutsOpt, evOpt, result, trace, traceCap, draws, logp, stats,
			func(ctx context.Context, s *pipeline.Settings) (*pipeline.Result, error) {
				return pipeline.NUTS(ctx, gradDensity(f, u, int(d)), int(d), s)
			})
	})
}

//export gbsgo_nuts_evidence_batch
func gbsgo_nuts_evidence_batch(f C.gbs_log_density_grad_batch_fn, user unsafe.Pointer, d, nChains, nDraws C.int64_t,
	nutsOpt *C.gbs_nuts_options, evOpt *C.gbs_evidence_options, result *C.gbs_result,
	trace *C.gbs_trace_point, traceCap C.int64_t, draws, logp *C.double,
	stats *C.gbs_nuts_chain_stats, errOut **C.char) C.int {
	u := uintptr(user)
	return call("gbs_nuts_evidence_batch", errOut, func() error {
		return nutsEvidence(unsafe.Pointer(f), gradBatchKind, d, nChains, nDraws, nutsOpt, evOpt, result, trace, traceCap, draws, logp, stats,
			func(ctx context.Context, s *pipeline.Settings) (*pipeline.Result, error) {
				return pipeline.NUTSBatch(ctx, gradBatchDensity(f, u, int(d)), int(d), s)
			})
	})
}

// nutsEvidence is the body of gbs_nuts_evidence and
// gbs_nuts_evidence_batch: it checks the arguments, runs the pipeline
// through run and writes the outputs.
func nutsEvidence(f unsafe.Pointer, fKind string, d, nChains, nDraws C.int64_t, nutsOpt *C.gbs_nuts_options, evOpt *C.gbs_evidence_options,
	result *C.gbs_result, trace *C.gbs_trace_point, traceCap C.int64_t, draws, logp *C.double,
	stats *C.gbs_nuts_chain_stats, run func(context.Context, *pipeline.Settings) (*pipeline.Result, error)) error {
	a, eo, es, tr, err := nutsEvidenceArgs(f, fKind, d, nChains, nDraws, nutsOpt, evOpt, result, trace, traceCap, draws, logp, stats)
	if err != nil {
		return err
	}
	ctx, cancel, err := callContext(a.opt.cancel, eo.cancel)
	if err != nil {
		return err
	}
	defer cancel()
	ps := &pipeline.Settings{Sampler: a.set, Evidence: es, Global: a.global}
	if a.out.draws != nil || a.out.logp != nil {
		// The caller's buffers hold n_draws per chain: no longer run.
		ps.RetryDrawsFactor = -1
	}
	r, err := run(ctx, ps)
	if err != nil {
		return err
	}
	a.out.write(r.Sampling)
	writeResult(result, r.Evidence, tr, es.Names, r)
	return nil
}

// nutsEvidenceArgs checks every argument of gbs_nuts_evidence(_batch),
// before any work: the function they call, and the one their fuzz test
// calls. It zeroes *result (whose size it checks).
func nutsEvidenceArgs(f unsafe.Pointer, fKind string, d, nChains, nDraws C.int64_t,
	nutsOpt *C.gbs_nuts_options, evOpt *C.gbs_evidence_options, result *C.gbs_result,
	trace *C.gbs_trace_point, traceCap C.int64_t, draws, logp *C.double,
	stats *C.gbs_nuts_chain_stats) (*nutsCall, C.gbs_evidence_options, gbs.Settings, []C.gbs_trace_point, error) {
	var eo C.gbs_evidence_options
	if err := startResult(result); err != nil {
		return nil, eo, gbs.Settings{}, nil, err
	}
	a, err := nutsCallArgs(f, fKind, d, nChains, nDraws, nutsOpt, draws, logp, stats, false)
	if err != nil {
		return nil, eo, gbs.Settings{}, nil, err
	}
	eo, es, tr, err := evidenceArgs(evOpt, int(d), trace, traceCap)
	return a, eo, es, tr, err
}
