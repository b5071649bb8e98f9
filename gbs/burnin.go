package gbs

import (
	"math"

	"github.com/gbs-evidence/gbs/internal/mcmc"
)

// Burn-in: a Geweke-like comparison of the start and the end of the
// chains. Draws still travelling from the starting points to the bulk of p
// make the first part of every chain differ from the last.

const (
	// burnInHead and burnInTail are the fractions of each chain compared:
	// the first 10% against the last 50% (Geweke 1992).
	burnInHead, burnInTail = 0.1, 0.5
	// burnInZ is the |z| above which the two parts differ by more than
	// chance: 5 standard errors, so that checking many coordinates does not
	// raise false alarms.
	burnInZ = 5
	// burnInMinDraws is the chain length below which the head holds too
	// few draws for the comparison.
	burnInMinDraws = 50
)

// burnInZScore compares the mean of the rank-normalized draws z (nchains
// chains of m draws, chain after chain) over the first 10% of every chain
// with that over the last 50%, in units of its standard error for the
// within-chain autocorrelation time tau. NaN for chains too short.
func burnInZScore(z []float64, nchains int, tau float64) float64 {
	m := len(z) / nchains
	if m < burnInMinDraws {
		return math.NaN()
	}
	nh, nt := int(burnInHead*float64(m)), int(burnInTail*float64(m))
	head := make([]float64, 0, nh*nchains)
	tail := make([]float64, 0, nt*nchains)
	for c := 0; c < nchains; c++ {
		ch := z[c*m : (c+1)*m]
		head = append(head, ch[:nh]...)
		tail = append(tail, ch[m-nt:]...)
	}
	mh, vh := mcmc.MeanVar(head)
	mt, vt := mcmc.MeanVar(tail)
	tau = tauMargin * math.Max(tau, 1)
	se := math.Sqrt(tau * (vh/float64(len(head)) + vt/float64(len(tail))))
	if se == 0 {
		if mh == mt {
			return 0
		}
		return math.Inf(1)
	}
	return (mh - mt) / se
}
