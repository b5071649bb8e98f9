package gbs

import (
	"context"
	"runtime/pprof"
)

// earlyChecks are the parts of the checks that read the draws alone: the
// convergence statistics of every coordinate, the pile-ups and the
// interleaving of a single chain. They run beside the cross-fitting
// passes, which leave a core idle while the second pass waits for the
// first's calls of the density, and the checks then read their results.
// Each is a pure function of the draws and the settings, so the results
// do not depend on when they ran.
type earlyChecks struct {
	done chan struct{}
	// coords are coordinateStats(s, nil, nq) (index 0, log p's, unset),
	// for nq quantities: the coordinates, and log p when it will be
	// known (draws with log p, or the cross-fitted bridge's).
	coords []quantityStats
	nq     int
	piles  []pileUp
	// period, rhoL and rho1 are interleavePeriod's.
	period     int
	rhoL, rho1 float64
}

// startEarlyChecks starts the early checks; waitEarly must be called
// before Evidence returns, since they read the caller's draws.
func (e *estimation) startEarlyChecks() {
	ec := &earlyChecks{done: make(chan struct{}), nq: e.s.Dim}
	if e.s.LogP != nil || e.cfg.Method == Bridge && e.cfg.CrossFit != Off {
		ec.nq++
	}
	e.early = ec
	go pprof.Do(e.ev.ctx, pprof.Labels(labelKey, "evidence checks"), func(context.Context) {
		defer close(ec.done)
		if e.s.Draws() >= 4 {
			ec.coords = coordinateStats(e.s, nil, ec.nq)
		}
		ec.piles = pileUps(e.s, e.cfg.Lower, e.cfg.Upper)
		ec.period, ec.rhoL, ec.rho1 = interleavePeriod(e.s)
	})
}

// waitEarly waits for the early checks, if started, and returns them.
func (e *estimation) waitEarly() *earlyChecks {
	if e.early != nil {
		<-e.early.done
	}
	return e.early
}
