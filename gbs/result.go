package gbs

import (
	"fmt"
	"strings"
)

// Result is the outcome of an evidence computation.
type Result struct {
	// LogZ is the estimate of ln Z and LogZErr its standard error,
	// sqrt(RE2P + RE2Q).
	LogZ, LogZErr float64
	// Method is the estimator used.
	Method Method
	// NP is the number of posterior draws in the estimator, NQ the number of
	// proposal draws; with cross-fitting both are summed over the two
	// passes (NP is then every draw).
	NP, NQ int
	// NCall is the number of log-density evaluations Evidence made.
	NCall int64
	// Tau is the integrated autocorrelation time used for the posterior
	// side of the error (1 for independent draws; with cross-fitting the
	// mean of the two passes').
	Tau float64
	// RE2P and RE2Q are the posterior and proposal terms of the squared
	// relative error. With cross-fitting RE2P counts the covariance of
	// the two passes' posterior terms (the part both owe to fitting q).
	RE2P, RE2Q float64
	// Trace holds ln Z estimated from growing prefixes of the proposal
	// draws, the last entry being the final estimate (bridge and IS).
	Trace []TracePoint
	// Warnings are conditions that did not stop the computation but may
	// make the result less reliable, such as chains too short for Tau,
	// unmixed chains or a log density that the draws do not follow; each
	// says what is wrong, its likely causes and what to do. None is
	// expected on a healthy run (docs/diagnostics.md gives each check's
	// false-alarm rate). The first SamplerWarnings entries are about the
	// draws (the chains: convergence, burn-in, layout, copied or stuck
	// chains, the sampler's divergences); the others are about the
	// estimate (the overlap of q and p, the consistency of draws and
	// log density, the proposal's fit).
	Warnings        []string
	SamplerWarnings int
	// Info holds facts worth knowing that are not warnings: designed
	// behaviour that worked (a NUTS run repeated at a higher acceptance
	// target), or limits that the error bar already accounts for (n_q
	// capped by memory).
	Info []string
	// Diagnostics are the numbers behind the checks of the input chains,
	// the stored log p and the overlap of p and q; Checks those behind the
	// checks for specific mistakes (copied or interleaved chains, a
	// flipped sign, draws piled against a boundary).
	Diagnostics Diagnostics
	Checks      Checks
	// AnnealSteps is the number of rungs K of the annealed bridge's path
	// (0: the direct bridge alone was used; see Settings.Anneal), and
	// AnnealCalls the log-density calls it spent (included in NCall).
	// When it ran, LogZ, LogZErr, RE2P, RE2Q and Trace are its, and the
	// overlap diagnostics read its works.
	AnnealSteps int
	AnnealCalls int64
}

// TracePoint is ln Z and its error from the first NQ proposal draws.
type TracePoint struct {
	NQ            int
	LogZ, LogZErr float64
}

// String summarizes the result on one line per item.
func (r *Result) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "method: %s\nln Z: %.6f +/- %.6f\n", r.Method, r.LogZ, r.LogZErr)
	fmt.Fprintf(&b, "n_p: %d  n_q: %d  log-density calls: %d  tau: %.3g\n", r.NP, r.NQ, r.NCall, r.Tau)
	fmt.Fprintf(&b, "diagnostics: %s", r.Diagnostics.String())
	if r.AnnealSteps > 0 {
		fmt.Fprintf(&b, "; annealed bridge: %d rungs, %d log-density calls", r.AnnealSteps, r.AnnealCalls)
	}
	b.WriteString("\n")
	for _, w := range r.Warnings {
		fmt.Fprintf(&b, "warning: %s\n", w)
	}
	for _, m := range r.Info {
		fmt.Fprintf(&b, "info: %s\n", m)
	}
	return b.String()
}

// DrawWarnings returns the warnings about the draws, the first
// SamplerWarnings entries of Warnings.
func (r *Result) DrawWarnings() []string {
	return r.Warnings[:min(max(r.SamplerWarnings, 0), len(r.Warnings))]
}

// addSamplerWarnings puts ws before the other warnings about the draws.
func (r *Result) addSamplerWarnings(ws []string) {
	if len(ws) == 0 {
		return
	}
	r.Warnings = append(ws[:len(ws):len(ws)], r.Warnings...)
	r.SamplerWarnings += len(ws)
}
