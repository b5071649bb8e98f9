package gbs

import (
	"errors"
)

// bothPasses runs the two cross-fitting passes fa and fb, each on a copy
// of e of its own. The passes share no state (their halves, random
// streams and proposals are their own), so each gives the same result
// whether it runs alone or beside the other: with the library's own
// proposal fitter, which is safe for concurrent use, they run at once and
// use both cores in the parts of a pass that one core does (the scale
// layer's candidate, sorting the draws, the bridge equation, the
// coverage pool); with a caller's fitter, one after the other, since
// nothing says it is safe. Unless Settings.Concurrent allows more, the
// log density sees the calls it would see with the passes one after the
// other, in that order: the second pass makes its first call once the
// first pass is over (and none if it failed), so that a density's
// failure, and the error reported, do not depend on timing. e.ev counts
// both passes' calls, and the log messages arrive in the passes' order.
func (e *estimation) bothPasses(fa, fb func(*estimation) error) (errA, errB error) {
	e.centre = &sharedCentre{}
	if !e.ownProposal {
		if errA = fa(e); errA != nil {
			return errA, nil
		}
		return nil, fb(e)
	}
	aDone := make(chan struct{})
	pa, pb := e.passCopy(nil), e.passCopy(func() error {
		<-aDone
		if errA != nil {
			return errPassSkipped
		}
		return nil
	})
	done := make(chan struct{})
	go func() {
		defer close(done)
		errB = fb(pb.e)
	}()
	errA = fa(pa.e)
	close(aDone)
	<-done
	if errA != nil {
		return errA, nil
	}
	for _, p := range []*passCopy{pa, pb} {
		e.ev.calls += p.e.ev.calls
		for _, m := range p.log {
			e.cfg.Log(m)
		}
	}
	return nil, errB
}

// errPassSkipped stops the second pass when the first failed (its error
// is the one reported).
var errPassSkipped = errors.New("gbs: the first cross-fitting pass failed")

// passCopy is a copy of an estimation for one concurrent pass, with an
// evaluator of its own and its log messages kept for later.
type passCopy struct {
	e   *estimation
	log []string
}

// passCopy returns a copy of e whose evaluator counts its own calls and,
// unless the density may be called concurrently, calls wait() before
// each call of the density (nil: none), and whose log messages are kept
// in the copy.
func (e *estimation) passCopy(wait func() error) *passCopy {
	c := *e
	ev := *e.ev
	ev.calls = 0
	if !ev.concurrent && wait != nil {
		f := ev.f
		ev.f = func(dst, x []float64) error {
			if err := wait(); err != nil {
				return err
			}
			return f(dst, x)
		}
	}
	c.ev = &ev
	p := &passCopy{e: &c}
	if e.cfg.Log != nil {
		c.cfg.Log = func(m string) { p.log = append(p.log, m) }
	}
	return p
}
