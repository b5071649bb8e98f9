package main

// What bindings need from the library instead of copying it: the plan of
// log-density calls of gbs_evidence, draws from the proposal it fits, and
// the diagnostics' summary text.

/*
#include "gbs.h"
*/
import "C"

import (
	"fmt"
	"unsafe"

	seedpkg "github.com/gbs-evidence/gbs/internal/seed"

	"github.com/gbs-evidence/gbs/gbs"
	"github.com/gbs-evidence/gbs/internal/memlimit"
)

//export gbsgo_evidence_plan
func gbsgo_evidence_plan(nChains, nDraws, d C.int64_t, haveLogP C.int32_t, opt *C.gbs_evidence_options,
	planned, maxExtra *C.int64_t, errOut **C.char) C.int {
	return call("gbs_evidence_plan", errOut, func() error {
		if planned == nil {
			return argError("planned is NULL")
		}
		if _, err := count([]string{"n_chains", "n_draws", "d"}, nChains, nDraws, d); err != nil {
			return err
		}
		o, err := readEvidenceOptions(opt)
		if err != nil {
			return err
		}
		set, err := evidenceSettings(&o, int(d))
		if err != nil {
			return err
		}
		p, err := gbs.PlanEvaluations(int(nChains), int(nDraws), int(d), flag(haveLogP), int64(o.ncall), &set)
		if err != nil {
			return err
		}
		*planned = C.int64_t(p.Planned)
		if maxExtra != nil {
			*maxExtra = C.int64_t(p.MaxExtra)
		}
		return nil
	})
}

// proposalSampleStream is the random stream of the draws of
// gbs_evidence_proposal_sample, apart from gbs_flow_sample's.
const proposalSampleStream = 0x67627371

//export gbsgo_evidence_proposal_sample
func gbsgo_evidence_proposal_sample(samples *C.double, nChains, nDraws, d C.int64_t, opt *C.gbs_evidence_options,
	n C.int64_t, seed C.uint64_t, x, logq *C.double, errOut **C.char) C.int {
	return call("gbs_evidence_proposal_sample", errOut, func() error {
		total, err := count([]string{"n_chains", "n_draws", "d"}, nChains, nDraws, d)
		if err != nil {
			return err
		}
		size, err := count([]string{"n", "d"}, n, d)
		if err != nil {
			return err
		}
		in, err := doubles(samples, total, "samples")
		if err != nil {
			return err
		}
		out, err := doubles(x, size, "x")
		if err != nil {
			return err
		}
		lq, err := optionalDoubles(logq, int(n), "logq")
		if err != nil {
			return err
		}
		o, err := readEvidenceOptions(opt)
		if err != nil {
			return err
		}
		set, err := evidenceSettings(&o, int(d))
		if err != nil {
			return err
		}
		kind := drawsKind(o.independent)
		s := &gbs.Samples{Dim: int(d), Chains: splitRows(in, int(nChains)), Kind: kind, NCall: int64(o.ncall)}
		q, err := gbs.FittedProposal(s, &set)
		if err != nil {
			return err
		}
		if lq == nil {
			if err := memlimit.Check(fmt.Sprintf("n = %d log q values", int64(n)), 8, int(n)); err != nil {
				return err
			}
			lq = make([]float64, n)
		}
		q.Sample(out, lq, seedpkg.New(uint64(seed), proposalSampleStream))
		return nil
	})
}

//export gbsgo_diagnostics_summary
func gbsgo_diagnostics_summary(diag *C.gbs_diagnostics, buf *C.char, capacity C.int64_t, length *C.int64_t, errOut **C.char) C.int {
	return call("gbs_diagnostics_summary", errOut, func() error {
		if diag == nil {
			return argError("diag is NULL")
		}
		return writeText(diagnosticsFromC(diag).String(), buf, capacity, length)
	})
}

// writeText writes text and a terminating NUL into the caller's buffer
// buf of capacity bytes, and its length without the NUL to *length; with
// buf NULL only the length.
func writeText(text string, buf *C.char, capacity C.int64_t, length *C.int64_t) error {
	switch {
	case length == nil:
		return argError("len is NULL")
	case capacity < 0:
		return argError("cap = %d is negative", int64(capacity))
	}
	*length = C.int64_t(len(text))
	if buf == nil {
		return nil
	}
	if int64(capacity) <= int64(len(text)) {
		return newError(C.GBS_ERR_BUFFER_TOO_SMALL, "cap = %d bytes, the summary needs %d and its NUL", int64(capacity), len(text))
	}
	b := unsafe.Slice((*byte)(unsafe.Pointer(buf)), len(text)+1)
	copy(b, text)
	b[len(text)] = 0
	return nil
}

// diagnosticsFromC is diagnosticsToC's inverse, except that the lists of
// outlier and stuck chains come back as their first element only (with
// their length lost), which is all the C struct keeps; the round trip is
// tested.
func diagnosticsFromC(c *C.gbs_diagnostics) gbs.Diagnostics {
	chains := func(n, first C.int64_t) []int {
		if n <= 0 || first < 0 {
			return nil
		}
		out := make([]int, n)
		out[0] = int(first)
		return out
	}
	return gbs.Diagnostics{
		RHatMax:          float64(c.rhat_max),
		RHatCrit:         float64(c.rhat_crit),
		RHatWhere:        int(c.rhat_where),
		ESSBulkMin:       float64(c.ess_bulk_min),
		ESSTailMin:       float64(c.ess_tail_min),
		ESSBulkWhere:     int(c.ess_bulk_where),
		ESSTailWhere:     int(c.ess_tail_where),
		BurnInZ:          float64(c.burnin_z),
		BurnInWhere:      int(c.burnin_where),
		OutlierChains:    chains(c.n_outlier_chains, c.outlier_chain),
		StuckChains:      chains(c.n_stuck_chains, c.stuck_chain),
		SpotChecked:      int(c.spot_checked),
		SpotMaxDiff:      float64(c.spot_max_diff),
		ParetoKQ:         float64(c.pareto_k_q),
		ParetoKP:         float64(c.pareto_k_p),
		ParetoKThreshold: float64(c.pareto_k_threshold),
		CrossFitZ:        float64(c.crossfit_z),
		TiltZ:            float64(c.consistency_z),
		ISZ:              float64(c.is_z),
		HMZ:              float64(c.hm_z),
		CoverageFrac:     float64(c.coverage_frac),
		CoverageLimit:    float64(c.coverage_limit),
		CoverageWhere:    int(c.coverage_where),
		CoverageSide:     int(c.coverage_side),
		CoverageCalls:    int(c.coverage_calls),
	}
}
