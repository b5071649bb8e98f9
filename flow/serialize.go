package flow

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"math"
)

// Binary format, little-endian, version 2:
//
//	magic     "GBSFLOW\x00"
//	version   uint32 (2)
//	d         uint32
//	bounded   uint8; if 1, per coordinate: kind uint8, lower, upper,
//	          lower scale, upper scale float64
//	whitening mean [d], white [d·d], unwhite [d·d] float64
//	layers    uint32; per layer a kind uint8, then
//	          0 (sliced): k uint32, frame [d·k] float64, active [k] uint8,
//	            then per active direction a spline
//	          1 (conditional): m uint32, conditioning coordinates [m]
//	            uint32, t uint32, target coordinates [t] uint32, feature
//	            weights [t·(1+2m)] float64, then per target: b uint32,
//	            bin centres [b] float64 and b splines
//	          2 (scale): k uint32, m [d], c [d], a [d], b [d] float64
//	          a spline: n uint32, x [n], y [n], derivative [n] float64
//	warnings  uint32; per warning: length uint32, UTF-8 bytes
//	checksum  uint32, CRC-32 (IEEE) of everything before it
//
// Version 1 (before conditional layers) has no kind byte, every layer
// being sliced; it is still read.
//
// Only fitted parameters are stored, as exact float64 bits; everything
// derived from them is recomputed by the same code as after Fit, so a
// flow evaluates bitwise identically after a round trip. Readers reject
// other versions, a wrong checksum and any parameter that could not have
// come from Fit.
//
// Every count a file declares is bounded by the bytes that remain after
// it, at the least size its items take in the file, before anything is
// allocated for them: a file, even a crafted one with a valid checksum,
// cannot make the reader allocate more than a small multiple of its own
// size (FuzzDecode checks this).

const (
	formatMagic   = "GBSFLOW\x00"
	formatVersion = 2
	maxFormatDim  = 1 << 14

	// maxFormatWarnings bounds the warnings a file may hold: Fit writes
	// at most two.
	maxFormatWarnings = 1 << 10

	// Least bytes of the items whose count a file declares.
	minSplineBytes = 4 + 2*24                       // n, then x, y, d of n >= 2 knots
	minBoundBytes  = 1 + 4*8                        // kind, lower, upper and two scales
	minLayerBytes  = 1 + 4 + 8 + 1 + minSplineBytes // kind, k, a d×1 frame, one active direction
	minBinBytes    = 8 + minSplineBytes             // a bin centre and its spline
	// kind, one conditioning and one target coordinate, three feature
	// weights, one bin
	minCondLayerBytes = 1 + 2*(4+4) + 3*8 + 4 + minBinBytes
	// kind, k, then m, c, a and b of d >= 2 coordinates
	minScaleLayerBytes = 1 + 4 + 4*2*8
)

// MarshalBinary encodes the flow (encoding.BinaryMarshaler).
func (f *Flow) MarshalBinary() ([]byte, error) {
	if f == nil || f.wt == nil || f.d < 1 {
		return nil, errors.New("flow: MarshalBinary of a flow that was not fitted")
	}
	d := f.d
	var w writer
	w.b = append(w.b, formatMagic...)
	w.u32(formatVersion)
	w.u32(uint32(d))
	if f.bounds == nil {
		w.u8(0)
	} else {
		w.u8(1)
		for j := 0; j < d; j++ {
			w.u8(uint8(f.bounds.kind[j]))
			w.f64(f.bounds.lo[j])
			w.f64(f.bounds.hi[j])
			w.f64(f.bounds.sLo[j])
			w.f64(f.bounds.sHi[j])
		}
	}
	w.f64s(f.wt.mean)
	w.f64s(f.wt.white)
	w.f64s(f.wt.unwhite)
	w.u32(uint32(len(f.layers)))
	for _, l := range f.layers {
		if l.cond != nil {
			w.u8(1)
			w.condLayer(l.cond)
			continue
		}
		if l.scale != nil {
			w.u8(2)
			w.u32(uint32(l.scale.k))
			w.f64s(l.scale.m)
			w.f64s(l.scale.c)
			w.f64s(l.scale.a)
			w.f64s(l.scale.b)
			continue
		}
		w.u8(0)
		w.slicedLayer(&l)
	}
	w.u32(uint32(len(f.warnings)))
	for _, s := range f.warnings {
		w.u32(uint32(len(s)))
		w.b = append(w.b, s...)
	}
	w.u32(crc32.ChecksumIEEE(w.b))
	return w.b, nil
}

