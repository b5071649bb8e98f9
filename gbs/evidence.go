package gbs

import (
	"context"
	"errors"
)

// Evidence estimates ln Z = ln ∫ p(x) dx of the unnormalized density whose
// log is logp, from draws s of p. set may be nil for the defaults.
func Evidence(ctx context.Context, logp LogDensityFunc, s *Samples, set *Settings) (*Result, error) {
	return nil, errors.New("gbs: not implemented yet")
}
