package main

/*
#include "gbs.h"
*/
import "C"

import (
	"unsafe"

	"github.com/gbs-evidence/gbs/gbs"
	"github.com/gbs-evidence/gbs/pipeline"
)

// methodCodes lists the GBS_METHOD_* codes in the order of gbs.Method.
var methodCodes = [...]C.int32_t{
	gbs.Bridge: C.GBS_METHOD_BRIDGE,
	gbs.IS:     C.GBS_METHOD_IS,
	gbs.HM:     C.GBS_METHOD_HM,
	gbs.Warp3:  C.GBS_METHOD_WARP3,
}

// evidenceOptionsOldSize is the size of gbs_evidence_options in ABI
// version 3, before anneal and names, which callers built against that
// header still pass (and a header with anneal alone).
var evidenceOptionsOldSize = unsafe.Offsetof(C.gbs_evidence_options{}.anneal)

// annealCodes lists the GBS_ANNEAL_* codes by gbs.Switch.
var annealCodes = [...]C.int32_t{
	gbs.Auto: C.GBS_ANNEAL_AUTO,
	gbs.Off:  C.GBS_ANNEAL_OFF,
	gbs.On:   C.GBS_ANNEAL_ON,
}

// censusCodes lists the GBS_MODE_CENSUS_* codes by gbs.Switch.
var censusCodes = [...]C.int32_t{
	gbs.Auto: C.GBS_MODE_CENSUS_AUTO,
	gbs.Off:  C.GBS_MODE_CENSUS_OFF,
	gbs.On:   C.GBS_MODE_CENSUS_ON,
}

// symmetryCodes lists the GBS_SYMMETRY_* codes by gbs.Switch.
var symmetryCodes = [...]C.int32_t{
	gbs.Auto: C.GBS_SYMMETRY_AUTO,
	gbs.Off:  C.GBS_SYMMETRY_OFF,
	gbs.On:   C.GBS_SYMMETRY_ON,
}

// copySymmetryGroups reads n values at p: groups, each K, L and K×L
// coordinates (gbs.h); the core checks the coordinates against d.
func copySymmetryGroups(p *C.int64_t, n C.int64_t, d int, name string) ([]gbs.Blocks, error) {
	switch {
	case n < 0:
		return nil, argError("n_%s = %d is negative", name, int64(n))
	case n == 0:
		return nil, nil
	case p == nil:
		return nil, argError("%s is NULL but n_%s = %d", name, name, int64(n))
	case int64(n) > maxElems:
		return nil, argError("n_%s = %d is not the length of an array", name, int64(n))
	}
	v := unsafe.Slice((*int64)(unsafe.Pointer(p)), int(n))
	var out []gbs.Blocks
	for i := 0; i < len(v); {
		if i+2 > len(v) {
			return nil, argError("%s ends inside a group's K and L (at value %d of %d)", name, i, len(v))
		}
		k, l := v[i], v[i+1]
		if k < 2 || l < 1 || k > int64(d) || l > int64(d) {
			return nil, argError("%s: group at value %d has K = %d blocks of L = %d coordinates; want K >= 2, L >= 1, K*L <= d = %d", name, i, k, l, d)
		}
		if k*l > int64(d) || i+2+int(k*l) > len(v) {
			return nil, argError("%s: group at value %d needs K*L = %d coordinates, past the %d values given or d = %d", name, i, k*l, len(v), d)
		}
		g := make(gbs.Blocks, k)
		for a := range g {
			g[a] = make([]int, l)
			for j := range g[a] {
				g[a][j] = int(v[i+2+a*int(l)+j])
			}
		}
		out = append(out, g)
		i += 2 + int(k*l)
	}
	return out, nil
}

// offSwitch is the Switch of an auto/off option code read by offCode.
func offSwitch(off bool) gbs.Switch {
	if off {
		return gbs.Off
	}
	return gbs.Auto
}

// readEvidenceOptions reads the evidence options at p (nil: defaults).
func readEvidenceOptions(p *C.gbs_evidence_options) (C.gbs_evidence_options, error) {
	return readOptionsFrom(p, "gbs_evidence_options", evidenceOptionsOldSize)
}

