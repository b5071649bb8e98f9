// Package problems provides the reference target densities of the gbs
// project: the four test problems of Jia & Seljak (2019), "Normalizing
// Constant Estimation with Gaussianized Bridge Sampling" (funnel, banana,
// Cauchy mixture and ring), their generalizations to other dimensions, and
// Gaussian targets with a known normalizing constant.
//
// Every Problem carries the exact natural log of its normalizing constant,
// LogZ = ln ∫ p(x) dx, where p = likelihood × prior and the prior is the
// normalized flat density on a box (log prior = -Σ log width). LogZ is
// computed, not copied: closed forms (banana, Cauchy, Gaussians), 1-D
// Gauss–Legendre quadrature (funnel, the 2-d banana with its box
// truncation) or the eigenvalues of a Nyström-discretized transfer kernel
// (ring). The tests check these against the independently computed values
// of the project's docs/problems.md and against direct quadrature of LogProb in
// low dimensions.
//
// Where the target has one, Sample draws exact independent points, so an
// evidence estimator can be tested apart from any MCMC sampler. The ring has
// no simple exact sampler and its Sample is nil.
//
// All functions of a Problem are safe for concurrent use: they keep no
// state between calls and allocate nothing that is shared. Sample uses only
// the generator it is given, so a fixed seed gives the same draws.
//
// Coordinates are open intervals: a point on or outside the box has
// log p = -Inf (and a zero gradient). A NaN coordinate gives NaN, not -Inf,
// so that a caller's bug is not silently read as a zero-weight point.
package problems // import "github.com/gbs-evidence/gbs/problems"
