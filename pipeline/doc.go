// Package pipeline runs a sampler and then the evidence on its draws,
// and repairs what the checks find where a repair exists: the method's
// recipe for a user who has a log density but no draws.
//
// NUTS (and NUTSBatch, for a density evaluated a batch at a time) draws
// with package nuts and estimates ln Z with package gbs. A run whose
// kept transitions diverge is made again at a higher acceptance target,
// as is a run whose draws the evidence's coverage check finds missing
// mass of p; draws that have not mixed, diverge often or draw the
// evidence's warnings about the draws are sampled again with longer
// chains. Each rerun is a finding of check gbs.CheckRerun; what the last
// run still shows is warned about.
//
// GlobalSettings (on by default where the warm-up stages' draws suffice)
// also makes a flow fitted on the chains a global move of the sampler: an
// independence Metropolis–Hastings move after each NUTS transition, with
// the flow refitted only between warm-up stages, which moves chains
// between modes that NUTS cannot cross and so sets the modes' weights.
// WithGlobalMoves adds them to nuts.Settings for a sampler run alone.
//
// Ensemble does the same with the gradient-free affine-invariant ensemble
// sampler of package ensemble.
//
// Imports point one way: pipeline uses gbs, nuts, ensemble and flow; none
// of them knows of it.
package pipeline
