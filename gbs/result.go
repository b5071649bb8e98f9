package gbs

import (
	"fmt"
	"slices"
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
	// Findings are what the checks found: warnings (Kind KindDraws or
	// KindEstimate), which may make the result less reliable and are
	// not expected on a healthy run (docs/diagnostics.md gives each
	// check's false-alarm rate), and information (KindInfo). Warnings
	// about the draws come first, then those about the estimate, then
	// information. Code branches on a finding's Check, never on its
	// Message.
	Findings []Finding
	// Diagnostics are the numbers behind every check, found or not.
	Diagnostics Diagnostics
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
	for _, f := range r.Findings {
		label := "warning"
		if !f.IsWarning() {
			label = "info"
		}
		fmt.Fprintf(&b, "%s [%s]: %s\n", label, f.Check, f.Message)
	}
	return b.String()
}

// Warnings returns the messages of the warnings, those about the draws
// first.
func (r *Result) Warnings() []string {
	return r.messages(func(f Finding) bool { return f.IsWarning() })
}

// DrawWarnings returns the messages of the warnings about the draws.
func (r *Result) DrawWarnings() []string {
	return r.messages(func(f Finding) bool { return f.Kind == KindDraws })
}

// Info returns the messages of the findings that are not warnings.
func (r *Result) Info() []string {
	return r.messages(func(f Finding) bool { return !f.IsWarning() })
}

// Warns reports whether check c produced a warning.
func (r *Result) Warns(c Check) bool {
	return slices.ContainsFunc(r.Findings, func(f Finding) bool { return f.Check == c && f.IsWarning() })
}

// Found returns the findings of check c.
func (r *Result) Found(c Check) []Finding {
	var out []Finding
	for _, f := range r.Findings {
		if f.Check == c {
			out = append(out, f)
		}
	}
	return out
}

func (r *Result) messages(keep func(Finding) bool) []string {
	var out []string
	for _, f := range r.Findings {
		if keep(f) {
			out = append(out, f.Message)
		}
	}
	return out
}

// AddFindings adds fs to the result's findings and puts them in order:
// warnings about the draws first (fs before those already there), then
// those about the estimate, then information.
func (r *Result) AddFindings(fs ...Finding) {
	r.Findings = append(slices.Clip(fs), r.Findings...)
	sortFindings(r.Findings)
}

// sortFindings orders findings by kind, keeping their order within a
// kind.
func sortFindings(fs []Finding) {
	slices.SortStableFunc(fs, func(a, b Finding) int { return int(a.Kind) - int(b.Kind) })
}
