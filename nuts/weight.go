package nuts

import "math"

// weight is a sum of multinomial weights exp(H0 - H) of states, held as
// e^m·f. Stan keeps the logarithm instead, which costs two exponentials
// and a log1p at every merge of two subtrees, more than all the rest of
// the bookkeeping of a leapfrog step. Here a state's weight is f =
// exp(H0 - H) with m = 0, and merging subtrees is an addition; the
// exponential a state needs is the one the acceptance statistic needs
// anyway. Only a state whose energy fell by more than maxLinearLogWeight
// gets m = H0 - H, f = 1, so that f never overflows: below that bound a
// sum of up to 2^30 states stays under 1e270, above it f stays at most
// the number of states. The selection probabilities are those of Stan up
// to rounding.
type weight struct {
	m, f float64
}

const maxLinearLogWeight = 600

// stateWeight returns the weight of a state with log weight w = H0 - H
// and its acceptance statistic min(1, e^w).
func stateWeight(w float64) (weight, float64) {
	e := math.Exp(w)
	if w > maxLinearLogWeight {
		return weight{m: w, f: 1}, 1
	}
	// A weight below the smallest float64 becomes 0: such a state, whose
	// energy error exceeds 745, is never drawn, and neither is a subtree
	// of such states, since the trajectory's weight is at least the
	// starting state's, 1.
	return weight{f: e}, min(1, e)
}

// align returns the f of a and b scaled to a common m, the larger one.
func align(a, b weight) (fa, fb, m float64) {
	switch {
	case a.m == b.m:
		return a.f, b.f, a.m
	case a.m > b.m:
		return a.f, b.f * math.Exp(b.m-a.m), a.m
	}
	return a.f * math.Exp(a.m-b.m), b.f, b.m
}