// evidenceSettings converts the evidence options for samples of dimension d.
func evidenceSettings(o *C.gbs_evidence_options, d int) (gbs.Settings, error) {
	const name = "gbs_evidence_options"
	m, err := codeIndex(methodCodes[:], o.method, name+".method", "GBS_METHOD_*")
	if err != nil {
		return gbs.Settings{}, err
	}
	switch {
	case o.n_q < 0:
		return gbs.Settings{}, argError("%s.n_q = %d is negative", name, int64(o.n_q))
	case o.batch_size < 0:
		return gbs.Settings{}, argError("%s.batch_size = %d is negative", name, int64(o.batch_size))
	case o.ncall < 0:
		return gbs.Settings{}, argError("%s.ncall = %d is negative", name, int64(o.ncall))
	}
	crossOff, err := offCode(o.cross_fit, C.GBS_CROSS_FIT_AUTO, C.GBS_CROSS_FIT_OFF, name+".cross_fit", "GBS_CROSS_FIT_*")
	if err != nil {
		return gbs.Settings{}, err
	}
	coverageOff, err := offCode(o.coverage_check, C.GBS_COVERAGE_CHECK_AUTO, C.GBS_COVERAGE_CHECK_OFF, name+".coverage_check", "GBS_COVERAGE_CHECK_*")
	if err != nil {
		return gbs.Settings{}, err
	}
	anneal, err := codeIndex(annealCodes[:], o.anneal, name+".anneal", "GBS_ANNEAL_*")
	if err != nil {
		return gbs.Settings{}, err
	}
	census, err := codeIndex(censusCodes[:], o.mode_census, name+".mode_census", "GBS_MODE_CENSUS_*")
	if err != nil {
		return gbs.Settings{}, err
	}
	lo, hi, err := copyBounds(o.lower, o.upper, d, name)
	if err != nil {
		return gbs.Settings{}, err
	}
	names, err := copyNames(o.names, d, name+".names")
	if err != nil {
		return gbs.Settings{}, err
	}
	symmetry, err := codeIndex(symmetryCodes[:], o.symmetry, name+".symmetry", "GBS_SYMMETRY_*")
	if err != nil {
		return gbs.Settings{}, err
	}
	groups, err := copySymmetryGroups(o.symmetry_groups, o.n_symmetry_groups, d, name+".symmetry_groups")
	if err != nil {
		return gbs.Settings{}, err
	}
	return gbs.Settings{
		Symmetry:       gbs.Switch(symmetry),
		SymmetryGroups: groups,
		Names:          names,
		CrossFit:       offSwitch(crossOff),
		CoverageCheck:  offSwitch(coverageOff),
		Anneal:         gbs.Switch(anneal),
		ModeCensus:     gbs.Switch(census),
		Method:         gbs.Method(m),
		NQ:             int(o.n_q),
		Seed:           uint64(o.seed),
		FErr:           float64(o.f_err),
		FEva:           float64(o.f_eva),
		Lower:          lo,
		Upper:          hi,
		BatchSize:      int(o.batch_size),
		Concurrent:     flag(o.concurrent),
		Log:            logger(o.verbose),
	}, nil
}

// copyNames copies d NUL-terminated names from p (nil: none).
func copyNames(p **C.char, d int, name string) ([]string, error) {
	if p == nil {
		return nil, nil
	}
	out := make([]string, d)
	for k, c := range unsafe.Slice(p, d) {
		if c == nil {
			return nil, argError("%s[%d] is NULL", name, k)
		}
		out[k] = C.GoString(c)
	}
	return out, nil
}

// evidenceArgs reads the evidence options of a call on d-dimensional
// points and views its trace buffer.
func evidenceArgs(opt *C.gbs_evidence_options, d int, trace *C.gbs_trace_point, traceCap C.int64_t) (C.gbs_evidence_options, gbs.Settings, []C.gbs_trace_point, error) {
	o, err := readEvidenceOptions(opt)
	if err != nil {
		return o, gbs.Settings{}, nil, err
	}
	set, err := evidenceSettings(&o, d)
	if err != nil {
		return o, gbs.Settings{}, nil, err
	}
	tr, err := traceBuffer(trace, traceCap)
	return o, set, tr, err
}

// traceBuffer views the caller's trace buffer.
func traceBuffer(trace *C.gbs_trace_point, capacity C.int64_t) ([]C.gbs_trace_point, error) {
	switch {
	case capacity < 0:
		return nil, argError("trace_cap = %d is negative", int64(capacity))
	case int64(capacity) > maxElems/int64(unsafe.Sizeof(C.gbs_trace_point{})/8):
		return nil, argError("trace_cap = %d is not the length of a buffer", int64(capacity))
	case capacity > 0 && trace == nil:
		return nil, argError("trace is NULL but trace_cap = %d", int64(capacity))
	case capacity == 0:
		return nil, nil
	}
	return unsafe.Slice(trace, int(capacity)), nil
}

