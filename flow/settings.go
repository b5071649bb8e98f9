package flow

import (
	"fmt"
	"math"

	"github.com/gbs-evidence/gbs/internal/onoff"
)

// Switch turns an optional part of the fit on or off; its zero value,
// Auto, is the part's default (see each setting). It is the library's one
// idiom for optional stages (gbs.Switch is the same type).
type Switch = onoff.Switch

// The values of a Switch.
const (
	Auto = onoff.Auto
	On   = onoff.On
	Off  = onoff.Off
)

// Settings configures Fit. The zero value, and a nil *Settings, select the
// defaults documented on each field.
type Settings struct {
	// MaxLayers caps the number of Gaussianizing layers when the number
	// is chosen by the held-out stop rule. Default 10: on the reference
	// targets the held-out likelihood stops improving significantly
	// after 4 to 10 layers, except for the funnel, whose later layers gain
	// a tenth of a nat each.
	MaxLayers int

	// Layers, if positive, fixes the number of layers: all points are
	// used for fitting and there is no validation split, stop rule or
	// held-out pruning of directions.
	Layers int

	// Directions is the number K of orthonormal directions Gaussianized
	// per layer. Default: d for d <= 128, else 128. Values above d mean d.
	// With K = d a layer acts on every direction, the flow is evaluated
	// with one d×d product per layer, and few layers suffice.
	Directions int

	// Damping is the fraction of the way from the identity to the
	// Gaussianizing map that each layer moves, in (0, 1]. Default 0.9:
	// light damping; the held-out stop rule and the held-out pruning of
	// directions are the main regularizers.
	Damping float64

	// Knots is the number of interior quantile knots of each 1-D spline
	// (a few more are added geometrically towards the tails). Default:
	// sqrt(n) for n training points, clamped to [50, 200], and to at most
	// n/5 for small samples.
	Knots int

	// Bandwidth multiplies Scott's rule for the kernel smoothing of each
	// 1-D distribution function. Default: chosen per direction and layer
	// by held-out likelihood between 1 and 0.3 (Scott's rule oversmooths
	// multimodal and skewed marginals), or 1 without a validation set
	// (Layers > 0).
	Bandwidth float64

	// Whiten selects the linear map applied first (after the bounds).
	// Default WhitenCholesky.
	Whiten WhitenMode

	// Rotation selects how each layer chooses its directions. Default
	// MaxSliced.
	Rotation RotationMode

	// Conditional: with Auto and On each layer is either sliced or
	// conditional (half of the coordinates mapped given the other half),
	// whichever gains more held-out likelihood; without a validation set
	// (Layers > 0) all layers are sliced. Off: sliced layers only.
	Conditional Switch

	// Scale: with Auto a scale layer is tried before the other layers:
	// every coordinate but one centred and rescaled by lines in that one
	// (a hierarchical scale, the geometry of Neal's funnel), kept only
	// when the flow with it predicts held-out points better than the flow
	// without, so that elsewhere the flow is the one fitted without it.
	// It is not tried without a validation set (Layers > 0), above 256
	// dimensions, or where no coordinate's value predicts the others' log
	// squares beyond chance (a gate, a test at a false-pass rate of
	// 10⁻³). On the funnel it takes q from 1.75 to 0.04 nats of p
	// (docs/benchmarks.md has the pipeline's spread of ln Z with it); when
	// it passes its own gain test the remaining layers are fitted twice,
	// with and without it, unless its own gain leaves no doubt (3 nats per
	// point). On tries it wherever Auto would but for the gate, and always
	// fits the flow without it for the comparison (the gate's
	// measurements use it). Off: no scale layer.
	Scale Switch

	// Shrinkage: with Auto and On, when the points are few for their
	// dimension (d²/(4n) of a nat or more for n training points), the
	// covariance's eigenvalues are shrunk for the whitening (see
	// ShrunkCovariance) if the held-out points prefer it. Off keeps the
	// sample covariance.
	Shrinkage Switch

	// Lower and Upper are optional box bounds, nil meaning unbounded; an
	// entry may be ±Inf for a coordinate unbounded on that side. Bounded
	// coordinates enter through an inverse-softplus layer (a softened
	// logit for two finite bounds), so q is zero outside the box and
	// positive inside. All points must lie strictly inside.
	Lower, Upper []float64

	// ValidationFraction is the share of the distinct points held out to
	// choose the number of layers, the bandwidths and the active
	// directions, in (0, 0.5]. Default 0.2. Held-out points are not
	// used to fit the maps.
	ValidationFraction float64

	// Seed seeds every random choice of the fit (validation split,
	// subsamples, starting frames).
	Seed uint64

	// Threads is the number of goroutines used by Fit and by the fitted
	// flow's methods. Default (0) GOMAXPROCS; a decoded flow uses the
	// default. Results are bitwise identical for any value.
	Threads int
}

// RotationMode selects how a layer chooses its directions.
type RotationMode int

const (
	// MaxSliced maximizes the sliced Wasserstein distance between the
	// projected data and N(0, 1) over orthonormal frames (Riemannian
	// gradient ascent, from a random frame in the first layer and from
	// the previous frame after). The default.
	MaxSliced RotationMode = iota
	// RandomRotation uses a random orthonormal frame per layer, the
	// simpler alternative of DESIGN.md. It is cheaper per layer but far
	// worse beyond a few dimensions (see the package documentation); it
	// is kept for comparison.
	RandomRotation
)