// UnmarshalBinary decodes a flow written by MarshalBinary
// (encoding.BinaryUnmarshaler). On error f is left unchanged.
func (f *Flow) UnmarshalBinary(data []byte) error {
	g, err := decode(data)
	if err != nil {
		return err
	}
	*f = *g
	return nil
}

func decode(data []byte) (*Flow, error) {
	if len(data) < len(formatMagic)+8 || string(data[:len(formatMagic)]) != formatMagic {
		return nil, errors.New("flow: not a serialized flow (bad magic)")
	}
	body, sum := data[:len(data)-4], binary.LittleEndian.Uint32(data[len(data)-4:])
	if crc32.ChecksumIEEE(body) != sum {
		return nil, errors.New("flow: serialized flow is corrupt (checksum mismatch)")
	}
	r := reader{b: body[len(formatMagic):]}
	version := r.u32()
	if r.err == nil && (version < 1 || version > formatVersion) {
		return nil, fmt.Errorf("flow: serialized flow has format version %d, this package reads versions 1 to %d", version, formatVersion)
	}
	d := int(r.u32())
	if r.err == nil && (d < 1 || d > maxFormatDim) {
		return nil, fmt.Errorf("flow: serialized flow has dimension %d", d)
	}
	f := &Flow{d: d}
	f.bounds = r.bounds(d)
	f.wt = &whitening{mean: r.f64s(d), white: r.f64s(d * d), unwhite: r.f64s(d * d)}
	f.layers = r.layers(d, version)
	f.warnings = r.warnings()
	if r.err == nil && r.left() != 0 {
		r.fail("%d trailing bytes", r.left())
	}
	if r.err != nil {
		return nil, r.err
	}
	if err := f.wt.check(d); err != nil {
		return nil, err
	}
	f.init()
	return f, nil
}

// bounds reads the bounds flag and, when set, every coordinate's bounds.
func (r *reader) bounds(d int) *bounds {
	bounded := r.u8()
	if r.err == nil && bounded > 1 {
		r.fail("bounds flag %d", bounded)
	}
	if bounded != 1 || !r.need(d, minBoundBytes, "bounds") {
		return nil
	}
	b := &bounds{kind: make([]boundKind, d), lo: make([]float64, d), hi: make([]float64, d),
		sLo: make([]float64, d), sHi: make([]float64, d)}
	for j := 0; j < d && r.err == nil; j++ {
		b.kind[j] = boundKind(r.u8())
		b.lo[j], b.hi[j], b.sLo[j], b.sHi[j] = r.f64(), r.f64(), r.f64(), r.f64()
		if !b.valid(j) {
			r.fail("invalid bounds of coordinate %d", j)
		}
	}
	if r.err == nil {
		b.derive()
	}
	return b
}

// layers reads the layers; format version 1 has sliced layers only,
// later versions a kind byte before each.
func (r *reader) layers(d int, version uint32) []layer {
	nl := int(r.u32())
	var layers []layer
	if r.need(nl, min(minLayerBytes+8*(d-1), minCondLayerBytes, minScaleLayerBytes), "layers") {
		layers = make([]layer, 0, nl)
	}
	seen := make([]bool, d) // the coordinates of a conditional layer, cleared after each
	for li := 0; li < nl && r.err == nil; li++ {
		if version >= 2 {
			switch r.u8() {
			case 0:
			case 1:
				layers = append(layers, layer{cond: r.condLayer(li, d, seen)})
				continue
			case 2:
				if sl := r.scaleLayer(li, d); r.err == nil {
					layers = append(layers, layer{scale: sl})
				}
				continue
			default:
				r.fail("layer %d: unknown kind", li)
				continue
			}
		}
		if l, ok := r.slicedLayer(li, d); ok {
			layers = append(layers, l)
		}
	}
	return layers
}

