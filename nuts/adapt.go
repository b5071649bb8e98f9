package nuts

import (
	"errors"
	"math"
)

// dualAveraging adapts the step size so that the mean acceptance statistic
// approaches delta (Nesterov's dual averaging as tuned by Hoffman & Gelman
// 2014, Stan's stepsize_adaptation). The iterate x = log ε explores
// aggressively early on, shrinking toward mu, while the weighted average
// xBar converges and is used after warmup.
type dualAveraging struct {
	delta, gamma, kappa, t0 float64
	mu                      float64
	counter                 float64
	sBar, xBar              float64
}

func newDualAveraging(delta float64) *dualAveraging {
	return &dualAveraging{delta: delta, gamma: 0.05, kappa: 0.75, t0: 10}
}

// restart forgets the history and centres the exploration on log(10 ε),
// biasing early proposals toward larger steps, which are cheaper to try.
func (a *dualAveraging) restart(eps float64) {
	a.mu = math.Log(10 * eps)
	a.counter = 0
	a.sBar = 0
	a.xBar = 0
}

// learn takes the acceptance statistic of the last transition and returns
// the step size for the next.
func (a *dualAveraging) learn(accept float64) float64 {
	a.counter++
	if accept > 1 {
		accept = 1
	}
	if math.IsNaN(accept) {
		accept = 0
	}
	eta := 1 / (a.counter + a.t0)
	a.sBar = (1-eta)*a.sBar + eta*(a.delta-accept)
	x := a.mu - a.sBar*math.Sqrt(a.counter)/a.gamma
	xEta := math.Pow(a.counter, -a.kappa)
	a.xBar = (1-xEta)*a.xBar + xEta*x
	return math.Exp(x)
}

// final returns the adapted step size, exp(xBar).
func (a *dualAveraging) final() float64 { return math.Exp(a.xBar) }

// windows is Stan's warmup schedule for the metric: an initial fast
// interval (only the step size adapts, while the chain finds the typical
// set), then slow windows that double in length, each ending with a metric
// update, then a terminal fast interval that settles the step size for the
// final metric. Doubling puts most draws in the last, best-informed window.
type windows struct {
	warmup     int
	initBuffer int
	termBuffer int
	size       int // current slow window length
	next       int // iteration at which the current window ends
	counter    int
	enabled    bool
}

func newWindows(warmup int) *windows {
	w := &windows{warmup: warmup, initBuffer: 75, termBuffer: 50, size: 25}
	// Below 20 iterations no variance can be estimated usefully.
	if warmup < 20 {
		return w
	}
	w.enabled = true
	if w.initBuffer+w.size+w.termBuffer > warmup {
		// Scale the schedule to a short warmup in Stan's proportions
		// (15% fast, 75% slow, 10% terminal).
		w.initBuffer = int(0.15 * float64(warmup))
		w.termBuffer = int(0.1 * float64(warmup))
		w.size = warmup - (w.initBuffer + w.termBuffer)
	}
	w.next = w.initBuffer + w.size - 1
	return w
}

// inWindow reports whether the current iteration's draw goes into the
// variance estimate.
func (w *windows) inWindow() bool {
	return w.enabled && w.counter >= w.initBuffer &&
		w.counter < w.warmup-w.termBuffer && w.counter != w.warmup
}

// windowEnds reports whether the current iteration closes a slow window.
func (w *windows) windowEnds() bool {
	return w.enabled && w.counter == w.next && w.counter != w.warmup
}

// computeNext moves to the next slow window, doubling its size, and
// stretches it to the terminal buffer when the window after it would not
// fit in full.
func (w *windows) computeNext() {
	last := w.warmup - w.termBuffer - 1
	if w.next == last {
		return
	}
	w.size *= 2
	w.next = w.counter + w.size
	if w.next != last && w.next+2*w.size >= w.warmup-w.termBuffer {
		w.next = last
	}
}

// adaptMetric feeds the chain's current position to the window estimator
// and, at the end of a slow window, installs the regularized estimate in m.
// It reports whether the metric changed, in which case the caller re-tunes
// the step size.
func (w *windows) adaptMetric(est *welford, m *metric, q, scratch []float64) (bool, error) {
	defer func() { w.counter++ }()
	if w.inWindow() {
		est.add(q)
	}
	if !w.windowEnds() {
		return false, nil
	}
	w.computeNext()
	est.regularized(scratch)
	est.restart()
	for _, v := range scratch {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return false, errors.New("adapted metric is not finite")
		}
	}
	if m.kind == DenseMetric {
		if err := m.setDense(scratch); err != nil {
			return false, err
		}
	} else {
		m.setDiag(scratch)
	}
	return true, nil
}

// Failure modes of the step-size heuristic.
var (
	errStepSizeHuge = errors.New("step size grew beyond 1e7 while tuning; the target is probably improper (log p does not decrease away from the mode)")
	errStepSizeZero = errors.New("no acceptably small step size; log p or its gradient is probably not finite near the current point")
)

// initStepSize is Stan's heuristic for a reasonable first step size from
// the current state: double or halve ε until the acceptance probability of
// one leapfrog step crosses 0.8. It leaves the chain's state unchanged.
func (s *sampler) initStepSize() error {
	// The transition's scratch is free between transitions.
	z, e := s.fwd, s.fwdFwd
	logTarget := math.Log(0.8)
	direction := 0
	for {
		z.copyFrom(s.cur)
		h0 := hamiltonian(z.lp, s.drawMomentum(z.p, e.s))
		kin, err := s.leapfrog(z, z, e, s.eps)
		if err != nil {
			return err
		}
		h := hamiltonian(z.lp, kin)
		deltaH := h0 - h
		if direction == 0 {
			// The first trial fixes whether we grow or shrink.
			direction = -1
			if deltaH > logTarget {
				direction = 1
			}
			continue
		}
		if direction == 1 && !(deltaH > logTarget) {
			return nil
		}
		if direction == -1 && !(deltaH < logTarget) {
			return nil
		}
		if direction == 1 {
			s.eps *= 2
		} else {
			s.eps *= 0.5
		}
		if s.eps > 1e7 {
			return errStepSizeHuge
		}
		if s.eps < 1e-300 {
			return errStepSizeZero
		}
	}
}
