// Package seed derives every random stream of the library from one seed,
// one way: a stream is a PCG generator whose two state halves are
// scrambled with SplitMix64, so that nearby seeds and stream numbers give
// unrelated sequences, and a stage of one package that hands a seed to
// another (a flow fit inside the evidence) passes it a derived seed.
// Each package names its stream numbers; changing one stage's draws then
// leaves the others' alone.
package seed

import "math/rand/v2"

// New returns the random source of stream number stream under seed.
func New(seed, stream uint64) *rand.Rand {
	a := splitMix64(seed ^ splitMix64(stream+0x632be59bd9b4e019))
	b := splitMix64(a ^ stream ^ 0xa0761d6478bd642f)
	return rand.New(rand.NewPCG(a, b))
}

// Derive returns the seed of stream number stream under seed, for
// settings that take a seed rather than a source.
func Derive(seed, stream uint64) uint64 {
	return splitMix64(seed ^ splitMix64(stream+0x9fb21c651e98df25))
}

func splitMix64(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}
