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
// # Bounded supports
//
// When Settings gives a box (Lower, Upper), the chains by default run in
// unconstrained coordinates, as Stan does: a logistic map between two
// bounds, an exponential beside one, the identity along free coordinates,
// with the log Jacobian added to log p and the gradient by the chain rule.
// Sampling x directly with log p = -Inf outside the box works when the mass
// is far from the walls, but a chain started far from the mass is driven
// against a wall, every trajectory then leaves the box, and the chain can
// stay stuck for the whole run (on the 32-d banana of the reference
// problems one chain of eight did, at log p ≈ -650000). Draws and LogP are
// reported in x; step sizes and metrics refer to the unconstrained
// coordinates. BoxStartOnly restores direct sampling.
//
// # Global moves
//
// NUTS moves locally: it does not cross between well-separated modes, and
// chains started in the wrong proportions keep them. Settings.Global adds
// independence Metropolis–Hastings moves from a proposal q that the
// caller supplies as a GlobalMove (gbs fills it with its fitted flow; this
// package knows nothing of flows): after each NUTS transition x' ~ q is
// accepted with probability min(1, p(x') q(x) / (p(x) q(x'))), at one
// density call per move. Both kernels leave p invariant, so their cycle
// does. q may be refitted (GlobalSettings.Fit) on all chains' draws
// between warm-up stages only; the kept draws come from a fixed kernel.
// With GlobalSettings.MinAccept the moves stop after a warm-up stage that
// accepted fewer (Result.GlobalStopped). ChainStats.Global counts the
// moves and their acceptance.
//
// # Convergence checks
//
// RHat computes the rank-normalized split R-hat of Vehtari et al. (2021)
// for any scalar across chains; Result.RHatLogP holds it for log p, and
// Result.LowChains names chains whose log p stays below what the others
// visit. Both catch chains that are stuck or have not converged, which
// per-chain statistics cannot.
//
// Each chain owns a PCG random stream derived from the seed and its index,
// so the draws depend neither on Settings.Threads nor on GOMAXPROCS. The
// first error returned by the density stops every chain; cancelling the
// context stops them within a few leapfrog steps.
//
// SampleBatch runs the same chains with a batched density, for targets
// whose evaluation has a high fixed cost per call (a Python or GPU
// function): the chains run as coroutines that advance together one
// leapfrog step at a time, and one call evaluates the current point of
// every chain still sampling. Each chain's computation is unchanged, so a
// batched density that gives each point the per-point values gives the
// draws of Sample bit for bit.
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
