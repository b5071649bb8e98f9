package gbs

import (
	"sync"
)

// bothPasses runs the two cross-fitting passes fa and fb, each on a copy
// of e of its own. The passes share no state (their halves, random
// streams and proposals are their own), so each gives the same result
// whether it runs alone or beside the other: with the library's own
// proposal fitter, which is safe for concurrent use, they run at once and
// use both cores in the parts of a pass that one core does (the scale
// layer's candidate, sorting the draws, the bridge equation, the
// coverage pool); with a caller's fitter, one after the other, since
// nothing says it is safe. Either way the log density is called by one
// pass at a time unless Settings.Concurrent allows more, e.ev counts
// both passes' calls, and the log messages arrive in the passes' order.
func (e *estimation) bothPasses(fa, fb func(*estimation) error) (errA, errB error) {
	if !e.ownProposal {
		if errA = fa(e); errA != nil {
			return errA, nil
		}
		return nil, fb(e)
	}
	var mu sync.Mutex // the user's density, one call at a time
	pa, pb := e.passCopy(&mu), e.passCopy(&mu)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		errB = fb(pb.e)
	}()
	errA = fa(pa.e)
	wg.Wait()
	for _, p := range []*passCopy{pa, pb} {
		e.ev.calls += p.e.ev.calls
		for _, m := range p.log {
			e.cfg.Log(m)
		}
	}
	return errA, errB
}

// passCopy is a copy of an estimation for one concurrent pass, with an
// evaluator of its own and its log messages kept for later.
type passCopy struct {
	e   *estimation
	log []string
}

// passCopy returns a copy of e whose evaluator counts its own calls and
// calls the density under mu unless it may be called concurrently, and
// whose log messages are kept in the copy.
func (e *estimation) passCopy(mu *sync.Mutex) *passCopy {
	c := *e
	ev := *e.ev
	ev.calls = 0
	if !ev.concurrent {
		f := ev.f
		ev.f = func(dst, x []float64) error {
			mu.Lock()
			defer mu.Unlock()
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
