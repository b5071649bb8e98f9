// Package mcmc holds the convergence statistics of Markov chains, once,
// for gbs, nuts and ensemble: rank-normalized split R̂ and bulk and tail
// effective sample sizes as ArviZ computes them (Vehtari, Gelman,
// Simpson, Carpenter & Bürkner 2021), and the integrated autocorrelation
// time of a quantity observed along several chains with Sokal's automatic
// window as emcee computes it (Goodman & Weare 2010, Foreman-Mackey et al.
// 2013).
//
// The autocorrelation functions come from internal/acf (FFT, two series
// per transform) and the integrated times from its SokalTime and
// GeyerTime. What is fast here: ranks by a radix sort of order keys, with
// the normal scores looked up in a table shared by all quantities of one
// shape; autocovariances lag by lag while Geyer's sequence may still end
// within a few lags, by FFT beyond; chains summed in partial sums whose
// number depends on the number of chains only, so results do not depend
// on GOMAXPROCS.
package mcmc
