package main

/*
#include <stdint.h>
#include "gbs.h"

static gbs_ensemble *gbs_ensemble_of_id(uint64_t id) { return (gbs_ensemble *)(uintptr_t)id; }
*/
import "C"

import (
	"unsafe"

	"github.com/gbs-evidence/gbs/ensemble"
	"github.com/gbs-evidence/gbs/gbs"
	"github.com/gbs-evidence/gbs/pipeline"
)

const ensembleKind = "gbs_ensemble"

func ensembleID(p *C.gbs_ensemble) uint64      { return uint64(uintptr(unsafe.Pointer(p))) }
func ensembleHandle(id uint64) *C.gbs_ensemble { return C.gbs_ensemble_of_id(C.uint64_t(id)) }

// ensembleSettings converts the ensemble options for dimension d.
func ensembleSettings(o *C.gbs_ensemble_options, d int) (ensemble.Settings, error) {
	const name = "gbs_ensemble_options"
	for _, v := range []struct {
		val  C.int64_t
		name string
	}{{o.walkers, "walkers"}, {o.steps, "steps"}, {o.burn, "burn"}, {o.thin, "thin"}} {
		if v.val < 0 {
			return ensemble.Settings{}, argError("%s.%s = %d is negative", name, v.name, int64(v.val))
		}
	}
	if err := checkFinite(o.a, name+".a"); err != nil {
		return ensemble.Settings{}, err
	}
	var move ensemble.Move
	switch o.move {
	case C.GBS_MOVE_STRETCH:
		move = ensemble.Stretch
	case C.GBS_MOVE_DE:
		move = ensemble.DifferentialEvolution
	default:
		return ensemble.Settings{}, argError("%s.move = %d is not a GBS_MOVE_* value", name, int32(o.move))
	}
	lo, hi, err := copyBounds(o.lower, o.upper, d, name)
	if err != nil {
		return ensemble.Settings{}, err
	}
	s := ensemble.Settings{
		Walkers: int(o.walkers), Steps: int(o.steps), Burn: int(o.burn), Thin: int(o.thin),
		Move: move, A: float64(o.a), Seed: uint64(o.seed), Lower: lo, Upper: hi,
	}
	if o.init != nil {
		if o.walkers == 0 {
			return ensemble.Settings{}, argError("%s.init is set but walkers is 0: give the number of walkers", name)
		}
		init, err := doubles(o.init, int(o.walkers)*d, name+".init")
		if err != nil {
			return ensemble.Settings{}, err
		}
		s.Init = clone(init)
	}
	return s, nil
}

// ensembleArgs checks the arguments of gbs_ensemble_sample (and the
// sampling half of gbs_ensemble_evidence), before any work: the function
// both call, and the one their fuzz test calls.
func ensembleArgs(f C.gbs_log_density_fn, d C.int64_t, opt *C.gbs_ensemble_options) (ensemble.Settings, *C.gbs_cancel_token, error) {
	if f == nil {
		return ensemble.Settings{}, nil, argError("f (the log-density callback) is NULL")
	}
	if d <= 0 {
		return ensemble.Settings{}, nil, argError("d = %d, want at least 1", int64(d))
	}
	o, err := readOptions(opt, "gbs_ensemble_options")
	if err != nil {
		return ensemble.Settings{}, nil, err
	}
	if o.walkers != 0 && (o.walkers%2 != 0 || o.walkers < 2*d) {
		return ensemble.Settings{}, nil, argError("gbs_ensemble_options.walkers = %d: want an even number of at least 2d = %d", int64(o.walkers), 2*int64(d))
	}
	s, err := ensembleSettings(&o, int(d))
	return s, o.cancel, err
}

//export gbsgo_ensemble_sample
func gbsgo_ensemble_sample(f C.gbs_log_density_fn, user unsafe.Pointer, d C.int64_t, opt *C.gbs_ensemble_options, out **C.gbs_ensemble, errOut **C.char) C.int {
	u := uintptr(user)
	return call("gbs_ensemble_sample", errOut, func() error {
		if out == nil {
			return argError("out is NULL")
		}
		*out = nil
		s, tok, err := ensembleArgs(f, d, opt)
		if err != nil {
			return err
		}
		ctx, cancel, err := callContext(tok)
		if err != nil {
			return err
		}
		defer cancel()
		r, err := ensemble.Sample(ctx, ensemble.LogDensityFunc(batchDensity(f, u, int(d))), int(d), &s)
		if err != nil {
			return err
		}
		*out = ensembleHandle(handles.add(r))
		return nil
	})
}

