// Package acf computes autocovariances of real series by FFT and the
// integrated autocorrelation time from them, for the error estimates of
// gbs and the diagnostics of nuts and ensemble: one transform, one place.
//
// FFT is an iterative radix-2 complex transform of power-of-two lengths.
// Sums accumulates weighted autocovariance sums of many series of one
// length, two real series per complex transform and one inverse transform
// per sum. SokalTime and GeyerTime turn an autocorrelation function into
// an integrated time with Sokal's automatic window (emcee) or Geyer's
// initial monotone sequence (Stan, ArviZ).
package acf