// writeResult fills out (whose size was checked) and the trace buffer; a
// caller of this ABI version gets the report of r (with the pipeline run
// p, or nil), whose messages name the coordinates by names.
func writeResult(out *C.gbs_result, r *gbs.Result, trace []C.gbs_trace_point, names []string, p *pipeline.Result) {
	for i, p := range r.Trace {
		if i == len(trace) {
			break
		}
		trace[i] = C.gbs_trace_point{n_q: C.int64_t(p.NQ), logz: C.double(p.LogZ), logzerr: C.double(p.LogZErr)}
	}
	warnings, info := r.Warnings(), r.Info()
	full := C.gbs_result{
		size:        out.size,
		logz:        C.double(r.LogZ),
		logzerr:     C.double(r.LogZErr),
		n_p:         C.int64_t(r.NP),
		n_q:         C.int64_t(r.NQ),
		ncall:       C.int64_t(r.NCall),
		tau:         C.double(r.Tau),
		re2_p:       C.double(r.RE2P),
		re2_q:       C.double(r.RE2Q),
		method:      methodCodes[r.Method],
		n_trace:     C.int64_t(len(r.Trace)),
		n_warnings:  C.int64_t(len(warnings)),
		warnings:    newWarnings(warnings),
		diagnostics: diagnosticsToC(&r.Diagnostics),
	}
	// A caller of an older ABI version has no room for the info list or
	// the report: they are not allocated, since nobody could free them.
	if uintptr(out.size) >= uintptr(resultSizeV3) {
		full.n_sampler_warnings = C.int64_t(len(r.DrawWarnings()))
		full.n_info = C.int64_t(len(info))
		full.info = newWarnings(info)
	}
	if uintptr(out.size) >= unsafe.Sizeof(full) {
		full.report = newReport(r, names, p)
	}
	copyResult(out, &full)
}

// resultSizeV1 to resultSizeV3 are sizeof(gbs_result) in ABI versions 1
// to 3, which callers built against those headers still pass.
const (
	resultSizeV1 = C.GBS_RESULT_SIZE_V1
	resultSizeV2 = C.GBS_RESULT_SIZE_V2
	resultSizeV3 = C.GBS_RESULT_SIZE_V3
)

// copyResult writes the first out.size bytes of full (at most all of it)
// into out: a caller of ABI version 1 has a shorter struct.
func copyResult(out, full *C.gbs_result) {
	n := min(uintptr(out.size), unsafe.Sizeof(*full))
	copy(unsafe.Slice((*byte)(unsafe.Pointer(out)), n), unsafe.Slice((*byte)(unsafe.Pointer(full)), n))
}

func diagnosticsToC(d *gbs.Diagnostics) C.gbs_diagnostics {
	first := func(c []int) C.int64_t {
		if len(c) == 0 {
			return -1
		}
		return C.int64_t(c[0])
	}
	return C.gbs_diagnostics{
		rhat_max:           C.double(d.RHatMax),
		rhat_crit:          C.double(d.RHatCrit),
		rhat_where:         C.int64_t(d.RHatWhere),
		ess_bulk_min:       C.double(d.ESSBulkMin),
		ess_tail_min:       C.double(d.ESSTailMin),
		ess_bulk_where:     C.int64_t(d.ESSBulkWhere),
		ess_tail_where:     C.int64_t(d.ESSTailWhere),
		burnin_z:           C.double(d.BurnInZ),
		burnin_where:       C.int64_t(d.BurnInWhere),
		n_outlier_chains:   C.int64_t(len(d.OutlierChains)),
		outlier_chain:      first(d.OutlierChains),
		n_stuck_chains:     C.int64_t(len(d.StuckChains)),
		stuck_chain:        first(d.StuckChains),
		spot_checked:       C.int64_t(d.SpotChecked),
		spot_max_diff:      C.double(d.SpotMaxDiff),
		pareto_k_q:         C.double(d.ParetoKQ),
		pareto_k_p:         C.double(d.ParetoKP),
		pareto_k_threshold: C.double(d.ParetoKThreshold),
		crossfit_z:         C.double(d.CrossFitZ),
		consistency_z:      C.double(d.TiltZ),
		is_z:               C.double(d.ISZ),
		hm_z:               C.double(d.HMZ),
		coverage_frac:      C.double(d.CoverageFrac),
		coverage_limit:     C.double(d.CoverageLimit),
		coverage_where:     C.int64_t(d.CoverageWhere),
		coverage_side:      C.int64_t(d.CoverageSide),
		coverage_calls:     C.int64_t(d.CoverageCalls),
	}
}

