package gbs

import (
	"fmt"
	"math"
)

// DrawsKind says what Samples' draws are.
type DrawsKind int8

const (
	// MCMCChains are Markov chains: their autocorrelation time is
	// estimated and enters the error bar.
	MCMCChains DrawsKind = iota
	// IndependentDraws are independent (exact) draws: the
	// autocorrelation time is 1 and is not estimated.
	IndependentDraws
	// EnsembleWalkers are the walkers of one ensemble sampler (emcee,
	// package ensemble): the walkers move together, and from walkers a
	// few autocorrelation times long τ comes out biased low and noisy,
	// with the error bar. Evidence then applies emcee's rule, each walker
	// at least 50 τ of every coordinate, and warns where the walkers are
	// shorter (docs/diagnostics.md).
	EnsembleWalkers
)

// Samples are draws from the target density p, as one or more chains of
// equal length.
type Samples struct {
	// Dim is the dimension d of each draw.
	Dim int
	// Chains holds the draws of each chain, row-major: Chains[c][t*Dim+k]
	// is coordinate k of draw t of chain c. All chains have the same length.
	Chains [][]float64
	// LogP optionally holds the log density already known at each draw,
	// LogP[c][t]; those are then not evaluated again. Nil if unknown.
	LogP [][]float64
	// Kind says what the draws are: MCMC chains (the zero value),
	// independent draws, or an ensemble sampler's walkers.
	Kind DrawsKind
	// NCall is the number of log-density evaluations the sampler spent to
	// produce the draws, used by the adaptive n_q rule. Zero means unknown;
	// 10 evaluations per draw are then assumed.
	NCall int64
}

// Draws returns the number of draws per chain.
func (s *Samples) Draws() int {
	if len(s.Chains) == 0 || s.Dim <= 0 {
		return 0
	}
	return len(s.Chains[0]) / s.Dim
}

// validate checks shapes and values; minPerHalf is the number of draws each
// half of the split needs.
func (s *Samples) validate() error {
	if s.Dim <= 0 {
		return fmt.Errorf("gbs: dimension d = %d, want d >= 1", s.Dim)
	}
	if len(s.Chains) == 0 {
		return fmt.Errorf("gbs: no chains given")
	}
	n := len(s.Chains[0])
	if n%s.Dim != 0 {
		return fmt.Errorf("gbs: chain 0 holds %d values, not a multiple of d = %d", n, s.Dim)
	}
	for c, ch := range s.Chains {
		if len(ch) != n {
			return fmt.Errorf("gbs: ragged chains: chain %d holds %d draws, chain 0 holds %d", c, len(ch)/s.Dim, n/s.Dim)
		}
		for i, v := range ch {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return fmt.Errorf("gbs: sample value %v at chain %d, draw %d, coordinate %d", v, c, i/s.Dim, i%s.Dim)
			}
		}
	}
	if s.LogP != nil {
		if len(s.LogP) != len(s.Chains) {
			return fmt.Errorf("gbs: log p given for %d chains, samples have %d", len(s.LogP), len(s.Chains))
		}
		for c, lp := range s.LogP {
			if len(lp) != n/s.Dim {
				return fmt.Errorf("gbs: log p of chain %d has %d values, the chain has %d draws", c, len(lp), n/s.Dim)
			}
			for t, v := range lp {
				if err := checkSampleLogP(v, c, t); err != nil {
					return err
				}
			}
		}
	}
	if s.NCall < 0 {
		return fmt.Errorf("gbs: NCall = %d is negative", s.NCall)
	}
	return nil
}

// checkSampleLogP rejects log p values that a draw from p cannot have.
func checkSampleLogP(v float64, c, t int) error {
	switch {
	case math.IsNaN(v):
		return fmt.Errorf("gbs: log p is NaN at chain %d, draw %d", c, t)
	case math.IsInf(v, 1):
		return fmt.Errorf("gbs: log p is +Inf at chain %d, draw %d", c, t)
	case math.IsInf(v, -1):
		return fmt.Errorf("gbs: log p is -Inf at chain %d, draw %d: a draw from p must have positive density", c, t)
	}
	return nil
}
