package gbs

import "math/rand/v2"

// LogDensityFunc evaluates an unnormalized log density at len(dst) points
// stored row-major in x (len(x) == len(dst)*d) and writes log p into dst.
// -Inf is a valid value (zero density); NaN is an error. A non-nil error
// aborts the computation that called the function and is returned to the
// caller wrapped.
type LogDensityFunc func(dst, x []float64) error

// Proposal is a normalized density q that can be evaluated and sampled.
// It is the reference density of bridge sampling, importance sampling and
// the harmonic mean estimator.
type Proposal interface {
	// Dim returns the dimension d of the density.
	Dim() int
	// LogProb writes log q at len(dst) row-major points x into dst.
	LogProb(dst, x []float64)
	// Sample draws len(logq) points into dst (row-major, len(dst) ==
	// len(logq)*d) and writes their log q into logq. It takes all its
	// randomness from rng.
	Sample(dst, logq []float64, rng *rand.Rand)
}

// ProposalFitter fits a proposal on n row-major points x of dimension d.
// weights is nil (equal weights) or holds one non-negative weight per
// point. The fitter takes all its randomness from seed. Warnings (such as
// a documented fallback) are returned alongside the proposal.
type ProposalFitter func(x []float64, d int, weights []float64, seed uint64) (q Proposal, warnings []string, err error)
