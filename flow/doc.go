// Package flow fits a normalizing flow to samples: a density q that can be
// evaluated (LogProb), sampled (Sample) and inverted (Forward, Inverse)
// exactly. It is the proposal density of Gaussianized bridge sampling
// (Jia & Seljak 2019) but depends on nothing else of the project and can
// be used alone.
//
// # Model
//
// A flow is a bijection x ↦ z built from, in order,
//
//   - an optional box-bounds layer, coordinate-wise: an inverse softplus
//     at each finite bound (a softened logit when both are), identity
//     otherwise, so that q is zero outside the box and positive inside it;
//     its scale makes it logarithmic for data crowding a bound and the
//     identity for data far from it (a plain logit bends a posterior that
//     sits inside a wide prior box: on the 32-d banana in its box the KL
//     divergence of the flow grows from 5.5 to 7.2 nats);
//   - whitening: subtract the mean, multiply by the inverse Cholesky
//     factor of the covariance (default) or project on principal axes;
//     with few points per dimension (d²/(4n) of a nat or more) the
//     covariance's eigenvalues are shrunk when the held-out points prefer
//     it, and when no layer follows the Gaussian is refitted on all
//     points (shrink.go);
//   - unless Settings.Scale is Off, a scale layer: every coordinate but
//     one, k, mapped to (z_j - m_j - c_j z_k) exp(-(a_j + b_j z_k)), the
//     way a variance parameter sets the scale of a hierarchical model's
//     parameters (Neal's funnel); k is the coordinate whose value best
//     predicts the others' log squares, and the lines maximize the
//     likelihood of z_j ~ N(m_j + c_j z_k, e^{2(a_j + b_j z_k)})
//     (weighted least squares for the centre, Newton's method for the
//     convex log-scale, alternated). Being parametric it follows the
//     draws' trend into the funnel's neck, where binned and quantile maps
//     have few points. It is fitted only where the others' log squares
//     depend on k beyond chance (a χ² test on their R²), and kept only
//     when the whole flow with it beats the flow without on held-out
//     points (on the 32-d banana it gains alone and loses in the end),
//     which is taken for granted when its own gain exceeds 3 nats per
//     point (the funnel's is 5 to 16);
//   - a few Gaussianizing layers, each of one of two kinds:
//     sliced, x ↦ x - A Aᵀx + A ψ(Aᵀx), with an orthonormal d×K frame A
//     and K monotone 1-D maps ψ_k; or conditional, which maps half of
//     the coordinates, each by a monotone 1-D map whose shape depends on
//     the other half, and leaves that half unchanged.
//
// and q(x) = φ(z) |det ∂z/∂x|, with φ the standard normal density in d
// dimensions, is normalized by construction (the package's tests
// integrate it on grids and by importance sampling).
//
// # Fitting a layer (sliced iterative Gaussianization)
//
// Directions. The frame maximizes the sliced Wasserstein distance between
// the projected training points and N(0, 1) over the Stiefel manifold,
// by Riemannian gradient ascent along the Cayley curve (Wen & Yin 2013)
// with Barzilai-Borwein steps and a non-monotone line search. K = d
// directions per layer (for d <= 128), so a layer acts on every direction
// at once. The first layer starts from a random frame and climbs on 1024
// points, then every layer refines on about 16d² points (at most 2¹⁸/d,
// or all of them) for eight steps; later layers start from the previous
// layer's frame.
// Projections are computed in single precision and ranked by a radix sort:
// these evaluations are most of the cost of a fit.
//
// Maps. Along each direction, knots sit at sample quantiles (about √n
// interior knots, 50 to 200, refined geometrically towards a few points
// from each end); the target at a knot is Φ⁻¹(F(x)), F a kernel estimate
// of the distribution function (Epanechnikov kernel, Scott's bandwidth or
// a third of it, whichever predicts held-out points better: Scott's rule
// oversmooths bimodal marginals such as the Cauchy mixture's). A monotone
// rational-quadratic spline (Gregory & Delbourgo; Durkan et al. 2019)
// interpolates the knots with Fritsch-Butland derivatives. Beyond the
// outermost knots the map is linear, with the slope that maximizes the
// likelihood of the points there under a Gaussian tail, but never steeper
// than the outermost bin: q's tails are then at least as heavy as the
// data suggest, and log q is finite everywhere inside the support. Each
// layer moves 90% of the way from the identity to these maps (damping).
// A direction whose map does not raise the held-out likelihood is left
// alone (identity), so layers do not fit noise.
//
// With K = d, evaluation keeps points in the frame of the current layer,
// so that a run of sliced layers costs one d×d product per layer (the
// rotation between consecutive frames) and d spline evaluations per point.
//
// # Conditional layers
//
// Some dependence is invisible to one-dimensional projections: in the
// ring target of the reference problems, x_i² and x_(i+1)² trade off
// while x_i and x_(i+1) are uncorrelated, so every projection is close to
// Gaussian once the marginals are, and sliced layers stall (at a KL
// divergence of 27 nats on the 64-d ring, no better than Gaussianizing
// the marginals alone). A conditional layer maps each
// coordinate j of one side B of a split by
//
//	z_j ↦ (1-t) ψ_jb(z_j) + t ψ_j(b+1)(z_j),
//
// where s_j = β_jᵀ (1, z_A, z_A² - 1) summarizes the other side A, the
// bin b and fraction t place s_j between bin centres at quantiles of s_j
// (about √n/10 bins, at most 8), and ψ_jb is a map fitted as above to the
// points of bin b weighted by their share in it. β_j is the least-squares
// prediction, from the features of A, of z_j (location) or of z_j² - 1
// (scale), whichever gives held-out points the higher likelihood. A
// keeps its values, so the Jacobian is triangular and the inverse is a
// 1-D root between the two maps' own inverses.
//
// The split maximizes the dependence across the sides (a maximum cut of
// the absolute correlations of z and z² between coordinates, by the
// spectral sign pattern then single moves); conditional layers come in
// pairs over one split, B given A and then A given B.
//
// # Choosing layers, and stopping
//
// Each layer is the sliced or the conditional candidate, whichever gains
// more held-out log-likelihood: both gains are exact sums of per-map
// gains, so the choice is exact model selection. Where sliced layers do
// well (the banana, whose pairs are rotated so that coordinate-wise
// conditioning sees nothing) conditional layers are never chosen and the
// flow is as before; on the ring they bring KL(p‖q) from 27 to 4.4 nats
// (8000 NUTS draws; TestMeasureRingFlow in package gbs) and the error of
// bridge sampling from 1 to 0.02, on the funnel KL from 3.2 to 1.7 nats
// (10⁴ exact draws). A conditional candidate that loses by far (a
// quarter of the sliced gain) sits out the next layers, a pause that
// doubles while it keeps losing; fitting both kinds costs 1.2 to 2.6
// times a fit of sliced layers alone.
//
// A fifth of the (distinct) points is held out. Layers of
// either kind are added while the held-out mean log-likelihood improves
// by more than two standard errors of the paired per-point differences,
// up to MaxLayers (10); the best prefix is kept. With 4000 held-out
// points or more, or more than 64 directions per layer, the held-out
// points are split: the first half makes the choices above, the second
// judges the layer, because choosing on the points that judge inflates
// the gain (on Gaussian data at d = 128 six such layers passed and left
// q 0.2 nats worse than the Gaussian). When the first layer gains nothing
// significant the fit stops there (the Gaussian early stop): the data are
// Gaussian after whitening as far as the held-out points can tell, and q
// is the fitted Gaussian. With more than 8192 training points that first
// layer is tried on 8192 of them first and fitted on all only when it
// gains there (the flow is then the one without the trial), so that
// Gaussian draws do not pay for a layer fitted on all and rejected.
//
// # Cost in d and n
//
// A layer costs O(n d k) for its products, O(m d k) per step of the
// direction search on m <= fineSubset points, and for the conditional
// candidate O(n d t) with at most t = 64 targets, its dependence matrix
// on at most 8192 points (2048 above d = 128) and its regression on at
// most 8192. The Cayley step of the search uses the Woodbury form (a 2k×2k
// solve) when 2k < d instead of a d×d solve. Products of rows with
// matrices are blocked for the cache. docs/benchmark-methods.md ("Scale
// in d and n") has the command that measures the cost.
//
// # Why these choices (measured)
//
// DESIGN.md allows whitening plus a random (or ICA) rotation per layer as
// a simpler alternative to the sliced-Wasserstein search. On exact draws
// of the reference targets (10⁴ training points), random rotations are
// hopeless beyond a few dimensions: after 30 layers the held-out KL
// divergence KL(p‖q) is 34 nats on the 32-d banana and 30 nats on the 48-d
// Cauchy mixture (a fitted Gaussian: 37 and 32), and bridge sampling with
// such a q has errors of 1.1 and 0.5 in ln Z; with the search, 5 to 10
// layers reach 5.5 and 1.8 nats. Other measured choices: starting each
// layer from the previous frame instead of a random one (banana KL 10 → 7
// nats), refining on all points rather than 2048 (7 → 5.5), choosing the
// bandwidth per direction (Cauchy KL 2.7 → 1.8); weighted or L1 variants
// of the distance, an m-spacing entropy objective, damping 0.75 or 1,
// more knots, more search steps or more layers were no better.
//
// With the defaults, bridge sampling between 10⁴ exact posterior draws and
// 10⁴ draws of a flow fitted on another 10⁴ gives an estimated error of
// ln Z of 0.013 (funnel, d = 16), 0.036 (banana, d = 32) and 0.013
// (Cauchy mixture, d = 48), and actual errors of the same size over
// repeated runs (TestMeasure in the tests reproduces this). A fit takes
// about 0.5 s (d = 16, n = 10⁴) and 2.8 s (d = 64, n = 1.6·10⁴) on two
// cores, and log q is evaluated at about 5.5·10⁴ points per second for
// d = 64; see the benchmarks.
//
// # Practicalities
//
// All randomness comes from Settings.Seed through per-purpose streams and
// all parallel work is split into fixed chunks whose results are combined
// in a fixed order, so a seed gives a bitwise identical flow for any
// number of threads. Fit returns errors, never panics, for data it cannot
// fit (NaN, constant or collinear columns, points outside the bounds, bad
// weights, fewer than 2d distinct points) and reports fallbacks (merged
// duplicate points, whitening only for small samples) in Warnings. The
// binary format is versioned and checksummed; a decoded flow evaluates
// bitwise like the original.
package flow