// startResult checks the caller's result struct and zeroes it, so that it
// is zero (warnings and info NULL) if the call fails.
func startResult(result *C.gbs_result) error {
	if result == nil {
		return argError("gbs_result is NULL")
	}
	// A struct of ABI version 1 is shorter by the diagnostics, one of
	// version 2 by the coverage fields at their end, the sampler-warning
	// count and the info list, one of version 3 by the report.
	if s := uintptr(result.size); s != uintptr(resultSizeV1) && s != uintptr(resultSizeV2) && s != uintptr(resultSizeV3) {
		if err := checkOut(result, "gbs_result"); err != nil {
			return err
		}
	}
	copyResult(result, &C.gbs_result{size: result.size})
	return nil
}

// evidenceCall holds the checked arguments of gbs_evidence.
type evidenceCall struct {
	samples *gbs.Samples
	set     gbs.Settings
	opt     C.gbs_evidence_options
	trace   []C.gbs_trace_point
}

// evidenceCallArgs checks every argument of gbs_evidence and converts
// them, before any work: the function gbs_evidence calls, and the one its
// fuzz test calls. It zeroes *result (whose size it checks) and reads no
// sample value.
func evidenceCallArgs(logp C.gbs_log_density_fn, samples *C.double, nChains, nDraws, d C.int64_t,
	logpSamples *C.double, opt *C.gbs_evidence_options, result *C.gbs_result,
	trace *C.gbs_trace_point, traceCap C.int64_t) (*evidenceCall, error) {
	if err := startResult(result); err != nil {
		return nil, err
	}
	if logp == nil {
		return nil, argError("logp (the log-density callback) is NULL")
	}
	n, err := count([]string{"n_chains", "n_draws", "d"}, nChains, nDraws, d)
	if err != nil {
		return nil, err
	}
	x, err := doubles(samples, n, "samples")
	if err != nil {
		return nil, err
	}
	lp, err := optionalDoubles(logpSamples, n/int(d), "logp_samples")
	if err != nil {
		return nil, err
	}
	o, set, tr, err := evidenceArgs(opt, int(d), trace, traceCap)
	if err != nil {
		return nil, err
	}
	kind := drawsKind(o.independent)
	s := &gbs.Samples{
		Dim:    int(d),
		Chains: splitRows(x, int(nChains)),
		Kind:   kind,
		NCall:  int64(o.ncall),
	}
	if lp != nil {
		s.LogP = splitRows(lp, int(nChains))
	}
	return &evidenceCall{samples: s, set: set, opt: o, trace: tr}, nil
}

//export gbsgo_evidence
func gbsgo_evidence(logp C.gbs_log_density_fn, user unsafe.Pointer, samples *C.double,
	nChains, nDraws, d C.int64_t, logpSamples *C.double, opt *C.gbs_evidence_options,
	result *C.gbs_result, trace *C.gbs_trace_point, traceCap C.int64_t, errOut **C.char) C.int {
	u := uintptr(user)
	return call("gbs_evidence", errOut, func() error {
		a, err := evidenceCallArgs(logp, samples, nChains, nDraws, d, logpSamples, opt, result, trace, traceCap)
		if err != nil {
			return err
		}
		ctx, cancel, err := callContext(a.opt.cancel)
		if err != nil {
			return err
		}
		defer cancel()
		r, err := gbs.Evidence(ctx, batchDensity(logp, u, int(d)), a.samples, &a.set)
		if err != nil {
			return err
		}
		writeResult(result, r, a.trace, a.set.Names, nil)
		return nil
	})
}

// drawsKind reads gbs_evidence_options.independent (GBS_DRAWS_*); any
// non-zero value but GBS_DRAWS_ENSEMBLE means independent draws, as it did
// before the names.
func drawsKind(v C.int32_t) gbs.DrawsKind {
	switch v {
	case C.GBS_DRAWS_CHAINS:
		return gbs.MCMCChains
	case C.GBS_DRAWS_ENSEMBLE:
		return gbs.EnsembleWalkers
	}
	return gbs.IndependentDraws
}
