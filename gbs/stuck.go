package gbs

import "math"

// Stuck chains. MCMC repeats a point at every rejected proposal, so
// repeated points are normal (an ensemble sampler at 20% acceptance
// repeats four draws in five). A chain that never, or almost never, moves
// is not sampling at all: its draws are one point counted many times.

// stuckMoveRate is the share of steps that move below which a chain is
// called stuck.
const stuckMoveRate = 0.01

// stuckMinDraws is the chain length below which moves are too few to
// judge.
const stuckMinDraws = 10

// diagnoseStuck warns about chains that never or almost never move.
func (e *estimation) diagnoseStuck() {
	c, n := stuckChains(e.s)
	if len(c) == 0 {
		return
	}
	e.diag.StuckChains = c
	e.found(finding(CheckStuckChains, 0, WhereNone, float64(len(c)), math.NaN(),
		"chain(s) %v never or almost never move (%v moves in %d draws): a stuck sampler repeats one point, "+
			"which counts as many draws and biases ln Z (repeated points are normal in MCMC; a chain that "+
			"does not move is not); check the sampler's step size, starting points and bounds, or drop those chains",
		c, n, e.s.Draws()))
}

// stuckChains returns the chains of s that move at fewer than
// stuckMoveRate of their steps, with the number of moves of each.
func stuckChains(s *Samples) (chains, moves []int) {
	m, d := s.Draws(), s.Dim
	if m < stuckMinDraws {
		return nil, nil
	}
	for c, ch := range s.Chains {
		n := 0
		for t := 1; t < m; t++ {
			if !equalPoints(ch[(t-1)*d:t*d], ch[t*d:(t+1)*d]) {
				n++
			}
		}
		if float64(n) < stuckMoveRate*float64(m-1) {
			chains, moves = append(chains, c), append(moves, n)
		}
	}
	return chains, moves
}

func equalPoints(a, b []float64) bool {
	for k := range a {
		if a[k] != b[k] {
			return false
		}
	}
	return true
}
