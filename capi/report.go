package main

/*
#include <stdint.h>
#include <stdlib.h>
#include "gbs.h"

static gbs_report *gbs_report_of_id(uint64_t id) { return (gbs_report *)(uintptr_t)id; }
*/
import "C"

import (
	"math"
	"sync"
	"unsafe"

	"github.com/gbs-evidence/gbs/gbs"
	"github.com/gbs-evidence/gbs/pipeline"
)

// report is what a gbs_report handle stands for: the whole result of an
// evidence or pipeline call, with the findings' messages in C memory
// that lives as long as the handle.
type report struct {
	res      *gbs.Result
	names    []string
	messages []*C.char
	// sampling is the pipeline's (nil for gbs_evidence).
	sampling *pipeline.Result
}

// newReport registers a report of r (and of the pipeline run p, or nil)
// and returns its handle.
func newReport(r *gbs.Result, names []string, p *pipeline.Result) *C.gbs_report {
	rep := &report{res: r, names: names, sampling: p}
	for _, f := range r.Findings {
		rep.messages = append(rep.messages, C.CString(f.Message))
	}
	return C.gbs_report_of_id(C.uint64_t(handles.add(rep)))
}

func reportID(p *C.gbs_report) uint64 { return uint64(uintptr(unsafe.Pointer(p))) }

func lookupReport(p *C.gbs_report) (*report, error) {
	return lookup[*report](reportID(p), "gbs_report")
}

//export gbsgo_report_free
func gbsgo_report_free(p *C.gbs_report, errOut **C.char) C.int {
	return call("gbs_report_free", errOut, func() error {
		if p == nil {
			return nil
		}
		rep, err := lookupReport(p)
		if err != nil {
			return err
		}
		if err := handles.remove(reportID(p), "gbs_report"); err != nil {
			return err
		}
		for _, m := range rep.messages {
			C.free(unsafe.Pointer(m))
		}
		return nil
	})
}

//export gbsgo_result_free
func gbsgo_result_free(r *C.gbs_result) {
	if r == nil {
		return
	}
	gbsgo_free_warnings(r.warnings)
	r.warnings, r.n_warnings = nil, 0
	if uintptr(r.size) >= uintptr(resultSizeV2) && uintptr(r.size) > unsafe.Offsetof(r.info) {
		gbsgo_free_warnings(r.info)
		r.info, r.n_info = nil, 0
	}
	if uintptr(r.size) > unsafe.Offsetof(r.report) {
		gbsgo_report_free(r.report, nil)
		r.report = nil
	}
}

//export gbsgo_report_n_findings
func gbsgo_report_n_findings(p *C.gbs_report, n *C.int64_t, errOut **C.char) C.int {
	return call("gbs_report_n_findings", errOut, func() error {
		rep, err := lookupReport(p)
		if err != nil {
			return err
		}
		if n == nil {
			return argError("n is NULL")
		}
		*n = C.int64_t(len(rep.res.Findings))
		return nil
	})
}

//export gbsgo_report_finding
func gbsgo_report_finding(p *C.gbs_report, i C.int64_t, out *C.gbs_finding, errOut **C.char) C.int {
	return call("gbs_report_finding", errOut, func() error {
		rep, err := lookupReport(p)
		if err != nil {
			return err
		}
		if i < 0 || int64(i) >= int64(len(rep.res.Findings)) {
			return argError("finding %d of %d", int64(i), len(rep.res.Findings))
		}
		if err := checkOut(out, "gbs_finding"); err != nil {
			return err
		}
		f := rep.res.Findings[i]
		v := C.gbs_finding{size: out.size, check: C.int32_t(f.Check), kind: C.int32_t(f.Kind),
			where: C.int64_t(f.Where), value: C.double(f.Value), limit: C.double(f.Limit), message: rep.messages[i]}
		writeOut(out, &v)
		return nil
	})
}

//export gbsgo_report_diagnostics_ext
func gbsgo_report_diagnostics_ext(p *C.gbs_report, out *C.gbs_diagnostics_ext, errOut **C.char) C.int {
	return call("gbs_report_diagnostics_ext", errOut, func() error {
		rep, err := lookupReport(p)
		if err != nil {
			return err
		}
		if err := checkOut(out, "gbs_diagnostics_ext"); err != nil {
			return err
		}
		v := diagnosticsExtToC(rep.res)
		v.size = out.size
		writeOut(out, &v)
		return nil
	})
}

// diagnosticsExtToC fills gbs_diagnostics_ext from r.
func diagnosticsExtToC(r *gbs.Result) C.gbs_diagnostics_ext {
	d := &r.Diagnostics
	first := C.int64_t(-1)
	if len(d.CopiedChains) > 0 {
		first = C.int64_t(d.CopiedChains[0][0])
	}
	return C.gbs_diagnostics_ext{
		n_copied_groups:   C.int64_t(len(d.CopiedChains)),
		copied_chain:      first,
		step_corr_max:     C.double(d.StepCorrMax),
		interleave_period: C.int64_t(d.InterleavePeriod),
		interleave_rho:    C.double(d.InterleaveRho),
		sign_corr:         C.double(d.SignCorr),
		outside_share:     C.double(d.OutsideShare),
		pile_up_where:     C.int64_t(d.PileUpWhere),
		pile_up_ratio:     C.double(d.PileUpRatio),
		coverage_covered:  C.double(d.CoverageCovered),
		coverage_ks:       C.double(d.CoverageKS),
		coverage_ks_limit: C.double(d.CoverageKSLimit),
		coverage_ks_at:    C.double(d.CoverageKSAt),
		census_modes:      C.int64_t(len(d.CensusModes)),
		census_shortfall:  C.double(d.CensusShortfall),
		census_calls:      C.int64_t(d.CensusCalls),
		symmetry_calls:    C.int64_t(d.SymmetryCalls),
		anneal_steps:      C.int64_t(r.AnnealSteps),
		anneal_calls:      C.int64_t(r.AnnealCalls),
	}
}

