// Package nuts samples from a differentiable density with the No-U-Turn
// sampler and estimates normalizing constants with annealed importance
// sampling, as baselines for the evidence estimators of gbs.
//
// # Sampling
//
// Sample runs several chains of multinomial NUTS (Betancourt 2017, "A
// Conceptual Introduction to Hamiltonian Monte Carlo", appendix A), the
// algorithm of Stan: the trajectory doubles in a random direction until
// the generalized no-U-turn criterion fails (checked across the whole
// trajectory and across neighbouring subtrees) or the tree reaches
// MaxDepth; the next state is drawn from the trajectory with probability
// proportional to exp(-H), biased toward the newest subtree. Warmup follows
// Stan's schedule: dual averaging of the step size toward a target
// acceptance statistic throughout, and a diagonal (or dense) metric
// estimated from the draws of doubling windows, regularized toward a small
// multiple of the identity, with the step size re-tuned after every metric
// update.
//
// A step whose energy error exceeds 1000, or that lands where log p is
// -Inf or NaN, or whose gradient is not finite, is a divergence: the
// trajectory stops there and that point is never selected. So a density may
// return -Inf outside its support (a box prior, a positivity constraint)
// and the sampler stays inside; frequent divergences are reported in
// ChainStats and mean the draws may be biased.
//
// Each chain owns a PCG random stream derived from the seed and its index,
// so the draws depend neither on Settings.Threads nor on GOMAXPROCS. The
// first error returned by the density stops every chain; cancelling the
// context stops them within a few leapfrog steps.
//
// ESS computes the multi-chain effective sample size with Geyer's initial
// monotone sequence, for Monte Carlo standard errors of the draws.
//
// # Annealing
//
// AIS anneals independent runs from the prior to the posterior through
// prior·L^β with NUTS transitions along a sigmoid schedule of inverse
// temperatures β, accumulating importance weights whose mean estimates the
// evidence Z; its log is a stochastic lower bound on ln Z. RAIS runs the
// same schedule backwards from posterior draws and estimates 1/Z, which
// gives a stochastic upper bound (Grosse, Ghahramani & Adams 2015,
// "Sandwiching the marginal likelihood using bidirectional Monte Carlo").
// Together they bracket ln Z, and the gap between them measures how far a
// schedule of a given length is from exact. Both are far more expensive
// than bridge sampling from existing posterior draws; they serve as
// independent checks.
package nuts