// slicedLayer reads a sliced layer: its frame, which directions are
// active, and their splines; ok is false when the layer cannot be used.
func (r *reader) slicedLayer(li, d int) (l layer, ok bool) {
	k := int(r.u32())
	if r.err == nil && (k < 1 || k > d) {
		r.fail("layer %d has %d directions", li, k)
		return layer{}, false
	}
	l = layer{k: k, a: r.f64s(d * k), active: make([]bool, k)}
	na := 0
	for c := 0; c < k; c++ {
		switch r.u8() {
		case 0:
		case 1:
			l.active[c] = true
			na++
		default:
			r.fail("layer %d: bad activity flag", li)
		}
	}
	if r.err == nil && na == 0 {
		r.fail("layer %d has no active direction", li)
	}
	if r.need(na, minSplineBytes, "splines") {
		l.psi = make([]spline, 0, na)
	}
	for c := 0; c < na && r.err == nil; c++ {
		l.psi = append(l.psi, r.spline(li))
	}
	if r.err == nil && !orthonormal(l.a, d, k) {
		r.fail("layer %d: frame is not orthonormal", li)
	}
	return l, true
}

// warnings reads the fit's warnings.
func (r *reader) warnings() []string {
	nw := int(r.u32())
	if r.err == nil && nw > maxFormatWarnings {
		r.fail("%d warnings (at most %d)", nw, maxFormatWarnings)
	}
	var ws []string
	if r.need(nw, 4+1, "warnings") && nw > 0 {
		ws = make([]string, 0, nw)
	}
	for i := 0; i < nw && r.err == nil; i++ {
		n := int(r.u32())
		if r.err == nil && n == 0 {
			r.fail("warning %d is empty", i)
		}
		ws = append(ws, string(r.bytes(n)))
	}
	return ws
}

// check initializes a decoded whitening map and reports whether it is
// one Fit could have made: finite, with inverse matrices.
func (wt *whitening) check(d int) error {
	for _, v := range [][]float64{wt.mean, wt.white, wt.unwhite} {
		for _, x := range v {
			if !isFinite(x) {
				return errors.New("flow: serialized flow has a non-finite whitening parameter")
			}
		}
	}
	wt.init(d)
	if !isFinite(wt.logDet) || !inverses(wt.white, wt.unwhite, d) {
		return errors.New("flow: serialized flow has an invalid whitening map")
	}
	return nil
}

// valid reports whether coordinate j's bounds could have come from Fit.
func (b *bounds) valid(j int) bool {
	lo, hi := b.lo[j], b.hi[j]
	for _, s := range []float64{b.sLo[j], b.sHi[j]} {
		if !(s > 0) || math.IsInf(s, 0) {
			return false
		}
	}
	switch b.kind[j] {
	case boundNone:
		return math.IsInf(lo, -1) && math.IsInf(hi, 1)
	case boundBoth:
		return isFinite(lo) && isFinite(hi) && lo < hi && isFinite(hi-lo)
	case boundLower:
		return isFinite(lo) && math.IsInf(hi, 1)
	case boundUpper:
		return math.IsInf(lo, -1) && isFinite(hi)
	}
	return false
}