//export gbsgo_ensemble_get_info
func gbsgo_ensemble_get_info(run *C.gbs_ensemble, info *C.gbs_ensemble_info, errOut **C.char) C.int {
	return call("gbs_ensemble_get_info", errOut, func() error {
		r, err := lookup[*ensemble.Result](ensembleID(run), ensembleKind)
		if err != nil {
			return err
		}
		if err := checkOut(info, "gbs_ensemble_info"); err != nil {
			return err
		}
		var tau, acc float64
		for _, t := range r.Tau {
			tau = max(tau, t)
		}
		for _, a := range r.AcceptanceFraction {
			acc += a / float64(len(r.AcceptanceFraction))
		}
		*info = C.gbs_ensemble_info{
			size: info.size, walkers: C.int64_t(r.Walkers), draws: C.int64_t(len(r.LogP[0])),
			burn: C.int64_t(r.Burn), thin: C.int64_t(r.Thin), ncall: C.int64_t(r.NCall),
			tau_max: C.double(tau), acceptance: C.double(acc), n_warnings: C.int64_t(len(r.Warnings)),
		}
		return nil
	})
}

//export gbsgo_ensemble_get_draws
func gbsgo_ensemble_get_draws(run *C.gbs_ensemble, draws, logp *C.double, errOut **C.char) C.int {
	return call("gbs_ensemble_get_draws", errOut, func() error {
		r, err := lookup[*ensemble.Result](ensembleID(run), ensembleKind)
		if err != nil {
			return err
		}
		m := len(r.LogP[0])
		x, err := doubles(draws, r.Walkers*m*r.Dim, "draws")
		if err != nil {
			return err
		}
		lp, err := optionalDoubles(logp, r.Walkers*m, "logp")
		if err != nil {
			return err
		}
		for w := range r.Chain {
			copy(x[w*m*r.Dim:], r.Chain[w])
			if lp != nil {
				copy(lp[w*m:], r.LogP[w])
			}
		}
		return nil
	})
}

//export gbsgo_ensemble_warnings
func gbsgo_ensemble_warnings(run *C.gbs_ensemble, warnings ***C.char, n *C.int64_t, errOut **C.char) C.int {
	return call("gbs_ensemble_warnings", errOut, func() error {
		r, err := lookup[*ensemble.Result](ensembleID(run), ensembleKind)
		if err != nil {
			return err
		}
		if warnings == nil {
			return argError("warnings is NULL")
		}
		*warnings = newWarnings(r.Warnings)
		if n != nil {
			*n = C.int64_t(len(r.Warnings))
		}
		return nil
	})
}

//export gbsgo_ensemble_free
func gbsgo_ensemble_free(run *C.gbs_ensemble, errOut **C.char) C.int {
	return call("gbs_ensemble_free", errOut, func() error {
		if run == nil {
			return nil
		}
		if _, err := lookup[*ensemble.Result](ensembleID(run), ensembleKind); err != nil {
			return err
		}
		return handles.remove(ensembleID(run), ensembleKind)
	})
}

//export gbsgo_ensemble_evidence
func gbsgo_ensemble_evidence(f C.gbs_log_density_fn, user unsafe.Pointer, d C.int64_t,
	ensOpt *C.gbs_ensemble_options, evOpt *C.gbs_evidence_options, result *C.gbs_result,
	trace *C.gbs_trace_point, traceCap C.int64_t, samplerCalls *C.int64_t, errOut **C.char) C.int {
	u := uintptr(user)
	return call("gbs_ensemble_evidence", errOut, func() error {
		s, tok, eo, es, tr, err := ensembleEvidenceArgs(f, d, ensOpt, evOpt, result, trace, traceCap)
		if err != nil {
			return err
		}
		ctx, cancel, err := callContext(tok, eo.cancel)
		if err != nil {
			return err
		}
		defer cancel()
		r, err := pipeline.Ensemble(ctx, batchDensity(f, u, int(d)), int(d), &pipeline.EnsembleSettings{Sampler: s, Evidence: es})
		if err != nil {
			return err
		}
		writeResult(result, r.Evidence, tr, es.Names, nil)
		if samplerCalls != nil {
			*samplerCalls = C.int64_t(r.SamplerCalls)
		}
		return nil
	})
}

// ensembleEvidenceArgs checks every argument of gbs_ensemble_evidence,
// before any work: the function it calls, and the one its fuzz test calls.
// It zeroes *result (whose size it checks).
func ensembleEvidenceArgs(f C.gbs_log_density_fn, d C.int64_t, ensOpt *C.gbs_ensemble_options,
	evOpt *C.gbs_evidence_options, result *C.gbs_result, trace *C.gbs_trace_point,
	traceCap C.int64_t) (ensemble.Settings, *C.gbs_cancel_token, C.gbs_evidence_options, gbs.Settings, []C.gbs_trace_point, error) {
	var eo C.gbs_evidence_options
	if err := startResult(result); err != nil {
		return ensemble.Settings{}, nil, eo, gbs.Settings{}, nil, err
	}
	s, tok, err := ensembleArgs(f, d, ensOpt)
	if err != nil {
		return ensemble.Settings{}, nil, eo, gbs.Settings{}, nil, err
	}
	eo, es, tr, err := evidenceArgs(evOpt, int(d), trace, traceCap)
	return s, tok, eo, es, tr, err
}