func (r RotationMode) String() string {
	switch r {
	case MaxSliced:
		return "max-sliced"
	case RandomRotation:
		return "random"
	}
	return fmt.Sprintf("RotationMode(%d)", int(r))
}

const (
	defaultMaxLayers     = 10
	defaultMaxDirections = 128
	defaultDamping       = 0.9
	defaultValidation    = 0.2
	defaultMinKnots      = 50
	defaultMaxKnots      = 200
	defaultTailPoints    = 5
	minTrainingForLayers = 50 // fewer training points: whitening only
	minValidationForStop = 20 // fewer held-out points: whitening only
	stopPatience         = 2  // layers without held-out gain before stopping
	stopSignificance     = 2  // a gain counts when above this many standard errors

	// The direction search (see layerFrame).
	coarseSubset  = 1024    // points of the first layer's coarse search
	coarseSteps   = 40      // its steps
	fineBudget    = 1 << 18 // points × dimensions of every layer's fine search
	minFineSubset = 2048    // its least number of points
	fineSteps     = 8       // its steps
)

// candidateBandwidths are the multiples of Scott's bandwidth among which
// each direction's 1-D map is chosen on held-out data: Scott's rule, which
// suits unimodal marginals, and a third of it, which suits multimodal or
// sharply skewed ones (measured on the reference targets, the pair does
// as well as any finer grid at two thirds of the cost).
var candidateBandwidths = []float64{1, 0.3}

// resolved holds the settings with defaults filled in.
type resolved struct {
	Settings
	tailPoints float64
	// screen: with more training points than this the first layer is
	// screened on that many (firstLayerScreen; 0: never screened).
	screen int
}

// ungated reports whether the scale layer's candidate is fitted whatever
// the gate says and the flows with and without it always compared
// (scaleGateAlpha, scaleSureGain): Scale = On.
func (r *resolved) ungated() bool { return r.Scale == On }

func (s *Settings) resolve(d int) (resolved, error) {
	var r resolved
	if s != nil {
		r.Settings = *s
	}
	switch {
	case r.MaxLayers < 0:
		return r, fmt.Errorf("flow: MaxLayers = %d is negative", r.MaxLayers)
	case r.Layers < 0:
		return r, fmt.Errorf("flow: Layers = %d is negative", r.Layers)
	case r.Directions < 0:
		return r, fmt.Errorf("flow: Directions = %d is negative", r.Directions)
	case r.Knots < 0 || (r.Knots > 0 && r.Knots < 4):
		return r, fmt.Errorf("flow: Knots = %d, want 0 (default) or at least 4", r.Knots)
	case r.Threads < 0:
		return r, fmt.Errorf("flow: Threads = %d is negative", r.Threads)
	case math.IsNaN(r.Damping) || r.Damping < 0 || r.Damping > 1:
		return r, fmt.Errorf("flow: Damping = %g, want a value in (0, 1] (0 for the default)", r.Damping)
	case math.IsNaN(r.Bandwidth) || r.Bandwidth < 0 || math.IsInf(r.Bandwidth, 0):
		return r, fmt.Errorf("flow: Bandwidth = %g, want a positive factor (0 for the default)", r.Bandwidth)
	case math.IsNaN(r.ValidationFraction) || r.ValidationFraction < 0 || r.ValidationFraction > 0.5:
		return r, fmt.Errorf("flow: ValidationFraction = %g, want a value in (0, 0.5] (0 for the default)", r.ValidationFraction)
	case r.Whiten < WhitenCholesky || r.Whiten > WhitenNone:
		return r, fmt.Errorf("flow: unknown whitening mode %d", int(r.Whiten))
	case r.Rotation < MaxSliced || r.Rotation > RandomRotation:
		return r, fmt.Errorf("flow: unknown rotation mode %d", int(r.Rotation))
	}
	for _, sw := range []struct {
		s    Switch
		name string
	}{{r.Conditional, "Conditional"}, {r.Scale, "Scale"}, {r.Shrinkage, "Shrinkage"}} {
		if err := sw.s.Check("flow: Settings." + sw.name); err != nil {
			return r, err
		}
	}
	if r.MaxLayers == 0 {
		r.MaxLayers = defaultMaxLayers
	}
	if r.Directions == 0 {
		r.Directions = min(d, defaultMaxDirections)
	}
	r.Directions = min(r.Directions, d)
	if r.Damping == 0 {
		r.Damping = defaultDamping
	}
	if r.ValidationFraction == 0 {
		r.ValidationFraction = defaultValidation
	}
	r.tailPoints = defaultTailPoints
	r.screen = firstLayerScreen
	return r, nil
}

// knotsFor returns the number of interior knots for n training points.
func (r *resolved) knotsFor(n int) int {
	if r.Knots > 0 {
		return r.Knots
	}
	k := int(math.Round(math.Sqrt(float64(n))))
	k = min(max(k, defaultMinKnots), defaultMaxKnots)
	return max(min(k, n/5), 4)
}