// inverses reports whether the d×d matrices a and b are inverses of each
// other to a tolerance relative to their sizes.
func inverses(a, b []float64, d int) bool {
	p := make([]float64, d*d)
	mulRows(p, a, d, d, b, d)
	var na, nb float64
	for i := range a {
		na = max(na, math.Abs(a[i]))
		nb = max(nb, math.Abs(b[i]))
	}
	tol := 1e-9 * max(1, na*nb*float64(d))
	for i := 0; i < d; i++ {
		for j := 0; j < d; j++ {
			want := 0.0
			if i == j {
				want = 1
			}
			if !(math.Abs(p[i*d+j]-want) <= tol) {
				return false
			}
		}
	}
	return true
}

// orthonormal reports whether the d×k frame a has orthonormal columns to
// a tolerance far below anything that would make Inverse(Forward(x))
// drift.
func orthonormal(a []float64, d, k int) bool {
	for c := 0; c < k; c++ {
		for e := 0; e <= c; e++ {
			var s float64
			for i := 0; i < d; i++ {
				s += a[i*k+c] * a[i*k+e]
			}
			want := 0.0
			if c == e {
				want = 1
			}
			if !(math.Abs(s-want) < 1e-10) {
				return false
			}
		}
	}
	return true
}

func (w *writer) spline(sp *spline) {
	w.u32(uint32(len(sp.x)))
	w.f64s(sp.x)
	w.f64s(sp.y)
	w.f64s(sp.d)
}

func (w *writer) slicedLayer(l *layer) {
	w.u32(uint32(l.k))
	w.f64s(l.a)
	for _, on := range l.active {
		if on {
			w.u8(1)
		} else {
			w.u8(0)
		}
	}
	for i := range l.psi {
		w.spline(&l.psi[i])
	}
}

func (w *writer) indices(v []int) {
	w.u32(uint32(len(v)))
	for _, j := range v {
		w.u32(uint32(j))
	}
}

func (w *writer) condLayer(c *condLayer) {
	w.indices(c.cond)
	w.indices(c.targ)
	w.f64s(c.beta)
	for t := range c.targ {
		w.u32(uint32(len(c.centres[t])))
		w.f64s(c.centres[t])
		for b := range c.psi[t] {
			w.spline(&c.psi[t][b])
		}
	}
}

// spline reads a spline of layer li and validates it.
func (r *reader) spline(li int) spline {
	n := int(r.u32())
	if r.err == nil && (n < 2 || n > r.left()/24) {
		r.fail("layer %d: spline with %d knots", li, n)
		return spline{}
	}
	sp := spline{x: r.f64s(n), y: r.f64s(n), d: r.f64s(n)}
	if r.err == nil {
		if err := sp.init(); err != nil {
			r.fail("layer %d: %v", li, err)
		}
	}
	return sp
}

// indices reads a list of distinct coordinates below d, marking them in
// seen, which they must not already be in.
func (r *reader) indices(li, d int, seen []bool) []int {
	n := int(r.u32())
	if r.err == nil && (n < 1 || n > d || n > r.left()/4) {
		r.fail("layer %d: %d coordinates", li, n)
		return nil
	}
	if r.err != nil {
		return nil
	}
	out := make([]int, n)
	for i := range out {
		j := int(r.u32())
		if r.err == nil && (j >= d || seen[j] || (i > 0 && j <= out[i-1])) {
			r.fail("layer %d: bad coordinate list", li)
			return nil
		}
		if r.err == nil {
			seen[j] = true
		}
		out[i] = j
	}
	return out
}

