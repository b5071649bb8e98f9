// Package gbs estimates the normalizing constant (Bayesian evidence,
// marginal likelihood) Z = ∫ p(x) dx of an unnormalized density p from
// draws of p that the caller already has, typically MCMC chains.
//
// The default estimator is Gaussianized bridge sampling (Jia & Seljak
// 2019): a normalizing flow q is fitted on half of the draws, n_q points
// are drawn from q, and the optimal bridge sampling equation (Meng & Wong
// 1996) is solved between those and the other half of the draws. By
// default the halves then exchange roles (cross-fitting) and ln Z is the
// mean of the two estimates, which halves the posterior side's variance
// where q differs from p (the larger side for autocorrelated chains); the
// part of it both passes owe to fitting q is shared and measured in the run
// (crossfit.go), so the error bar stays calibrated where q fits p well
// (Settings.CrossFit = Off restores the paper's single pass). The equation is solved in log space, so ln Z may lie anywhere a float64 can
// hold and log densities may be -Inf. The error of ln Z is the relative
// mean squared error of Frühwirth-Schnatter (2004), whose posterior term is
// inflated by the integrated autocorrelation time of the chains, so that
// correlated draws give honest error bars.
//
// The number of proposal draws follows the adaptive rule of the paper:
// start with n_q = n_p, then draw more while the proposal's share of the
// error exceeds Settings.FErr, but never spend more than the fraction
// Settings.FEva of all log-density evaluations on the proposal.
//
// Where the direct bridge's proposal and draws barely overlap (few draws
// for the dimension: both Pareto k̂ above 1 and a wide error bar),
// Evidence anneals: particles cross the geometric path q^(1-β) p^β from
// q and from held-out draws, moving in the flow's latent space, and the
// bridge equation is solved on their works (anneal.go, Settings.Anneal;
// Result.AnnealSteps and AnnealCalls report its rungs and cost).
//
// Importance sampling (IS), the reciprocal "harmonic mean" estimator (HM)
// and warp-III bridge sampling (Warp3, a Gaussian proposal against the
// target symmetrized about its mean) are available through Settings.Method
// as baselines.
//
// Every call checks its input and its own estimate (Diagnostics; one file
// per check: convergence, burn-in, stuck, copied and interleaved chains,
// layout, the overlap of p and q, the consistency of draws and log
// density, a flipped sign, draws piled against an undeclared boundary).
// What a check finds is a Finding in Result.Findings: a stable check ID
// (Check, with a code C callers see), a kind (a warning about the draws
// or the estimate, or information), the message and its numbers;
// Result.Diagnostics holds the numbers of every check. docs/diagnostics.md
// gives each check's threshold and false-alarm count.
//
// The log density is always called in batches (LogDensityFunc), so that a
// vectorized or parallel likelihood pays off, and any normalized density
// with a sampler can serve as the proposal (Proposal, ProposalFitter).
//
// The package knows nothing of samplers: package pipeline runs NUTS or the
// ensemble sampler and then Evidence, with the reruns that repair what the
// checks find.
package gbs
