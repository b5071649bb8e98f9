// Package gbspy is the Go side of the gopy evaluation (docs/gopy.md): a
// thin facade over gbs.Evidence and flow.Flow in the shapes that gopy can
// bind. It is not an API of gbs and nothing ships it.
//
// What had to change against the real API, and why:
//   - gbs.Evidence takes a context.Context and a gbs.LogDensityFunc; gopy
//     silently drops any function with a parameter type it does not bind
//     (context.Context), so Evidence here takes neither.
//   - A callback's result must be a basic type (gopy converts it with
//     PyLong_AsLongLong & co.), so the log density cannot return an error
//     or a slice: it writes its output and returns a status, as the C
//     ABI's callbacks do.
//   - A slice argument of a callback cannot be used from Python: gopy
//     v0.5.0 registers its handle by value where every accessor expects a
//     pointer, and the first access panics in Go and aborts the process.
//     The callback therefore receives a *Batch, whose methods read the
//     points and write the results.
//   - Slices reach Python as opaque handles to Go memory; element access is
//     one cgo call per element. The Bytes/Float64s pair (and
//     Batch.Points/SetLogP) move a whole array as a bytes object instead
//     (a copy into the bytes object and one into or out of Go memory), the
//     fastest path gopy offers without hand-written C.
//
// Regenerate and build the extension with bench/gopy/run.sh.
package gbspy

import (
	"context"
	"fmt"
	"math"
	"unsafe"

	"github.com/gbs-evidence/gbs/flow"
	"github.com/gbs-evidence/gbs/gbs"
)

// LogDensity is a batch log density called from Go: it reads the batch's
// points and writes their log densities with SetLogP (or Set). Return 0,
// or non-zero to abort the computation. In Python the batch arrives as an
// integer handle: gbspy.Batch(handle=h).
type LogDensity func(b *Batch) int

// Batch is one call of a LogDensity: N points of dimension D.
type Batch struct {
	N, D int
	x    []float64 // N*D coordinates, row-major
	dst  []float64 // N log densities
}

// At returns coordinate i of the row-major points (one cgo call per value
// from Python: the naive path).
func (b *Batch) At(i int) float64 { return b.x[i] }

// Set sets the log density of point i.
func (b *Batch) Set(i int, v float64) { b.dst[i] = v }

// Points returns the N*D coordinates as native-endian bytes, without
// copying; bytes() of it in Python is one copy, np.frombuffer none.
func (b *Batch) Points() []byte { return Bytes(b.x) }

// SetLogP copies the N log densities given as native-endian bytes (a numpy
// array's tobytes()) into the output.
func (b *Batch) SetLogP(v []byte) { copy(b.dst, Float64s(v)) }

// Options are the evidence options the benchmark uses; zero values mean
// the defaults of gbs.Settings.
type Options struct {
	Method      string // "bridge" (default), "is", "hm" or "warp3"
	NQ          int
	BatchSize   int
	Seed        int
	Independent bool
}

// Result is the part of gbs.Result the benchmark reads.
type Result struct {
	LogZ, LogZErr float64
	NP, NQ        int
	NCall         int
}

func settings(o *Options) (*gbs.Settings, error) {
	s := &gbs.Settings{}
	if o == nil {
		return s, nil
	}
	if o.Method != "" {
		m, err := gbs.ParseMethod(o.Method)
		if err != nil {
			return nil, err
		}
		s.Method = m
	}
	s.NQ, s.BatchSize, s.Seed = o.NQ, o.BatchSize, uint64(o.Seed)
	return s, nil
}

func samples(x []float64, nChains, d int, o *Options) (*gbs.Samples, error) {
	if nChains < 1 || d < 1 || len(x)%(nChains*d) != 0 {
		return nil, fmt.Errorf("gbspy: %d values do not split into %d chains of dimension %d", len(x), nChains, d)
	}
	m := len(x) / nChains
	s := &gbs.Samples{Dim: d, Independent: o != nil && o.Independent}
	for c := 0; c < nChains; c++ {
		s.Chains = append(s.Chains, x[c*m:(c+1)*m])
	}
	return s, nil
}