// condLayer reads conditional layer li of a d-dimensional flow; seen is
// all false, and is left so.
func (r *reader) condLayer(li, d int, seen []bool) *condLayer {
	c := &condLayer{}
	c.cond = r.indices(li, d, seen)
	c.targ = r.indices(li, d, seen)
	for _, v := range [][]int{c.cond, c.targ} {
		for _, j := range v {
			seen[j] = false
		}
	}
	if r.err != nil {
		return c
	}
	c.beta = r.f64s(len(c.targ) * c.nf())
	for _, v := range c.beta {
		if !isFinite(v) {
			r.fail("layer %d: feature weight is not finite", li)
		}
	}
	for t := 0; t < len(c.targ) && r.err == nil; t++ {
		nb := int(r.u32())
		if r.err == nil && (nb < 1 || nb > r.left()/minBinBytes) {
			r.fail("layer %d: %d bins", li, nb)
			break
		}
		centres := r.f64s(nb)
		for b, v := range centres {
			if !isFinite(v) || (b > 0 && !(v > centres[b-1])) {
				r.fail("layer %d: bin centres are not finite and increasing", li)
			}
		}
		psi := make([]spline, 0, nb)
		for b := 0; b < nb && r.err == nil; b++ {
			psi = append(psi, r.spline(li))
		}
		c.centres = append(c.centres, centres)
		c.psi = append(c.psi, psi)
	}
	return c
}

type writer struct{ b []byte }

func (w *writer) u8(v uint8)   { w.b = append(w.b, v) }
func (w *writer) u32(v uint32) { w.b = binary.LittleEndian.AppendUint32(w.b, v) }
func (w *writer) f64(v float64) {
	w.b = binary.LittleEndian.AppendUint64(w.b, math.Float64bits(v))
}
func (w *writer) f64s(v []float64) {
	for _, x := range v {
		w.f64(x)
	}
}

// reader decodes with sticky errors: after the first failure every read
// returns zero values, so decoding code checks once per block.
type reader struct {
	b   []byte
	err error
}

// scaleLayer reads scale layer li of a d-dimensional flow.
func (r *reader) scaleLayer(li, d int) *scaleLayer {
	k := int(r.u32())
	c := &scaleLayer{k: k}
	c.m, c.c, c.a, c.b = r.f64s(d), r.f64s(d), r.f64s(d), r.f64s(d)
	if r.err != nil {
		return nil
	}
	if d < 2 || k < 0 || k >= d || c.m[k] != 0 || c.c[k] != 0 || c.a[k] != 0 || c.b[k] != 0 {
		r.fail("layer %d: bad scale coordinate %d", li, k)
		return nil
	}
	for _, v := range [][]float64{c.m, c.c, c.a, c.b} {
		for _, x := range v {
			if math.IsNaN(x) || math.IsInf(x, 0) {
				r.fail("layer %d: non-finite scale parameter", li)
				return nil
			}
		}
	}
	return c
}

func (r *reader) left() int { return len(r.b) }

// need reports whether n items of at least size bytes each fit in what
// remains, failing if they do not (or n is negative).
func (r *reader) need(n, size int, what string) bool {
	if r.err != nil {
		return false
	}
	if n < 0 || n > r.left()/size {
		r.fail("%d %s exceed the %d bytes left", n, what, r.left())
		return false
	}
	return true
}

func (r *reader) fail(format string, args ...any) {
	if r.err == nil {
		r.err = fmt.Errorf("flow: serialized flow is invalid: "+format, args...)
	}
}

func (r *reader) take(n int) []byte {
	if r.err != nil {
		return nil
	}
	if n < 0 || n > len(r.b) {
		r.fail("truncated")
		return nil
	}
	v := r.b[:n]
	r.b = r.b[n:]
	return v
}

func (r *reader) u8() uint8 {
	if v := r.take(1); v != nil {
		return v[0]
	}
	return 0
}

func (r *reader) u32() uint32 {
	if v := r.take(4); v != nil {
		return binary.LittleEndian.Uint32(v)
	}
	return 0
}

func (r *reader) f64() float64 {
	if v := r.take(8); v != nil {
		return math.Float64frombits(binary.LittleEndian.Uint64(v))
	}
	return 0
}

func (r *reader) f64s(n int) []float64 {
	if r.err == nil && (n < 0 || n > len(r.b)/8) {
		r.fail("truncated")
	}
	if r.err != nil {
		return nil
	}
	out := make([]float64, n)
	for i := range out {
		out[i] = r.f64()
	}
	return out
}

func (r *reader) bytes(n int) []byte {
	return r.take(n)
}