//export gbsgo_report_summary
func gbsgo_report_summary(p *C.gbs_report, buf *C.char, capacity C.int64_t, n *C.int64_t, errOut **C.char) C.int {
	return call("gbs_report_summary", errOut, func() error {
		rep, err := lookupReport(p)
		if err != nil {
			return err
		}
		return writeText(rep.res.Diagnostics.Summary(rep.names), buf, capacity, n)
	})
}

//export gbsgo_report_sampling
func gbsgo_report_sampling(p *C.gbs_report, out *C.gbs_sampling, errOut **C.char) C.int {
	return call("gbs_report_sampling", errOut, func() error {
		rep, err := lookupReport(p)
		if err != nil {
			return err
		}
		if err := checkOut(out, "gbs_sampling"); err != nil {
			return err
		}
		v := C.gbs_sampling{size: out.size, global_accept_rate: C.double(math.NaN())}
		if s := rep.sampling; s != nil {
			v.n_chains, v.n_draws, v.d = C.int64_t(len(s.Sampling.Draws)), C.int64_t(len(s.Sampling.LogP[0])), C.int64_t(s.Sampling.Dim)
			v.target_accept = C.double(s.TargetAccept)
			v.retried, v.lengthened, v.global_moves = cbool(s.Retried), cbool(s.Lengthened), cbool(s.Global)
			v.global_accept_rate = C.double(s.GlobalAcceptRate)
			v.grad_calls, v.logdensity_calls = C.int64_t(s.GradCalls), C.int64_t(s.LogDensityCalls)
			v.sampling_seconds, v.evidence_seconds = C.double(s.SamplingTime.Seconds()), C.double(s.EvidenceTime.Seconds())
		}
		writeOut(out, &v)
		return nil
	})
}

//export gbsgo_report_draws
func gbsgo_report_draws(p *C.gbs_report, draws, logp *C.double, stats *C.gbs_nuts_chain_stats, errOut **C.char) C.int {
	return call("gbs_report_draws", errOut, func() error {
		rep, err := lookupReport(p)
		if err != nil {
			return err
		}
		if rep.sampling == nil {
			return argError("the report holds no draws: it is not a pipeline's")
		}
		r := rep.sampling.Sampling
		chains, m := len(r.Draws), len(r.LogP[0])
		out, err := newNutsOutputs(draws, logp, stats, chains, chains*m, r.Dim)
		if err != nil {
			return err
		}
		out.write(r)
		return nil
	})
}

// checkInfoStrings holds each check's description as C strings, made once
// and never freed: gbs_check_info hands out static strings.
var checkInfoStrings = sync.OnceValue(func() map[gbs.Check][4]*C.char {
	m := map[gbs.Check][4]*C.char{}
	for _, c := range gbs.AllChecks() {
		info, _ := c.Info()
		m[c] = [4]*C.char{C.CString(info.ID), C.CString(info.Title), C.CString(info.Meaning), C.CString(info.Action)}
	}
	return m
})

//export gbsgo_checks
func gbsgo_checks(codes *C.int32_t, capacity C.int64_t, n *C.int64_t, errOut **C.char) C.int {
	return call("gbs_checks", errOut, func() error {
		if n == nil {
			return argError("n is NULL")
		}
		all := gbs.AllChecks()
		*n = C.int64_t(len(all))
		switch {
		case capacity < 0:
			return argError("cap = %d is negative", int64(capacity))
		case capacity > 0 && codes == nil:
			return argError("codes is NULL but cap = %d", int64(capacity))
		case int64(capacity) < int64(len(all)):
			if capacity == 0 && codes == nil {
				return nil
			}
			return newError(C.GBS_ERR_BUFFER_TOO_SMALL, "%d check codes, cap is %d", len(all), int64(capacity))
		}
		dst := unsafe.Slice(codes, len(all))
		for i, c := range all {
			dst[i] = C.int32_t(c)
		}
		return nil
	})
}

//export gbsgo_check_get_info
func gbsgo_check_get_info(code C.int32_t, out *C.gbs_check_info, errOut **C.char) C.int {
	return call("gbs_check_get_info", errOut, func() error {
		c := gbs.Check(code)
		info, ok := c.Info()
		if !ok {
			return argError("%d is not a GBS_CHECK_* code", int32(code))
		}
		if err := checkOut(out, "gbs_check_info"); err != nil {
			return err
		}
		s := checkInfoStrings()[c]
		v := C.gbs_check_info{size: out.size, check: code, kind: C.int32_t(info.Kind), id: s[0], title: s[1], meaning: s[2], action: s[3]}
		writeOut(out, &v)
		return nil
	})
}

// writeOut copies v into the caller's struct out, whose size field it
// keeps: a struct from an older header gets its own fields only.
func writeOut[T any](out, v *T) {
	n := min(uintptr(*(*C.size_t)(unsafe.Pointer(out))), unsafe.Sizeof(*v))
	copy(unsafe.Slice((*byte)(unsafe.Pointer(out)), n), unsafe.Slice((*byte)(unsafe.Pointer(v)), n))
}

func cbool(b bool) C.int32_t {
	if b {
		return 1
	}
	return 0
}