func result(r *gbs.Result) *Result {
	return &Result{LogZ: r.LogZ, LogZErr: r.LogZErr, NP: r.NP, NQ: r.NQ, NCall: int(r.NCall)}
}

// Evidence is gbs.Evidence with a callback in the form gopy binds: x holds
// nChains chains of draws of dimension d, chain after chain.
func Evidence(logp LogDensity, x []float64, nChains, d int, o *Options) (*Result, error) {
	if logp == nil {
		return nil, fmt.Errorf("gbspy: nil log density")
	}
	s, err := samples(x, nChains, d, o)
	if err != nil {
		return nil, err
	}
	set, err := settings(o)
	if err != nil {
		return nil, err
	}
	f := func(dst, pts []float64) error {
		if rc := logp(&Batch{N: len(dst), D: d, x: pts, dst: dst}); rc != 0 {
			return fmt.Errorf("log-density callback returned %d", rc)
		}
		return nil
	}
	r, err := gbs.Evidence(context.Background(), f, s, set)
	if err != nil {
		return nil, err
	}
	return result(r), nil
}

// EvidenceGaussian is Evidence with the standard normal log density
// evaluated in Go: the baseline that the callback measurements subtract.
func EvidenceGaussian(x []float64, nChains, d int, o *Options) (*Result, error) {
	s, err := samples(x, nChains, d, o)
	if err != nil {
		return nil, err
	}
	set, err := settings(o)
	if err != nil {
		return nil, err
	}
	c := -0.5 * float64(d) * math.Log(2*math.Pi)
	f := func(dst, pts []float64) error {
		for i := range dst {
			v := c
			for _, xk := range pts[i*d : (i+1)*d] {
				v -= 0.5 * xk * xk
			}
			dst[i] = v
		}
		return nil
	}
	r, err := gbs.Evidence(context.Background(), f, s, set)
	if err != nil {
		return nil, err
	}
	return result(r), nil
}

// Sum returns the sum of x: Go reads every element of an array that
// Python passed.
func Sum(x []float64) float64 {
	var s float64
	for _, v := range x {
		s += v
	}
	return s
}

// Float64s views the native-endian bytes b (a numpy array's tobytes())
// as float64s, without copying. len(b) must be a multiple of 8.
func Float64s(b []byte) []float64 {
	if len(b) < 8 {
		return nil
	}
	return unsafe.Slice((*float64)(unsafe.Pointer(&b[0])), len(b)/8)
}

// Bytes views x as its native-endian bytes, without copying; bytes() of
// the result in Python is one copy, np.frombuffer of that none.
func Bytes(x []float64) []byte {
	if len(x) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(&x[0])), 8*len(x))
}

// Flow is a fitted flow.
type Flow struct{ f *flow.Flow }

// FitFlow fits a flow with a fixed number of layers to the n points x of
// dimension d (flow.Fit with Layers and Seed set, as gbs_flow_fit with
// those two options).
func FitFlow(x []float64, d, layers, seed int) (*Flow, error) {
	f, err := flow.Fit(x, d, nil, &flow.Settings{Layers: layers, Seed: uint64(seed)})
	if err != nil {
		return nil, err
	}
	return &Flow{f: f}, nil
}

// LoadFlow reads a flow serialized by gbs_flow_to_buffer (C) or
// flow.Flow.MarshalBinary (Go).
func LoadFlow(data []byte) (*Flow, error) {
	f := new(flow.Flow)
	if err := f.UnmarshalBinary(data); err != nil {
		return nil, err
	}
	return &Flow{f: f}, nil
}

// LogProb returns log q at the points x (row-major, the flow's dimension).
func (f *Flow) LogProb(x []float64) []float64 {
	d := f.f.Dim()
	dst := make([]float64, len(x)/d)
	f.f.LogProb(dst, x[:len(dst)*d])
	return dst
}
